// GET /v1/ready: 200 {ready:true} when the database answers and (ROLE=worker/all) the
// worker runs; 503 {ready:false, reason} otherwise, the reason a fixed phrase (the details
// go to the log, not to a caller without credentials). /v1/health stays as the spec says.
import { afterAll, beforeAll, expect, inject, test, vi } from 'vitest';
import { checkReadiness } from '../../server/http/readiness.ts';
import { adminQuery } from '../helpers/admin-query.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

test('GET /ready answers 200 {ready:true} without credentials while the database answers and the worker runs', async () => {
  const response = await service.request('GET', '/ready');
  expect(response.status).toBe(200);
  expect(response.contentType).toMatch(/^application\/json/);
  expect(response.body).toEqual({ ready: true });
});

test('GET /ready answers 503 {ready:false, reason: "database unavailable"} while the database does not answer, logging why, and 200 again once it does', async () => {
  const adminUrl = inject('pgAdminUrl');
  const database = new URL(service.databaseUrl).pathname.slice(1);
  const warnings = vi.spyOn(service.services.log, 'warn');
  // The database refuses every session, existing ones included, as a stopped one would.
  await adminQuery(adminUrl, `alter database "${database}" with allow_connections false`);
  try {
    await adminQuery(adminUrl, `select pg_terminate_backend(pid) from pg_stat_activity where datname = '${database}'`);
    const down = await service.request('GET', '/ready');
    expect(down.status).toBe(503);
    // Exactly the phrase: the driver's text names the database and the server's refusal.
    expect(down.body).toEqual({ ready: false, reason: 'database unavailable' });
    expect(down.text).not.toContain(database);
    const logged = warnings.mock.calls.find(([fields]) => (fields as { reason?: string }).reason === 'database unavailable');
    expect((logged?.[0] as { err: Error }).err.message).toContain(database);
    // Liveness is another question: the process still runs.
    const health = await service.request('GET', '/health');
    expect(health.status).toBe(200);
    expect(health.text).toBe('Server is running');
  } finally {
    await adminQuery(adminUrl, `alter database "${database}" with allow_connections true`);
    warnings.mockRestore();
  }
  const up = await service.request('GET', '/ready');
  expect(up.status).toBe(200);
  expect(up.body).toEqual({ ready: true });
});

test('with the database answering and the worker stopped, the reason is "worker not running"', async () => {
  expect(await checkReadiness({ databaseUrl: service.databaseUrl, workerRunning: () => false })).toEqual({ ready: false, reason: 'worker not running' });
  expect(await checkReadiness({ databaseUrl: service.databaseUrl, workerRunning: () => true })).toEqual({ ready: true });
});

test('GET /ready for ROLE=api checks only the database (no worker runs there)', async () => {
  const api = await startTestService({ databaseUrl: service.databaseUrl, env: { ROLE: 'api' } });
  try {
    const response = await api.request('GET', '/ready');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ready: true });
  } finally {
    await api.stop();
  }
});

test('the OpenAPI document lists GET /ready as a public route with its 200 and 503 bodies', async () => {
  const document = (await service.request('GET', '/v1/openapi.json')).body;
  const ready = document.paths['/ready'].get;
  expect(ready.security).toEqual([]);
  expect(ready.responses['200'].content['application/json'].schema).toMatchObject({ required: ['ready'] });
  // Not ready, or (like every route) the envelope of a request that meets the shutdown.
  expect(ready.responses['503'].content['application/json'].schema.anyOf).toEqual(
    expect.arrayContaining([expect.objectContaining({ required: ['ready', 'reason'] }), expect.objectContaining({ required: ['success', 'error', 'error_code'] })]),
  );
});
