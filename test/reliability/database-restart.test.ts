// The database stopped (fast shutdown) and started again under a running service: during
// the outage every request answers promptly with 503 in the envelope and /v1/ready says
// why; afterwards the same process serves again and its worker runs jobs, with no restart.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createAccount } from '../../server/accounts/create-account.ts';
import { startEmbeddedPostgres } from '../../server/db/embedded.ts';
import { openOrm } from '../../server/db/orm.ts';
import { clusterDirectory, packagedBinaries, postgresUser, reachableBinaries } from '../../server/db/postgres-placement.ts';
import { loadMasterSecret } from '../../server/master-secret.ts';
import { createSecrets } from '../../server/secrets.ts';
import { TEST_SECRET_KEY } from '../helpers/service.ts';
import { call, phone, startChildService, stopChildService, waitFor, type ChildService } from './fixtures.ts';

/** Longer than this for one answer during the outage counts as hanging. */
const PROMPT_MS = 10_000;

let dataDir: string;
let pgDir: string;
let relocated = false;
let port: number;
let databaseUrl: string;
/** The first start (which also initialises the cluster); later starts are `postgres`. */
let firstStart: Awaited<ReturnType<typeof startEmbeddedPostgres>> | null = null;
let postgres: ChildProcess | null = null;
let service: ChildService | undefined;

/**
 * The cluster again, on the port the service's DATABASE_URL names. While it was down another
 * process may have taken that port (an outgoing connection or another test's listener): as
 * a restarted server would, it retries until the port is free again.
 */
async function startPostgresAgain(): Promise<void> {
  const runsAsRoot = process.getuid?.() === 0;
  const user = runsAsRoot ? await postgresUser() : null;
  const binaries = runsAsRoot ? await reachableBinaries(await packagedBinaries()) : await packagedBinaries();
  const deadline = Date.now() + 60_000;
  for (;;) {
    const child = spawn(binaries.postgres, ['-D', pgDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='], {
      ...(user ?? {}),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LC_MESSAGES: 'C' },
    });
    let output = '';
    const started = await new Promise<boolean>((resolve, reject) => {
      child.once('exit', (code, signal) => {
        if (/could not bind .*Address already in use/.test(output) && Date.now() < deadline) resolve(false);
        else reject(new Error(`postgres exited (${code ?? signal}): ${output}`));
      });
      child.stdout!.on('data', () => {});
      child.stderr!.on('data', (chunk: Buffer) => {
        output += chunk;
        if (output.includes('ready to accept connections')) resolve(true);
      });
    });
    if (started) {
      postgres = child;
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Fast shutdown (SIGINT): sessions are ended, as an operator's restart or a failover does. */
async function stopPostgres(): Promise<void> {
  if (firstStart) {
    await firstStart.stop();
    firstStart = null;
  }
  const child = postgres;
  postgres = null;
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGINT');
    await exited;
  }
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'mapi-rel-pg-'));
  ({ pgDir, relocated } = await clusterDirectory(dataDir, process.getuid?.() === 0));
  firstStart = await startEmbeddedPostgres({ dataDir });
  databaseUrl = firstStart.url;
  port = Number(new URL(databaseUrl).port);
});

afterAll(async () => {
  await stopChildService(service);
  await stopPostgres();
  if (relocated) await rm(pgDir, { recursive: true, force: true });
  await rm(dataDir, { recursive: true, force: true });
});

test('with the database down requests answer 503 promptly and /v1/ready says why; once it is back the same process serves and runs jobs again', async () => {
  service = await startChildService(databaseUrl, { ROLE: 'all' });
  // An account written the way the admin command writes one, on a connection closed again
  // before the outage.
  const orm = await openOrm(databaseUrl);
  let apiKey: string;
  try {
    const secrets = createSecrets(await loadMasterSecret(TEST_SECRET_KEY, service.dataDir));
    ({ apiKey } = await createAccount(orm.em.fork(), secrets, { email: 'outage@example.com' }));
  } finally {
    await orm.close();
  }
  const { origin } = service;
  const before = await call(origin, 'POST', '/v1/contacts', { apiKey, body: { phoneNumber: phone(1) } });
  expect(before.status, before.text).toBe(200);
  expect((await call(origin, 'GET', '/v1/ready')).status).toBe(200);

  await stopPostgres();

  // Every kind of request fails promptly (the client's time-out is the failure) in the envelope.
  const requests = [
    () => call(origin, 'GET', `/v1/contacts?phoneNumber=${encodeURIComponent(phone(1))}`, { apiKey, timeoutMs: PROMPT_MS }),
    () => call(origin, 'POST', '/v1/contacts', { apiKey, body: { phoneNumber: phone(2) }, timeoutMs: PROMPT_MS }),
    () => call(origin, 'GET', '/v1/lists', { apiKey, timeoutMs: PROMPT_MS }),
    () => call(origin, 'POST', '/v1/tasks', { apiKey, body: { title: 'Call back' }, timeoutMs: PROMPT_MS }),
  ];
  // Twice: once on the pooled connections the shutdown ended, once on new ones it refuses.
  for (let round = 0; round < 2; round++) {
    for (const request of requests) {
      const answer = await request();
      expect(answer.status, answer.text).toBe(503);
      expect(answer.body).toEqual({ success: false, error: expect.any(String), error_code: 503 });
    }
  }
  const notReady = await call(origin, 'GET', '/v1/ready', { timeoutMs: PROMPT_MS });
  expect(notReady.status).toBe(503);
  expect(notReady.body).toEqual({ ready: false, reason: expect.stringContaining('database') });
  // The process is still the one that served before.
  expect(service.child.exitCode).toBeNull();

  await startPostgresAgain();

  await waitFor(async () => ((await call(origin, 'GET', '/v1/ready', { timeoutMs: PROMPT_MS })).status === 200 ? true : undefined), 'ready again');
  const found = await waitFor(async () => {
    const answer = await call(origin, 'GET', `/v1/contacts?phoneNumber=${encodeURIComponent(phone(1))}`, { apiKey, timeoutMs: PROMPT_MS });
    return answer.status === 200 ? answer : undefined;
  }, 'requests served again');
  expect(found.text).toContain(before.body.data.contactId);
  const after = await call(origin, 'POST', '/v1/contacts', { apiKey, body: { phoneNumber: phone(3) }, timeoutMs: PROMPT_MS });
  expect(after.status, after.text).toBe(200);

  // The worker took up its work again: a job enqueued now runs.
  const requested = await call(origin, 'POST', '/v1/summaries', { apiKey, body: { phoneNumber: phone(3) }, timeoutMs: PROMPT_MS });
  expect(requested.status, requested.text).toBe(200);
  const summaries = await waitFor(async () => {
    const answer = await call(origin, 'GET', `/v1/contacts/${after.body.data.contactId}/summaries`, { apiKey, timeoutMs: PROMPT_MS });
    return answer.body?.data?.length ? answer.body.data : undefined;
  }, 'the summary job to run after the outage');
  expect(summaries).toHaveLength(1);
  expect(service.child.exitCode).toBeNull();
});
