// Rate-limit counters in `rate_counters` (unlogged: losing them in a crash only resets
// budgets), shared by all server processes on one database: fixed 60-second windows per
// bucket. Here: the ID-token session's ONE statement that resolves the account by its subject, counts the request in the
// session's bucket and the account's (one upsert each, per request), and reads the agency
// of the account `userId` selects. API keys resolve and spend leased tokens in
// spend-key-tokens.ts (no write per request); old windows go in sweep-old-windows.ts.
// See limits.ts for the rules.
import type pg from 'pg';
import { ACCOUNT_RATE_CEILING, epochSql, WINDOW_START_SQL } from './limits.ts';

/** A session caller as its statement describes it. */
export type CallerRow = {
  key_id: string | null;
  kind: 'main' | 'scoped' | 'session';
  account_id: string;
  key_hash: Buffer | null;
  scopes: unknown;
  revoked: boolean;
  expired: boolean;
  plan: string;
  bucket_limit: number;
  usable: boolean;
  now_epoch: number;
  window_epoch: number;
  /** This request's count, null when not counted (refused, or counting off). */
  bucket_counted: number | null;
  account_counted: number | null;
  /** Counts before this statement (snapshot), for refused and uncounted requests. */
  bucket_before: number | null;
  account_before: number | null;
  target_agency_id: string | null;
};

// Sessions: $1 identifies the caller, $2 whether to count, $3 the fixed limit for main keys
// and sessions, $4 the plans that may call (null = any), $5 the selected `userId`.
// The credential bucket is incremented only while below its limit (the WHERE of
// ON CONFLICT runs on the locked, latest row, so concurrent requests never pass
// it together); the account bucket only when the credential bucket counted.
const COUNT_AND_SELECT = `
, clock as (
  select now() as now, ${WINDOW_START_SQL} as window_start
), bucket_hit as (
  insert into rate_counters as c (bucket, window_start, count)
  select caller.bucket, clock.window_start, 1 from caller, clock where caller.usable and $2::boolean
  on conflict (bucket, window_start) do update set count = c.count + 1
    where c.count < (select bucket_limit from caller)
  returning c.count
), account_hit as (
  insert into rate_counters as c (bucket, window_start, count)
  select 'account:' || caller.account_id, clock.window_start, 1 from caller, clock, bucket_hit
  on conflict (bucket, window_start) do update set count = c.count + 1
    where c.count < ${ACCOUNT_RATE_CEILING}
  returning c.count
)
select caller.key_id, caller.kind, caller.account_id, caller.key_hash, caller.scopes, caller.revoked,
  caller.expired, caller.plan, caller.bucket_limit, caller.usable,
  ${epochSql('clock.now')} as now_epoch,
  ${epochSql('clock.window_start')} as window_epoch,
  (select count from bucket_hit) as bucket_counted,
  (select count from account_hit) as account_counted,
  -- Only read when the bucket did not count this request (CASE skips the subquery otherwise).
  case when not exists (select from bucket_hit) then
    (select r.count from rate_counters r where r.bucket = caller.bucket and r.window_start = clock.window_start) end as bucket_before,
  case when not exists (select from account_hit) then
    (select r.count from rate_counters r where r.bucket = 'account:' || caller.account_id and r.window_start = clock.window_start) end as account_before,
  (select a.agency_id from accounts a where a.id = $5::text) as target_agency_id
from caller, clock`;

const SESSION_CALLER = `
with caller as (
  select null::text as key_id, 'session'::text as kind, a.id as account_id, null::bytea as key_hash,
    null::jsonb as scopes, false as revoked, false as expired, a.plan,
    'session:' || a.id as bucket, $3::int as bucket_limit,
    ($4::text[] is null or a.plan = any($4::text[])) as usable
  from accounts a
  where a.oidc_subject = $1::text
)`;

export type CountOptions = {
  count: boolean;
  fixedLimit: number;
  /** Plans whose accounts may call this way; null = any plan. */
  allowedPlans: readonly string[] | null;
  userId: string | null;
};

async function run(pool: pg.Pool, name: string, text: string, identity: Buffer | string, options: CountOptions) {
  const { rows } = await pool.query<CallerRow>({
    name,
    text,
    values: [identity, options.count, options.fixedLimit, options.allowedPlans, options.userId],
  });
  return rows[0] ?? null;
}

const SESSION_SQL = SESSION_CALLER + COUNT_AND_SELECT;

/** The account whose `oidc_subject` this is (null when none), counted. */
export function resolveSessionAndCount(pool: pg.Pool, subject: string, options: CountOptions): Promise<CallerRow | null> {
  return run(pool, 'resolve-session-and-count', SESSION_SQL, subject, options);
}
