// Retries on the configured schedule (1s, 2s after the first attempt in most of these
// tests), what is and is not retried (5xx, time-outs and connection failures are; a 4xx
// is not), health counted in whole deliveries, auto-disable.
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { createContact, createTask, deliveriesOf, eventually, healthOf, subscribe, WEBHOOK_ENV } from './webhook-fixtures.ts';

let service: TestService;
const receivers: WebhookReceiver[] = [];
const tcpServers: TcpServer[] = [];
/** A receiver that holds its answer longer than this counts as timed out. */
const TIMEOUT_MS = 2_000;

beforeAll(async () => {
  service = await startTestService({ env: { ...WEBHOOK_ENV, WEBHOOK_DISABLE_AFTER: '2', WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) } });
});

afterAll(async () => {
  for (const receiver of receivers) await receiver.close();
  for (const server of tcpServers) await new Promise((resolve) => server.close(resolve));
  await service?.stop();
});

async function receiver(status: (index: number) => number): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver({ respondWith: (_request, index) => ({ status: status(index) }) });
  receivers.push(started);
  return started;
}

/**
 * An https URL whose listener accepts each TCP connection and destroys it at once: a
 * connection failure on every attempt, on a port this process keeps bound (no port race).
 */
async function resettingUrl(): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  const server = createTcpServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  tcpServers.push(server);
  return { url: `https://localhost:${(server.address() as AddressInfo).port}/hook`, connections: () => connections };
}

async function attemptRows(deliveryId: string, from: TestService = service) {
  const result = await from.services.pool.query<{ attempt: number; status_code: number | null; error: string | null }>(
    `select attempt, status_code, error from webhook_attempts where delivery_id = $1 order by attempt`,
    [deliveryId],
  );
  return result.rows;
}

test('with retries_enabled, a failed delivery (5xx) is retried with the same X-Webhook-Delivery and rising X-Webhook-Attempt; health counts the whole delivery once', async () => {
  const hook = await receiver((index) => (index < 2 ? 503 : 200));
  const account = await service.createAccount();
  const subscriptionId = await subscribe(service, account.userId, { url: hook.url, events: ['Task Created'], retries: true });
  await createTask(service, account.apiKey);

  const requests = await hook.waitFor(3, 15_000);
  const [delivery] = await eventually(() => deliveriesOf(service, subscriptionId), (rows) => rows[0]?.status === 'succeeded');
  expect(requests.map((request) => request.headers['x-webhook-delivery'])).toEqual([delivery.id, delivery.id, delivery.id]);
  expect(requests.map((request) => request.headers['x-webhook-attempt'])).toEqual(['1', '2', '3']);
  expect(new Set(requests.map((request) => request.body)).size).toBe(1);
  expect(delivery.attempts).toBe(3);
  expect((await attemptRows(delivery.id)).map((row) => [row.attempt, row.status_code])).toEqual([[1, 503], [2, 503], [3, 200]]);
  // A failure is recorded only after all retries are exhausted: this delivery succeeded.
  expect(await healthOf(service, subscriptionId, account.userId)).toMatchObject({ consecutive_failures: 0, total_failures: 0, total_successes: 1 });
});

test('retry offsets are measured from the first attempt, not from the previous one', async () => {
  // Schedule 1 s, 60 s: the third attempt is due 60 s after the first; counted from the
  // second attempt it would be due at 60 s plus the time the second came after the first.
  // The test reads the due moments the sender records, never how long anything took.
  const FIRST_RETRY_MS = 1_000;
  const SECOND_RETRY_MS = 60_000;
  const scheduled = await startTestService({ env: { ...WEBHOOK_ENV, WEBHOOK_RETRY_SCHEDULE: '1s,60s' } });
  // The second attempt is held until the first retry's due moment has been read.
  const secondHeld = Promise.withResolvers<void>();
  try {
    const hook = await receiver(() => 503);
    hook.respondWith((_request, index) => (index === 1 ? { status: 503, until: secondHeld.promise } : { status: 503 }));
    const account = await scheduled.createAccount();
    const subscriptionId = await subscribe(scheduled, account.userId, { url: hook.url, events: ['Task Created'], retries: true });
    await createTask(scheduled, account.apiKey);
    const dueOffset = async (id: string) => {
      const { rows } = await scheduled.services.pool.query<{ offset_ms: number }>(
        `select (extract(epoch from next_attempt_at - first_attempt_at) * 1000)::float8 as offset_ms from webhook_deliveries where id = $1`,
        [id],
      );
      return rows[0]!.offset_ms;
    };

    await hook.waitFor(2, 20_000);
    const [afterFirst] = await deliveriesOf(scheduled, subscriptionId);
    expect(afterFirst).toMatchObject({ status: 'pending', attempts: 1 });
    expect(await dueOffset(afterFirst.id)).toBe(FIRST_RETRY_MS);

    secondHeld.resolve();
    const [afterSecond] = await eventually(() => deliveriesOf(scheduled, subscriptionId), (rows) => rows[0]?.attempts === 2, 20_000);
    expect(afterSecond.status).toBe('pending');
    expect(await dueOffset(afterSecond.id)).toBe(SECOND_RETRY_MS);
  } finally {
    secondHeld.resolve();
    await scheduled.stop();
  }
});

test('a receiver that does not answer within WEBHOOK_TIMEOUT_MS is retried', async () => {
  // The first attempt is held well past the time-out; later attempts are answered.
  const hook = await receiver(() => 200);
  hook.respondWith((_request, index) => (index === 0 ? { status: 200, delayMs: TIMEOUT_MS * 30 } : { status: 200 }));
  const account = await service.createAccount();
  const subscriptionId = await subscribe(service, account.userId, { url: hook.url, events: ['Task Created'], retries: true });
  await createTask(service, account.apiKey);

  const [delivery] = await eventually(() => deliveriesOf(service, subscriptionId), (rows) => rows[0]?.status !== 'pending' && rows[0]?.status !== undefined);
  expect(delivery).toMatchObject({ status: 'succeeded', attempts: 2 });
  expect(await attemptRows(delivery.id)).toEqual([
    { attempt: 1, status_code: null, error: expect.stringMatching(/^timeout: /) },
    { attempt: 2, status_code: 200, error: null },
  ]);
  expect(hook.requests.map((request) => request.headers['x-webhook-attempt'])).toEqual(['1', '2']);
  expect(await healthOf(service, subscriptionId, account.userId)).toMatchObject({ total_failures: 0, total_successes: 1 });
});

test('a connection failure (the connection is reset before TLS) is retried on the schedule', async () => {
  const target = await resettingUrl();
  const account = await service.createAccount();
  const subscriptionId = await subscribe(service, account.userId, { url: target.url, events: ['Task Created'], retries: true });
  await createTask(service, account.apiKey);

  const [delivery] = await eventually(() => deliveriesOf(service, subscriptionId), (rows) => rows[0]?.status !== 'pending' && rows[0]?.status !== undefined);
  expect(delivery).toMatchObject({ status: 'failed', attempts: 3 });
  const rows = await attemptRows(delivery.id);
  expect(rows).toEqual([1, 2, 3].map((attempt) => ({ attempt, status_code: null, error: expect.stringMatching(/^network: /) })));
  expect(target.connections()).toBe(3);
  const health = await healthOf(service, subscriptionId, account.userId);
  expect(health).toMatchObject({ total_failures: 1, consecutive_failures: 1 });
  expect(health!.last_failure).toMatchObject({ delivery_id: delivery.id, failure_type: 'network', status_code: null });
});

test('a failure is recorded only after all retries are exhausted', async () => {
  // The third attempt is held while the count is read: the second has failed and the delivery
  // is not over yet, however slowly the test runs (a time-out far beyond the read).
  const patient = await startTestService({ env: { ...WEBHOOK_ENV, WEBHOOK_TIMEOUT_MS: '60000' } });
  const thirdHeld = Promise.withResolvers<void>();
  try {
    const hook = await receiver(() => 500);
    hook.respondWith((_request, index) => (index === 2 ? { status: 500, until: thirdHeld.promise } : { status: 500 }));
    const account = await patient.createAccount();
    const subscriptionId = await subscribe(patient, account.userId, { url: hook.url, events: ['Task Created'], retries: true });
    await createTask(patient, account.apiKey);

    await hook.waitFor(3, 15_000);
    // After the second of three attempts, nothing is counted yet.
    expect(await deliveriesOf(patient, subscriptionId)).toEqual([expect.objectContaining({ status: 'pending', attempts: 2 })]);
    expect((await healthOf(patient, subscriptionId, account.userId))?.total_failures ?? 0).toBe(0);
    thirdHeld.resolve();
    const [delivery] = await eventually(() => deliveriesOf(patient, subscriptionId), (rows) => rows[0]?.status === 'failed');
    expect(delivery.attempts).toBe(3);
    expect(hook.requests.map((request) => request.headers['x-webhook-attempt'])).toEqual(['1', '2', '3']);
    const health = await healthOf(patient, subscriptionId, account.userId);
    expect(health).toMatchObject({ consecutive_failures: 1, total_failures: 1, total_successes: 0, is_disabled: false });
    expect(health!.last_failure).toMatchObject({ delivery_id: delivery.id, event: 'Task Created', status_code: 500, failure_type: 'temporary' });
  } finally {
    thirdHeld.resolve();
    await patient.stop();
  }
});

test('any 4xx is not retried', async () => {
  const hook = await receiver(() => 400);
  const marker = await receiver(() => 200);
  const account = await service.createAccount();
  const subscriptionId = await subscribe(service, account.userId, { url: hook.url, events: ['Task Created'], retries: true });
  await subscribe(service, account.userId, { url: marker.url, events: ['Contact Created'] });
  await createTask(service, account.apiKey);
  const [delivery] = await eventually(() => deliveriesOf(service, subscriptionId), (rows) => rows[0]?.status === 'failed');
  expect(delivery.attempts).toBe(1);
  expect(await attemptRows(delivery.id)).toEqual([{ attempt: 1, status_code: 400, error: expect.stringContaining('permanent') }]);
  expect(await healthOf(service, subscriptionId, account.userId)).toMatchObject({ total_failures: 1, consecutive_failures: 1 });
  // Later work gets through; the 4xx delivery was still tried once only.
  await createContact(service, account.apiKey);
  await marker.waitFor(1);
  expect(hook.requests).toHaveLength(1);
});

test('without retries_enabled a 5xx is not retried', async () => {
  const hook = await receiver(() => 503);
  const account = await service.createAccount();
  const subscriptionId = await subscribe(service, account.userId, { url: hook.url, events: ['Task Created'], retries: false });
  await createTask(service, account.apiKey);
  const [delivery] = await eventually(() => deliveriesOf(service, subscriptionId), (rows) => rows[0]?.status === 'failed');
  expect(delivery.attempts).toBe(1);
  expect(hook.requests.map((request) => request.headers['x-webhook-attempt'])).toEqual(['1']);
  expect(await healthOf(service, subscriptionId, account.userId)).toMatchObject({ total_failures: 1 });
});

test('a retry queued earlier is dropped if the subscription is switched off at send time', async () => {
  const hook = await receiver(() => 503);
  const account = await service.createAccount();
  const subscriptionId = await subscribe(service, account.userId, { url: hook.url, events: ['Task Created'], retries: true });
  await createTask(service, account.apiKey);
  await hook.waitFor(1);
  await eventually(() => deliveriesOf(service, subscriptionId), (rows) => rows[0]?.status === 'pending' && rows[0].attempts === 1);
  await service.services.pool.query(`update webhook_subscriptions set enabled = false where id = $1`, [subscriptionId]);

  const [delivery] = await eventually(() => deliveriesOf(service, subscriptionId), (rows) => rows[0]?.status === 'dropped');
  expect(delivery.attempts).toBe(1);
  expect(hook.requests).toHaveLength(1);
  // Dropped deliveries never count in health.
  expect((await healthOf(service, subscriptionId, account.userId))?.total_failures ?? 0).toBe(0);
});

test('repeated delivery failures (after retries) auto-disable the URL at WEBHOOK_DISABLE_AFTER; delivery to the URL pauses', async () => {
  const hook = await receiver(() => 500);
  const marker = await receiver(() => 200);
  const account = await service.createAccount();
  const subscriptionId = await subscribe(service, account.userId, { url: hook.url, events: ['Task Created'] });
  const markerId = await subscribe(service, account.userId, { url: marker.url, events: ['Task Created'] });

  await createTask(service, account.apiKey);
  await eventually(() => healthOf(service, subscriptionId, account.userId), (health) => health?.total_failures === 1);
  expect(await healthOf(service, subscriptionId, account.userId)).toMatchObject({ consecutive_failures: 1, is_disabled: false });
  await createTask(service, account.apiKey);
  const health = await eventually(() => healthOf(service, subscriptionId, account.userId), (row) => row?.total_failures === 2);
  expect(health).toMatchObject({ consecutive_failures: 2, is_disabled: true });
  expect(health!.disabled_at).not.toBeNull();
  expect(health!.disabled_reason).toMatch(/2 consecutive failed deliveries/);

  // While paused, the next event reaches the other URL and not this one.
  await createTask(service, account.apiKey);
  await marker.waitFor(3);
  await eventually(() => deliveriesOf(service, markerId), (rows) => rows.length === 3 && rows.every((row) => row.status === 'succeeded'));
  expect(hook.requests).toHaveLength(2);
  expect(await deliveriesOf(service, subscriptionId)).toHaveLength(2);
});
