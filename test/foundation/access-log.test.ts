// The access log records each request without its query string, so API keys
// sent as `?apiKey=` never land in logs.
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { appRouter } from '../../routers/index.ts';
import { workerDefinition } from '../../workers/index.ts';
import { loadConfig } from '../../server/config.ts';
import { startService, type RunningService } from '../../server/start-service.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { insecureAgent, TEST_SECRET_KEY } from '../helpers/service.ts';
import { createAccount } from '../../server/accounts/create-account.ts';
import { fetch } from 'undici';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

const lines: string[] = [];
let database: TestDatabase;
let running: RunningService;

beforeAll(async () => {
  database = await createTestDatabase();
  const sink = new Writable({ write(chunk, _encoding, done) { lines.push(String(chunk)); done(); } });
  const config = loadConfig({ PORT: '0', DATABASE_URL: database.url, SECRET_KEY: TEST_SECRET_KEY, DATA_DIR: await mkdtemp(path.join(tmpdir(), 'mapi-log-')), ROLE: 'api' });
  running = await startService(config, pino({ level: 'info' }, sink), { router: appRouter, worker: workerDefinition });
});
afterAll(async () => {
  await running?.stop();
  await database?.drop();
});

test('requests are logged with method, path and status, never with the query string', async () => {
  const { apiKey } = await createAccount(running.services.orm.em.fork(), running.services.secrets, { email: 'log@example.com' });
  const response = await fetch(`${running.baseUrl}/lists?apiKey=${apiKey}&limit=5`, { dispatcher: insecureAgent });
  expect(response.status).toBe(200);
  // The log line is written once the response has gone out: wait for it, boundedly.
  const httpEntries = () => lines.map((line) => JSON.parse(line)).filter((entry) => entry.component === 'http');
  for (const deadline = Date.now() + 5000; httpEntries().length === 0 && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const entries = httpEntries();
  expect(entries).toContainEqual(expect.objectContaining({ method: 'GET', path: '/v1/lists', status: 200 }));
  expect(lines.join('\n')).not.toContain(apiKey);
});
