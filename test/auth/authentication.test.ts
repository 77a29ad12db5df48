// The Authentication rules, each over real HTTPS.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestService, type RequestOptions, type TestService } from '../helpers/service.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

const invalidKey = { success: false, error: 'Invalid API key', error_code: 401 };
const wrongKey = 'mk_' + 'A'.repeat(43);

async function scopedKey(mainKey: string, body: Record<string, unknown>) {
  const response = await service.request('POST', '/api-keys', { apiKey: mainKey, body });
  expect(response.status, response.text).toBe(201);
  return response.body as { api_key: string; key: { id: string } };
}

async function manage(agencyId: string | null, clientId: string) {
  // The agency relation as the sub-account endpoints would set it.
  await service.services.pool.query('update accounts set agency_id = $1 where id = $2', [agencyId, clientId]);
}

describe('precedence: query parameter, then X-API-Key header, then bearer token', () => {
  test('a wrong key in the query beats a right one in X-API-Key, and a right one in the query beats a wrong X-API-Key', async () => {
    const { apiKey } = await service.createAccount();
    const wrongFirst = await service.request('GET', '/lists', { apiKey: wrongKey, headers: { 'x-api-key': apiKey } });
    expect(wrongFirst.status).toBe(401);
    expect(wrongFirst.body).toEqual(invalidKey);
    expect((await service.request('GET', '/lists', { apiKey, headers: { 'x-api-key': wrongKey } })).status).toBe(200);
  });

  test('a wrong key in X-API-Key beats a right bearer token, and a right X-API-Key beats a wrong bearer token', async () => {
    const { apiKey } = await service.createAccount();
    const wrongFirst = await service.request('GET', '/lists', { headers: { 'x-api-key': wrongKey, authorization: `Bearer ${apiKey}` } });
    expect(wrongFirst.status).toBe(401);
    expect(wrongFirst.body).toEqual(invalidKey);
    expect((await service.request('GET', '/lists', { headers: { 'x-api-key': apiKey, authorization: `Bearer ${wrongKey}` } })).status).toBe(200);
  });

  test('a wrong key in the query beats a right bearer token, and a right query key beats a wrong bearer token', async () => {
    const { apiKey } = await service.createAccount();
    expect((await service.request('GET', '/lists', { apiKey: wrongKey, headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(401);
    expect((await service.request('GET', '/lists', { apiKey, headers: { authorization: `Bearer ${wrongKey}` } })).status).toBe(200);
  });

  test('each carrier alone works', async () => {
    const { apiKey } = await service.createAccount();
    expect((await service.request('GET', '/lists', { apiKey })).status).toBe(200);
    expect((await service.request('GET', '/lists', { headers: { 'x-api-key': apiKey } })).status).toBe(200);
    expect((await service.request('GET', '/lists', { headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(200);
  });

  test('the query parameter is a credential on writes too (POST with ?apiKey=)', async () => {
    const { apiKey } = await service.createAccount();
    const created = await service.request('POST', '/lists', { apiKey, body: { name: 'via query' } });
    expect(created.status).toBe(201);
  });
});

describe('rule 2: a missing or wrong key gives 401 with error stating an invalid API key', () => {
  test('no key, an unknown key, a malformed key, an empty bearer', async () => {
    const { apiKey } = await service.createAccount();
    const attempts: RequestOptions[] = [
      {},
      { apiKey: wrongKey },
      { apiKey: 'not-a-key' },
      { apiKey: '' },
      { headers: { authorization: 'Bearer ' } },
      { headers: { 'x-api-key': apiKey.slice(0, -1) + (apiKey.endsWith('A') ? 'B' : 'A') } },
    ];
    for (const options of attempts) {
      const response = await service.request('GET', '/lists', options);
      expect(response.status, JSON.stringify(options)).toBe(401);
      expect(response.body).toEqual(invalidKey);
    }
  });
});

test('rule 1: userId is not a credential: a request carrying only userId gets 401', async () => {
  const { userId } = await service.createAccount();
  const response = await service.request('GET', '/lists', { query: { userId } });
  expect(response.status).toBe(401);
  expect(response.body).toEqual(invalidKey);
});

describe('rule 3: API access is a paid feature', () => {
  test('when the plan lacks it, even a valid key gets 403 with error_code 403 naming api_access', async () => {
    const { apiKey } = await service.createAccount({ plan: 'free' });
    const response = await service.request('GET', '/lists', { apiKey });
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ success: false, error: 'The api_access feature is not enabled for this account', error_code: 403 });
  });

  test('a scoped key of such an account too, and the key works again once the plan has api_access', async () => {
    const { userId, apiKey } = await service.createAccount();
    const { api_key } = await scopedKey(apiKey, { scopes: { tags: ['Lists'] } });
    await service.services.pool.query(`update accounts set plan = 'free' where id = $1`, [userId]);
    const refused = await service.request('GET', '/lists', { apiKey: api_key });
    expect(refused.status).toBe(403);
    expect(refused.body.error_code).toBe(403);
    expect(refused.body.error).toContain('api_access');
    await service.services.pool.query(`update accounts set plan = 'pro' where id = $1`, [userId]);
    expect((await service.request('GET', '/lists', { apiKey: api_key })).status).toBe(200);
  });
});

describe('rule 4: a scoped key is checked on each request', () => {
  test('a write with a read-only key gives 403 key_read_only', async () => {
    const { apiKey } = await service.createAccount();
    const { api_key } = await scopedKey(apiKey, { scopes: { tags: ['Lists'] } });
    const response = await service.request('POST', '/lists', { apiKey: api_key, body: { name: 'nope' } });
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ success: false, error: 'This API key is read-only', error_code: 'key_read_only' });
    expect((await service.request('GET', '/lists', { apiKey })).body.lists).toEqual([]);
  });

  test('an endpoint outside its sections gives 403 key_scope_denied', async () => {
    const { apiKey } = await service.createAccount();
    const { api_key } = await scopedKey(apiKey, { scopes: { tags: ['Contacts'], read_only: false } });
    const response = await service.request('GET', '/lists', { apiKey: api_key });
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ success: false, error: 'This API key is not allowed to use the Lists section', error_code: 'key_scope_denied' });
  });

  test('a managed account outside its sub_account_ids gives 403 key_scope_denied; a listed one is allowed', async () => {
    const agency = await service.createAccount({ agency: true });
    const listed = await service.createAccount();
    const unlisted = await service.createAccount();
    await manage(agency.userId, listed.userId);
    await manage(agency.userId, unlisted.userId);
    const { api_key } = await scopedKey(agency.apiKey, { scopes: { tags: ['Lists'], sub_account_ids: [listed.userId] } });

    expect((await service.request('GET', '/lists', { apiKey: api_key, query: { userId: listed.userId } })).status).toBe(200);
    const denied = await service.request('GET', '/lists', { apiKey: api_key, query: { userId: unlisted.userId } });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ success: false, error: 'This API key is not allowed to act on that account', error_code: 'key_scope_denied' });
    // Own account: always allowed, with or without userId.
    expect((await service.request('GET', '/lists', { apiKey: api_key, query: { userId: agency.userId } })).status).toBe(200);
    expect((await service.request('GET', '/lists', { apiKey: api_key })).status).toBe(200);
  });

  test('empty sub_account_ids means own account only', async () => {
    const agency = await service.createAccount({ agency: true });
    const client = await service.createAccount();
    await manage(agency.userId, client.userId);
    const { api_key } = await scopedKey(agency.apiKey, { scopes: { tags: ['Lists'] } });
    const denied = await service.request('GET', '/lists', { apiKey: api_key, query: { userId: client.userId } });
    expect(denied.status).toBe(403);
    expect(denied.body.error_code).toBe('key_scope_denied');
  });

  test('["*"] = any account the caller manages, and ownership is checked on every request', async () => {
    const agency = await service.createAccount({ agency: true });
    const client = await service.createAccount();
    const stranger = await service.createAccount();
    await manage(agency.userId, client.userId);
    const { api_key } = await scopedKey(agency.apiKey, { scopes: { tags: ['Lists'], sub_account_ids: ['*'], read_only: false } });

    const created = await service.request('POST', '/lists', { apiKey: api_key, query: { userId: client.userId }, body: { name: 'client list' } });
    expect(created.status).toBe(201);
    expect((await service.request('GET', '/lists', { apiKey: client.apiKey })).body.lists).toHaveLength(1);

    const strangerResponse = await service.request('GET', '/lists', { apiKey: api_key, query: { userId: stranger.userId } });
    expect(strangerResponse.status).toBe(403);
    expect(strangerResponse.body.error_code).toBe('key_scope_denied');

    // The agency lets the client go: the very next request is refused.
    await manage(null, client.userId);
    const released = await service.request('GET', '/lists', { apiKey: api_key, query: { userId: client.userId } });
    expect(released.status).toBe(403);
    expect(released.body.error_code).toBe('key_scope_denied');
  });

  test('a listed id that the agency no longer manages is refused (ownership is checked on every request)', async () => {
    const agency = await service.createAccount({ agency: true });
    const client = await service.createAccount();
    await manage(agency.userId, client.userId);
    // Only a client can be listed when the key is made (POST /api-keys checks it).
    const { api_key } = await scopedKey(agency.apiKey, { scopes: { tags: ['Lists'], sub_account_ids: [client.userId] } });
    expect((await service.request('GET', '/lists', { apiKey: api_key, query: { userId: client.userId } })).status).toBe(200);
    await manage(null, client.userId);
    const response = await service.request('GET', '/lists', { apiKey: api_key, query: { userId: client.userId } });
    expect(response.status).toBe(403);
    expect(response.body.error_code).toBe('key_scope_denied');
  });

  test('the main key acting on an account it does not manage gets 403', async () => {
    const a = await service.createAccount();
    const b = await service.createAccount();
    const response = await service.request('GET', '/lists', { apiKey: a.apiKey, query: { userId: b.userId } });
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ success: false, error: 'You do not have access to that account', error_code: 403 });
  });

  test('the main key has full access: every section, writes, and accounts it manages', async () => {
    const agency = await service.createAccount({ agency: true });
    const client = await service.createAccount();
    await manage(agency.userId, client.userId);
    expect((await service.request('POST', '/lists', { apiKey: agency.apiKey, body: { name: 'own' } })).status).toBe(201);
    expect((await service.request('POST', '/lists', { apiKey: agency.apiKey, query: { userId: client.userId }, body: { name: 'client' } })).status).toBe(201);
    expect((await service.request('GET', '/contacts', { apiKey: agency.apiKey, query: { limit: 5 } })).status).toBe(200);
  });
});

describe('rule 7: rotating or revoking the main key takes effect immediately; the old key then gets 401', () => {
  test('rotate', async () => {
    const { apiKey } = await service.createAccount();
    expect((await service.request('GET', '/lists', { apiKey })).status).toBe(200);
    const rotated = await service.request('POST', '/api-keys/rotate', { apiKey });
    expect((await service.request('GET', '/lists', { apiKey })).body).toEqual(invalidKey);
    expect((await service.request('GET', '/lists', { apiKey: rotated.body.api_key })).status).toBe(200);
  });

  test('revoke', async () => {
    const { apiKey } = await service.createAccount();
    expect((await service.request('GET', '/lists', { apiKey })).status).toBe(200);
    await service.request('DELETE', '/api-keys/current', { apiKey });
    const after = await service.request('GET', '/lists', { apiKey });
    expect(after.status).toBe(401);
    expect(after.body).toEqual(invalidKey);
  });
});

describe('rule 8: a revoked or expired scoped key gets 401', () => {
  test('revoked', async () => {
    const { apiKey } = await service.createAccount();
    const created = await scopedKey(apiKey, { scopes: { tags: ['Lists'] } });
    expect((await service.request('GET', '/lists', { apiKey: created.api_key })).status).toBe(200);
    await service.request('DELETE', `/api-keys/${created.key.id}`, { apiKey });
    const response = await service.request('GET', '/lists', { apiKey: created.api_key });
    expect(response.status).toBe(401);
    expect(response.body).toEqual(invalidKey);
  });

  test('expired', async () => {
    const { apiKey } = await service.createAccount();
    const created = await scopedKey(apiKey, { scopes: { tags: ['Lists'] }, expires_at: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await service.request('GET', '/lists', { apiKey: created.api_key })).status).toBe(200);
    // Time passes: the expiry is now behind us.
    await service.services.pool.query(`update api_keys set expires_at = now() - interval '1 second' where id = $1`, [created.key.id]);
    const response = await service.request('GET', '/lists', { apiKey: created.api_key });
    expect(response.status).toBe(401);
    expect(response.body).toEqual(invalidKey);
  });
});
