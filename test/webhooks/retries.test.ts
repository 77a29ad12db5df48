// Retries on the configured schedule (1s, 2s after the first attempt in these tests),
// what is and is not retried, health counted in whole deliveries, auto-disable.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { createContact, createTask, deliveriesOf, eventually, healthOf, subscribe, WEBHOOK_ENV } from './webhook-fixtures.ts';

let service: TestService;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  service = await startTestService({ env: { ...WEBHOOK_ENV, WEBHOOK_DISABLE_AFTER: '2' } });
});

afterAll(async () => {
  for (const receiver of receivers) await receiver.close();
  await service?.stop();
});

async function receiver(status: (index: number) => number): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver({ respondWith: (_request, index) => ({ status: status(index) }) });
  receivers.push(started);
  return started;
}

async function attemptRows(deliveryId: string) {
  const result = await service.services.pool.query<{ attempt: number; status_code: number | null; error: string | null }>(
    `select attempt, status_code, error from webhook_attempts where delivery_id = $1 order by attempt`,
    [deliveryId],
  );
  return result.rows;
}

test('with retries_enabled, a failed delivery is retried after the first attempt on the schedule (5xx retried) with the same X-Webhook-Delivery and rising X-Webhook-Attempt; health counts the whole delivery once', async () => {
  const hook = await receiver((index) => (index < 2 ? 503 : 200));
  const account = await service.createAccount();
  const subscriptionId = await subscribe(service, account.userId, { url: hook.url, events: ['Task Created'], retries: true });
  await createTask(service, account.apiKey);

  const requests = await hook.waitFor(3, 15_000);
  const [delivery] = await eventually(() => deliveriesOf(service, subscriptionId), (rows) => rows[0]?.status === 'succeeded');
  expect(requests.map((request) => request.headers['x-webhook-delivery'])).toEqual([delivery.id, delivery.id, delivery.id]);
  expect(requests.map((request) => request.headers['x-webhook-attempt'])).toEqual(['1', '2', '3']);
  expect(new Set(requests.map((request) => request.body)).size).toBe(1);
  // Offsets are counted from the first attempt: 1 s, then 2 s.
  const first = requests[0].receivedAt.getTime();
  expect(requests[1].receivedAt.getTime() - first).toBeGreaterThanOrEqual(950);
  expect(requests[2].receivedAt.getTime() - first).toBeGreaterThanOrEqual(1950);
  expect(delivery.attempts).toBe(3);
  expect((await attemptRows(delivery.id)).map((row) => [row.attempt, row.status_code])).toEqual([[1, 503], [2, 503], [3, 200]]);
  // A failure is recorded only after all retries are exhausted: this delivery succeeded.
  expect(await healthOf(service, subscriptionId, account.userId)).toMatchObject({ consecutive_failures: 0, total_failures: 0, total_successes: 1 });
});

test('a failure is recorded only after all retries are exhausted', async () => {
  const hook = await receiver(() => 500);
  const account = await service.createAccount();
  const subscriptionId = await subscribe(service, account.userId, { url: hook.url, events: ['Task Created'], retries: true });
  await createTask(service, account.apiKey);

  await hook.waitFor(2, 15_000);
  // After the second of three attempts, nothing is counted yet.
  expect((await healthOf(service, subscriptionId, account.userId))?.total_failures ?? 0).toBe(0);
  const [delivery] = await eventually(() => deliveriesOf(service, subscriptionId), (rows) => rows[0]?.status === 'failed');
  expect(delivery.attempts).toBe(3);
  expect(hook.requests.map((request) => request.headers['x-webhook-attempt'])).toEqual(['1', '2', '3']);
  const health = await healthOf(service, subscriptionId, account.userId);
  expect(health).toMatchObject({ consecutive_failures: 1, total_failures: 1, total_successes: 0, is_disabled: false });
  expect(health!.last_failure).toMatchObject({ delivery_id: delivery.id, event: 'Task Created', status_code: 500, failure_type: 'temporary' });
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
