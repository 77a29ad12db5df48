// "GET /api-keys/usage is counted in a bucket of its own (the key's per-minute limit), so it
// never spends the budget it reports yet cannot be called without bound": over HTTPS, in
// tRPC batches over HTTP, and in one frame on a /trpc WebSocket.
import { fetch } from 'undici';
import { expect, test } from 'vitest';
import { MAIN_KEY_RATE_LIMIT, WINDOW_SECONDS } from '../../server/rate-limit/limits.ts';
import { MAX_BATCH_CALLS } from '../../server/trpc-limits.ts';
import { serviceForFile } from '../helpers/service-for-file.ts';
import { insecureAgent, type TestService } from '../helpers/service.ts';
import { openRawTrpcSocket } from '../helpers/trpc-socket.ts';
import { inOneWindow } from './fresh-window.ts';

let service: TestService;
serviceForFile({}, (started) => {
  service = started.service;
});

const tooMany = { success: false, error_code: 429, error: 'Rate limit exceeded, please try again later' };
const NORMAL_CALLS = 2;

/** A new account whose main key has spent NORMAL_CALLS of its budget. */
async function keyWithSomeUse(): Promise<string> {
  const { apiKey } = await service.createAccount();
  for (let call = 0; call < NORMAL_CALLS; call++) expect((await service.request('GET', '/lists', { apiKey })).status).toBe(200);
  return apiKey;
}

/** One tRPC batch over HTTPS of `size` usage calls; the answer of each. */
async function usageBatch(apiKey: string, size: number): Promise<any[]> {
  const paths = Array.from({ length: size }, () => 'apiKeys.usage').join(',');
  const input = JSON.stringify(Object.fromEntries(Array.from({ length: size }, (_, index) => [index, {}])));
  const url = `${service.origin}/trpc/${paths}?batch=1&apiKey=${encodeURIComponent(apiKey)}&input=${encodeURIComponent(input)}`;
  const response = await fetch(url, { dispatcher: insecureAgent });
  const text = await response.text();
  const answers = JSON.parse(text);
  if (!Array.isArray(answers)) throw new Error(`not a batch answer (${response.status}): ${text}`);
  return answers;
}

test(`after the key's per-minute limit of usage calls (${MAIN_KEY_RATE_LIMIT}) the next answers 429 with Retry-After; none of them changes the used figure it reports`, async () => {
  await inOneWindow(service.services.pool, async () => {
    const apiKey = await keyWithSomeUse();
    const answers = [];
    for (let wave = 0; wave < MAIN_KEY_RATE_LIMIT / 20; wave++) {
      answers.push(...(await Promise.all(Array.from({ length: 20 }, () => service.request('GET', '/api-keys/usage', { apiKey })))));
    }
    expect(answers.map((answer) => answer.status)).toEqual(Array(MAIN_KEY_RATE_LIMIT).fill(200));
    expect(new Set(answers.map((answer) => answer.body.usage.used))).toEqual(new Set([NORMAL_CALLS]));

    const refused = await service.request('GET', '/api-keys/usage', { apiKey });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual(tooMany);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);
    expect(refused.headers.get('ratelimit-policy')).toBe(`"usage";q=${MAIN_KEY_RATE_LIMIT};w=${WINDOW_SECONDS}`);

    // The budget it reports is untouched: the key still works, and has spent only its own calls.
    const normal = await service.request('GET', '/lists', { apiKey });
    expect(normal.status).toBe(200);
    expect(normal.headers.get('ratelimit')).toMatch(new RegExp(`^"main-key";r=${MAIN_KEY_RATE_LIMIT - NORMAL_CALLS - 1};`));
  });
});

test('tRPC batches over HTTP count each usage call: the limit holds across batches', async () => {
  await inOneWindow(service.services.pool, async () => {
    const apiKey = await keyWithSomeUse();
    // Batches of 6: a GET batch names each call in the URL's path, which is bounded (100 characters).
    for (let batch = 0; batch < MAIN_KEY_RATE_LIMIT / 6; batch++) {
      const answers = await usageBatch(apiKey, 6);
      expect(answers.map((answer) => answer.result?.data?.usage?.used)).toEqual(Array(6).fill(NORMAL_CALLS));
    }
    const refused = await usageBatch(apiKey, 3);
    expect(refused.map((answer) => answer.error?.data?.code)).toEqual(Array(3).fill('TOO_MANY_REQUESTS'));
  });
});

test('a batch in one frame on a /trpc WebSocket counts each usage call too', async () => {
  await inOneWindow(service.services.pool, async () => {
    const apiKey = await keyWithSomeUse();
    const socket = await openRawTrpcSocket(service.origin, { apiKey });
    try {
      let id = 0;
      const batch = async (size: number) => {
        const ids = Array.from({ length: size }, () => ++id);
        socket.send(ids.map((callId) => ({ id: callId, method: 'query', params: { path: 'apiKeys.usage', input: {} } })));
        return Promise.all(ids.map((callId) => socket.waitFor((frame) => frame.id === callId)));
      };
      for (let sent = 0; sent < MAIN_KEY_RATE_LIMIT; sent += MAX_BATCH_CALLS) {
        const answers = await batch(MAX_BATCH_CALLS);
        expect(answers.map((frame) => frame.result?.data?.usage?.used)).toEqual(Array(MAX_BATCH_CALLS).fill(NORMAL_CALLS));
      }
      const refused = await batch(2);
      expect(refused.map((frame) => frame.error?.data.httpStatus)).toEqual([429, 429]);
    } finally {
      await socket.close();
    }
  });
});
