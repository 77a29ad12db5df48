import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runMigrations } from 'graphile-worker';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../server/db/embedded.ts';
import { migrate, openOrm } from '../server/db/orm.ts';
import { adminQuery } from './helpers/admin-query.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser URL of the test cluster's `postgres` database; see test/helpers/database.ts. */
    pgAdminUrl: string;
  }
}

const TEMPLATE_DATABASE = 'template_app';

/**
 * Starts one PostgreSQL cluster for the whole run and prepares `template_app` with our
 * migrations and Graphile Worker's, so each test file can clone a ready database in
 * milliseconds instead of migrating its own.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // startEmbeddedPostgres opens this 0700 directory to the `postgres` user it runs as.
  const dataDir = await mkdtemp(join(tmpdir(), 'mapi-test-'));
  const server = await startEmbeddedPostgres({ dataDir });
  try {
    const adminUrl = databaseUrl(server.url, 'postgres');
    const templateUrl = databaseUrl(server.url, TEMPLATE_DATABASE);

    await adminQuery(adminUrl, `create database ${TEMPLATE_DATABASE}`);
    const orm = await openOrm(templateUrl);
    try {
      await migrate(orm);
    } finally {
      await orm.close();
    }
    await runMigrations({ connectionString: templateUrl });
    // No session may stay connected to a template, or cloning it fails.
    await adminQuery(adminUrl, `alter database ${TEMPLATE_DATABASE} with is_template true`);

    project.provide('pgAdminUrl', adminUrl);
  } catch (error) {
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }

  return async () => {
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
}

function databaseUrl(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}
