// The benchmark's database: one embedded PostgreSQL in a temporary directory, migrated and
// seeded with accounts whose keys the service accepts.
import { rm } from 'node:fs/promises';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { createAccount } from '../server/accounts/create-account.ts';
import { loadConfig } from '../server/config.ts';
import { startEmbeddedPostgres } from '../server/db/embedded.ts';
import { clusterDirectory } from '../server/db/postgres-placement.ts';
import { newId } from '../server/db/ids.ts';
import { createLogger } from '../server/log.ts';
import { createServices } from '../server/start-service.ts';
import { postmasterPid } from './cpu-usage.ts';
import { loadStatementStatistics } from './db-work/counters.ts';
import { pinPostgres } from './cpu-pinning.ts';
import type { LoadTarget } from './load.ts';
import { atCleanup, tempDir } from './processes.ts';

/** Every process of the run shares it, as scaled-out processes share SECRET_KEY. */
export const BENCH_SECRET_KEY = 'bench-secret-key-0123456789abcdef-0123456789';

export const CONTACTS_PER_ACCOUNT = 5;

/**
 * Seeded contacts' numbers: +1 415 2xxxxxx, a different one for each contact of each
 * account, so lookups go over as many distinct numbers as contacts (15,000 for 3,000 accounts).
 */
export function seededPhone(account: number, index: number): string {
  return `+1415${2_000_000 + account * CONTACTS_PER_ACCOUNT + index}`;
}

/**
 * BENCH_PG_STATEMENTS=1: PostgreSQL loads pg_stat_statements, so a scenario can say which
 * statements its time went to (the `push` and `events` scenarios do, per step; statements.ts).
 * Off by default: the extension costs every statement a little, on every side alike.
 */
export const statementStatistics = process.env.BENCH_PG_STATEMENTS === '1';

export async function startBenchDatabase(): Promise<{ url: string; dataDir: string }> {
  const dataDir = await tempDir('db');
  if (statementStatistics) await loadStatementStatistics(dataDir);
  const postgres = await startEmbeddedPostgres({ dataDir });
  atCleanup(() => postgres.stop());
  if (statementStatistics) {
    const setup = new pg.Client(postgres.url);
    await setup.connect();
    await setup.query('create extension if not exists pg_stat_statements');
    // Planning too: a prepared statement planned again at each execution (a custom plan) costs that each time.
    await setup.query('alter system set pg_stat_statements.track_planning = on');
    await setup.query('select pg_reload_conf()');
    await setup.end();
  }
  const { pgDir, relocated } = await clusterDirectory(dataDir, process.getuid?.() === 0);
  if (relocated) atCleanup(() => rm(pgDir, { recursive: true, force: true }));
  pinPostgres(await postmasterPid(postgres.url));
  return { url: postgres.url, dataDir };
}

/**
 * Migrates the database and creates `accounts` accounts through the admin command's own
 * code path (createAccount), each with one list and CONTACTS_PER_ACCOUNT contacts (bulk SQL:
 * the columns createContact writes, defaults for the rest). Writes the load runner's
 * targets file and returns its path.
 */
export async function seedAccounts(databaseUrl: string, accounts: number): Promise<{ targetsFile: string; targets: LoadTarget[] }> {
  const dataDir = await tempDir('seed');
  const config = loadConfig({ DATABASE_URL: databaseUrl, DATA_DIR: dataDir, SECRET_KEY: BENCH_SECRET_KEY, LOG_LEVEL: 'warn' });
  const services = await createServices(config, createLogger('warn'), databaseUrl);
  try {
    const targets: LoadTarget[] = new Array(accounts);
    const accountIds: string[] = new Array(accounts);
    let next = 0;
    const runId = Date.now().toString(36);
    const worker = async () => {
      for (let i = next++; i < accounts; i = next++) {
        const created = await createAccount(services.orm.em.fork(), services.secrets, { email: `bench-${runId}-${i}@example.com` });
        accountIds[i] = created.userId;
        const phones = Array.from({ length: CONTACTS_PER_ACCOUNT }, (_, c) => seededPhone(i, c));
        targets[i] = { apiKey: created.apiKey, listId: newId('lst'), phones };
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));

    await services.pool.query(
      `insert into lists (id, account_id, name) select * from unnest($1::text[], $2::text[], $3::text[])`,
      [targets.map((target) => target.listId), accountIds, accountIds.map(() => 'Bench list')],
    );
    const contactIds: string[] = [];
    const contactAccounts: string[] = [];
    const contactPhones: string[] = [];
    for (const [i, accountId] of accountIds.entries()) {
      for (let c = 0; c < CONTACTS_PER_ACCOUNT; c++) {
        contactIds.push(newId('ct'));
        contactAccounts.push(accountId);
        contactPhones.push(seededPhone(i, c));
      }
    }
    await services.pool.query(
      `insert into contacts (id, account_id, phone_number) select * from unnest($1::text[], $2::text[], $3::text[])`,
      [contactIds, contactAccounts, contactPhones],
    );
    await services.pool.query('analyze');
    const targetsFile = path.join(dataDir, 'targets.json');
    await writeFile(targetsFile, JSON.stringify(targets));
    // The file must outlive this function; the directory is removed at clean-up.
    return { targetsFile, targets };
  } finally {
    await services.orm.close();
  }
}

/**
 * What a load before left, cleaned up untimed so the next measurement does not pay for it
 * (autovacuum catching up in the middle of its steps, a checkpoint forced by its WAL): every
 * table with more than 1,000 dead rows or rows changed since its last analysis vacuumed and
 * analysed (so plans see the rows the load added), then a checkpoint.
 */
export async function settleAfterLoad(runner: { query(text: string): Promise<{ rows: unknown[] }> }): Promise<void> {
  const { rows } = await runner.query(
    `select format('%I.%I', schemaname, relname) as name from pg_stat_all_tables
      where (n_dead_tup > 1000 or n_mod_since_analyze > 1000) and schemaname not in ('pg_catalog', 'information_schema', 'pg_toast')`,
  );
  for (const { name } of rows as { name: string }[]) await runner.query(`vacuum analyze ${name}`);
  await runner.query('checkpoint');
}
