// An embedded PostgreSQL of its own with pg_stat_statements loaded, for a test that reads
// every statement a run sent. The suite's shared cluster stays as it is: other files'
// statements neither land in this record nor push its entries out.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../server/db/embedded.ts';

export type RecordedStatement = { query: string; calls: number };

export type StatementRecordingDatabase = {
  /** URL of its (empty) database `app`; the service migrates it at start. */
  url: string;
  /** Forgets what was recorded so far. */
  reset(): Promise<void>;
  /** The top-level statements sent to `app` since the last reset, as pg_stat_statements normalised them. */
  statements(): Promise<RecordedStatement[]>;
  stop(): Promise<void>;
};

export async function startStatementRecordingDatabase(): Promise<StatementRecordingDatabase> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mapi-statements-'));
  // shared_preload_libraries takes effect at the next start: the first start only writes it.
  const first = await startEmbeddedPostgres({ dataDir });
  try {
    await onClient(first.url, async (client) => {
      await client.query(`alter system set shared_preload_libraries = 'pg_stat_statements'`);
      await client.query(`alter system set pg_stat_statements.max = 20000`);
    });
  } finally {
    await first.stop();
  }
  const postgres = await startEmbeddedPostgres({ dataDir });
  const stop = async () => {
    await postgres.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    await onClient(postgres.url, (client) => client.query('create extension if not exists pg_stat_statements'));
  } catch (error) {
    await stop();
    throw error;
  }
  const thisDatabase = `dbid = (select oid from pg_database where datname = current_database())`;
  return {
    url: postgres.url,
    reset: () => onClient(postgres.url, async (client) => void (await client.query('select pg_stat_statements_reset()'))),
    statements: () =>
      onClient(postgres.url, async (client) => {
        const { rows } = await client.query<RecordedStatement>(
          `select query, calls::int as calls from pg_stat_statements where toplevel and ${thisDatabase} order by query`,
        );
        return rows;
      }),
    stop,
  };
}

async function onClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
