// How keys are kept and carried: random, prefixed, only an HMAC used for lookup,
// the retrievable copy sealed; carriers in the spec's order of precedence.
import { expect, test } from 'vitest';
import { serviceForFile } from '../helpers/service-for-file.ts';
import type { TestService } from '../helpers/service.ts';

let service: TestService;
let a: { userId: string; apiKey: string };
let b: { userId: string; apiKey: string };

serviceForFile({ accounts: [{}, {}] }, (started) => ({ service, accounts: [a, b] } = started));

test('keys are random, high-entropy and prefixed', () => {
  expect(a.apiKey).toMatch(/^mk_[A-Za-z0-9_-]{43}$/);
  expect(a.apiKey).not.toBe(b.apiKey);
});

test('the database holds only an HMAC of the key and a sealed copy, never the key itself', async () => {
  const { rows } = await service.services.pool.query(
    "select key_hash, key_ciphertext, key_preview from api_keys where account_id = $1 and kind = 'main'",
    [a.userId],
  );
  expect(rows).toHaveLength(1);
  const [row] = rows;
  expect(Buffer.compare(row.key_hash, service.services.secrets.hashApiKey(a.apiKey))).toBe(0);
  expect(row.key_ciphertext).not.toContain(a.apiKey);
  expect(row.key_ciphertext).toMatch(/^v1\./);
  expect(service.services.secrets.unseal(row.key_ciphertext)).toBe(a.apiKey);
  const dump = await service.services.pool.query('select * from api_keys');
  expect(JSON.stringify(dump.rows)).not.toContain(a.apiKey.slice(3));
});

const lookup = { limit: 1 };

test('the key is accepted in the apiKey query parameter, the X-API-Key header and as a bearer token', async () => {
  expect((await service.request('GET', '/lists', { query: { ...lookup, apiKey: a.apiKey } })).status).toBe(200);
  expect((await service.request('GET', '/lists', { query: lookup, headers: { 'x-api-key': a.apiKey } })).status).toBe(200);
  expect((await service.request('GET', '/lists', { query: lookup, headers: { authorization: `Bearer ${a.apiKey}` } })).status).toBe(200);
});

test('precedence: a wrong key in a higher-ranked carrier beats a right one in a lower one', async () => {
  const wrongQuery = await service.request('GET', '/lists', { query: { ...lookup, apiKey: 'mk_wrong' }, headers: { 'x-api-key': a.apiKey, authorization: `Bearer ${a.apiKey}` } });
  expect(wrongQuery.status).toBe(401);
  const wrongHeader = await service.request('GET', '/lists', { query: lookup, headers: { 'x-api-key': 'mk_wrong', authorization: `Bearer ${a.apiKey}` } });
  expect(wrongHeader.status).toBe(401);
  const rightQuery = await service.request('GET', '/lists', { query: { ...lookup, apiKey: a.apiKey }, headers: { 'x-api-key': 'mk_wrong' } });
  expect(rightQuery.status).toBe(200);
});

test('the highest-ranked carrier decides the account: B in the header and A in the query acts as A', async () => {
  await service.request('POST', '/lists', { apiKey: a.apiKey, body: { name: 'A list' } });
  const response = await service.request('GET', '/lists', { query: { ...lookup, apiKey: a.apiKey }, headers: { 'x-api-key': b.apiKey } });
  expect(response.body.lists.map((list: { name: string }) => list.name)).toEqual(['A list']);
});

test('a missing key is 401 with an error stating an invalid API key', async () => {
  const response = await service.request('GET', '/lists');
  expect(response.status).toBe(401);
  expect(response.body).toEqual({ success: false, error: 'Invalid API key', error_code: 401 });
});

test('userId never replaces credentials', async () => {
  const response = await service.request('GET', '/lists', { query: { userId: a.userId } });
  expect(response.status).toBe(401);
});

test('a plan without api_access gets 403 with error_code 403 even with a valid key, on every endpoint shape', async () => {
  const free = await service.createAccount({ plan: 'free' });
  for (const [method, pathname, options] of [
    ['GET', '/lists', {}],
    ['GET', '/contacts', { query: { phoneNumber: '+14155550100' } }],
    ['POST', '/contacts/lists', { body: { contactId: 'x', listId: 'y' } }],
  ] as const) {
    const response = await service.request(method, pathname, { apiKey: free.apiKey, ...options });
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ success: false, error: expect.stringContaining('api_access'), error_code: 403 });
    expect(response.body.error).toMatch(/not enabled/);
  }
});

test('a bearer value in JWT form is told apart from a key (and refused without an identity provider)', async () => {
  const jwtLike = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln';
  const response = await service.request('GET', '/lists', { headers: { authorization: `Bearer ${jwtLike}` } });
  expect(response.status).toBe(401);
});
