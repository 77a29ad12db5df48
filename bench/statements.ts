// What PostgreSQL's statements took over a stretch of load, from pg_stat_statements, for a run
// whose database loads it (BENCH_PG_STATEMENTS=1, bench/database.ts): reset at the start of a
// step, read at its end.
import type pg from 'pg';

/** Statements the scenarios' own sampling runs (pg_stat_activity, counters, sequences), left out. */
const OWN_SAMPLING = `query not like '%pg_stat%' and query not like '%pg_sequence_last_value%' and query not like '%pg_database%'`;

export async function resetStatements(client: pg.Pool | pg.Client): Promise<void> {
  await client.query(`select pg_stat_statements_reset(), pg_stat_reset_shared('wal')`);
}

/**
 * Since the last reset, per request (`requests` of them): the WAL the cluster wrote, the
 * execution and planning time of the statements the clients sent, and the `count` statements
 * that took most of it, nested ones (a trigger's) included, each as its time per request (and
 * its planning, with how many of its calls were planned), calls per request and the start of
 * its text.
 */
export async function statementsOver(client: pg.Pool | pg.Client, requests: number, count = 6): Promise<string> {
  const { rows: [top] } = await client.query<{ ms: number; planMs: number }>(
    `select coalesce(sum(total_exec_time), 0) as ms, coalesce(sum(total_plan_time), 0) as "planMs" from pg_stat_statements where toplevel and ${OWN_SAMPLING}`,
  );
  const { rows } = await client.query<{ query: string; calls: string; ms: number; plans: string; planMs: number }>(
    `select query, calls, total_exec_time as ms, plans, total_plan_time as "planMs" from pg_stat_statements where ${OWN_SAMPLING}
      order by total_exec_time + total_plan_time desc limit $1`,
    [count],
  );
  // The WAL the whole cluster wrote meanwhile: full-page images are what a checkpoint makes the
  // next change of each page write whole.
  const { rows: [wal] } = await client.query<{ records: string; fpi: string; bytes: string }>('select wal_records as records, wal_fpi as fpi, wal_bytes as bytes from pg_stat_wal');
  const each = (n: string) => (Number(n) / Math.max(requests, 1)).toFixed(1);
  const perRequest = (ms: number) => `${((ms * 1000) / Math.max(requests, 1)).toFixed(0)} µs`;
  const planned = (row: { plans: string; calls: string; planMs: number }) =>
    Number(row.plans) > 0 ? ` (+ ${perRequest(row.planMs)} planning: ${row.plans} plans for ${row.calls} calls)` : '';
  const most = rows.map(
    (row) => `${perRequest(row.ms)}${planned(row)} in ${(Number(row.calls) / Math.max(requests, 1)).toFixed(2)} call(s) ${row.query.replace(/\s+/g, ' ').slice(0, 60)}`,
  );
  return `WAL a request: ${each(wal!.records)} records, ${each(wal!.fpi)} full-page images, ${each(wal!.bytes)} bytes; statements ${perRequest(top!.ms)} a request at top level (+ ${perRequest(top!.planMs)} planning), most: ${most.join('; ')}`;
}
