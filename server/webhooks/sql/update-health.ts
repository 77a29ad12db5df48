// Delivery health per (subscription, account where the event happened), counted in
// whole deliveries (Delivery rule 5). One upsert per sending round, then one update
// that pauses the URLs whose consecutive failures reached the threshold.
import type pg from 'pg';
import { prepared, runSql, sql } from '../../db/sql.ts';

export type HealthChange = {
  subscriptionId: string;
  accountId: string;
  successes: number;
  failures: number;
  /** Failures after this round's last success (all of them when there was none). */
  trailingFailures: number;
  lastSuccessAtMs: number | null;
  lastFailure: Record<string, unknown> | null;
};

const upsertSql = (sorted: HealthChange[]) => sql`
insert into webhook_health as h (subscription_id, account_id, consecutive_failures, total_failures, total_successes, last_failure, last_success_at)
select o.subscription_id, o.account_id, o.trailing_failures, o.failures, o.successes, o.last_failure, to_timestamp(o.last_success_ms / 1000.0)
from unnest(${sorted.map((c) => c.subscriptionId)}::text[], ${sorted.map((c) => c.accountId)}::text[], ${sorted.map((c) => c.successes)}::int[],
            ${sorted.map((c) => c.failures)}::int[], ${sorted.map((c) => c.trailingFailures)}::int[],
            ${sorted.map((c) => (c.lastFailure ? JSON.stringify(c.lastFailure) : null))}::jsonb[], ${sorted.map((c) => c.lastSuccessAtMs)}::float8[])
  as o (subscription_id, account_id, successes, failures, trailing_failures, last_failure, last_success_ms)
on conflict (subscription_id, account_id) do update set
  consecutive_failures = case
    when excluded.total_successes > 0 then excluded.consecutive_failures
    else h.consecutive_failures + excluded.consecutive_failures
  end,
  total_failures = h.total_failures + excluded.total_failures,
  total_successes = h.total_successes + excluded.total_successes,
  last_failure = coalesce(excluded.last_failure, h.last_failure),
  last_success_at = coalesce(excluded.last_success_at, h.last_success_at),
  updated_at = now()
`;

// The accounts are named as well as joined: a statement of a few accounts' shards under Citus (docs/scaling.md).
const disableSql = (failing: HealthChange[], disableAfter: number) => sql`
update webhook_health h
set
  is_disabled = true,
  disabled_at = now(),
  disabled_reason = 'Delivery paused after ' || h.consecutive_failures || ' consecutive failed deliveries (all retries spent); re-enable the webhook to resume.',
  updated_at = now()
from unnest(${failing.map((c) => c.subscriptionId)}::text[], ${failing.map((c) => c.accountId)}::text[]) as o (subscription_id, account_id)
where h.subscription_id = o.subscription_id and h.account_id = o.account_id
  and h.account_id = any (${failing.map((c) => c.accountId)}::text[])
  and not h.is_disabled and h.consecutive_failures >= ${disableAfter}::int
`;

export async function updateHealth(client: pg.PoolClient, changes: HealthChange[], disableAfter: number): Promise<void> {
  if (changes.length === 0) return;
  // One lock order for every writer, so concurrent rounds cannot deadlock on these rows.
  const sorted = [...changes].sort((a, b) =>
    a.subscriptionId === b.subscriptionId ? a.accountId.localeCompare(b.accountId) : a.subscriptionId.localeCompare(b.subscriptionId),
  );
  await runSql(client, prepared('upsert-webhook-health', upsertSql(sorted)));
  const failing = sorted.filter((c) => c.failures > 0);
  if (failing.length === 0) return;
  await runSql(client, prepared('disable-failing-webhooks', disableSql(failing, disableAfter)));
}
