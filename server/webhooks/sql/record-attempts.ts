// Writes one sending round's results in bulk: an attempt row per HTTP attempt (the
// delivery log; for a delivery whose first attempt succeeded, the only row it has) with the
// round's tally in the same statement (../attempt-tallies.ts: what the metrics read), and the
// new state of each delivery (clearing a lease an earlier version wrote).
import type pg from 'pg';
import { prepared, queryRows, runSql, sql } from '../../db/sql.ts';
import { tallyOf } from '../attempt-tallies.ts';
import { addTallyCte } from './attempt-tallies.ts';

export type AttemptRow = {
  id: string;
  deliveryId: string;
  eventId: string;
  accountId: string;
  subscriptionId: string;
  attempt: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
};

export async function insertAttempts(client: pg.PoolClient, attempts: AttemptRow[]): Promise<void> {
  if (attempts.length === 0) return;
  await runSql(
    client,
    prepared(
      'insert-webhook-attempts',
      sql`with ${addTallyCte('tally', tallyOf(attempts))}
insert into webhook_attempts (id, delivery_id, event_id, account_id, subscription_id, attempt, status_code, duration_ms, error)
     select * from unnest(${attempts.map((a) => a.id)}::text[], ${attempts.map((a) => a.deliveryId)}::text[], ${attempts.map((a) => a.eventId)}::text[],
                          ${attempts.map((a) => a.accountId)}::text[],
                          ${attempts.map((a) => a.subscriptionId)}::text[],
                          ${attempts.map((a) => a.attempt)}::int[], ${attempts.map((a) => a.statusCode)}::int[],
                          ${attempts.map((a) => a.durationMs)}::int[], ${attempts.map((a) => a.error)}::text[])`,
    ),
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
// The rows are found by primary key (`id = any`), and the pending check is written so the
// due index (partial, `status = 'pending'`) cannot answer it: its row estimate lags a
// growing backlog, and the planner would then read every pending delivery to update a round's.
const updateSql = (updates: DeliveryUpdate[]) => sql`
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
from unnest(${updates.map((u) => u.id)}::text[], ${updates.map((u) => u.status)}::text[], ${updates.map((u) => u.attempts)}::int[],
            ${updates.map((u) => u.attemptedAtMs)}::float8[], ${updates.map((u) => u.statusCode)}::int[], ${updates.map((u) => u.error)}::text[],
            ${updates.map((u) => u.retryOffsetMs)}::float8[])
  as o (id, status, attempts, attempted_at_ms, status_code, error, retry_offset_ms)
where d.id = any (${updates.map((u) => u.id)}::text[]) and d.id = o.id and (d.status = 'pending') is true
returning d.id, (extract(epoch from d.next_attempt_at) * 1000)::float8 as "nextAttemptMs"
`;

/** Returns the epoch-ms moments at which the deliveries left pending are due again. */
export async function updateDeliveries(client: pg.PoolClient, updates: DeliveryUpdate[]): Promise<number[]> {
  if (updates.length === 0) return [];
  const rows = await queryRows<{ id: string; nextAttemptMs: number | null }>(client, prepared('update-webhook-deliveries', updateSql(updates)));
  return rows.flatMap((row) => (row.nextAttemptMs === null ? [] : [row.nextAttemptMs]));
}
