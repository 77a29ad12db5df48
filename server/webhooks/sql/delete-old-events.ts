// The webhook history kept: an event goes, with its deliveries and their attempts (the events'
// delete trigger takes those), once it is older than WEBHOOK_HISTORY_DAYS, dispatched and with
// no delivery still pending (a retry or a replay still to send). Events are found by the
// block-range index on their time: appended in time order, the oldest lie in the first ranges.
import type pg from 'pg';
import { prepared, runSql, sql } from '../../db/sql.ts';

/** Deletes at most `batch` such events; returns how many. */
export async function deleteOldEvents(pool: pg.Pool, days: number, batch: number): Promise<number> {
  const old = sql`
with old as (
  select e.id, e.account_id from events e
  where e.created_at < now() - make_interval(days => ${days}::int) and e.dispatched_at is not null
    and not exists (select from webhook_deliveries d where d.event_id = e.id and d.account_id = e.account_id and d.status = 'pending')
  limit ${batch}::int
  for update of e skip locked
)
delete from events e using old where e.id = old.id and e.account_id = old.account_id`;
  const { rowCount } = await runSql(pool, prepared('delete-old-events', old));
  return rowCount;
}
