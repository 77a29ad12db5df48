// Three API processes on one database spend leased blocks of one budget: requests sent to
// all of them at once get exactly the limit, for a key and for the account ceiling, and a
// revoked key stops on every process at once although each holds tokens for it.
import { fetch } from 'undici';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { insecureAgent, startTestService, type TestService } from '../helpers/service.ts';
import { serviceProcesses, type ListeningServiceProcess } from '../helpers/service-processes.ts';
import { inOneWindow, seedBucket } from './fresh-window.ts';

const processes = serviceProcesses();
let service: TestService;
let servers: ListeningServiceProcess[];

beforeAll(async () => {
  service = await startTestService();
  servers = await Promise.all([0, 1, 2].map(() => processes.spawn({ role: 'api', databaseUrl: service.databaseUrl })));
  // Each process has served the authentication path once before the bursts.
  const { apiKey } = await service.createAccount();
  for (const server of servers) expect(await getLists(server.baseUrl, apiKey)).toBe(200);
});

afterAll(async () => {
  await processes.stopAll();
  await service?.stop();
});

async function getLists(baseUrl: string, apiKey: string): Promise<number> {
  const url = new URL(`${baseUrl}/lists`);
  url.searchParams.set('apiKey', apiKey);
  const response = await fetch(url, { dispatcher: insecureAgent });
  await response.text();
  return response.status;
}

/** `count` requests at once, the i-th to process i % 3 with key i % keys.length; their statuses. */
function burst(count: number, keys: string[]): Promise<number[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => getLists(servers[i % servers.length].baseUrl, keys[i % keys.length])));
}

async function counterValue(bucket: string): Promise<number | null> {
  const { rows } = await service.services.pool.query<{ count: number }>(
    `select count from rate_counters where bucket = $1 and window_start = to_timestamp(floor(extract(epoch from now()) / 60) * 60)`,
    [bucket],
  );
  return rows[0]?.count ?? null;
}

async function keyId(apiKey: string): Promise<string> {
  const { rows } = await service.services.pool.query<{ id: string }>('select id from api_keys where key_hash = $1', [
    service.services.secrets.hashApiKey(apiKey),
  ]);
  return rows[0]!.id;
}

test('60 requests at once over three processes against a 30-per-minute key: exactly 30 × 200 and 30 × 429', async () => {
  await inOneWindow(service.services.pool, async () => {
    const { userId } = await service.createAccount();
    const scoped = await service.createScopedKey(userId, { tags: ['Lists'], rate_limit_per_min: 30 });
    const statuses = await burst(60, [scoped]);
    expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
    expect(statuses.filter((status) => status === 200)).toHaveLength(30);
    expect(statuses.filter((status) => status === 429)).toHaveLength(30);
    // The leases never passed the limit.
    expect(await counterValue(`key:${await keyId(scoped)}`)).toBe(30);
  });
});

test('the account ceiling over three processes: with 30 of 1,200 left, 60 requests at once with three keys give exactly 30 × 200', async () => {
  await inOneWindow(service.services.pool, async () => {
    const { userId } = await service.createAccount();
    const keys = await Promise.all([0, 1, 2].map(() => service.createScopedKey(userId, { tags: ['Lists'], rate_limit_per_min: 300 })));
    // As other processes' leases would have: only 30 tokens of the window remain.
    await seedBucket(service.services.pool, `account:${userId}`, 1170);
    const statuses = await burst(60, keys);
    expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
    expect(statuses.filter((status) => status === 200)).toHaveLength(30);
    expect(statuses.filter((status) => status === 429)).toHaveLength(30);
    expect(await counterValue(`account:${userId}`)).toBe(1200);
  });
});

test('a process leases a block and spends it without a write per request; usage reports the spent tokens exactly', async () => {
  await inOneWindow(service.services.pool, async () => {
    const { userId, apiKey } = await service.createAccount();
    for (let i = 0; i < 5; i++) expect(await getLists(servers[0].baseUrl, apiKey)).toBe(200);
    // One lease: an eighth of the main key's 300.
    expect(await counterValue(`key:${await keyId(apiKey)}`)).toBe(37);
    expect(await counterValue(`account:${userId}`)).toBe(50);
    const url = new URL(`${servers[0].baseUrl}/api-keys/usage`);
    url.searchParams.set('apiKey', apiKey);
    const usage = (await (await fetch(url, { dispatcher: insecureAgent })).json()) as { usage: { used: number; remaining: number } };
    expect(usage.usage).toMatchObject({ used: 5, remaining: 295 });
    // Another process counts the first one's unspent tokens as used: its `remaining` never overstates.
    const elsewhere = new URL(`${servers[1].baseUrl}/api-keys/usage`);
    elsewhere.searchParams.set('apiKey', apiKey);
    const seen = (await (await fetch(elsewhere, { dispatcher: insecureAgent })).json()) as { usage: { used: number; remaining: number } };
    expect(seen.usage).toMatchObject({ used: 37, remaining: 263 });
  });
});

test('a revoked key is refused at once by every process, although each still holds tokens for it', async () => {
  const { apiKey } = await service.createAccount();
  const created = await service.request('POST', '/api-keys', { apiKey, body: { scopes: { tags: ['Lists'] } } });
  const scoped = created.body.api_key as string;
  for (const server of servers) expect(await getLists(server.baseUrl, scoped)).toBe(200);
  expect((await service.request('DELETE', `/api-keys/${created.body.key.id as string}`, { apiKey })).status).toBe(200);
  for (const server of servers) expect(await getLists(server.baseUrl, scoped)).toBe(401);
});
