// Agency inheritance: an agency subscription with apply_to_sub_accounts receives its
// client accounts' events, unless the client subscribes to the same URL itself.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { createContact, createTask, deliveriesOf, eventually, healthOf, lastEventId, subscribe, WEBHOOK_ENV } from './webhook-fixtures.ts';

let service: TestService;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  service = await startTestService({ env: WEBHOOK_ENV });
});

afterAll(async () => {
  for (const receiver of receivers) await receiver.close();
  await service?.stop();
});

async function receiver(respond: (userId: string) => number = () => 200): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver({ respondWith: (request) => ({ status: respond(JSON.parse(request.body).user.id) }) });
  receivers.push(started);
  return started;
}

let clientCounter = 0;

async function agencyWithClients(count: number) {
  const agency = await service.createAccount({ agency: true });
  const clients: string[] = [];
  for (let i = 0; i < count; i++) {
    clientCounter += 1;
    const created = await service.request('POST', '/sub-accounts', {
      apiKey: agency.apiKey,
      body: { email: `client${clientCounter}-${Date.now()}@example.com`, first_name: 'Cli', last_name: `Ent${clientCounter}`, usage_limits: { monthly_credits: 10 } },
    });
    expect(created.status).toBe(201);
    clients.push(created.body.data.id);
  }
  return { agency, clients };
}

test("the subscription also receives events from every client account; the payload user block identifies the account where the event happened", async () => {
  const hook = await receiver();
  const { agency, clients: [client] } = await agencyWithClients(1);
  const subscriptionId = await subscribe(service, agency.userId, { url: hook.url, events: ['Contact Created', 'Task Created'], applyToSubAccounts: true });

  await createContact(service, agency.apiKey, client);
  await createTask(service, agency.apiKey);
  const requests = await hook.waitFor(2);
  const payloads = requests.map((request) => JSON.parse(request.body));
  expect(payloads.map((payload) => [payload.event, payload.user.id]).sort()).toEqual([
    ['Contact Created', client],
    ['Task Created', agency.userId],
  ]);
  const clientPayload = payloads.find((payload) => payload.event === 'Contact Created');
  expect(clientPayload.user.id).not.toBe(agency.userId);
  expect(clientPayload.user.email).toMatch(/^client\d+-/);
  const rows = await eventually(() => deliveriesOf(service, subscriptionId), (list) => list.length === 2 && list.every((row) => row.status === 'succeeded'));
  expect(rows.map((row) => row.account_id).sort()).toEqual([agency.userId, client].sort());
});

test('the agency subscription\'s event list and signing secret apply to inherited deliveries', async () => {
  const hook = await receiver();
  const { agency, clients: [client] } = await agencyWithClients(1);
  const secret = 'whsec_YWdlbmN5LXNlY3JldC1mb3ItaW5oZXJpdGVkLWRlbGl2ZXJpZXM=';
  await subscribe(service, agency.userId, { url: hook.url, events: ['Task Created'], applyToSubAccounts: true, secret });
  await createContact(service, agency.apiKey, client);
  await createTask(service, agency.apiKey, client);
  const [request] = await hook.waitFor(1);
  expect(request.headers['x-webhook-event']).toBe('Task Created');
  expect(request.headers['x-webhook-signature']).toMatch(/^v1=[0-9a-f]{64}$/);
  const contactEvent = await lastEventId(service, client, 'Contact Created');
  const dispatched = await service.services.pool.query(`select dispatched_at from events where id = $1`, [contactEvent]);
  expect(dispatched.rows[0].dispatched_at).not.toBeNull();
  expect(hook.requests.map((received) => received.headers['x-webhook-event'])).toEqual(['Task Created']);
});

test('without apply_to_sub_accounts the agency subscription does not receive client events', async () => {
  const hook = await receiver();
  const { agency, clients: [client] } = await agencyWithClients(1);
  const subscriptionId = await subscribe(service, agency.userId, { url: hook.url, events: ['Task Created'] });
  await createTask(service, agency.apiKey, client);
  await createTask(service, agency.apiKey);
  const [request] = await hook.waitFor(1);
  expect(JSON.parse(request.body).user.id).toBe(agency.userId);
  const clientEvent = await lastEventId(service, client, 'Task Created');
  await eventually(async () => (await service.services.pool.query(`select dispatched_at from events where id = $1`, [clientEvent])).rows[0].dispatched_at, (at) => at !== null);
  expect((await deliveriesOf(service, subscriptionId)).map((row) => row.account_id)).toEqual([agency.userId]);
});

test('when a client account has its own subscription to the same URL, that one is used; the same event is never delivered twice to one endpoint', async () => {
  const hook = await receiver();
  const { agency, clients: [client] } = await agencyWithClients(1);
  const inherited = await subscribe(service, agency.userId, { url: hook.url, events: ['Task Created'], applyToSubAccounts: true });
  const own = await subscribe(service, client, { url: hook.url, events: ['Task Created'] });

  await createTask(service, agency.apiKey, client);
  const [request] = await hook.waitFor(1);
  const ownDeliveries = await eventually(() => deliveriesOf(service, own), (rows) => rows[0]?.status === 'succeeded');
  expect(request.headers['x-webhook-delivery']).toBe(ownDeliveries[0].id);
  expect(await deliveriesOf(service, inherited)).toEqual([]);
  // A second, later event proves the first was not sent again meanwhile.
  await createTask(service, agency.apiKey, client);
  await hook.waitFor(2);
  expect(new Set(hook.requests.map((received) => JSON.parse(received.body).event_id)).size).toBe(2);
  expect(hook.requests).toHaveLength(2);
});

test('delivery health is tracked per client account', async () => {
  const { agency, clients: [failing, healthy] } = await agencyWithClients(2);
  const hook = await receiver((userId) => (userId === failing ? 500 : 200));
  const subscriptionId = await subscribe(service, agency.userId, { url: hook.url, events: ['Task Created'], applyToSubAccounts: true });
  await createTask(service, agency.apiKey, failing);
  await createTask(service, agency.apiKey, healthy);
  await hook.waitFor(2);
  const failingHealth = await eventually(() => healthOf(service, subscriptionId, failing), (row) => row?.total_failures === 1);
  const healthyHealth = await eventually(() => healthOf(service, subscriptionId, healthy), (row) => row?.total_successes === 1);
  expect(failingHealth).toMatchObject({ consecutive_failures: 1, total_successes: 0 });
  expect(healthyHealth).toMatchObject({ consecutive_failures: 0, total_failures: 0 });
  expect(await healthOf(service, subscriptionId, agency.userId)).toBeNull();
});

test('an auto-disabled URL pauses delivery for that client account only', async () => {
  const { agency, clients: [paused, active] } = await agencyWithClients(2);
  const hook = await receiver();
  const subscriptionId = await subscribe(service, agency.userId, { url: hook.url, events: ['Task Created'], applyToSubAccounts: true });
  await service.services.pool.query(
    `insert into webhook_health (subscription_id, account_id, consecutive_failures, total_failures, is_disabled, disabled_at, disabled_reason)
     values ($1, $2, 5, 5, true, now(), 'paused for the test')`,
    [subscriptionId, paused],
  );
  await createTask(service, agency.apiKey, paused);
  await createTask(service, agency.apiKey, active);
  const [request] = await hook.waitFor(1);
  expect(JSON.parse(request.body).user.id).toBe(active);
  const pausedEvent = await lastEventId(service, paused, 'Task Created');
  await eventually(async () => (await service.services.pool.query(`select dispatched_at from events where id = $1`, [pausedEvent])).rows[0].dispatched_at, (at) => at !== null);
  expect((await deliveriesOf(service, subscriptionId)).map((row) => row.account_id)).toEqual([active]);
});
