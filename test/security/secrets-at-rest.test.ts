// Secrets are never at rest in the clear: after a run that makes every kind of secret
// the service holds (main keys, a rotated-out one, scoped keys, webhook signing secrets,
// a messaging provider's access token, a chat widget's one-time-code and identity secrets, a
// visitor identity token) and sends
// keys in query strings and headers with info logging on, no table of the database (our
// schema and Graphile Worker's: job payloads included) and no log line holds any of them,
// nor any chat-widget visitor id (a visitor's only credential when the site does not verify identity).
// The requests that answer with a secret carry an Idempotency-Key, so their stored
// responses are in the dump too.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { SignJWT } from 'jose';
import pino from 'pino';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { appRouter } from '../../routers/index.ts';
import { call, type Answer } from '../reliability/fixtures.ts';
import { createAccount } from '../../server/accounts/create-account.ts';
import { loadConfig } from '../../server/config.ts';
import { startService, type RunningService } from '../../server/start-service.ts';
import { workerDefinition } from '../../workers/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startFakeMessagingProvider, type FakeMessagingProvider } from '../helpers/fake-messaging-provider.ts';
import { TEST_SECRET_KEY } from '../helpers/service.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { addTemplate, eventually } from '../messaging/send-template-fixtures.ts';

const logLines: string[] = [];
let database: TestDatabase;
let dataDir: string;
let running: RunningService;
let origin: string;
let receiver: WebhookReceiver;
let fake: FakeMessagingProvider;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  fake = await startFakeMessagingProvider();
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(tmpdir(), 'mapi-secrets-'));
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    SECRET_KEY: TEST_SECRET_KEY,
    LOG_LEVEL: 'info',
    MESSAGING_API_URL: fake.url,
    WEBHOOK_ALLOW_HOSTS: 'localhost,127.0.0.1',
  });
  running = await startService(config, pino({ level: 'info' }, sink), { router: appRouter, worker: workerDefinition });
  origin = new URL(running.baseUrl!).origin;
});
afterAll(async () => {
  await running?.stop();
  await database?.drop();
  await receiver?.close();
  await fake?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** A request to the running service (its answer whatever the status). */
function request(method: string, pathname: string, options: { query?: Record<string, string>; headers?: Record<string, string>; body?: unknown } = {}): Promise<Answer> {
  return call(origin, method, pathname, options);
}

async function ok(answer: Promise<Answer>, status = 200): Promise<any> {
  const settled = await answer;
  expect(settled.status, settled.text).toBe(status);
  return settled.body;
}

/** Every row of every table (views too) in every schema but PostgreSQL's own, as text, one entry per row. */
async function dumpDatabase(): Promise<string[]> {
  const { rows: tables } = await running.services.pool.query<{ table_schema: string; table_name: string }>(
    `select table_schema, table_name from information_schema.tables
      where table_schema not in ('pg_catalog', 'information_schema') order by 1, 2`,
  );
  const dump: string[] = [];
  for (const { table_schema, table_name } of tables) {
    const qualified = `"${table_schema.replaceAll('"', '""')}"."${table_name.replaceAll('"', '""')}"`;
    const { rows } = await running.services.pool.query<{ row: string }>(`select t::text as row from ${qualified} t`);
    for (const { row } of rows) dump.push(`${qualified}: ${row}`);
  }
  return dump;
}

/** A secret as text, and as PostgreSQL shows it in a bytea column. */
function formsOf(secret: string): string[] {
  return [secret, `\\x${Buffer.from(secret).toString('hex')}`];
}

/** The entries that contain any form of any of the named secrets. */
function findSecrets(entries: string[], secrets: Record<string, string>): string[] {
  const found: string[] = [];
  for (const [name, secret] of Object.entries(secrets)) {
    for (const form of formsOf(secret)) {
      for (const entry of entries) if (entry.includes(form)) found.push(`${name} in ${entry.slice(0, 300)}`);
    }
  }
  return found;
}

const secrets: Record<string, string> = {};
/** Not secrets at rest (a visitor's contact keeps its id), but credentials of a kind no log line may carry. */
const visitorIds: Record<string, string> = {};
let idempotencyKeys = 0;
let lastIdempotencyKey = '';
/** A fresh Idempotency-Key header, so the response is stored. */
function idempotent(): Record<string, string> {
  idempotencyKeys += 1;
  lastIdempotencyKey = `secrets-at-rest-${idempotencyKeys}`;
  return { 'idempotency-key': lastIdempotencyKey };
}
const dumps: string[][] = [];

test('a full run: keys made, rotated and sent every way, signing secrets, a provider token and a widget', async () => {
  const account = await createAccount(running.services.orm.em.fork(), running.services.secrets, { email: 'secrets@example.com', agency: true });
  secrets['first main key'] = account.apiKey;

  // Keys in every carrier, on /v1 and /trpc, including refused calls.
  await ok(request('GET', '/v1/lists', { query: { apiKey: account.apiKey, limit: '5' } }));
  await ok(request('GET', '/v1/tasks', { headers: { 'x-api-key': account.apiKey } }));
  await ok(request('GET', '/v1/usage-limits', { headers: { authorization: `Bearer ${account.apiKey}` } }));
  await ok(request('GET', '/trpc/lists.list', { query: { apiKey: account.apiKey, input: '{}' } }));

  const rotated = await ok(request('POST', '/v1/api-keys/rotate', { headers: { 'x-api-key': account.apiKey, ...idempotent() } }));
  secrets['rotated main key'] = rotated.api_key;
  expect(rotated.api_key).not.toBe(account.apiKey);
  const main = { 'x-api-key': rotated.api_key };
  // The rotation's retry, under the new value of the same key, replays the stored response.
  const replayedRotation = await request('POST', '/v1/api-keys/rotate', { headers: { ...main, 'idempotency-key': lastIdempotencyKey } });
  expect(replayedRotation.headers.get('idempotent-replayed')).toBe('true');
  expect(replayedRotation.body.api_key).toBe(rotated.api_key);
  // The old key, now refused, in the query string and in a header.
  expect((await request('GET', '/v1/lists', { query: { apiKey: account.apiKey } })).status).toBe(401);
  expect((await request('GET', '/v1/lists', { headers: { authorization: `Bearer ${account.apiKey}` } })).status).toBe(401);

  const scoped = await ok(request('POST', '/v1/api-keys', { headers: { ...main, ...idempotent() }, body: { label: 'integration', scopes: { tags: ['Contacts', 'Lists'], read_only: false } } }), 201);
  secrets['scoped key'] = scoped.api_key;
  const readOnly = await ok(request('POST', '/v1/api-keys', { headers: { ...main, ...idempotent() }, body: { label: 'reporting' } }), 201);
  secrets['read-only scoped key'] = readOnly.api_key;
  await ok(request('GET', '/v1/lists', { query: { apiKey: scoped.api_key } }));
  await ok(request('POST', '/trpc/lists.create', { headers: { 'x-api-key': scoped.api_key }, body: { name: 'made by a scoped key' } }));
  expect((await request('POST', '/v1/lists', { query: { apiKey: readOnly.api_key }, body: { name: 'refused' } })).status).toBe(403);
  // A revoked scoped key is still a secret.
  const revoked = await ok(request('POST', '/v1/api-keys', { headers: { ...main, ...idempotent() }, body: { label: 'short-lived' } }), 201);
  secrets['revoked scoped key'] = revoked.api_key;
  await ok(request('DELETE', `/v1/api-keys/${revoked.key.id}`, { headers: main }));
  expect((await request('GET', '/v1/lists', { query: { apiKey: revoked.api_key } })).status).toBe(401);

  // Webhook signing secrets: made at creation, then rotated.
  const hook = await ok(
    request('POST', '/v1/webhooks', { headers: { ...main, ...idempotent() }, body: { url: receiver.url, subscribed_to: ['Contact Created'], name: 'signed', generate_signing_secret: true } }),
  );
  expect(hook.signing_secret).toMatch(/^whsec_/);
  secrets['first signing secret'] = hook.signing_secret;
  const rotatedSecret = await ok(request('POST', `/v1/webhooks/${hook.webhook_id}/signing-secret`, { headers: { ...main, ...idempotent() } }));
  expect(rotatedSecret.signing_secret).toMatch(/^whsec_/);
  secrets['rotated signing secret'] = rotatedSecret.signing_secret;
  await ok(request('GET', `/v1/webhooks/${hook.webhook_id}/signing-secret`, { headers: main }));

  // The provider's access token, then a template send and a sync that use it.
  const token = `EAAG${randomBytes(24).toString('hex')}`;
  secrets['provider access token'] = token;
  // A single /trpc mutation stores its response too.
  const trpcKey = await ok(request('POST', '/trpc/apiKeys.create', { headers: { ...main, ...idempotent() }, body: { label: 'over trpc' } }));
  secrets['scoped key made over /trpc'] = trpcKey.result.data.api_key;

  fake.grant(token, { phoneNumberId: '7070707', businessAccountId: '7171717' });
  await ok(request('PUT', '/v1/messaging/connection', { headers: main, body: { phone_number_id: '7070707', business_account_id: '7171717', access_token: token } }));
  fake.setTemplates('7171717', []);
  await request('POST', '/v1/whatsapp-templates/sync', { headers: main });
  const contact = await ok(request('POST', '/v1/contacts', { query: { apiKey: rotated.api_key }, body: { phoneNumber: '+14155550199', firstName: 'Ada' } }));
  // addTemplate reads only `services` of a test service.
  const templateId = await addTemplate({ services: running.services } as never, account.userId, { name: 'hello', body: 'Hello {{first_name|there}}' });
  await ok(request('POST', '/v1/whatsapp-templates/send', { headers: main, body: { contactId: contact.data.contactId, whatsappTemplateId: templateId } }));
  expect(fake.sends().at(-1)?.authorization).toBe(`Bearer ${token}`);

  // A chat widget: its one-time-code secret is only ever sealed; unsealing it here tells the test what to look for.
  const widget = await ok(request('POST', '/v1/chat-widgets', { headers: main, body: { name: 'Support' } }), 201);
  await ok(request('GET', `/v1/chat-widgets/${widget.data.id}/otp`, { headers: main }));
  const { rows } = await running.services.pool.query<{ otp_secret_sealed: string }>('select otp_secret_sealed from chat_widgets where id = $1', [widget.data.id]);
  secrets['widget one-time-code secret'] = running.services.secrets.unseal(rows[0]!.otp_secret_sealed);
  expect(secrets['widget one-time-code secret']!.length).toBeGreaterThanOrEqual(16);

  // Its identity secret, shown once, and a token a site signed with it; visitors on every public endpoint.
  const identity = await ok(request('POST', `/v1/chat-widgets/${widget.data.id}/identity-secret`, { headers: { ...main, ...idempotent() } }));
  expect(identity.data.identity_secret).toMatch(/^wis_/);
  secrets['widget identity secret'] = identity.data.identity_secret;
  // A hand-off keyword: its message queues the bot's turn, whose job the worker logs.
  await ok(request('PUT', `/v1/chat-widgets/${widget.data.id}`, { headers: main, body: { settings: { identityVerification: 'optional', handoffKeywords: ['person'] } } }));
  const visitorToken = await new SignJWT({ sub: 'site-user-1', email: 'visitor@example.com' })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(identity.data.identity_secret));
  secrets['visitor identity token'] = visitorToken;
  const visitorId = `visitor_${randomBytes(12).toString('hex')}`;
  visitorIds['anonymous visitor id'] = visitorId;
  const verifiedDevice = `device_${randomBytes(12).toString('hex')}`;
  visitorIds['verified visitor device id'] = verifiedDevice;
  const visit = (fromId: string, headers: Record<string, string> = {}) => ({ query: { userId: account.userId }, headers, body: { customData: { body: 'hello, a person please', fromId, toId: widget.data.id } } });
  await ok(request('POST', '/v1/incoming-chat-widget-message', visit(visitorId)));
  await ok(request('POST', '/v1/incoming-chat-widget-message', visit(verifiedDevice, { 'x-visitor-identity': visitorToken })));
  await ok(request('GET', `/v1/chat-widget/${widget.data.id}/${visitorId}`));
  await ok(request('GET', '/v1/chat-widget-messages', { query: { fromId: visitorId, toId: widget.data.id } }));
  await ok(request('POST', '/v1/update-message-read-status', { body: { fromId: visitorId, toId: widget.data.id } }));
  await ok(request('GET', '/v1/chat-widget-messages', { query: { fromId: verifiedDevice, toId: widget.data.id }, headers: { 'x-visitor-identity': visitorToken } }));
  // The bot's turns ran and the worker logged them (Graphile Worker logs each job it completes).
  await eventually(
    async () => logLines.filter((line) => line.includes('chat_widget_message') && line.includes('Completed task')).length,
    (completed) => completed >= 2,
  );

  // While jobs are still queued, and again once the worker is done with them.
  dumps.push(await dumpDatabase());
  await receiver.waitFor((requests) => requests.length >= 1, 30_000);
  await eventually(
    async () => (await running.services.pool.query<{ n: number }>(`select count(*)::int as n from webhook_deliveries where status <> 'succeeded'`)).rows[0]!.n,
    (pending) => pending === 0,
  );
  // The delivery was signed with the current secret, which the receiver saw: that is its only place.
  expect(receiver.requests[0]!.headers['webhook-signature']).toBeDefined();
  dumps.push(await dumpDatabase());
  expect(Object.keys(secrets)).toHaveLength(12);
  // Each response with a secret above was stored under its Idempotency-Key.
  const { rows: stored } = await running.services.pool.query<{ n: number }>(`select count(*)::int as n from idempotency_keys where state = 'completed'`);
  expect(stored[0]!.n).toBe(idempotencyKeys);
});

test('no table of the database holds any secret in the clear', () => {
  expect(dumps).toHaveLength(2);
  expect(dumps.flatMap((dump) => findSecrets(dump, secrets))).toEqual([]);
});

test('no log line holds any secret', () => {
  expect(logLines.filter((line) => line.includes('"component":"http"')).length).toBeGreaterThan(10);
  expect(findSecrets(logLines, { ...secrets, ...visitorIds, 'the SECRET_KEY': TEST_SECRET_KEY })).toEqual([]);
  expect(Object.keys(visitorIds)).toHaveLength(2);
});

test('the searches find a secret that is there: a planted row, a planted bytea, a planted log line', async () => {
  const planted = `plant_${randomBytes(12).toString('hex')}`;
  await running.services.pool.query('create table secrets_scratch (note text, blob bytea)');
  try {
    await running.services.pool.query('insert into secrets_scratch values ($1, null), (null, $2)', [`left here: ${planted}`, Buffer.from(planted)]);
    const found = findSecrets(await dumpDatabase(), { planted });
    expect(found).toHaveLength(2);
  } finally {
    await running.services.pool.query('drop table secrets_scratch');
  }
  // The access log records the path: a planted path segment must be found in the captured lines.
  await request('GET', `/v1/${planted}`);
  await eventually(async () => findSecrets(logLines, { planted }).length, (count) => count > 0, 5_000);
});
