// GET /webhooks/{webhookId}/deliveries and POST /webhooks/{webhookId}/replay over real
// HTTPS, and the history they reach back through (WEBHOOK_HISTORY_DAYS). Deliveries in a
// chosen state are written as rows (the way the delivery engine stores them); the replayed
// ones are then sent by the real engine to a real receiver.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { newId } from '../../server/db/ids.ts';
import { sweepWebhookHistory } from '../../workers/sweep-webhook-history.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';

let service: TestService;
let receiver: WebhookReceiver;

beforeAll(async () => {
  service = await startTestService({ env: { WEBHOOK_ALLOW_HOSTS: 'localhost,127.0.0.1' } });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await service?.stop();
});

type Account = { userId: string; apiKey: string };

async function createWebhook(account: Account, name: string, url = receiver.url, on = service): Promise<string> {
  const created = await on.request('POST', '/webhooks', { apiKey: account.apiKey, body: { url, name, subscribed_to: ['Replies', 'Reads'] } });
  expect(created.status, created.text).toBe(200);
  const { rows } = await on.services.pool.query<{ id: string }>('select id from webhook_subscriptions where account_id = $1 and name = $2', [account.userId, name]);
  return rows[0]!.id;
}

/**
 * An event already dispatched (so the engine does not queue it again) and its delivery
 * to the subscription, `ageMinutes` old, in `status`, with one attempt row per status code.
 */
async function insertDelivery(
  account: Account,
  subscriptionId: string,
  options: { event?: string; status: 'pending' | 'succeeded' | 'failed' | 'dropped'; ageMinutes: number; attempts?: Array<{ statusCode: number | null; error: string | null }> },
  on = service,
): Promise<string> {
  const eventId = newId('evt');
  const deliveryId = newId('dlv');
  const event = options.event ?? 'Replies';
  const attempts = options.attempts ?? [];
  const payload = { event, event_id: eventId, occurred_at: new Date().toISOString(), user: { id: account.userId }, data: { n: deliveryId } };
  const pool = on.services.pool;
  await pool.query(
    `insert into events (id, account_id, name, payload, created_at, dispatched_at)
     values ($1, $2, $3, $4, now() - make_interval(mins => $5), now())`,
    [eventId, account.userId, event, payload, options.ageMinutes],
  );
  await pool.query(
    `insert into webhook_deliveries (id, event_id, subscription_id, account_id, status, attempts, next_attempt_at, first_attempt_at, last_status_code, created_at)
     values ($1, $2, $3, $4, $5, $6, null, now() - make_interval(mins => $7), $8, now() - make_interval(mins => $7))`,
    [deliveryId, eventId, subscriptionId, account.userId, options.status, attempts.length, options.ageMinutes, attempts.at(-1)?.statusCode ?? null],
  );
  for (const [index, attempt] of attempts.entries()) {
    await pool.query(
      `insert into webhook_attempts (id, delivery_id, event_id, account_id, subscription_id, attempt, status_code, duration_ms, error, created_at)
       values ($1, $2, $11, $9, $10, $3, $4, $5, $6, now() - make_interval(mins => $7) + make_interval(secs => $8))`,
      [newId('att'), deliveryId, index + 1, attempt.statusCode, 10 + index, attempt.error, options.ageMinutes, index + 1, account.userId, subscriptionId, eventId],
    );
  }
  return deliveryId;
}

/** Polls until `read` returns a value `done` accepts (a row state, never a time); the test's time-out bounds it. */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function deliveryRow(id: string) {
  const { rows } = await service.services.pool.query(
    `select id, status, attempts, next_attempt_at <= now() as due, locked_until from webhook_deliveries where id = $1`,
    [id],
  );
  return rows[0];
}

describe('GET /webhooks/{webhookId}/deliveries', () => {
  test('the delivery log: one entry per attempt, newest first, {delivery_id, event, attempt, status_code, duration_ms, error, created_at}', async () => {
    const account = await service.createAccount();
    const subscription = await createWebhook(account, 'logged');
    const older = await insertDelivery(account, subscription, {
      status: 'failed',
      ageMinutes: 30,
      attempts: [{ statusCode: 500, error: 'HTTP 500' }, { statusCode: null, error: 'connect ECONNREFUSED' }],
    });
    const newer = await insertDelivery(account, subscription, { event: 'Reads', status: 'succeeded', ageMinutes: 5, attempts: [{ statusCode: 200, error: null }] });
    const other = await createWebhook(account, 'other');
    await insertDelivery(account, other, { status: 'succeeded', ageMinutes: 1, attempts: [{ statusCode: 204, error: null }] });

    const response = await service.request('GET', '/webhooks/logged/deliveries', { apiKey: account.apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      success: true,
      deliveries: [
        { delivery_id: newer, event: 'Reads', attempt: 1, status_code: 200, duration_ms: 10, error: null, created_at: expect.stringMatching(/^\d{4}-/) },
        { delivery_id: older, event: 'Replies', attempt: 2, status_code: null, duration_ms: 11, error: 'connect ECONNREFUSED', created_at: expect.stringMatching(/^\d{4}-/) },
        { delivery_id: older, event: 'Replies', attempt: 1, status_code: 500, duration_ms: 10, error: 'HTTP 500', created_at: expect.stringMatching(/^\d{4}-/) },
      ],
      next_cursor: null,
    });
    const times = response.body.deliveries.map((entry: { created_at: string }) => Date.parse(entry.created_at));
    expect([...times].sort((x, y) => y - x)).toEqual(times);
  });

  test('limit and cursor page through the log; only a value received as next_cursor may be passed back', async () => {
    const account = await service.createAccount();
    const subscription = await createWebhook(account, 'paged');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await insertDelivery(account, subscription, { status: 'succeeded', ageMinutes: 50 - i, attempts: [{ statusCode: 200, error: null }] }));
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await service.request('GET', '/webhooks/1/deliveries', { apiKey: account.apiKey, query: { limit: 2, cursor } });
      expect(page.status).toBe(200);
      expect(page.body.deliveries.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.deliveries.map((entry: { delivery_id: string }) => entry.delivery_id));
      cursor = page.body.next_cursor ?? undefined;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());

    const invalid = await service.request('GET', '/webhooks/1/deliveries', { apiKey: account.apiKey, query: { cursor: 'not-a-cursor' } });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual({ success: false, error: 'Invalid cursor', error_code: 400 });

    // A cursor of another subscription's log is not a cursor of this one.
    const first = await service.request('GET', '/webhooks/1/deliveries', { apiKey: account.apiKey, query: { limit: 1 } });
    await createWebhook(account, 'second');
    const foreign = await service.request('GET', '/webhooks/2/deliveries', { apiKey: account.apiKey, query: { cursor: first.body.next_cursor } });
    expect(foreign.status).toBe(400);
    expect(foreign.body).toEqual({ success: false, error: 'Invalid cursor', error_code: 400 });

    const tooMany = await service.request('GET', '/webhooks/1/deliveries', { apiKey: account.apiKey, query: { limit: 101 } });
    expect(tooMany.status).toBe(400);
  });

  test('a delivery sent by the service appears in the log with the X-Webhook-Delivery id it was sent with', async () => {
    const account = await service.createAccount();
    receiver.respondWith(() => ({ status: 500 }));
    const created = await service.request('POST', '/webhooks', { apiKey: account.apiKey, body: { url: receiver.url, subscribed_to: ['Contact Created'] } });
    expect(created.status).toBe(200);
    const contact = await service.request('POST', '/contacts', { apiKey: account.apiKey, body: { phoneNumber: '+14155550999' } });
    expect(contact.status).toBe(200);
    const [request] = await receiver.waitFor((requests) => requests.some((r) => JSON.parse(r.body).user?.id === account.userId)).then((requests) =>
      requests.filter((r) => JSON.parse(r.body).user?.id === account.userId),
    );
    receiver.respondWith(() => ({ status: 200 }));
    // The attempt is recorded after the receiver answered: wait for the row, not for a time.
    await eventually(
      async () => (await service.services.pool.query('select count(*)::int as n from webhook_attempts where delivery_id = $1', [request!.headers['x-webhook-delivery']])).rows[0].n,
      (n) => n > 0,
    );
    const log = await service.request('GET', '/webhooks/1/deliveries', { apiKey: account.apiKey });
    expect(log.body.deliveries[0]).toEqual({
      delivery_id: request!.headers['x-webhook-delivery'],
      event: 'Contact Created',
      attempt: 1,
      status_code: 500,
      duration_ms: expect.any(Number),
      error: expect.any(String),
      created_at: expect.stringMatching(/^\d{4}-/),
    });
  });

  test('a delivery whose first attempt succeeds is in the log by its attempt alone: no delivery row is kept for it', async () => {
    const account = await service.createAccount();
    const created = await service.request('POST', '/webhooks', { apiKey: account.apiKey, body: { url: receiver.url, subscribed_to: ['Contact Created'] } });
    expect(created.status).toBe(200);
    const contact = await service.request('POST', '/contacts', { apiKey: account.apiKey, body: { phoneNumber: '+14155550998' } });
    expect(contact.status).toBe(200);
    const requests = await receiver.waitFor((all) => all.some((r) => JSON.parse(r.body).user?.id === account.userId));
    const deliveryId = requests.find((r) => JSON.parse(r.body).user?.id === account.userId)!.headers['x-webhook-delivery'];
    await eventually(
      async () => (await service.services.pool.query('select count(*)::int as n from webhook_attempts where delivery_id = $1', [deliveryId])).rows[0].n,
      (n) => n > 0,
    );
    const log = await service.request('GET', '/webhooks/1/deliveries', { apiKey: account.apiKey });
    expect(log.body.deliveries).toEqual([expect.objectContaining({ delivery_id: deliveryId, event: 'Contact Created', attempt: 1, status_code: 200, error: null })]);
    const rows = await service.services.pool.query('select count(*)::int as n from webhook_deliveries where id = $1', [deliveryId]);
    expect(rows.rows[0].n).toBe(0);
  });

  test("an attempt written without its event, as a worker of an earlier version writes it during a roll-over, takes the event of its delivery: it is in the log and goes with the event", async () => {
    const account = await service.createAccount();
    const subscriptionId = await createWebhook(account, 'rolling');
    const deliveryId = await insertDelivery(account, subscriptionId, { event: 'Reads', status: 'succeeded', ageMinutes: 1 });
    await service.services.pool.query(
      `insert into webhook_attempts (id, delivery_id, account_id, subscription_id, attempt, status_code, duration_ms, error)
       values ($1, $2, $3, $4, 1, 200, 7, null)`,
      [newId('att'), deliveryId, account.userId, subscriptionId],
    );
    const log = await service.request('GET', '/webhooks/rolling/deliveries', { apiKey: account.apiKey });
    expect(log.body.deliveries).toEqual([expect.objectContaining({ delivery_id: deliveryId, event: 'Reads', attempt: 1, status_code: 200 })]);
    await service.services.pool.query('delete from events where id = (select event_id from webhook_deliveries where id = $1)', [deliveryId]);
    const left = await service.services.pool.query('select count(*)::int as n from webhook_attempts where delivery_id = $1', [deliveryId]);
    expect(left.rows[0].n).toBe(0);
  });

  test('another account\'s webhook is 404', async () => {
    const owner = await service.createAccount();
    const stranger = await service.createAccount();
    await createWebhook(owner, 'private');
    for (const path of ['/webhooks/1/deliveries', '/webhooks/private/deliveries']) {
      const response = await service.request('GET', path, { apiKey: stranger.apiKey });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ success: false, error: 'Webhook not found', error_code: 404 });
    }
  });
});

describe('POST /webhooks/{webhookId}/replay', () => {
  test('"re-sends failed deliveries since then with their original delivery ids"; dropped, succeeded and older ones stay as they are', async () => {
    const account = await service.createAccount();
    const subscription = await createWebhook(account, 'replayed');
    const other = await createWebhook(account, 'untouched', 'https://localhost:9/never');
    const failed = await insertDelivery(account, subscription, { status: 'failed', ageMinutes: 60, attempts: [{ statusCode: 500, error: 'HTTP 500' }] });
    const dropped = await insertDelivery(account, subscription, { status: 'dropped', ageMinutes: 50 });
    const succeeded = await insertDelivery(account, subscription, { status: 'succeeded', ageMinutes: 40, attempts: [{ statusCode: 200, error: null }] });
    const tooOld = await insertDelivery(account, subscription, { status: 'failed', ageMinutes: 600, attempts: [{ statusCode: 503, error: 'HTTP 503' }] });
    const otherFailed = await insertDelivery(account, other, { status: 'failed', ageMinutes: 60, attempts: [{ statusCode: 500, error: 'HTTP 500' }] });

    const seen = receiver.requests.length;
    receiver.respondWith(() => ({ status: 200 }));
    const since = new Date(Date.now() - 2 * 3600_000).toISOString();
    const response = await service.request('POST', '/webhooks/replayed/replay', { apiKey: account.apiKey, body: { since } });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, webhook_id: '1', replayed: 1 });

    // The engine sends it again, under the same delivery id, as the next attempt.
    const requests = await receiver.waitFor((all) => all.slice(seen).some((r) => r.headers['x-webhook-delivery'] === failed));
    const resent = requests.slice(seen).filter((r) => r.headers['x-webhook-delivery'] === failed);
    expect(resent).toHaveLength(1);
    expect(resent[0]!.headers['x-webhook-attempt']).toBe('2');
    expect(resent[0]!.headers['x-webhook-event']).toBe('Replies');
    for (const id of [dropped, succeeded, tooOld, otherFailed]) {
      expect(requests.slice(seen).some((r) => r.headers['x-webhook-delivery'] === id), id).toBe(false);
    }

    expect((await deliveryRow(dropped)).status).toBe('dropped');
    expect((await deliveryRow(succeeded)).status).toBe('succeeded');
    expect((await deliveryRow(tooOld)).status).toBe('failed');
    expect((await deliveryRow(otherFailed)).status).toBe('failed');
    const row = await eventually(() => deliveryRow(failed), (current) => current.status !== 'pending');
    expect(row).toMatchObject({ id: failed, status: 'succeeded', attempts: 2 });
  });

  test('a replayed delivery that fails again stays one delivery: same id, the next attempt number in the log', async () => {
    const account = await service.createAccount();
    // Nothing listens there: the re-send fails with a network error.
    const subscription = await createWebhook(account, 'unreachable', 'https://localhost:9/never');
    const failed = await insertDelivery(account, subscription, { status: 'failed', ageMinutes: 10, attempts: [{ statusCode: 500, error: 'HTTP 500' }] });
    const response = await service.request('POST', '/webhooks/unreachable/replay', { apiKey: account.apiKey, query: { since: '2000-01-01' } });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, webhook_id: '1', replayed: 1 });
    // Wait for the engine's second attempt to be recorded (a row state, not a time).
    const row = await eventually(() => deliveryRow(failed), (current) => current.attempts >= 2 && current.status !== 'pending');
    expect(row).toMatchObject({ id: failed, status: 'failed', attempts: 2 });
    const log = await service.request('GET', '/webhooks/1/deliveries', { apiKey: account.apiKey });
    expect(log.body.deliveries.map((entry: { delivery_id: string; attempt: number; status_code: number | null }) => [entry.delivery_id, entry.attempt, entry.status_code])).toEqual([
      [failed, 2, null],
      [failed, 1, 500],
    ]);
    const { rows } = await service.services.pool.query(`select count(*)::int as n from webhook_deliveries where subscription_id = $1`, [subscription]);
    expect(rows[0].n).toBe(1);
  });

  test('since (ISO 8601) is required: missing or not a date gives 400', async () => {
    const account = await service.createAccount();
    await createWebhook(account, 'strict');
    const missing = await service.request('POST', '/webhooks/1/replay', { apiKey: account.apiKey, body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ success: false, error: 'since is required', error_code: 400 });
    for (const since of ['yesterday', '2026-13-45', '1700000000']) {
      const response = await service.request('POST', '/webhooks/1/replay', { apiKey: account.apiKey, body: { since } });
      expect(response.status, since).toBe(400);
      expect(response.body, since).toEqual({ success: false, error: expect.stringMatching(/^since must be an ISO 8601/), error_code: 400 });
    }
  });

  test('an unknown webhook is 404; with nothing failed, replayed is 0', async () => {
    const account = await service.createAccount();
    await createWebhook(account, 'quiet');
    const unknown = await service.request('POST', '/webhooks/9/replay', { apiKey: account.apiKey, body: { since: '2026-01-01T00:00:00Z' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ success: false, error: 'Webhook not found', error_code: 404 });
    const none = await service.request('POST', '/webhooks/1/replay', { apiKey: account.apiKey, body: { since: '2026-01-01T00:00:00+02:00' } });
    expect(none.body).toEqual({ success: true, webhook_id: '1', replayed: 0 });
  });
});

describe('the delivery log and replay need the Integrations edit permission', () => {
  test('a writable key with Webhooks but not Integrations gets 403 key_scope_denied', async () => {
    const account = await service.createAccount();
    await createWebhook(account, 'guarded');
    const key = await service.createScopedKey(account.userId, { tags: ['Webhooks'], read_only: false });
    for (const [method, path, body] of [
      ['GET', '/webhooks/1/deliveries', undefined],
      ['POST', '/webhooks/1/replay', { since: '2026-01-01T00:00:00Z' }],
    ] as const) {
      const response = await service.request(method, path, { apiKey: key, body });
      expect(response.status, path).toBe(403);
      expect(response.body, path).toEqual({ success: false, error: 'This API key is not allowed to use the Integrations section', error_code: 'key_scope_denied' });
    }
    const allowed = await service.createScopedKey(account.userId, { tags: ['Integrations'], read_only: false });
    const log = await service.request('GET', '/webhooks/1/deliveries', { apiKey: allowed });
    expect(log.status).toBe(200);
  });
});

describe('the webhook history kept (WEBHOOK_HISTORY_DAYS, 30 by default)', () => {
  // A service without a worker: the per-minute dispatch would otherwise send this test's
  // undispatched event should the minute turn while it runs.
  let apiOnly: TestService;
  beforeAll(async () => {
    apiOnly = await startTestService({ env: { ROLE: 'api', WEBHOOK_ALLOW_HOSTS: 'localhost,127.0.0.1' } });
  });
  afterAll(async () => {
    await apiOnly?.stop();
  });

  test('the hourly sweep deletes older events with their deliveries and attempts; newer ones, one not yet dispatched and one with a delivery still pending, stay', async () => {
    const account = await apiOnly.createAccount();
    const subscription = await createWebhook(account, 'history', receiver.url, apiOnly);
    const days = (n: number) => n * 24 * 60;
    const oldSucceeded = await insertDelivery(account, subscription, { status: 'succeeded', ageMinutes: days(31), attempts: [{ statusCode: 500, error: 'HTTP 500' }, { statusCode: 200, error: null }] }, apiOnly);
    const oldFailed = await insertDelivery(account, subscription, { status: 'failed', ageMinutes: days(31), attempts: [{ statusCode: 500, error: 'HTTP 500' }] }, apiOnly);
    const oldPending = await insertDelivery(account, subscription, { status: 'pending', ageMinutes: days(31), attempts: [{ statusCode: 503, error: 'HTTP 503' }] }, apiOnly);
    const recent = await insertDelivery(account, subscription, { status: 'succeeded', ageMinutes: days(29), attempts: [{ statusCode: 200, error: null }] }, apiOnly);
    // A first attempt that succeeded is recorded by its attempt alone, with no delivery row.
    const oldAttemptOnly = await insertDelivery(account, subscription, { status: 'succeeded', ageMinutes: days(31), attempts: [{ statusCode: 204, error: null }] }, apiOnly);
    const pool = apiOnly.services.pool;
    await pool.query('delete from webhook_deliveries where id = $1', [oldAttemptOnly]);
    // An old event not yet dispatched (as one committed while no worker ran): its deliveries
    // are still to be made, so it stays.
    const undispatched = newId('evt');
    await pool.query(`insert into events (id, account_id, name, payload, created_at) values ($1, $2, 'Replies', '{}', now() - interval '31 days')`, [undispatched, account.userId]);
    const { rows: events } = await pool.query<{ delivery_id: string; event_id: string }>(
      'select distinct delivery_id, event_id from webhook_attempts where subscription_id = $1',
      [subscription],
    );
    const eventOf = new Map(events.map((row) => [row.delivery_id, row.event_id]));
    const gone = [oldSucceeded, oldFailed, oldAttemptOnly];
    const kept = [oldPending, recent];

    // One event a batch: the sweep goes on until a batch comes back short.
    expect(await sweepWebhookHistory(apiOnly.services, 1)).toBe(3);
    expect(await sweepWebhookHistory(apiOnly.services)).toBe(0);

    const left = async (table: string, column: string, ids: string[]) =>
      (await pool.query<{ n: number }>(`select count(*)::int as n from ${table} where ${column} = any($1)`, [ids])).rows[0]!.n;
    expect(await left('events', 'id', gone.map((id) => eventOf.get(id)!))).toBe(0);
    expect(await left('webhook_deliveries', 'id', gone)).toBe(0);
    expect(await left('webhook_attempts', 'delivery_id', gone)).toBe(0);
    expect(await left('events', 'id', kept.map((id) => eventOf.get(id)!))).toBe(2);
    expect(await left('webhook_deliveries', 'id', kept)).toBe(2);
    expect(await left('webhook_attempts', 'delivery_id', kept)).toBe(2);
    expect(await left('events', 'id', [undispatched])).toBe(1);

    const log = await apiOnly.request('GET', '/webhooks/history/deliveries', { apiKey: account.apiKey });
    expect(log.status).toBe(200);
    expect(log.body.deliveries.map((entry: { delivery_id: string }) => entry.delivery_id)).toEqual([recent, oldPending]);
    const replay = await apiOnly.request('POST', '/webhooks/history/replay', { apiKey: account.apiKey, query: { since: new Date(Date.now() - days(40) * 60_000).toISOString() } });
    expect(replay.status).toBe(200);
    expect(replay.body.replayed).toBe(0);
  });
});
