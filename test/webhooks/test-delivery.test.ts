// POST /webhooks/{webhookId}/test over real HTTPS against a real HTTPS receiver: always
// 200, the outcome in the body, the delivery headers and signature, the `user` block,
// and "Tests never change health counters".
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { NOTHING_LISTENING_URL, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';

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

async function accountWithWebhook(url: string, body: Record<string, unknown> = {}) {
  const account = await service.createAccount();
  const created = await service.request('POST', '/webhooks', { apiKey: account.apiKey, body: { url, subscribed_to: ['Replies'], name: 'tested', ...body } });
  expect(created.status, created.text).toBe(200);
  return { ...account, created: created.body };
}

/** Everything a test could have written to health or the delivery tables for this account. */
async function deliveryState(accountId: string) {
  const { rows } = await service.services.pool.query(
    `select (select count(*)::int from webhook_health h join webhook_subscriptions s on s.id = h.subscription_id where s.account_id = $1) as health,
            (select count(*)::int from webhook_deliveries d join webhook_subscriptions s on s.id = d.subscription_id where s.account_id = $1) as deliveries,
            (select count(*)::int from webhook_attempts a join webhook_subscriptions s on s.id = a.subscription_id where s.account_id = $1) as attempts`,
    [accountId],
  );
  return rows[0];
}

describe('POST /webhooks/{webhookId}/test', () => {
  test('delivers a sample event: 200 {success, webhook_id, delivered:true}; the default is a delivery event with the delivery headers and the user block', async () => {
    const account = await accountWithWebhook(receiver.url);
    const seen = receiver.requests.length;
    receiver.respondWith(() => ({ status: 200 }));
    const response = await service.request('POST', '/webhooks/1/test', { apiKey: account.apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, webhook_id: '1', delivered: true });
    const [request] = receiver.requests.slice(seen);
    expect(request).toBeDefined();
    expect(request!.method).toBe('POST');
    expect(request!.path).toBe('/hook');
    expect(request!.headers['x-webhook-event']).toBe('Deliveries');
    expect(request!.headers['x-webhook-attempt']).toBe('1');
    expect(request!.headers['x-webhook-delivery']).toMatch(/^dlv_/);
    // Signing is off: no signature headers.
    expect(request!.headers['x-webhook-signature']).toBeUndefined();
    expect(request!.headers['x-webhook-timestamp']).toBeUndefined();
    const payload = JSON.parse(request!.body);
    expect(payload).toMatchObject({ event: 'Deliveries', user: { id: account.userId, email: expect.stringContaining('@') } });
  });

  test('the optional body event picks the event sent; an unknown one is 400', async () => {
    const account = await accountWithWebhook(receiver.url);
    const seen = receiver.requests.length;
    const response = await service.request('POST', '/webhooks/tested/test', { apiKey: account.apiKey, body: { event: 'Task Created' } });
    expect(response.body).toEqual({ success: true, webhook_id: '1', delivered: true });
    const [request] = receiver.requests.slice(seen);
    expect(request!.headers['x-webhook-event']).toBe('Task Created');
    expect(JSON.parse(request!.body).event).toBe('Task Created');

    const unknown = await service.request('POST', '/webhooks/1/test', { apiKey: account.apiKey, body: { event: 'Nope' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ success: false, error: expect.stringMatching(/^event/), error_code: 400 });
    expect(receiver.requests.length).toBe(seen + 1);
  });

  test('with a signing secret, X-Webhook-Signature is v1=HMAC-SHA256 of "<timestamp>.<raw body>"; after rotation only the new secret signs', async () => {
    const account = await accountWithWebhook(receiver.url, { generate_signing_secret: true });
    const sign = (secret: string, timestamp: string, body: string) => `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;

    let seen = receiver.requests.length;
    const before = Math.floor(Date.now() / 1000);
    await service.request('POST', '/webhooks/1/test', { apiKey: account.apiKey });
    const after = Math.ceil(Date.now() / 1000);
    let [request] = receiver.requests.slice(seen);
    const timestamp = request!.headers['x-webhook-timestamp'] as string;
    // "Send time in Unix seconds"
    expect(timestamp).toMatch(/^\d+$/);
    expect(Number(timestamp)).toBeGreaterThanOrEqual(before);
    expect(Number(timestamp)).toBeLessThanOrEqual(after);
    expect(request!.headers['x-webhook-signature']).toBe(sign(account.created.signing_secret, timestamp, request!.body));

    const rotated = await service.request('POST', '/webhooks/1/signing-secret', { apiKey: account.apiKey });
    seen = receiver.requests.length;
    await service.request('POST', '/webhooks/1/test', { apiKey: account.apiKey });
    [request] = receiver.requests.slice(seen);
    const newTimestamp = request!.headers['x-webhook-timestamp'] as string;
    expect(request!.headers['x-webhook-signature']).toBe(sign(rotated.body.signing_secret, newTimestamp, request!.body));
    expect(request!.headers['x-webhook-signature']).not.toBe(sign(account.created.signing_secret, newTimestamp, request!.body));

    await service.request('DELETE', '/webhooks/1/signing-secret', { apiKey: account.apiKey });
    seen = receiver.requests.length;
    await service.request('POST', '/webhooks/1/test', { apiKey: account.apiKey });
    [request] = receiver.requests.slice(seen);
    expect(request!.headers['x-webhook-signature']).toBeUndefined();
  });

  test('"Always 200": a 5xx answer is failure_type temporary, a 4xx permanent, with status_code and error_message', async () => {
    const account = await accountWithWebhook(receiver.url);
    receiver.respondWith(() => ({ status: 500, body: 'boom' }));
    const temporary = await service.request('POST', '/webhooks/1/test', { apiKey: account.apiKey });
    expect(temporary.status).toBe(200);
    expect(temporary.body).toEqual({
      success: true,
      webhook_id: '1',
      delivered: false,
      failure_type: 'temporary',
      status_code: 500,
      error_message: expect.any(String),
    });
    receiver.respondWith(() => ({ status: 404 }));
    const permanent = await service.request('POST', '/webhooks/1/test', { apiKey: account.apiKey });
    expect(permanent.status).toBe(200);
    expect(permanent.body).toEqual({
      success: true,
      webhook_id: '1',
      delivered: false,
      failure_type: 'permanent',
      status_code: 404,
      error_message: expect.any(String),
    });
    receiver.respondWith(() => ({ status: 200 }));
  });

  test('"Always 200": nothing listening is failure_type network with status_code null', async () => {
    const account = await accountWithWebhook(NOTHING_LISTENING_URL);
    const response = await service.request('POST', '/webhooks/1/test', { apiKey: account.apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      success: true,
      webhook_id: '1',
      delivered: false,
      failure_type: 'network',
      status_code: null,
      error_message: expect.any(String),
    });
  });

  test('"Tests never change health counters": successes and failures leave health null and the delivery tables empty', async () => {
    const account = await accountWithWebhook(receiver.url);
    receiver.respondWith(() => ({ status: 200 }));
    await service.request('POST', '/webhooks/1/test', { apiKey: account.apiKey });
    receiver.respondWith(() => ({ status: 503 }));
    for (let i = 0; i < 6; i++) {
      const response = await service.request('POST', '/webhooks/1/test', { apiKey: account.apiKey });
      expect(response.body.delivered).toBe(false);
    }
    receiver.respondWith(() => ({ status: 200 }));
    const health = await service.request('GET', '/webhooks/1/health', { apiKey: account.apiKey });
    expect(health.body).toEqual({ success: true, webhook_id: '1', url: receiver.url, health: null });
    expect(await deliveryState(account.userId)).toEqual({ health: 0, deliveries: 0, attempts: 0 });
    const log = await service.request('GET', '/webhooks/1/deliveries', { apiKey: account.apiKey });
    expect(log.body).toEqual({ success: true, deliveries: [], next_cursor: null });
  });

  test('an unknown webhook is 404', async () => {
    const account = await accountWithWebhook(receiver.url);
    const response = await service.request('POST', '/webhooks/2/test', { apiKey: account.apiKey });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ success: false, error: 'Webhook not found', error_code: 404 });
  });
});
