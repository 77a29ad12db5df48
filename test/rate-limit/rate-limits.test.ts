import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { currentWindow, inOneWindow, seedBucket } from './fresh-window.ts';

let service: TestService;
let staleWindowBucket: string;
beforeAll(async () => {
  service = await startTestService();
  // Planted before the first counted request of this process, whose sweep deletes it.
  staleWindowBucket = `key:stale-${Date.now()}`;
  await service.services.pool.query(
    `insert into rate_counters (bucket, window_start, count) values ($1, now() - interval '10 minutes', 5)`,
    [staleWindowBucket],
  );
});
afterAll(async () => {
  await service?.stop();
});

const tooMany = { success: false, error_code: 429, error: 'Rate limit exceeded, please try again later' };

async function scopedKey(mainKey: string, scopes: Record<string, unknown>) {
  const response = await service.request('POST', '/api-keys', { apiKey: mainKey, body: { scopes } });
  expect(response.status).toBe(201);
  return response.body as { api_key: string; key: { id: string } };
}

async function counterValue(bucket: string): Promise<number | null> {
  const { rows } = await service.services.pool.query<{ count: number }>(
    `select count from rate_counters where bucket = $1 and window_start = to_timestamp(floor(extract(epoch from now()) / 60) * 60)`,
    [bucket],
  );
  return rows[0]?.count ?? null;
}

test('windows older than two minutes are deleted', async () => {
  await service.request('GET', '/lists', { apiKey: (await service.createAccount()).apiKey });
  await vi.waitFor(
    async () => {
      const { rows } = await service.services.pool.query('select 1 from rate_counters where bucket = $1', [staleWindowBucket]);
      expect(rows).toHaveLength(0);
    },
    { timeout: 30_000, interval: 50 },
  );
});

describe('RateLimit headers', () => {
  test('successful responses carry RateLimit-Policy and RateLimit for the key and the account', async () => {
    await inOneWindow(service.services.pool, async () => {
      const { apiKey } = await service.createAccount();
      const { api_key } = await scopedKey(apiKey, { tags: ['Lists'], rate_limit_per_min: 10 });
      const response = await service.request('GET', '/lists', { apiKey: api_key });
      expect(response.status).toBe(200);
      expect(response.headers.get('ratelimit-policy')).toBe('"scoped-key";q=10;w=60, "account";q=1200;w=60');
      // The account counted the key creation (main key) and this request.
      expect(response.headers.get('ratelimit')).toMatch(/^"scoped-key";r=9;t=(\d+), "account";r=1198;t=\1$/);
      const main = await service.request('GET', '/lists', { apiKey });
      expect(main.headers.get('ratelimit-policy')).toBe('"main-key";q=300;w=60, "account";q=1200;w=60');
      expect(main.headers.get('ratelimit')).toMatch(/^"main-key";r=298;t=\d+, "account";r=1197;t=\d+$/);
    });
  });

  test('refusals after counting (403) carry them too', async () => {
    const { apiKey } = await service.createAccount();
    const { api_key } = await scopedKey(apiKey, { tags: ['Lists'] });
    const response = await service.request('GET', '/contacts', { apiKey: api_key, query: { limit: 1 } });
    expect(response.status).toBe(403);
    expect(response.headers.get('ratelimit')).toMatch(/^"scoped-key";r=59;/);
  });
});

describe('429 when a budget is exhausted', () => {
  test('a scoped key gets 429 after rate_limit_per_min requests, with Retry-After and the RateLimit headers', async () => {
    await inOneWindow(service.services.pool, async () => {
      const { apiKey } = await service.createAccount();
      const { api_key } = await scopedKey(apiKey, { tags: ['Lists'], rate_limit_per_min: 3 });
      for (let i = 0; i < 3; i++) expect((await service.request('GET', '/lists', { apiKey: api_key })).status).toBe(200);
      const refused = await service.request('GET', '/lists', { apiKey: api_key });
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual(tooMany);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
      expect(refused.headers.get('ratelimit')).toBe(`"scoped-key";r=0;t=${retryAfter}, "account";r=1196;t=${retryAfter}`);
      expect(refused.headers.get('ratelimit-policy')).toBe('"scoped-key";q=3;w=60, "account";q=1200;w=60');
    });
  });

  test('concurrent requests never overshoot: 40 at once against a 10-per-minute key give exactly 10 × 200 and 30 × 429', async () => {
    await inOneWindow(service.services.pool, async () => {
      const { apiKey } = await service.createAccount();
      const { api_key, key } = await scopedKey(apiKey, { tags: ['Lists'], rate_limit_per_min: 10 });
      const statuses = await Promise.all(Array.from({ length: 40 }, () => service.request('GET', '/lists', { apiKey: api_key }).then((r) => r.status)));
      expect(statuses.filter((status) => status === 200)).toHaveLength(10);
      expect(statuses.filter((status) => status === 429)).toHaveLength(30);
      expect(await counterValue(`key:${key.id}`)).toBe(10);
    });
  });

  test('rule 5: a scoped key has its own budget, separate from the main key and from other scoped keys', async () => {
    await inOneWindow(service.services.pool, async () => {
      const { userId, apiKey } = await service.createAccount();
      const limited = await scopedKey(apiKey, { tags: ['Lists'], rate_limit_per_min: 2 });
      const other = await scopedKey(apiKey, { tags: ['Lists'], rate_limit_per_min: 2 });
      await service.request('GET', '/lists', { apiKey: limited.api_key });
      await service.request('GET', '/lists', { apiKey: limited.api_key });
      expect((await service.request('GET', '/lists', { apiKey: limited.api_key })).status).toBe(429);
      expect((await service.request('GET', '/lists', { apiKey: limited.api_key })).status).toBe(429);
      expect((await service.request('GET', '/lists', { apiKey })).status).toBe(200);
      const last = await service.request('GET', '/lists', { apiKey: other.api_key });
      expect(last.status).toBe(200);
      // Refused requests count nowhere: 2 creations + 2 allowed + main + other = 6. (The
      // account's counter holds the block this process leased; the header reports spent tokens.)
      expect(last.headers.get('ratelimit')).toMatch(/"account";r=1194;t=\d+$/);
      expect(await counterValue(`key:${limited.key.id}`)).toBe(2);
    });
  });

  test("a lowered rate_limit_per_min applies at once to the tokens the process holds: 1 spent, limit 60 → 3, then exactly 2 more", async () => {
    await inOneWindow(service.services.pool, async () => {
      const { apiKey } = await service.createAccount();
      const { api_key, key } = await scopedKey(apiKey, { tags: ['Lists'], rate_limit_per_min: 60 });
      // The first request leases a block of 7 (60 / 8) and spends one.
      expect((await service.request('GET', '/lists', { apiKey: api_key })).status).toBe(200);
      expect(await counterValue(`key:${key.id}`)).toBe(7);
      const patched = await service.request('PATCH', `/api-keys/${key.id}`, { apiKey, body: { scopes: { tags: ['Lists'], rate_limit_per_min: 3 } } });
      expect(patched.status).toBe(200);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await service.request('GET', '/lists', { apiKey: api_key })).status);
      expect(statuses).toEqual([200, 200, 429, 429]);
      expect(await counterValue(`key:${key.id}`)).toBe(3);
    });
  });

  test('main-key rate limit: 300 requests per minute', async () => {
    await inOneWindow(service.services.pool, async () => {
      const { userId, apiKey } = await service.createAccount();
      const { rows } = await service.services.pool.query(`select id from api_keys where account_id = $1 and kind = 'main'`, [userId]);
      await seedBucket(service.services.pool, `key:${rows[0].id}`, 299);
      const last = await service.request('GET', '/lists', { apiKey });
      expect(last.status).toBe(200);
      expect(last.headers.get('ratelimit')).toMatch(/^"main-key";r=0;/);
      const refused = await service.request('GET', '/lists', { apiKey });
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual(tooMany);
    });
  });

  test('account-wide ceiling: 1,200 requests per minute across all its keys', async () => {
    await inOneWindow(service.services.pool, async () => {
      const { userId, apiKey } = await service.createAccount();
      // Seeded before this process leases for the account, as other processes' leases would be:
      // the key's creation and the next request take the last two tokens.
      await seedBucket(service.services.pool, `account:${userId}`, 1198);
      const { api_key } = await scopedKey(apiKey, { tags: ['Lists'] });
      expect((await service.request('GET', '/lists', { apiKey: api_key })).status).toBe(200);
      for (const key of [api_key, apiKey]) {
        const refused = await service.request('GET', '/lists', { apiKey: key });
        expect(refused.status).toBe(429);
        expect(refused.body).toEqual(tooMany);
        expect(refused.headers.get('ratelimit')).toMatch(/"account";r=0;t=\d+$/);
      }
      // Another account is not affected.
      expect((await service.request('GET', '/lists', { apiKey: (await service.createAccount()).apiKey })).status).toBe(200);
    });
  });
});

describe('GET /api-keys/usage', () => {
  test('{success, usage:{limit, window_seconds, used, remaining, window_resets_at}} for the calling key; note when nothing was counted yet', async () => {
    await inOneWindow(service.services.pool, async () => {
      const { apiKey } = await service.createAccount();
      const windowStart = await currentWindow(service.services.pool);
      const first = await service.request('GET', '/api-keys/usage', { apiKey });
      expect(first.status).toBe(200);
      expect(first.body).toEqual({
        success: true,
        usage: { limit: 300, window_seconds: 60, used: 0, remaining: 300, window_resets_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00\.000Z$/) },
        note: expect.stringContaining('No request has been counted'),
      });
      // The end of this window by the database clock (a boundary in between runs the test again).
      expect(Date.parse(first.body.usage.window_resets_at)).toBe((windowStart + 60) * 1000);

      await service.request('GET', '/lists', { apiKey });
      await service.request('GET', '/lists', { apiKey });
      const after = await service.request('GET', '/api-keys/usage', { apiKey });
      // The usage requests are counted apart, not in the budget they report.
      expect(after.body).toEqual({
        success: true,
        usage: { limit: 300, window_seconds: 60, used: 2, remaining: 298, window_resets_at: first.body.usage.window_resets_at },
      });
    });
  });

  test('still answers when the budget is exhausted', async () => {
    await inOneWindow(service.services.pool, async () => {
      const { userId, apiKey } = await service.createAccount();
      const { rows } = await service.services.pool.query(`select id from api_keys where account_id = $1 and kind = 'main'`, [userId]);
      await seedBucket(service.services.pool, `key:${rows[0].id}`, 300);
      expect((await service.request('GET', '/lists', { apiKey })).status).toBe(429);
      const usage = await service.request('GET', '/api-keys/usage', { apiKey });
      expect(usage.status).toBe(200);
      expect(usage.body.usage).toMatchObject({ limit: 300, used: 300, remaining: 0 });
    });
  });
});
