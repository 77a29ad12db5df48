// The outbound client over real HTTPS on loopback: delivery rule 2's failure classes
// (5xx, time-outs and connection failures are retried; any 4xx is not), the public-address
// rule enforced at connect time, redirects never followed, pooled connections and
// bounded concurrency.
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import selfsigned from 'selfsigned';
import { afterEach, describe, expect, test } from 'vitest';
import { createOutboundClient, type OutboundClient } from '../../server/outbound/http-client.ts';
import { NOTHING_LISTENING_URL, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function receiver(...args: Parameters<typeof startWebhookReceiver>): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver(...args);
  cleanups.push(() => started.close());
  return started;
}

function client(options: Partial<Parameters<typeof createOutboundClient>[0]> = {}): OutboundClient {
  const created = createOutboundClient({ timeoutMs: 10_000, allowHosts: ['localhost'], ...options });
  cleanups.push(() => created.close());
  return created;
}

const delivery = { headers: { 'content-type': 'application/json', 'X-Webhook-Event': 'Contact Created' }, body: '{"user":{"id":"usr_1"}}' };

describe('classification of answers', () => {
  test('a 2xx answer is a delivery, timed from the request to the answer; the receiver gets the exact body and headers by POST', async () => {
    // The receiver holds its answer a while, so the reported duration has a floor it must reach.
    const hook = await receiver({ respondWith: () => ({ status: 204, delayMs: 250 }) });
    const result = await client().post(hook.url, delivery);
    expect(result).toMatchObject({ delivered: true, statusCode: 204, failure: null });
    // Whole milliseconds (the delivery log stores an integer), covering at least the held time.
    expect(Number.isInteger(result.durationMs)).toBe(true);
    expect(result.durationMs).toBeGreaterThanOrEqual(240);
    expect(hook.requests).toHaveLength(1);
    expect(hook.requests[0]).toMatchObject({ method: 'POST', path: '/hook', body: delivery.body });
    expect(hook.requests[0]!.headers['x-webhook-event']).toBe('Contact Created');
  });

  test.each([400, 401, 404, 410, 422, 429])('any 4xx (%i) is a permanent failure, not retried', async (status) => {
    const hook = await receiver({ respondWith: () => ({ status, body: 'nope' }) });
    const result = await client().post(hook.url, delivery);
    expect(result).toMatchObject({ delivered: false, statusCode: status, failure: { type: 'permanent', message: `receiver answered ${status}` } });
  });

  test.each([500, 502, 503])('a 5xx answer (%i) is a temporary failure, retried', async (status) => {
    const hook = await receiver({ respondWith: () => ({ status }) });
    const result = await client().post(hook.url, delivery);
    expect(result).toMatchObject({ delivered: false, statusCode: status, failure: { type: 'temporary' } });
  });

  test('a receiver slower than the time-out is a timeout failure', async () => {
    const release = Promise.withResolvers<void>();
    cleanups.push(async () => release.resolve());
    const hook = await receiver({ respondWith: () => ({ status: 200, until: release.promise }) });
    const result = await client({ timeoutMs: 300 }).post(hook.url, delivery);
    expect(result).toMatchObject({ delivered: false, statusCode: null, failure: { type: 'timeout', message: 'no answer within 300 ms' } });
    // On a busy machine the time-out can end the attempt before the TLS handshake does, so
    // whether the receiver saw the request is not what this checks; it never sees it twice.
    expect(hook.requests.length).toBeLessThanOrEqual(1);
  });

  test("the caller's signal abandons a request in flight: the result comes without waiting for the answer or the time-out", async () => {
    const release = Promise.withResolvers<void>();
    cleanups.push(async () => release.resolve());
    const hook = await receiver({ respondWith: () => ({ status: 200, until: release.promise }) });
    const abandon = new AbortController();
    const pending = client({ timeoutMs: 60_000 }).request(hook.url, { method: 'POST', headers: delivery.headers, body: delivery.body, signal: abandon.signal });
    await hook.waitFor(1);
    abandon.abort(new Error('the job is shutting down'));
    const result = await pending;
    expect(result).toMatchObject({ delivered: false, statusCode: null, body: null });
    expect(result.failure?.type).not.toBe('timeout');
  });

  test('a large answer body is read to a cap and discarded; the delivery still counts', async () => {
    const hook = await receiver({ respondWith: () => ({ status: 200, body: 'x'.repeat(2 * 1024 * 1024) }) });
    const result = await client().post(hook.url, delivery);
    expect(result).toMatchObject({ delivered: true, statusCode: 200 });
  });
});

describe('redirects are never followed', () => {
  test.each([301, 302, 307, 308])('a %i answer is a permanent failure and the Location target gets nothing', async (status) => {
    const target = await receiver();
    const hook = await receiver({ respondWith: () => ({ status, headers: { location: target.url } }) });
    const result = await client().post(hook.url, delivery);
    expect(result).toMatchObject({ delivered: false, statusCode: status, failure: { type: 'permanent', message: `redirect (${status}) not followed` } });
    expect(hook.requests).toHaveLength(1);
    expect(target.requests).toHaveLength(0);
  });
});

describe('connection failures are network failures', () => {
  test('connection refused', async () => {
    const result = await client().post(NOTHING_LISTENING_URL, delivery);
    expect(result).toMatchObject({ delivered: false, statusCode: null, failure: { type: 'network' } });
    expect(result.failure!.message).toMatch(/ECONNREFUSED/);
  });

  test('connection reset before an answer', async () => {
    const resetting = createTcpServer((socket) => socket.resetAndDestroy());
    await new Promise<void>((resolve) => resetting.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => resetting.close(() => resolve())));
    const result = await client().post(`https://localhost:${(resetting.address() as AddressInfo).port}/hook`, delivery);
    expect(result).toMatchObject({ delivered: false, statusCode: null, failure: { type: 'network' } });
  });

  test('a certificate not issued by a trusted CA fails TLS verification', async () => {
    const untrusted = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], { keyType: 'ec', curve: 'P-256', algorithm: 'sha256' });
    let answered = 0;
    const server = createHttpsServer({ key: untrusted.private, cert: untrusted.cert }, (_request, response) => {
      answered++;
      response.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const result = await client().post(`https://localhost:${(server.address() as AddressInfo).port}/hook`, delivery);
    expect(result).toMatchObject({ delivered: false, statusCode: null, failure: { type: 'network' } });
    expect(answered).toBe(0);
  });

  test('a host that does not resolve', async () => {
    const result = await client().post('https://does-not-exist.invalid/hook', delivery);
    expect(result).toMatchObject({ delivered: false, statusCode: null, failure: { type: 'network' } });
  });
});

describe('the public-address rule at delivery time', () => {
  test('a host resolving to a loopback address is refused when it connects, unless allowed: network failure, the receiver sees nothing', async () => {
    const hook = await receiver();
    // The client is handed the URL as if validated earlier; only the connect-time lookup can refuse it.
    const result = await client({ allowHosts: [] }).post(hook.url, delivery);
    expect(result).toMatchObject({ delivered: false, statusCode: null, failure: { type: 'network' } });
    expect(result.failure!.message).toContain('url resolves to a loopback address');
    expect(hook.requests).toHaveLength(0);
    expect(hook.connectionCount).toBe(0);

    const allowed = await client({ allowHosts: ['localhost'] }).post(hook.url, delivery);
    expect(allowed).toMatchObject({ delivered: true, statusCode: 200 });
    expect(hook.requests).toHaveLength(1);
  });

  test('an allowed address is exempt when a name resolves to it', async () => {
    const hook = await receiver();
    const result = await client({ allowHosts: ['127.0.0.1'] }).post(hook.url, delivery);
    expect(result).toMatchObject({ delivered: true, statusCode: 200 });
  });

  test('a literal non-public address is refused before any connection', async () => {
    const hook = await receiver();
    const result = await client({ allowHosts: ['localhost'] }).post(`https://127.0.0.1:${hook.port}/hook`, delivery);
    expect(result).toMatchObject({ delivered: false, statusCode: null, failure: { type: 'network', message: 'url resolves to a loopback address (127.0.0.1)' } });
    const decimal = await client({ allowHosts: ['localhost'] }).post(`https://2130706433:${hook.port}/hook`, delivery);
    expect(decimal.failure).toEqual({ type: 'network', message: 'url resolves to a loopback address (127.0.0.1)' });
    expect(hook.connectionCount).toBe(0);
  });

  test('plain http is never sent', async () => {
    const result = await client().post('http://localhost:1/hook', delivery);
    expect(result).toMatchObject({ delivered: false, statusCode: null, failure: { type: 'permanent', message: 'url must use https://' } });
  });
});

describe('connections and concurrency', () => {
  test('several posts to one origin reuse one TLS connection', async () => {
    const hook = await receiver();
    const outbound = client();
    for (let index = 0; index < 5; index++) expect((await outbound.post(hook.url, delivery)).delivered).toBe(true);
    expect(hook.requests.map((request) => request.connection)).toEqual([0, 0, 0, 0, 0]);
    expect(hook.connectionCount).toBe(1);
  });

  test('a slow receiver holds at most its per-origin share; another origin is delivered meanwhile', async () => {
    const release = Promise.withResolvers<void>();
    cleanups.push(async () => release.resolve());
    const slow = await receiver({ respondWith: () => ({ status: 200, until: release.promise }) });
    const fast = await receiver();
    const outbound = client({ maxConcurrentPerOrigin: 2, maxConcurrent: 3 });

    const held = Array.from({ length: 5 }, () => outbound.post(slow.url, delivery));
    await slow.waitFor(2);
    // Without per-origin bounds the five held posts would fill every overall slot and this would wait.
    expect(await outbound.post(fast.url, delivery)).toMatchObject({ delivered: true });
    expect(slow.requests).toHaveLength(2);
    expect(slow.connectionCount).toBeLessThanOrEqual(2);

    release.resolve();
    const results = await Promise.all(held);
    expect(results.every((result) => result.delivered)).toBe(true);
    expect(slow.requests).toHaveLength(5);
    expect(slow.connectionCount).toBeLessThanOrEqual(2);
  });

  test('close waits for posts in flight, then the client stops', async () => {
    const hook = await receiver({ respondWith: () => ({ status: 200, delayMs: 50 }) });
    const outbound = createOutboundClient({ timeoutMs: 10_000, allowHosts: ['localhost'] });
    const pending = outbound.post(hook.url, delivery);
    await hook.waitFor(1);
    await outbound.close();
    expect(await pending).toMatchObject({ delivered: true });
  });
});
