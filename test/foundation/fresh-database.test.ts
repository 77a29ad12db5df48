// An API process started on a database no worker has ever run on (ROLE=api first, the
// workers later) can still queue jobs: every role installs the job queue's schema at start.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, expect, inject, test } from 'vitest';
import { adminQuery } from '../helpers/admin-query.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const adminUrl = inject('pgAdminUrl');
const name = `fresh_${randomBytes(6).toString('hex')}`;
let service: TestService | undefined;

afterAll(async () => {
  await service?.stop();
  await adminQuery(adminUrl, `drop database if exists "${name}" with (force)`);
});

test('ROLE=api on an empty database queues the job of a request (a summary) for the workers to come', async () => {
  // An empty database, not a clone of the prepared template.
  await adminQuery(adminUrl, `create database "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  service = await startTestService({ databaseUrl: url.toString(), env: { ROLE: 'api' } });

  const account = await service.createAccount();
  const created = await service.request('POST', '/v1/contacts', { apiKey: account.apiKey, body: { phoneNumber: '+14155550100' } });
  expect(created.status, created.text).toBe(200);
  const summary = await service.request('POST', '/v1/summaries', { apiKey: account.apiKey, body: { phoneNumber: '+14155550100' } });
  expect(summary.status, summary.text).toBe(200);

  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const { rows } = await client.query<{ task_identifier: string }>('select task_identifier from graphile_worker.jobs');
    expect(rows.map((row) => row.task_identifier)).toContain('generate-summary');
  } finally {
    await client.end();
  }
});
