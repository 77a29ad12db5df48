// Queues the deliveries of a claimed batch of events in one statement, marks the events
// dispatched in the same statement.
// `on conflict do nothing`: dispatching an event again never duplicates its deliveries.
import type pg from 'pg';

const SQL = `
with queued as (
  insert into webhook_deliveries (id, event_id, subscription_id, account_id, status, next_attempt_at)
  select d.id, d.event_id, d.subscription_id, d.account_id, 'pending', now()
  from unnest($1::text[], $2::text[], $3::text[], $4::text[]) as d (id, event_id, subscription_id, account_id)
  on conflict (event_id, subscription_id) do nothing
  returning 1
),
dispatched as (
  update events set dispatched_at = now()
  where id = any ($5::text[]) and dispatched_at is null
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
  const result = await client.query<{ queued: number; dispatched: number }>(SQL, [
    deliveries.map((d) => d.id),
    deliveries.map((d) => d.eventId),
    deliveries.map((d) => d.subscriptionId),
    deliveries.map((d) => d.accountId),
    eventIds,
  ]);
  return result.rows[0];
}
