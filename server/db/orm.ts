import { Migrator } from '@mikro-orm/migrations';
import { MikroORM, UnderscoreNamingStrategy, defineConfig } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { entities } from './entities/index.ts';
import { queryRows, runSql, sql } from './sql.ts';

export const MIGRATIONS_DIR = `${import.meta.dirname}/migrations`;

// Any constant works as long as every process that migrates this database uses the same one.
const MIGRATION_LOCK_KEY = 727_274_001;

/** The pool's size when the caller names none (the service passes DATABASE_POOL_SIZE). */
export const DEFAULT_POOL_SIZE = 10;

export function ormConfig(databaseUrl: string, poolSize = DEFAULT_POOL_SIZE) {
  return defineConfig({
    clientUrl: databaseUrl,
    entities,
    extensions: [Migrator],
    namingStrategy: UnderscoreNamingStrategy,
    // Every request, job and script forks its own EntityManager.
    allowGlobalContext: false,
    debug: false,
    pool: { min: 0, max: poolSize },
    migrations: {
      // Migrations are .ts files that Node's type stripping imports directly; without `path`
      // and `pathTs` pointing at the same folder MikroORM would look in `dist/` or `src/`.
      path: MIGRATIONS_DIR,
      pathTs: MIGRATIONS_DIR,
      glob: '!(*.d).ts',
      emit: 'ts',
      // The database itself is the reference for diffs (create-migration.ts builds a scratch
      // one from the migrations), so no snapshot file has to be kept in step.
      snapshot: false,
      transactional: true,
      allOrNothing: true,
      silent: true,
    },
  });
}

const pools = new WeakMap<MikroORM, pg.Pool>();

export async function openOrm(databaseUrl: string, poolSize = DEFAULT_POOL_SIZE): Promise<MikroORM> {
  const orm = await MikroORM.init(ormConfig(databaseUrl, poolSize));
  try {
    pools.set(orm, (await orm.em.getConnection().getNativeClient()) as pg.Pool);
  } catch (error) {
    await orm.close();
    throw error;
  }
  return orm;
}

/**
 * The `pg.Pool` MikroORM queries through (`em.getConnection().getNativeClient()`), for raw
 * SQL and Graphile Worker, so the process keeps one pool; `orm.close()` ends it. MikroORM
 * installs type parsers on it: `timestamptz`, `timestamp`, `date` and `interval` values come
 * back as strings (e.g. `2026-01-02 03:04:05.678+00`), not Dates.
 */
export function pgPool(orm: MikroORM): pg.Pool {
  const pool = pools.get(orm);
  if (!pool) throw new Error('pgPool() needs an ORM opened with openOrm()');
  return pool;
}

/**
 * Applies pending migrations and returns their names. Idempotent; a session-level advisory
 * lock, held on its own connection, makes processes that start together take turns (the
 * second finds nothing pending).
 */
export async function migrate(orm: MikroORM): Promise<string[]> {
  const client = await pgPool(orm).connect();
  try {
    await assertSupportedPostgres(client);
    await runSql(client, sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`);
    try {
      const applied = await orm.migrator.up();
      return applied.map((migration) => migration.name);
    } finally {
      await runSql(client, sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`);
    }
  } finally {
    client.release();
  }
}

/** The oldest PostgreSQL the statements need: `RETURNING old` (the leased rate limits) came in 18. */
export const OLDEST_POSTGRES = { number: 180000, name: '18' };

export class UnsupportedPostgresError extends Error {
  override name = 'UnsupportedPostgresError';
}

/** Refuses, before any migration, a server older than the statements need, rather than failing later on the first such statement. */
export async function assertSupportedPostgres(client: pg.ClientBase): Promise<void> {
  const [server] = await queryRows<{ number: string; version: string }>(
    client,
    sql`select current_setting('server_version_num') as number, current_setting('server_version') as version`,
  );
  if (Number(server!.number) < OLDEST_POSTGRES.number) {
    throw new UnsupportedPostgresError(`PostgreSQL ${server!.version.split(' ')[0]} found; this service needs PostgreSQL ${OLDEST_POSTGRES.name} or later`);
  }
}
