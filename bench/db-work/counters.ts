// PostgreSQL's own account of the work an operation costs: the statements it ran (from
// pg_stat_statements), commits, blocks touched, rows written and WAL. Unlike a timing these
// figures do not move with the machine's load, so a change to a hot path can be measured
// while other work runs: take a snapshot, run N operations, take another, divide.
import pg from 'pg';
import { startEmbeddedPostgres } from '../../server/db/embedded.ts';
import { atCleanup, tempDir } from '../processes.ts';

/**
 * Sets up the embedded PostgreSQL of `dataDir` to load pg_stat_statements, tracking nested
 * statements too (a trigger's among them), from its next start: this start only writes the
 * settings, and is stopped whether or not that works.
 */
export async function loadStatementStatistics(dataDir: string): Promise<void> {
  const first = await startEmbeddedPostgres({ dataDir });
  try {
    const client = new pg.Client(first.url);
    await client.connect();
    await client.query(`alter system set shared_preload_libraries = 'pg_stat_statements'`);
    await client.query(`alter system set pg_stat_statements.track = 'all'`);
    await client.end();
  } finally {
    await first.stop();
  }
}

/** An embedded PostgreSQL with pg_stat_statements loaded (tracking nested statements too). */
export async function startCountingDatabase(): Promise<{ url: string }> {
  const dataDir = await tempDir('db-work');
  await loadStatementStatistics(dataDir);
  const postgres = await startEmbeddedPostgres({ dataDir });
  atCleanup(() => postgres.stop());
  const setup = new pg.Client(postgres.url);
  await setup.connect();
  await setup.query('create extension if not exists pg_stat_statements');
  await setup.query('create extension if not exists pg_walinspect').catch(() => undefined);
  await setup.end();
  return { url: postgres.url };
}

type TableWrites = { inserted: number; updated: number; hotUpdated: number; deleted: number };
export type Totals = {
  commits: number;
  blocks: number;
  inserted: number;
  updated: number;
  deleted: number;
  hotUpdated: number;
  walRecords: number;
  walBytes: number;
  /** WAL fsyncs by any process (a synchronous commit waits for one, unless another covered it). */
  walSyncs: number;
};
type Snapshot = Totals & { tables: Map<string, TableWrites> };

/**
 * Backends report their statistics when idle, at most once a second, and an idle backend
 * within ten seconds: wait that long before reading, or the last operations are missing.
 */
export const STATS_SETTLE_MS = 11_500;

async function totals(client: pg.Client): Promise<Snapshot> {
  await new Promise((resolve) => setTimeout(resolve, STATS_SETTLE_MS));
  const [db] = (
    await client.query(
      `select d.xact_commit, d.blks_hit + d.blks_read as blocks, d.tup_inserted, d.tup_updated, d.tup_deleted,
              (select coalesce(sum(n_tup_hot_upd), 0) from pg_stat_all_tables) as hot, w.wal_records, w.wal_bytes,
              (select coalesce(sum(fsyncs), 0) from pg_stat_io where object = 'wal') as wal_syncs
         from pg_stat_database d, pg_stat_wal w where d.datname = current_database()`,
    )
  ).rows;
  const tables = new Map<string, TableWrites>();
  const { rows } = await client.query(
    `select schemaname || '.' || relname as name, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del from pg_stat_all_tables where n_tup_ins + n_tup_upd + n_tup_del > 0`,
  );
  for (const row of rows) {
    tables.set(row.name, { inserted: Number(row.n_tup_ins), updated: Number(row.n_tup_upd), hotUpdated: Number(row.n_tup_hot_upd), deleted: Number(row.n_tup_del) });
  }
  return {
    tables,
    commits: Number(db.xact_commit),
    blocks: Number(db.blocks),
    inserted: Number(db.tup_inserted),
    updated: Number(db.tup_updated),
    deleted: Number(db.tup_deleted),
    hotUpdated: Number(db.hot),
    walRecords: Number(db.wal_records),
    walBytes: Number(db.wal_bytes),
    walSyncs: Number(db.wal_syncs),
  };
}

export type WorkReport = {
  lines: string[];
  /** Each total per operation, and the top-level statements per operation. */
  perOperation: Totals & { statements: number };
};

/**
 * Runs `operate()` (which performs `operations` operations) between two snapshots and
 * reports the work per operation: totals, then each statement run at least `minCalls` times per
 * operation (once per ten operations unless told), most frequent first.
 */
export async function measureWork(url: string, operations: number, operate: () => Promise<void>, minCalls = 0.1): Promise<WorkReport> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    const before = await totals(client);
    await client.query('select pg_stat_statements_reset()');
    const [{ lsn: startLsn }] = (await client.query(`select pg_current_wal_lsn() as lsn`)).rows;
    await operate();
    const after = await totals(client);
    const [{ lsn: endLsn }] = (await client.query(`select pg_current_wal_lsn() as lsn`)).rows;
    const per = (key: keyof Totals, digits = 2) => ((after[key] - before[key]) / operations).toFixed(digits);
    const scalar = Object.keys(after).filter((key) => key !== 'tables') as (keyof Totals)[];
    const perOperation = Object.fromEntries(scalar.map((key) => [key, (after[key] - before[key]) / operations])) as Totals;
    const statements = (
      await client.query<{ calls: string; rows: string; ms: number; blocks: string; toplevel: boolean; query: string }>(
        `select calls, rows, total_exec_time as ms, shared_blks_hit + shared_blks_read as blocks, toplevel,
                left(regexp_replace(query, '\\s+', ' ', 'g'), 120) as query
           from pg_stat_statements where calls >= $1::float8 order by toplevel desc, calls desc, total_exec_time desc`,
        [operations * minCalls],
      )
    ).rows;
    const topLevel = statements.filter((row) => row.toplevel).reduce((sum, row) => sum + Number(row.calls), 0);
    const lines = [
      `per operation (${operations}): ${(topLevel / operations).toFixed(2)} statements, ${per('commits')} commits, ${per('blocks', 0)} blocks, ` +
        `${per('inserted')} rows inserted, ${per('updated')} updated (${per('hotUpdated')} HOT), ${per('deleted')} deleted, ` +
        `${per('walRecords', 1)} WAL records, ${per('walBytes', 0)} WAL bytes, ${per('walSyncs')} WAL fsyncs`,
      ...[...after.tables].flatMap(([name, writes]) => {
        const was = before.tables.get(name) ?? { inserted: 0, updated: 0, hotUpdated: 0, deleted: 0 };
        const of = (key: keyof TableWrites) => (writes[key] - was[key]) / operations;
        if (of('inserted') + of('updated') + of('deleted') < minCalls) return [];
        return [`  ${name}: ${of('inserted').toFixed(3)} inserted, ${of('updated').toFixed(3)} updated (${of('hotUpdated').toFixed(3)} HOT), ${of('deleted').toFixed(3)} deleted`];
      }),
      ...statements.map(
        (row) =>
          `${(Number(row.calls) / operations).toFixed(minCalls < 0.01 ? 4 : 2).padStart(minCalls < 0.01 ? 8 : 6)} ${row.toplevel ? '' : '  (nested) '}${((row.ms / operations) * 1000).toFixed(0).padStart(5)} µs ` +
          `${(Number(row.blocks) / operations).toFixed(0).padStart(4)} blocks  ${row.query}`,
      ),
    ];
    // WAL by record type (pg_walinspect, when the server has it): what the WAL records are.
    const walTypes = await client
      .query<{ type: string; count: string; bytes: string }>(
        `select "resource_manager/record_type" as type, count, record_size + fpi_size as bytes
           from pg_get_wal_stats($1, $2, true) where count > 0 order by count desc`,
        [startLsn, endLsn],
      )
      .then((result) => result.rows)
      .catch(() => []);
    for (const row of walTypes) {
      if (Number(row.count) / operations < minCalls) continue;
      lines.push(`  WAL ${row.type}: ${(Number(row.count) / operations).toFixed(2)} records, ${(Number(row.bytes) / operations).toFixed(0)} bytes`);
    }
    return { lines, perOperation: { ...perOperation, statements: topLevel / operations } };
  } finally {
    await client.end();
  }
}

/** Analyses every table (the planner's statistics brought up to date). */
export async function runAnalyze(url: string): Promise<void> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    await client.query('analyze');
  } finally {
    await client.end();
  }
}
