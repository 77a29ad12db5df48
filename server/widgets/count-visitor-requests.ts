// The abuse limits of the chat widget's public endpoints, counted in PostgreSQL like every
// rate limit (rate-limit/count-requests.ts: `rate_counters`, fixed 60-second windows on the
// database clock, shared by every process). A request is counted in a chain of buckets,
// narrowest first (the client address, then the visitor, then the widget): a bucket is
// counted only when the ones before it counted, so a request one bucket refuses is not
// counted further, and one noisy client does not eat the widget's budget for everyone else.
// The chain is SQL an endpoint puts into the statement it runs anyway, so counting costs
// no round trip of its own; every such statement runs through runCountingStatement, which
// also sweeps old windows now and then, so no endpoint decides when.
import type pg from 'pg';
import { joinSql, prepared, queryRows, rawSql, sql, type Sql, type Statement } from '../db/sql.ts';
import { ApiError, RateLimitedError } from '../errors.ts';
import { countRateLimitRefusal } from '../metrics/registry.ts';
import { epochSql, WINDOW_SECONDS, WINDOW_START_SQL } from '../rate-limit/limits.ts';
import { sweepOldWindows } from '../rate-limit/sweep-old-windows.ts';

/** Messages one visitor of a widget may send per minute. */
export const VISITOR_MESSAGES_PER_MINUTE = 20;
/** Messages all visitors of one widget together may send per minute. */
export const WIDGET_MESSAGES_PER_MINUTE = 600;

export type CountingBucket = {
  key: string;
  limit: number;
  /** Condition under which the bucket applies (a fragment with its own values); it always does when absent. */
  onlyIf?: Sql;
};

/** The buckets of a client address: every public widget request. */
export function addressBucket(address: string, limit: number): CountingBucket {
  return { key: `widget-address:${address}`, limit };
}

/**
 * A counting statement runs on its own (runCountingStatement, on the pool) and commits without
 * waiting for its WAL flush (synchronous_commit off for its implicit transaction): a crash
 * loses at most the last counts, which only lets a few more requests through, and the
 * request's own write, committed after it and synchronously, flushes the WAL through it
 * anyway. The request's answer then waits for one flush, not two.
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
 * as hand-numbered placeholders (countBucketsSql).
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

/** Refuses with 429 and Retry-After (seconds until the window resets) when a bucket did not count the request. */
function refuseUncounted(row: CountedRow): void {
  if (row.rate_counted) return;
  const retryAfter = Math.max(1, Math.ceil(row.rate_window + WINDOW_SECONDS - row.rate_now));
  countRateLimitRefusal('widget_visitor');
  throw new RateLimitedError({ 'Retry-After': String(retryAfter) });
}

/**
 * Runs a statement that counts a request (a countingChain's CTEs and select list in it,
 * returning one row) and returns its row; refuses with 429 when a bucket did not count it.
 * Widget traffic fills `rate_counters` too, so it is also what sweeps old windows from it.
 */
export async function runCountingStatement<Row extends CountedRow>(pool: pg.Pool, statement: Statement): Promise<Row> {
  const rows = await queryRows<Row>(pool, statement);
  sweepOldWindows(pool);
  const row = rows[0]!;
  refuseUncounted(row);
  return row;
}

/** Counts a request in its buckets on its own statement (for requests with no statement to share); refuses with 429. */
export async function countVisitorRequest(pool: pg.Pool, name: string, buckets: readonly CountingBucket[]): Promise<void> {
  const chain = countingChain(buckets);
  await runCountingStatement(pool, prepared(name, sql`with ${chain.ctes} select ${chain.select}`));
}

/**
 * Runs a check that comes before the request's counting statement (an identity token's);
 * when it refuses with 401, the request still counts against its client address, so
 * refusals cannot be asked for without end: the 401 stands, or 429 once the address is over.
 */
export async function countingRefusals<T>(pool: pg.Pool, address: string, limit: number, check: () => Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      await countVisitorRequest(pool, 'count-refused-widget-request', [addressBucket(address, limit)]);
    }
    throw error;
  }
}
