// The one writer of `rate_counters` (unlogged: losing counts in a crash only resets budgets):
// fixed windows per bucket, shared by every process on the database. Every insert, update and
// delete of the table is here: an API key's leased blocks, a session's count per request, the
// chain of counted buckets (the chat widget's public requests, the usage endpoint's bucket), the
// return of unspent tokens, and the sweep of old windows. The counting parts are fragments a
// caller composes into the statement it runs anyway (server/auth resolves the caller in it), so
// counting costs no round trip of its own. The WHERE of ON CONFLICT runs on the locked, latest
// row: concurrent requests never pass a full bucket together. Rules: limits.ts.
import type pg from 'pg';
import { countRateWindowSweep } from '../../metrics/registry.ts';
import { joinSql, prepared, rawSql, runSql, sql, type Sql } from '../../db/sql.ts';
import { ACCOUNT_RATE_CEILING, epochSql, LEASE_DIVISOR, LEASE_MAX_BLOCK, WINDOW_SECONDS, WINDOW_START_SQL } from '../limits.ts';

/**
 * What counting adds to the statement that resolves a request's caller: CTEs to follow the
 * caller's (they define `clock`), and select-list columns. The caller's statement is
 * `with caller as (...), <ctes> select <its columns>, <columns> from caller, clock`, its
 * `caller` giving `key_id` (null for a session), `account_id`, `bucket_limit` and `usable`.
 */
export type CountingSql = { ctes: Sql; columns: Sql; /** Whether the CTEs write (a lease, a count). */ writes: boolean };

const CEILING = rawSql(String(ACCOUNT_RATE_CEILING));
const CLOCK = sql`clock as (select now() as now, ${rawSql(WINDOW_START_SQL)} as window_start)`;
const CLOCK_COLUMNS = sql`${rawSql(epochSql('clock.now'))} as now_epoch,
  ${rawSql(epochSql('clock.window_start'))} as window_epoch`;

/** The caller's own bucket (an API key's, a session's) and its account's, as SQL over `caller`. */
const KEY_BUCKET = sql`'key:' || caller.key_id`;
const SESSION_BUCKET = sql`'session:' || caller.account_id`;
const ACCOUNT_BUCKET = sql`'account:' || caller.account_id`;

/** A bucket's count in the current window, as stored. */
const storedCount = (bucket: Sql) => sql`(select r.count from rate_counters r where r.bucket = ${bucket} and r.window_start = clock.window_start)`;

/** A block for a bucket with `used` of `limit` leased (the caller ensures used < limit). */
const block = (limit: Sql, used: Sql) =>
  sql`least(${rawSql(String(LEASE_MAX_BLOCK))}, greatest(1, (${limit} - ${used}) / ${rawSql(String(LEASE_DIVISOR))}))`;

/** The key's bucket name in the process's API-key statement (what `returnLeasedTokens` names too). */
export const keyBucket = (keyId: string) => `key:${keyId}`;

/** An API-key request that spends tokens its process holds (or counts nothing): the counts, read only. */
export const READ_KEY_COUNTS: CountingSql = {
  ctes: CLOCK,
  columns: sql`${CLOCK_COLUMNS},
  coalesce(${storedCount(KEY_BUCKET)}, 0) as key_count,
  coalesce(${storedCount(ACCOUNT_BUCKET)}, 0) as account_count`,
  writes: false,
};

/**
 * An API-key request that leases the next block of its key's bucket (`key`) and/or its
 * account's (`account`; only when the key's budget let the request through: its lease
 * granted tokens, or the process held a key token). See spend-key-tokens.ts.
 */
export function leaseKeyBlocks(lease: { key: boolean; account: boolean }): CountingSql {
  const accountLeases = sql`${lease.account}::boolean and (not ${lease.key}::boolean or exists (select from key_lease))`;
  return {
    ctes: sql`${CLOCK}, key_lease as (
  insert into rate_counters as c (bucket, window_start, count)
  select ${KEY_BUCKET}, clock.window_start, ${block(sql`caller.bucket_limit`, sql`0`)} from caller, clock
  where caller.usable and ${lease.key}::boolean
  on conflict (bucket, window_start) do update set count = c.count + ${block(sql`(select bucket_limit from caller)`, sql`c.count`)}
    where c.count < (select bucket_limit from caller)
  returning new.count, new.count - coalesce(old.count, 0) as granted
), account_lease as (
  insert into rate_counters as c (bucket, window_start, count)
  select ${ACCOUNT_BUCKET}, clock.window_start, ${block(CEILING, sql`0`)} from caller, clock
  where caller.usable and ${accountLeases}
  on conflict (bucket, window_start) do update set count = c.count + ${block(CEILING, sql`c.count`)}
    where c.count < ${CEILING}
  returning new.count, new.count - coalesce(old.count, 0) as granted
)`,
    columns: sql`${CLOCK_COLUMNS},
  case when caller.usable and ${lease.key}::boolean then coalesce((select granted from key_lease), 0) end as key_granted,
  case when caller.usable and ${accountLeases} then coalesce((select granted from account_lease), 0) end as account_granted,
  coalesce((select count from key_lease), ${storedCount(KEY_BUCKET)}, 0) as key_count,
  coalesce((select count from account_lease), ${storedCount(ACCOUNT_BUCKET)}, 0) as account_count`,
    writes: true,
  };
}

/**
 * A session's request, counted with one upsert per bucket when `count`: the credential's
 * bucket only while below its limit, the account's only when the credential's counted.
 */
export function countSessionRequest(count: boolean): CountingSql {
  return {
    ctes: sql`${CLOCK}, bucket_hit as (
  insert into rate_counters as c (bucket, window_start, count)
  select ${SESSION_BUCKET}, clock.window_start, 1 from caller, clock where caller.usable and ${count}::boolean
  on conflict (bucket, window_start) do update set count = c.count + 1
    where c.count < (select bucket_limit from caller)
  returning c.count
), account_hit as (
  insert into rate_counters as c (bucket, window_start, count)
  select ${ACCOUNT_BUCKET}, clock.window_start, 1 from caller, clock, bucket_hit
  on conflict (bucket, window_start) do update set count = c.count + 1
    where c.count < ${CEILING}
  returning c.count
)`,
    columns: sql`${CLOCK_COLUMNS},
  (select count from bucket_hit) as bucket_counted,
  (select count from account_hit) as account_counted,
  -- Only read when the bucket did not count this request (CASE skips the subquery otherwise).
  case when not exists (select from bucket_hit) then ${storedCount(SESSION_BUCKET)} end as bucket_before,
  case when not exists (select from account_hit) then ${storedCount(ACCOUNT_BUCKET)} end as account_before`,
    writes: count,
  };
}

/**
 * Hands unspent leased tokens back to a bucket's window (after a limit change: rare, one round
 * trip). Best effort: tokens not handed back stay leased, which can only refuse early.
 */
export async function returnLeasedTokens(pool: pg.Pool, bucket: string, dropped: { window: number; tokens: number }): Promise<void> {
  const update = sql`update rate_counters set count = greatest(0, count - ${dropped.tokens}::int)
    where bucket = ${bucket} and window_start = to_timestamp(${dropped.window}::float8)`;
  await runSql(pool, prepared('return-leased-tokens', update)).catch(() => {});
}

export type CountingBucket = {
  key: string;
  limit: number;
  /** Condition under which the bucket applies (a fragment with its own values); it always does when absent. */
  onlyIf?: Sql;
};

/**
 * A counting statement commits without waiting for its WAL flush (synchronous_commit off for
 * its implicit transaction): a crash loses at most the last counts, which only lets a few more
 * requests through, and the request's own write, committed after it and synchronously,
 * flushes the WAL through it anyway. The request's answer then waits for one flush, not two.
 */
const ASYNC_COMMIT = rawSql(`set_config('synchronous_commit', 'off', true) as rate_async`);
const RATE_CLOCK = rawSql(`rate_clock as (select now() as now, ${WINDOW_START_SQL} as window_start)`);
const RATE_WINDOW = rawSql(`(select ${epochSql('now')} from rate_clock) as rate_now,
  (select ${epochSql('window_start')} from rate_clock) as rate_window`);

const TRUE = rawSql('true');
/** The CTE names of the buckets, by position. */
const hits: Sql[] = [];
const hitOf = (index: number) => (hits[index] ??= rawSql(`rate_hit_${index}`));

/** The counting chain: CTEs for a `with` (ending in no comma), and the select list that reads the outcome. */
export type CountingChain = { ctes: Sql; select: Sql };

/**
 * The one text of the chain, over its buckets' keys and limits as values (countingChain) or
 * as hand-numbered placeholders (countBucketsSql). A bucket counts only when the ones before
 * it counted, narrowest first.
 */
function chainOf(buckets: readonly { key: string | Sql; limit: number | Sql; onlyIf?: Sql }[]): CountingChain {
  const ctes: Sql[] = [RATE_CLOCK];
  let passed = TRUE;
  buckets.forEach((bucket, index) => {
    const hit = hitOf(index);
    const applies = bucket.onlyIf ? sql`(${bucket.onlyIf})` : TRUE;
    ctes.push(sql`${hit} as (
  insert into rate_counters as c (bucket, window_start, count)
  select ${bucket.key}::text, rate_clock.window_start, 1 from rate_clock where ${passed} and ${applies}
  on conflict (bucket, window_start) do update set count = c.count + 1 where c.count < ${bucket.limit}::int
  returning c.count
)`);
    // The WHERE of ON CONFLICT runs on the locked, latest row: concurrent requests never pass a full bucket together.
    const counted = sql`exists (select from ${hit})`;
    // A bucket that does not apply passes the request on as the one before it did.
    passed = bucket.onlyIf ? sql`(${counted} or (${passed} and not ${applies}))` : counted;
  });
  return { ctes: joinSql(ctes, ',\n'), select: sql`${RATE_WINDOW},\n  ${passed} as rate_counted, ${ASYNC_COMMIT}` };
}

/**
 * The chain that counts the request in each bucket in order, to compose into the statement
 * the request runs anyway: `with ${chain.ctes} select ${chain.select}, ...`. The select list
 * gives the window (`rate_now`, `rate_window`) and whether every bucket counted (`rate_counted`).
 */
export function countingChain(buckets: readonly CountingBucket[]): CountingChain {
  return chainOf(buckets);
}

/** A bucket of a chain written as hand-numbered text: its condition over the caller's own `$n` parameters. */
export type CountedBucket = { key: string; limit: number; onlyIf?: string };

/**
 * The same chain as text for a statement written with hand-numbered parameters, numbered
 * from `first` (each bucket's key, then its limit), with its values in that order.
 */
export function countBucketsSql(buckets: CountedBucket[], first: number): { ctes: string; select: string; values: unknown[] } {
  const values: unknown[] = [];
  let shapeKey = String(first);
  for (const bucket of buckets) {
    values.push(bucket.key, bucket.limit);
    shapeKey += `\u0000${bucket.onlyIf ?? ''}`;
  }
  let shape = countingTexts.get(shapeKey);
  if (!shape) {
    const chain = chainOf(
      buckets.map((bucket, index) => ({
        key: rawSql(`$${first + index * 2}`),
        limit: rawSql(`$${first + index * 2 + 1}`),
        onlyIf: bucket.onlyIf === undefined ? undefined : rawSql(bucket.onlyIf),
      })),
    );
    shape = { ctes: chain.ctes.text, select: chain.select.text };
    countingTexts.set(shapeKey, shape);
  }
  return { ctes: shape.ctes, select: shape.select, values };
}

/** countBucketsSql's texts, built once per process for each start and list of conditions (code's own SQL, never input). */
const countingTexts = new Map<string, { ctes: string; select: string }>();

export type CountedRow = { rate_now: number; rate_window: number; rate_counted: boolean };

/** Counts a request in one bucket of its own, on its own statement (the usage endpoint's bucket). */
export async function countInBucket(pool: pg.Pool, bucket: string, limit: number): Promise<CountedRow> {
  const counting = sql`with ${CLOCK}, hit as (
  insert into rate_counters as c (bucket, window_start, count)
  select ${bucket}::text, clock.window_start, 1 from clock
  on conflict (bucket, window_start) do update set count = c.count + 1 where c.count < ${limit}::int
  returning c.count
)
select ${rawSql(epochSql('clock.now'))} as rate_now, ${rawSql(epochSql('clock.window_start'))} as rate_window,
  exists (select from hit) as rate_counted, ${ASYNC_COMMIT}
from clock`;
  const { rows } = await runSql<CountedRow>(pool, prepared('count-apart', counting));
  sweepOldWindows(pool);
  return rows[0]!;
}

const SWEEP_EVERY_MS = 60_000;
const lastSweep = new WeakMap<pg.Pool, number>();
const SWEEP = sql`delete from rate_counters where window_start < now() - interval '${rawSql(String(2 * WINDOW_SECONDS))} seconds'`;

/**
 * Deletes windows that ended more than a minute ago. Every counting path calls this after
 * counting and it decides when a sweep is due: each process at most once a minute, in the
 * background; several processes doing it is harmless. Each sweep is counted in
 * rate_window_sweeps_total by outcome: a failed one's rows wait for the next.
 */
export function sweepOldWindows(pool: pg.Pool): void {
  const now = Date.now();
  if (now - (lastSweep.get(pool) ?? 0) < SWEEP_EVERY_MS) return;
  lastSweep.set(pool, now);
  runSql(pool, prepared('sweep-rate-windows', SWEEP)).then(
    () => countRateWindowSweep('done'),
    () => countRateWindowSweep('failed'),
  );
}
