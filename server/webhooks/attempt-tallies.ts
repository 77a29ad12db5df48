// The delivery log in figures: how many webhook attempts were delivered or failed, and how
// long they took, per 10-second slice (`webhook_attempt_tallies`), so the metrics' trailing
// window reads a few tally rows however many attempts it holds. A round's tally is written
// with its attempt rows, by the one writer of attempts (sql/record-attempts.ts), on a row of
// its database connection's own, so concurrent rounds never wait on one another's tally.
// Durations are counted in fixed buckets; a quantile is estimated within its bucket, as a
// Prometheus histogram's is.
import type pg from 'pg';
import { prepared, queryRows, rawSql, runSql, sql, type Sql } from '../db/sql.ts';

/** Lower bounds of the duration buckets, ms: the last bucket has no upper bound. */
export const DURATION_BOUNDS_MS = [0, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000] as const;

/** Each tally row covers this many seconds of attempts. */
export const TALLY_SLICE_SECONDS = 10;
const SLICE = `${TALLY_SLICE_SECONDS} seconds`;

export type Tally = { delivered: number; failed: number; durations: number[] };

/** Whether an attempt delivered: a 2xx answer. */
const delivered = (statusCode: number | null) => statusCode !== null && statusCode >= 200 && statusCode <= 299;

/** The index of the bucket a duration falls in. */
function bucketOf(durationMs: number): number {
  let index = 0;
  while (index + 1 < DURATION_BOUNDS_MS.length && durationMs >= DURATION_BOUNDS_MS[index + 1]!) index++;
  return index;
}

/** The tally of some attempts. */
export function tallyOf(attempts: readonly { statusCode: number | null; durationMs: number }[]): Tally {
  const durations = DURATION_BOUNDS_MS.map(() => 0);
  let ok = 0;
  for (const attempt of attempts) {
    if (delivered(attempt.statusCode)) ok++;
    durations[bucketOf(attempt.durationMs)]!++;
  }
  return { delivered: ok, failed: attempts.length - ok, durations };
}

/**
 * The duration at quantile `q` (0–1), ms, estimated by linear interpolation within the bucket
 * the quantile falls in; the lower bound of the last bucket when it falls there (it has no
 * upper bound), null when nothing was counted.
 */
export function durationQuantile(durations: readonly number[], q: number): number | null {
  const total = durations.reduce((sum, count) => sum + count, 0);
  if (total === 0) return null;
  const rank = q * total;
  let below = 0;
  for (let index = 0; index < durations.length; index++) {
    const count = durations[index]!;
    if (count > 0 && below + count >= rank) {
      const lower = DURATION_BOUNDS_MS[index]!;
      const upper = DURATION_BOUNDS_MS[index + 1];
      return upper === undefined ? lower : lower + ((upper - lower) * Math.max(0, rank - below)) / count;
    }
    below += count;
  }
  return DURATION_BOUNDS_MS[DURATION_BOUNDS_MS.length - 1]!;
}

/**
 * The CTE (for a `with`) that adds a tally to the current slice's row of this database
 * connection (its backend pid): a connection runs one transaction at a time, so no other
 * writer holds that row.
 */
export function addTallyCte(name: string, tally: Tally): Sql {
  return sql`${rawSql(name)} as (
  insert into webhook_attempt_tallies as t (slice, slot, delivered, failed, durations)
  values (date_bin(${SLICE}::interval, now(), timestamptz 'epoch'), pg_backend_pid(), ${tally.delivered}::int, ${tally.failed}::int, ${tally.durations}::int[])
  on conflict (slice, slot) do update set
    delivered = t.delivered + excluded.delivered,
    failed = t.failed + excluded.failed,
    durations = array(select coalesce(a, 0) + coalesce(b, 0) from unnest(t.durations, excluded.durations) with ordinality as u (a, b, n) order by n)
)`;
}

/** The tally rows of the slices that overlap the last `minutes` minutes. */
export const recentTallySql = (minutes: number) =>
  prepared(
    'recent-webhook-attempt-tallies',
    sql`select delivered, failed, durations from webhook_attempt_tallies
where slice >= date_bin(${SLICE}::interval, now() - make_interval(mins => ${minutes}::int), timestamptz 'epoch')`,
  );

/** The tallies of the slices that overlap the last `minutes` minutes, summed. */
export async function recentTally(pool: pg.Pool, minutes: number): Promise<Tally> {
  const rows = await queryRows<Tally>(pool, recentTallySql(minutes));
  const sum: Tally = { delivered: 0, failed: 0, durations: DURATION_BOUNDS_MS.map(() => 0) };
  for (const row of rows) {
    sum.delivered += row.delivered;
    sum.failed += row.failed;
    row.durations.forEach((count, index) => {
      if (index < sum.durations.length) sum.durations[index]! += count;
    });
  }
  return sum;
}

/** Deletes the tallies older than `hours` hours (the webhook history's hourly sweep); returns how many. */
export async function deleteOldTallies(pool: pg.Pool, hours: number): Promise<number> {
  const { rowCount } = await runSql(
    pool,
    prepared('delete-old-webhook-attempt-tallies', sql`delete from webhook_attempt_tallies where slice < now() - make_interval(hours => ${hours}::int)`),
  );
  return rowCount;
}
