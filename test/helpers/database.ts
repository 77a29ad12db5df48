import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { adminQuery } from './admin-query.ts';

export interface TestDatabase {
  /** URL of a fresh database with all migrations (ours and Graphile Worker's) applied. */
  url: string;
  drop(): Promise<void>;
}

/** Clones `template_app` (prepared once per run by test/global-setup.ts) into a new database. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = inject('pgAdminUrl');
  const name = `t_${randomBytes(8).toString('hex')}`;
  await adminQuery(adminUrl, `create database "${name}" template template_app`);

  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  let dropping: Promise<void> | undefined;
  return {
    url: url.toString(),
    // `with (force)` ends connections a test forgot to close.
    drop: () => (dropping ??= adminQuery(adminUrl, `drop database if exists "${name}" with (force)`)),
  };
}
