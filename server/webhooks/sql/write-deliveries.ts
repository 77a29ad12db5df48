// Writes the deliveries of a dispatched batch of events still to send or replay in one
// statement, each in the state its first attempt left it (failed, or pending until its retry),
// or pending and due now when the round did not attempt it; marks the events dispatched in the
// same statement. A delivery attempted in the round never had a pending row: it is written
// once, with no claim and no update; one that succeeded is not written here at all (its
// attempt row is its record, record-attempts.ts).
// Dispatching an event again never duplicates its deliveries: a delivery already written for
// the (event, subscription) is skipped. Checked by a lookup rather than `on conflict do
// nothing`, whose speculative insertion writes one more WAL record per delivery; the claimed
// events are locked by this transaction, so no other dispatcher writes them meanwhile (and
// the unique index still stands behind it).
import type pg from 'pg';
import { prepared, queryRows, sql } from '../../db/sql.ts';
import type { DeliveryUpdate } from './record-attempts.ts';

const write = (deliveries: WrittenDelivery[], eventIds: string[]) => sql`
with written as (
  insert into webhook_deliveries
    (id, event_id, subscription_id, account_id, status, attempts, first_attempt_at, next_attempt_at, last_status_code, last_error)
  select
    d.id, d.event_id, d.subscription_id, d.account_id, d.status, coalesce(d.attempts, 0),
    to_timestamp(d.attempted_at_ms / 1000.0),
    case when d.status = 'pending' then coalesce(to_timestamp(d.attempted_at_ms / 1000.0) + d.retry_offset_ms * interval '1 millisecond', now()) end,
    d.status_code, d.error
  from unnest(${deliveries.map((d) => d.id)}::text[], ${deliveries.map((d) => d.eventId)}::text[],
              ${deliveries.map((d) => d.subscriptionId)}::text[], ${deliveries.map((d) => d.accountId)}::text[],
              ${deliveries.map((d) => d.outcome?.status ?? 'pending')}::text[], ${deliveries.map((d) => d.outcome?.attempts ?? null)}::int[],
              ${deliveries.map((d) => d.outcome?.attemptedAtMs ?? null)}::float8[], ${deliveries.map((d) => d.outcome?.retryOffsetMs ?? null)}::float8[],
              ${deliveries.map((d) => d.outcome?.statusCode ?? null)}::int[], ${deliveries.map((d) => d.outcome?.error ?? null)}::text[])
       as d (id, event_id, subscription_id, account_id, status, attempts, attempted_at_ms, retry_offset_ms, status_code, error)
  where not exists (
    select 1 from webhook_deliveries w
    where w.event_id = d.event_id and w.subscription_id = d.subscription_id and w.account_id = d.account_id
  )
  returning id, status, attempts, (extract(epoch from next_attempt_at) * 1000)::float8 as next_attempt_ms
),
dispatched as (
  update events set dispatched_at = now()
  where id = any (${eventIds}::text[]) and dispatched_at is null
  returning 1
)
select
  w.id,
  case when w.status = 'pending' and w.attempts > 0 then w.next_attempt_ms end as "retryMs",
  w.status = 'pending' and w.attempts = 0 as "dueNow"
from written w
`;

/** A delivery of a claimed event, with its first attempt's outcome when the round made one. */
export type WrittenDelivery = {
  id: string;
  eventId: string;
  subscriptionId: string;
  accountId: string;
  outcome: DeliveryUpdate | null;
};

export type WrittenDeliveries = {
  /** The deliveries written (one already there is not). */
  ids: Set<string>;
  /** When those left pending by their first attempt are due again (epoch ms). */
  retryMoments: number[];
  /** Some were written due now, not attempted. */
  dueNow: boolean;
};

export async function writeDeliveries(client: pg.PoolClient, deliveries: WrittenDelivery[], eventIds: string[]): Promise<WrittenDeliveries> {
  const rows = await queryRows<{ id: string; retryMs: number | null; dueNow: boolean }>(
    client,
    prepared('write-webhook-deliveries', write(deliveries, eventIds)),
  );
  return {
    ids: new Set(rows.map((row) => row.id)),
    retryMoments: rows.flatMap((row) => (row.retryMs === null ? [] : [row.retryMs])),
    dueNow: rows.some((row) => row.dueNow),
  };
}
