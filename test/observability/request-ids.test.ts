// Every answer carries X-Request-Id (the caller's when well formed, else a new one), and
// the id follows the request: into its access log line, onto the jobs it queues and onto
// the webhook deliveries of the events it caused.
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:tls';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { appRouter } from '../../routers/index.ts';
import { createAccount } from '../../server/accounts/create-account.ts';
import { loadConfig } from '../../server/config.ts';
import { requestIdMixin } from '../../server/log.ts';
import { startService, type RunningService } from '../../server/start-service.ts';
import { workerDefinition } from '../../workers/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { insecureAgent, TEST_SECRET_KEY, type TestService } from '../helpers/service.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { eventually, subscribe, WEBHOOK_ENV } from '../webhooks/webhook-fixtures.ts';

const lines: string[] = [];
let database: TestDatabase;
let dataDir: string;
let running: RunningService;
let receiver: WebhookReceiver;
let origin: string;

beforeAll(async () => {
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(tmpdir(), 'mapi-reqid-'));
  const sink = new Writable({ write(chunk, _encoding, done) { lines.push(String(chunk)); done(); } });
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: database.url, SECRET_KEY: TEST_SECRET_KEY, DATA_DIR: dataDir, ...WEBHOOK_ENV });
  // The process logger's mixin, as server/log.ts builds it, writing here instead of stderr.
  running = await startService(config, pino({ level: 'info', mixin: requestIdMixin }, sink), { router: appRouter, worker: workerDefinition });
  origin = new URL(running.baseUrl!).origin;
  receiver = await startWebhookReceiver();
  // Every job as queued (a finished job is deleted, so its payload is recorded on insert).
  await running.services.pool.query(`
    create table test_queued_jobs (task text not null, payload json not null);
    create function test_record_job() returns trigger language plpgsql as $$
    begin
      insert into test_queued_jobs select t.identifier, new.payload from graphile_worker._private_tasks t where t.id = new.task_id;
      return new;
    end $$;
    create trigger test_record_job after insert on graphile_worker._private_jobs for each row execute function test_record_job();
  `);
});

afterAll(async () => {
  await receiver?.close();
  await running?.stop();
  await database?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

type Answer = { status: number; requestId: string | null; text: string };

async function call(method: string, pathname: string, options: { requestId?: string; body?: unknown; rawBody?: string; apiKey?: string } = {}): Promise<Answer> {
  const url = new URL(origin + pathname);
  if (options.apiKey) url.searchParams.set('apiKey', options.apiKey);
  const headers: Record<string, string> = {};
  if (options.requestId !== undefined) headers['x-request-id'] = options.requestId;
  let body = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  const response = await fetch(url, { method, headers, body, dispatcher: insecureAgent });
  return { status: response.status, requestId: response.headers.get('x-request-id'), text: await response.text() };
}

async function newAccount() {
  return createAccount(running.services.orm.em.fork(), running.services.secrets, { email: `reqid-${Date.now()}-${Math.random()}@example.com`, webhooks: true });
}

let phone = 0;
const nextPhone = () => `+1415555${String(3000 + (phone += 1)).padStart(4, '0')}`;

describe('X-Request-Id on every answer', () => {
  test("a well-formed caller's id is echoed on /v1, /trpc and plain routes", async () => {
    for (const id of ['abc', 'trace-1.2_3:4', 'x'.repeat(128)]) {
      expect((await call('GET', '/v1/health', { requestId: id })).requestId).toBe(id);
    }
    const { apiKey } = await newAccount();
    expect((await call('GET', '/v1/lists', { requestId: 'rest-call', apiKey })).requestId).toBe('rest-call');
    const trpc = await call('GET', `/trpc/lists.list?apiKey=${apiKey}&input=%7B%7D`, { requestId: 'trpc-call' });
    expect(trpc.status, trpc.text).toBe(200);
    expect(trpc.requestId).toBe('trpc-call');
    expect((await call('GET', '/v1/ready', { requestId: 'plain-route' })).requestId).toBe('plain-route');
  });

  test('a malformed id is replaced by a generated one', async () => {
    for (const id of ['', 'has space', 'x'.repeat(129), 'semi;colon', 'ünïcode', '"quoted"']) {
      const answer = await call('GET', '/v1/health', { requestId: id });
      expect(answer.requestId).toMatch(/^req_[0-9a-f-]{36}$/);
      expect(answer.requestId).not.toBe(id);
    }
  });

  test('generated ids are unique', async () => {
    const answers = await Promise.all(Array.from({ length: 30 }, () => call('GET', '/v1/health')));
    const ids = answers.map((answer) => answer.requestId);
    for (const id of ids) expect(id).toMatch(/^req_/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test('error answers carry it and keep their bodies', async () => {
    // The same failure with and without an id: only the header differs.
    const cases: [string, string, { rawBody?: string }][] = [
      ['GET', '/v1/lists', {}], // 401, no key
      ['GET', '/v1/no-such-thing', {}], // 404
      ['GET', '/nowhere', {}], // 404 outside /v1
      ['GET', '/v1/contacts/%E0%A4%A', {}], // 400, a path that is not validly percent-encoded
      ['PATCH', '/v1/health', {}], // 405
      ['POST', '/v1/contacts', { rawBody: 'x'.repeat(1024 * 1024 + 1) }], // 413
      ['POST', '/v1/contacts', { rawBody: '{not json' }], // 400 malformed JSON
    ];
    for (const [method, pathname, options] of cases) {
      const plain = await call(method, pathname, options);
      const tagged = await call(method, pathname, { ...options, requestId: 'error-case' });
      expect(plain.status).toBeGreaterThanOrEqual(400);
      expect(tagged.status, `${method} ${pathname}`).toBe(plain.status);
      expect(tagged.text, `${method} ${pathname}`).toBe(plain.text);
      expect(tagged.requestId, `${method} ${pathname}`).toBe('error-case');
      expect(plain.requestId).toMatch(/^req_/);
      expect(plain.text).not.toContain(plain.requestId);
    }
  });

  test("answers to requests Node's parser refused carry a generated one", async () => {
    // A head over Node's limit never becomes a fastify request; it is answered on the socket.
    const port = new URL(origin).port;
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: Number(port), rejectUnauthorized: false }, () => {
        socket.write(`GET /v1/health HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: too-late\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      });
      let received = '';
      socket.on('data', (chunk) => (received += String(chunk)));
      socket.on('end', () => resolve(received));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 431 /);
    expect(raw).toMatch(/\r\nX-Request-Id: req_[0-9a-f-]{36}\r\n/);
  });
});

describe('the id follows the request', () => {
  test('its access log line names it', async () => {
    await call('GET', '/v1/health', { requestId: 'logged-request' });
    const entries = () => lines.map((line) => JSON.parse(line)).filter((entry) => entry.component === 'http' && entry.requestId === 'logged-request');
    const found = await eventually(async () => entries(), (list) => list.length > 0, 5000);
    expect(found).toEqual([expect.objectContaining({ method: 'GET', path: '/v1/health', status: 200, requestId: 'logged-request' })]);
  });

  test('a job the request queued carries it in its payload', async () => {
    const { apiKey } = await newAccount();
    const phoneNumber = nextPhone();
    expect((await call('POST', '/v1/contacts', { apiKey, body: { phoneNumber } })).status).toBe(200);
    const asked = await call('POST', '/v1/summaries', { apiKey, body: { phoneNumber }, requestId: 'summary-request' });
    expect(asked.status).toBe(200);
    const { rows } = await running.services.pool.query<{ payload: Record<string, unknown> }>(
      `select payload from test_queued_jobs where task = 'generate-summary'`,
    );
    expect(rows).toEqual([{ payload: expect.objectContaining({ requestId: 'summary-request' }) }]);
  });

  test('webhook deliveries of the events it caused carry it as X-Request-Id', async () => {
    const account = await newAccount();
    const service = { services: running.services } as TestService;
    await subscribe(service, account.userId, { url: receiver.url, events: ['Contact Created', 'Task Created'] });

    // Contact Created is written in SQL beside the contact; Task Created through emit().
    const contact = await call('POST', '/v1/contacts', { apiKey: account.apiKey, body: { phoneNumber: nextPhone() }, requestId: 'contact-request' });
    expect(contact.status).toBe(200);
    const task = await call('POST', '/v1/tasks', { apiKey: account.apiKey, body: { title: 'Call back' }, requestId: 'task-request' });
    expect(task.status).toBe(201);
    // Without an id of its own, the request's generated one is what the receiver sees.
    const generated = await call('POST', '/v1/contacts', { apiKey: account.apiKey, body: { phoneNumber: nextPhone() } });
    expect(generated.status).toBe(200);

    const received = await receiver.waitFor(3);
    const byEvent = received.map((request) => [request.headers['x-webhook-event'], request.headers['x-request-id']]);
    expect(byEvent).toEqual(
      expect.arrayContaining([
        ['Contact Created', 'contact-request'],
        ['Task Created', 'task-request'],
        ['Contact Created', generated.requestId],
      ]),
    );
  });

  test('every event a request caused, directly or through a job it queued, stores its id', async () => {
    const { rows } = await running.services.pool.query<{ name: string; request_id: string | null }>(`select name, request_id from events`);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.filter((row) => row.request_id === null)).toEqual([]);
    // The summary job the request queued raised Chat Concluded in the request's name.
    await eventually(
      async () => (await running.services.pool.query(`select 1 from events where name = 'Chat Concluded' and request_id = 'summary-request'`)).rowCount,
      (count) => count === 1,
    );
  });
});
