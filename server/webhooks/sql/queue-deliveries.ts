// Queues the deliveries of a claimed batch of events in one statement, marks the events
// dispatched in the same statement.
// Dispatching an event again never duplicates its deliveries: a delivery already queued for
// the (event, subscription) is skipped. Checked by a lookup rather than `on conflict do
// nothing`, whose speculative insertion writes one more WAL record per delivery; the claimed
// events are locked by this transaction, so no other dispatcher queues them meanwhile (and
// the unique index still stands behind it).
import type pg from 'pg';
import { prepared, queryRows, sql } from '../../db/sql.ts';

const queue = (deliveries: QueuedDelivery[], eventIds: string[]) => sql`
with queued as (
  insert into webhook_deliveries (id, event_id, subscription_id, account_id, status, next_attempt_at)
  select d.id, d.event_id, d.subscription_id, d.account_id, 'pending', now()
  from unnest(${deliveries.map((d) => d.id)}::text[], ${deliveries.map((d) => d.eventId)}::text[],
              ${deliveries.map((d) => d.subscriptionId)}::text[], ${deliveries.map((d) => d.accountId)}::text[])
       as d (id, event_id, subscription_id, account_id)
  where not exists (
    select 1 from webhook_deliveries w
    where w.event_id = d.event_id and w.subscription_id = d.subscription_id and w.account_id = d.account_id
  )
  returning 1
),
dispatched as (
  update events set dispatched_at = now()
  where id = any (${eventIds}::text[]) and dispatched_at is null
  returning 1
)
select
  (select count(*) from queued)::int as queued,
  (select count(*) from dispatched)::int as dispatched
`;

export type QueuedDelivery = { id: string; eventId: string; subscriptionId: string; accountId: string };

export async function queueDeliveries(
  client: pg.PoolClient,
  deliveries: QueuedDelivery[],
  eventIds: string[],
): Promise<{ queued: number; dispatched: number }> {
  const [row] = await queryRows<{ queued: number; dispatched: number }>(client, prepared('queue-deliveries', queue(deliveries, eventIds)));
  return row!;
}
