// Events reach subscribed URLs over real HTTPS, from the outbox, through the real worker.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { emit } from '../../server/events/emit.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import {
  createContact,
  createTask,
  deliveriesOf,
  eventually,
  expectedSignature,
  healthOf,
  lastEventId,
  subscribe,
  WEBHOOK_ENV,
} from './webhook-fixtures.ts';

let service: TestService;
let receiver: WebhookReceiver;

beforeAll(async () => {
  service = await startTestService({ env: WEBHOOK_ENV });
  receiver = await startWebhookReceiver();
});

afterAll(async () => {
  await receiver?.close();
  await service?.stop();
});

const fromAccount = (accountId: string) => (requests: WebhookReceiver['requests']) =>
  requests.filter((request) => JSON.parse(request.body).user?.id === accountId);

describe('delivery headers, signature and payload', () => {
  test('every payload has a user block identifying the account where the event happened; X-Webhook-Delivery, X-Webhook-Attempt and X-Webhook-Event on every delivery; X-Webhook-Signature is v1=HMAC-SHA256 of `<timestamp>.<raw request body>`', async () => {
    const account = await service.createAccount();
    const secret = 'whsec_dGVzdC1zaWduaW5nLXNlY3JldC1mb3ItZGVsaXZlcnk=';
    const subscriptionId = await subscribe(service, account.userId, { url: receiver.url, events: ['Contact Created'], secret });

    const before = Math.floor(Date.now() / 1000);
    const contactId = await createContact(service, account.apiKey);
    const [request] = fromAccount(account.userId)(await receiver.waitFor((all) => fromAccount(account.userId)(all).length >= 1));
    const received = Math.ceil(request.receivedAt.getTime() / 1000);
    const eventId = await lastEventId(service, account.userId, 'Contact Created');
    // Written once its first attempt is answered, in the round that made it.
    const [delivery] = await eventually(() => deliveriesOf(service, subscriptionId), (list) => list.length === 1);

    expect(request.method).toBe('POST');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['x-webhook-delivery']).toBe(delivery.id);
    expect(request.headers['x-webhook-delivery']).toMatch(/^dlv_/);
    expect(request.headers['x-webhook-attempt']).toBe('1');
    expect(request.headers['x-webhook-event']).toBe('Contact Created');

    const payload = JSON.parse(request.body);
    expect(payload).toMatchObject({ event: 'Contact Created', event_id: eventId, data: expect.objectContaining({}) });
    expect(payload.user).toEqual({ id: account.userId, email: expect.stringContaining('@'), name: null });
    expect(JSON.stringify(payload.data)).toContain(contactId);

    // Receiver rules: verify against the raw body; the timestamp is the send time (receivers
    // check it is fresh), so it lies between the change and the delivery's arrival.
    const timestamp = request.headers['x-webhook-timestamp'] as string;
    expect(Number(timestamp)).toBeGreaterThanOrEqual(before);
    expect(Number(timestamp)).toBeLessThanOrEqual(received);
    expect(request.headers['x-webhook-signature']).toBe(expectedSignature(secret, timestamp, request.body));
    expect(request.headers['x-webhook-signature']).not.toBe(expectedSignature('whsec_other', timestamp, request.body));

    await eventually(() => deliveriesOf(service, subscriptionId), (rows) => rows[0]?.status === 'succeeded');
    const health = await healthOf(service, subscriptionId, account.userId);
    expect(health).toMatchObject({ consecutive_failures: 0, total_failures: 0, total_successes: 1, is_disabled: false });
    expect(health!.last_success_at).not.toBeNull();
  });

  test('without a signing secret a delivery carries no X-Webhook-Signature or X-Webhook-Timestamp', async () => {
    const account = await service.createAccount();
    await subscribe(service, account.userId, { url: receiver.url, events: ['Task Created'] });
    await createTask(service, account.apiKey);
    const [request] = fromAccount(account.userId)(await receiver.waitFor((all) => fromAccount(account.userId)(all).length >= 1));
    expect(request.headers['x-webhook-event']).toBe('Task Created');
    expect(request.headers['x-webhook-signature']).toBeUndefined();
    expect(request.headers['x-webhook-timestamp']).toBeUndefined();
  });
});

describe('which subscriptions receive an event', () => {
  test('a subscription receives only the event names in subscribed_to', async () => {
    const account = await service.createAccount();
    const subscriptionId = await subscribe(service, account.userId, { url: receiver.url, events: ['Task Created'] });
    await createContact(service, account.apiKey);
    await createTask(service, account.apiKey);
    await receiver.waitFor((all) => fromAccount(account.userId)(all).length >= 1);
    const contactEvent = await lastEventId(service, account.userId, 'Contact Created');
    // The Contact Created event was dispatched (before the later task's) and queued nothing.
    const dispatched = await service.services.pool.query(`select dispatched_at from events where id = $1`, [contactEvent]);
    expect(dispatched.rows[0].dispatched_at).not.toBeNull();
    const rows = await eventually(() => deliveriesOf(service, subscriptionId), (list) => list.length > 0);
    expect(rows.map((row) => row.event_id)).toEqual([await lastEventId(service, account.userId, 'Task Created')]);
    expect(fromAccount(account.userId)(receiver.requests).map((request) => request.headers['x-webhook-event'])).toEqual(['Task Created']);
  });

  test('a delivery happens only when the subscription is enabled (`enabled`)', async () => {
    const account = await service.createAccount();
    const off = await subscribe(service, account.userId, { url: `${receiver.origin}/off`, events: ['Task Created'], enabled: false });
    const on = await subscribe(service, account.userId, { url: `${receiver.origin}/on`, events: ['Task Created'] });
    await createTask(service, account.apiKey);
    await receiver.waitFor((all) => fromAccount(account.userId)(all).length >= 1);
    await eventually(() => deliveriesOf(service, on), (rows) => rows[0]?.status === 'succeeded');
    expect(await deliveriesOf(service, off)).toEqual([]);
    expect(fromAccount(account.userId)(receiver.requests).map((request) => request.path)).toEqual(['/on']);
  });

  test('the same event is never delivered twice to one endpoint, even by two subscriptions of one account', async () => {
    const account = await service.createAccount();
    const first = await subscribe(service, account.userId, { url: receiver.url, events: ['Task Created'] });
    const second = await subscribe(service, account.userId, { url: receiver.url, events: ['Task Created', 'Contact Created'] });
    await createTask(service, account.apiKey);
    await receiver.waitFor((all) => fromAccount(account.userId)(all).length >= 1);
    const both = async () => [...(await deliveriesOf(service, first)), ...(await deliveriesOf(service, second))];
    // The event's round has committed once its event is dispatched.
    const taskEvent = await lastEventId(service, account.userId, 'Task Created');
    await eventually(async () => (await service.services.pool.query(`select dispatched_at from events where id = $1`, [taskEvent])).rows[0].dispatched_at, (at) => at !== null);
    expect(await both()).toHaveLength(1);
  });

  test('subscribed_to_tags narrows which tags produce a conversation-summary notification only; it does not scope other events', async () => {
    const account = await service.createAccount();
    const tagged = await subscribe(service, account.userId, { url: `${receiver.origin}/tagged`, events: ['Chat Concluded', 'Task Created'], tags: ['tag_wanted'] });
    // Raised through the outbox itself, as the summary job raises it.
    const em = service.services.orm.em.fork();
    await em.transactional(async (tx) => {
      await emit(tx, account.userId, 'Chat Concluded', { kind: 'conversation_summary', tags: ['tag_other'] });
      await emit(tx, account.userId, 'Chat Concluded', { kind: 'conversation_summary', tags: ['tag_other', 'tag_wanted'] });
      await emit(tx, account.userId, 'Chat Concluded', { kind: 'chat_session_closed', tags: [] });
    });
    await createTask(service, account.apiKey);
    await receiver.waitFor((all) => fromAccount(account.userId)(all).length >= 3);
    await eventually(() => deliveriesOf(service, tagged), (rows) => rows.length === 3 && rows.every((row) => row.status === 'succeeded'));
    const received = fromAccount(account.userId)(receiver.requests).map((request) => JSON.parse(request.body));
    expect(received.filter((payload) => payload.event === 'Chat Concluded').map((payload) => payload.data).sort((a, b) => a.kind.localeCompare(b.kind))).toEqual([
      { kind: 'chat_session_closed', tags: [] },
      { kind: 'conversation_summary', tags: ['tag_other', 'tag_wanted'] },
    ]);
    expect(received.filter((payload) => payload.event === 'Task Created')).toHaveLength(1);
  });
});
