import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runMigrations } from 'graphile-worker';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../server/db/embedded.ts';
import { migrate, openOrm } from '../server/db/orm.ts';
import { adminQuery } from './helpers/admin-query.ts';
import { createLocalCa } from './helpers/local-ca.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser URL of the test cluster's `postgres` database; see test/helpers/database.ts. */
    pgAdminUrl: string;
    /** Key and certificate for localhost/127.0.0.1/::1 signed by the run's test CA; see test/helpers/webhook-receiver.ts. */
    webhookReceiverTls: { key: string; cert: string };
  }
}

const TEMPLATE_DATABASE = 'template_app';

/**
 * Starts one PostgreSQL cluster for the whole run and prepares `template_app` with our
 * migrations and Graphile Worker's, so each test file can clone a ready database in
 * milliseconds instead of migrating its own.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const testCa = await createTestCa();
  project.provide('webhookReceiverTls', testCa.receiver);

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
    await rm(testCa.dir, { recursive: true, force: true });
  };
}

/**
 * A CA for this run and a receiver certificate it signed. Node reads NODE_EXTRA_CA_CERTS
 * only at process start, so the CA file is named in this process's environment before any
 * test worker is forked: vitest builds each fork's environment from process.env when the
 * run starts (after global setup), and tests pass process.env on to processes they spawn.
 * The service then verifies the receiver like any public endpoint, with no TLS exceptions.
 */
async function createTestCa(): Promise<{ dir: string; receiver: { key: string; cert: string } }> {
  const dir = await mkdtemp(join(tmpdir(), 'mapi-test-ca-'));
  const ca = await createLocalCa({ dir, name: 'messaging-automation-api test', validForMs: 7 * 24 * 3600_000 });
  process.env.NODE_EXTRA_CA_CERTS = ca.caFile;
  return { dir, receiver: { key: ca.key, cert: ca.cert } };
}

function databaseUrl(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}
