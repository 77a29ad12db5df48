// Agency inheritance: an agency subscription with apply_to_sub_accounts receives its
// client accounts' events, unless the client subscribes to the same URL itself. The
// spec's rules 1-6 each have a test named after them here, except rule 4 (lists and
// switches), which test/webhooks/subscriptions.test.ts covers through the API.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { emit } from '../../server/events/emit.ts';
import { eventsOf, insertEventsSql, newEventRow } from '../../server/events/sql/insert-events.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { startWebhookReceiver, type ReceiverScript, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { createContact, createTask, deliveriesOf, eventually, expectedSignature, healthOf, lastEventId, subscribe, WEBHOOK_ENV } from './webhook-fixtures.ts';

let service: TestService;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  service = await startTestService({ env: WEBHOOK_ENV });
});

afterAll(async () => {
  for (const receiver of receivers) await receiver.close();
  await service?.stop();
});

async function receiver(respond: (userId: string, index: number, event: string) => number = () => 200): Promise<WebhookReceiver> {
  const script: ReceiverScript = (request, index) => {
    const payload = JSON.parse(request.body);
    return { status: respond(payload.user.id, index, payload.event) };
  };
  const started = await startWebhookReceiver({ respondWith: script });
  receivers.push(started);
  return started;
}

/** Resolves once the event has been through dispatch (its deliveries, if any, are queued). */
async function dispatched(eventId: string): Promise<void> {
  await eventually(async () => (await service.services.pool.query(`select dispatched_at from events where id = $1`, [eventId])).rows[0].dispatched_at, (at) => at !== null);
}

/** Raises a conversation-summary Chat Concluded event with these tags, as the summary job does. */
async function emitSummary(accountId: string, tags: string[]): Promise<void> {
  const em = service.services.orm.em.fork();
  await em.transactional(async (tx) => {
    await emit(tx, accountId, 'Chat Concluded', { kind: 'conversation_summary', tags });
  });
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

test("Agency inheritance rule 1: the subscription also receives events from every client account; the payload user block identifies the account where the event happened", async () => {
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

test('Agency inheritance rule 2: the agency subscription\'s event list and signing secret apply to inherited deliveries', async () => {
  const hook = await receiver();
  const { agency, clients: [client] } = await agencyWithClients(1);
  const secret = 'whsec_YWdlbmN5LXNlY3JldC1mb3ItaW5oZXJpdGVkLWRlbGl2ZXJpZXM=';
  await subscribe(service, agency.userId, { url: hook.url, events: ['Task Created'], applyToSubAccounts: true, secret });
  await createContact(service, agency.apiKey, client);
  await createTask(service, agency.apiKey, client);
  const [request] = await hook.waitFor(1);
  expect(request.headers['x-webhook-event']).toBe('Task Created');
  expect(JSON.parse(request.body).user.id).toBe(client);
  // Signed with the agency subscription's secret, over this delivery's timestamp and raw body.
  const timestamp = request.headers['x-webhook-timestamp'];
  expect(timestamp).toMatch(/^\d+$/);
  expect(request.headers['x-webhook-signature']).toBe(expectedSignature(secret, timestamp as string, request.body));
  const contactEvent = await lastEventId(service, client, 'Contact Created');
  await dispatched(contactEvent);
  expect(hook.requests.map((received) => received.headers['x-webhook-event'])).toEqual(['Task Created']);
});

test('Agency inheritance rule 2: the agency subscription\'s retry opt-in applies to inherited deliveries', async () => {
  // Both URLs fail the first attempt of every delivery and accept the next one.
  const failOnce = (_userId: string, index: number) => (index === 0 ? 503 : 200);
  const retrying = await receiver(failOnce);
  const notRetrying = await receiver(failOnce);
  const { agency, clients: [client] } = await agencyWithClients(1);
  const withRetries = await subscribe(service, agency.userId, { url: retrying.url, events: ['Task Created'], applyToSubAccounts: true, retries: true });
  const withoutRetries = await subscribe(service, agency.userId, { url: notRetrying.url, events: ['Task Created'], applyToSubAccounts: true, retries: false });
  await createTask(service, agency.apiKey, client);

  const settled = (rows: Awaited<ReturnType<typeof deliveriesOf>>) => rows[0] !== undefined && rows[0].status !== 'pending';
  const [retried] = await eventually(() => deliveriesOf(service, withRetries), settled);
  expect(retried).toMatchObject({ account_id: client, status: 'succeeded', attempts: 2 });
  expect(retrying.requests.map((received) => [received.headers['x-webhook-attempt'], JSON.parse(received.body).user.id])).toEqual([['1', client], ['2', client]]);
  const [notRetried] = await eventually(() => deliveriesOf(service, withoutRetries), settled);
  expect(notRetried).toMatchObject({ account_id: client, status: 'failed', attempts: 1 });
  expect(notRetrying.requests).toHaveLength(1);
});

test('without apply_to_sub_accounts the agency subscription does not receive client events', async () => {
  const hook = await receiver();
  const { agency, clients: [client] } = await agencyWithClients(1);
  const subscriptionId = await subscribe(service, agency.userId, { url: hook.url, events: ['Task Created'] });
  await createTask(service, agency.apiKey, client);
  await createTask(service, agency.apiKey);
  const [request] = await hook.waitFor(1);
  expect(JSON.parse(request.body).user.id).toBe(agency.userId);
  const dispatched = async (accountId: string) => {
    const eventId = await lastEventId(service, accountId, 'Task Created');
    await eventually(async () => (await service.services.pool.query(`select dispatched_at from events where id = $1`, [eventId])).rows[0].dispatched_at, (at) => at !== null);
  };
  await dispatched(client);
  await dispatched(agency.userId);
  expect((await deliveriesOf(service, subscriptionId)).map((row) => row.account_id)).toEqual([agency.userId]);
});

test('Agency inheritance rule 3: when a client account has its own subscription to the same URL, that one is used; the same event is never delivered twice to one endpoint', async () => {
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

test('Agency inheritance rule 5: delivery health is tracked per client account', async () => {
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

test('Agency inheritance rule 5: an auto-disabled URL pauses delivery for that client account only', async () => {
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
  for (const accountId of [paused, active]) {
    const eventId = await lastEventId(service, accountId, 'Task Created');
    await eventually(async () => (await service.services.pool.query(`select dispatched_at from events where id = $1`, [eventId])).rows[0].dispatched_at, (at) => at !== null);
  }
  expect((await deliveriesOf(service, subscriptionId)).map((row) => row.account_id)).toEqual([active]);
});

test('Agency inheritance rule 6: on an account without client accounts the flag is stored and has no effect', async () => {
  const stranger = await service.createAccount();
  const { agency: otherAgency, clients: [otherClient] } = await agencyWithClients(1);
  for (const owner of [await service.createAccount(), await service.createAccount({ agency: true })]) {
    const hook = await receiver();
    const created = await service.request('POST', '/webhooks', {
      apiKey: owner.apiKey,
      body: { url: hook.url, subscribed_to: ['Task Created'], name: 'everything', apply_to_sub_accounts: true },
    });
    expect(created.status, created.text).toBe(200);
    const listed = await service.request('GET', '/webhooks', { apiKey: owner.apiKey });
    expect(listed.status).toBe(200);
    expect(listed.body.webhooks).toEqual([expect.objectContaining({ name: 'everything', apply_to_sub_accounts: true })]);

    // Events of accounts that are not its clients never reach it; its own events arrive once.
    await createTask(service, stranger.apiKey);
    await createTask(service, otherAgency.apiKey, otherClient);
    await createTask(service, owner.apiKey);
    await dispatched(await lastEventId(service, stranger.userId, 'Task Created'));
    await dispatched(await lastEventId(service, otherClient, 'Task Created'));
    const stored = await service.services.pool.query<{ id: string }>(`select id from webhook_subscriptions where account_id = $1 and name = 'everything'`, [owner.userId]);
    const rows = await eventually(() => deliveriesOf(service, stored.rows[0].id), (list) => list.length > 0 && list.every((row) => row.status === 'succeeded'));
    expect(rows.map((row) => row.account_id)).toEqual([owner.userId]);
    expect(hook.requests.map((request) => JSON.parse(request.body).user.id)).toEqual([owner.userId]);
  }
});

test('subscribed_to_tags is not inherited by client accounts', async () => {
  const hook = await receiver();
  const { agency, clients: [client] } = await agencyWithClients(1);
  const subscriptionId = await subscribe(service, agency.userId, { url: hook.url, events: ['Chat Concluded'], tags: ['tag_wanted'], applyToSubAccounts: true });
  // In the agency's own account the tag filter narrows conversation summaries...
  await emitSummary(agency.userId, ['tag_other']);
  await dispatched(await lastEventId(service, agency.userId, 'Chat Concluded'));
  // ...in a client account it does not apply.
  await emitSummary(client, ['tag_other']);
  const rows = await eventually(() => deliveriesOf(service, subscriptionId), (list) => list.length > 0 && list.every((row) => row.status === 'succeeded'));
  expect(rows.map((row) => row.account_id)).toEqual([client]);
  expect(hook.requests.map((request) => [JSON.parse(request.body).user.id, JSON.parse(request.body).data])).toEqual([[client, { kind: 'conversation_summary', tags: ['tag_other'] }]]);
});

test("deleting a client account removes its deliveries and their log from the agency's subscription; deleting the subscription removes the rest", async () => {
  // Contact Created succeeds (its attempt is its only row); Task Created is refused, not retried (a failed delivery row and its attempt).
  const hook = await receiver((_userId, _index, event) => (event === 'Task Created' ? 410 : 200));
  const { agency, clients: [leaving, staying] } = await agencyWithClients(2);
  const subscriptionId = await subscribe(service, agency.userId, { url: hook.url, events: ['Contact Created', 'Task Created'], applyToSubAccounts: true });
  for (const account of [leaving, staying, undefined]) {
    await createContact(service, agency.apiKey, account);
    await createTask(service, agency.apiKey, account);
  }
  await eventually(
    () => deliveriesOf(service, subscriptionId),
    (list) => list.filter((row) => row.status === 'succeeded').length === 3 && list.filter((row) => row.status === 'failed').length === 3,
  );
  /** Each account's delivery rows and attempts on the subscription, in account order. */
  const history = async () =>
    (
      await service.services.pool.query<{ account_id: string; deliveries: number; attempts: number }>(
        `select account_id, sum(deliveries)::int as deliveries, sum(attempts)::int as attempts from (
           select account_id, 1 as deliveries, 0 as attempts from webhook_deliveries where subscription_id = $1
           union all
           select account_id, 0, 1 from webhook_attempts where subscription_id = $1
         ) rows
         group by account_id order by 1`,
        [subscriptionId],
      )
    ).rows;
  const each = (account: string) => ({ account_id: account, deliveries: 1, attempts: 2 });
  expect(await history()).toEqual([leaving, staying, agency.userId].sort().map(each));

  expect((await service.request('DELETE', `/sub-accounts/${leaving}`, { apiKey: agency.apiKey })).status).toBe(200);
  expect(await history()).toEqual([staying, agency.userId].sort().map(each));
  const log = await service.request('GET', '/webhooks/1/deliveries', { apiKey: agency.apiKey });
  expect(log.status).toBe(200);
  expect(log.body.deliveries).toHaveLength(4);

  expect((await service.request('DELETE', '/webhooks/1', { apiKey: agency.apiKey })).status).toBe(200);
  expect(await history()).toEqual([]);
  const left = await service.services.pool.query(`select count(*)::int as n from webhook_attempts where subscription_id = $1`, [subscriptionId]);
  expect(left.rows[0].n).toBe(0);
});

/** Whether the event writer leaves an event of the account to the dispatch, read before its commit (so no dispatch has run yet). */
async function leftToDispatch(accountId: string): Promise<boolean> {
  const client = await service.services.pool.connect();
  try {
    await client.query('begin');
    const [event] = eventsOf(accountId, [newEventRow('Task Created', {})]);
    await client.query(insertEventsSql([event!]).statement());
    const { rows } = await client.query<{ dispatched_at: Date | null }>('select dispatched_at from events where id = $1', [event!.id]);
    return rows[0]!.dispatched_at === null;
  } finally {
    await client.query('rollback');
    client.release();
  }
}

test('an event no subscription can receive is written dispatched; one that an enabled subscription of the account, or of its agency for its clients, can receive is left to the dispatch', async () => {
  const hook = await receiver();
  const alone = await service.createAccount();
  expect(await leftToDispatch(alone.userId)).toBe(false);

  const subscribed = await service.createAccount();
  const own = await subscribe(service, subscribed.userId, { url: hook.url, events: ['Contact Created'] });
  expect(await leftToDispatch(subscribed.userId)).toBe(true);
  await service.services.pool.query('update webhook_subscriptions set enabled = false where id = $1', [own]);
  expect(await leftToDispatch(subscribed.userId)).toBe(false);

  const { agency, clients: [client] } = await agencyWithClients(1);
  await subscribe(service, agency.userId, { url: hook.url, events: ['Task Created'] });
  expect(await leftToDispatch(client!)).toBe(false);
  await subscribe(service, agency.userId, { url: `${hook.url}/clients`, events: ['Task Created'], applyToSubAccounts: true });
  expect(await leftToDispatch(client!)).toBe(true);
  expect(await leftToDispatch(agency.userId)).toBe(true);

  // A committed one is kept for the history as written: dispatched.
  await createTask(service, alone.apiKey);
  const { rows } = await service.services.pool.query<{ dispatched: boolean }>(`select dispatched_at is not null as dispatched from events where account_id = $1`, [alone.userId]);
  expect(rows).toEqual([{ dispatched: true }]);
});
