// The statements of `webhook_attempt_tallies` (what a tally is: ../attempt-tallies.ts): a
// round's tally, composed into the statement that inserts its attempts (record-attempts.ts);
// the window's tallies, read at each metrics scrape; and the hourly deletion of old ones.
import type pg from 'pg';
import { prepared, queryRows, rawSql, runSql, sql, type Sql } from '../../db/sql.ts';
import { sumTallies, TALLY_SLICE_SECONDS, type Tally } from '../attempt-tallies.ts';

const SLICE = `${TALLY_SLICE_SECONDS} seconds`;

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
  return sumTallies(await queryRows<Tally>(pool, recentTallySql(minutes)));
}

/** Deletes the tallies older than `hours` hours (the webhook history's hourly sweep); returns how many. */
export async function deleteOldTallies(pool: pg.Pool, hours: number): Promise<number> {
  const { rowCount } = await runSql(
    pool,
    prepared('delete-old-webhook-attempt-tallies', sql`delete from webhook_attempt_tallies where slice < now() - make_interval(hours => ${hours}::int)`),
  );
  return rowCount;
}
