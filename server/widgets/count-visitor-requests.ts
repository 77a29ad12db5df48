// The abuse limits of the chat widget's public endpoints, counted in PostgreSQL like every
// rate limit (`rate_counters`, fixed 60-second windows on the database clock, shared by every
// process; its one writer is rate-limit/sql/rate-counters.ts). A request is counted in a chain of buckets,
// narrowest first (the client address, then the visitor, then the widget): a bucket is
// counted only when the ones before it counted, so a request one bucket refuses is not
// counted further, and one noisy client does not eat the widget's budget for everyone else.
// The chain is SQL an endpoint puts into the statement it runs anyway, so counting costs
// no round trip of its own; every such statement runs through runCountingStatement, which
// also sweeps old windows now and then, so no endpoint decides when.
import type pg from 'pg';
import { prepared, queryRows, sql, type Statement } from '../db/sql.ts';
import { ApiError, RateLimitedError } from '../errors.ts';
import { countRateLimitRefusal } from '../metrics/registry.ts';
import { WINDOW_SECONDS } from '../rate-limit/limits.ts';
import {
  countBucketsSql,
  countingChain,
  sweepOldWindows,
  type CountedBucket,
  type CountedRow,
  type CountingBucket,
  type CountingChain,
} from '../rate-limit/sql/rate-counters.ts';

export { countBucketsSql, countingChain, type CountedBucket, type CountedRow, type CountingBucket, type CountingChain };

/** The buckets of a client address: every public widget request. */
export function addressBucket(address: string, limit: number): CountingBucket {
  return { key: `widget-address:${address}`, limit };
}

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
