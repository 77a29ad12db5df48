// Writes one sending round's results in bulk: an attempt row per HTTP attempt (the
// delivery log) and the new state of each delivery, releasing its lease.
import type pg from 'pg';

export type AttemptRow = {
  id: string;
  deliveryId: string;
  attempt: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
};

export async function insertAttempts(client: pg.PoolClient, attempts: AttemptRow[]): Promise<void> {
  if (attempts.length === 0) return;
  await client.query(
    `insert into webhook_attempts (id, delivery_id, attempt, status_code, duration_ms, error)
     select * from unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::int[], $6::text[])`,
    [
      attempts.map((a) => a.id),
      attempts.map((a) => a.deliveryId),
      attempts.map((a) => a.attempt),
      attempts.map((a) => a.statusCode),
      attempts.map((a) => a.durationMs),
      attempts.map((a) => a.error),
    ],
  );
}

export type DeliveryUpdate = {
  id: string;
  status: 'pending' | 'succeeded' | 'failed' | 'dropped';
  /** Attempts made so far; null keeps the count (a dropped delivery made none). */
  attempts: number | null;
  /** When this round's attempt started (epoch ms); null when none was made. */
  attemptedAtMs: number | null;
  statusCode: number | null;
  error: string | null;
  /** For `pending`: the next attempt's offset from the FIRST attempt (Delivery rule 2). */
  retryOffsetMs: number | null;
};

// Only a delivery still pending is updated: one replayed or finished meanwhile keeps its state.
const UPDATE_SQL = `
update webhook_deliveries d
set
  status = o.status,
  attempts = coalesce(o.attempts, d.attempts),
  first_attempt_at = coalesce(d.first_attempt_at, to_timestamp(o.attempted_at_ms / 1000.0)),
  next_attempt_at = case
    when o.status = 'pending'
      then coalesce(d.first_attempt_at, to_timestamp(o.attempted_at_ms / 1000.0)) + o.retry_offset_ms * interval '1 millisecond'
  end,
  locked_until = null,
  last_status_code = case when o.attempts is null then d.last_status_code else o.status_code end,
  last_error = o.error,
  updated_at = now()
from unnest($1::text[], $2::text[], $3::int[], $4::float8[], $5::int[], $6::text[], $7::float8[])
  as o (id, status, attempts, attempted_at_ms, status_code, error, retry_offset_ms)
where d.id = o.id and d.status = 'pending'
returning d.id, (extract(epoch from d.next_attempt_at) * 1000)::float8 as "nextAttemptMs"
`;

/** Returns the epoch-ms moments at which the deliveries left pending are due again. */
export async function updateDeliveries(client: pg.PoolClient, updates: DeliveryUpdate[]): Promise<number[]> {
  if (updates.length === 0) return [];
  const result = await client.query<{ id: string; nextAttemptMs: number | null }>(UPDATE_SQL, [
    updates.map((u) => u.id),
    updates.map((u) => u.status),
    updates.map((u) => u.attempts),
    updates.map((u) => u.attemptedAtMs),
    updates.map((u) => u.statusCode),
    updates.map((u) => u.error),
    updates.map((u) => u.retryOffsetMs),
  ]);
  return result.rows.flatMap((row) => (row.nextAttemptMs === null ? [] : [row.nextAttemptMs]));
}
