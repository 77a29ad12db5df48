import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

const invalidKey = { success: false, error: 'Invalid API key', error_code: 401 };

describe('GET /api-keys/current', () => {
  test('returns the full key, its masked form (first 4 and last 4 joined by an ellipsis) and created_at', async () => {
    const { apiKey } = await service.createAccount();
    const response = await service.request('GET', '/api-keys/current', { apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      success: true,
      api_key: apiKey,
      api_key_masked: `${apiKey.slice(0, 4)}…${apiKey.slice(-4)}`,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
  });

  test('api_key is null for a key created before retrievable copies were kept', async () => {
    const { userId, apiKey } = await service.createAccount();
    await service.services.pool.query(`update api_keys set key_ciphertext = null where account_id = $1 and kind = 'main'`, [userId]);
    const response = await service.request('GET', '/api-keys/current', { apiKey });
    expect(response.status).toBe(200);
    expect(response.body.api_key).toBeNull();
    expect(response.body.api_key_masked).toBe(`${apiKey.slice(0, 4)}…${apiKey.slice(-4)}`);
  });
});

describe('POST /api-keys/rotate', () => {
  test('returns the new key once; the previous key stops working at once', async () => {
    const { apiKey: oldKey } = await service.createAccount();
    const rotated = await service.request('POST', '/api-keys/rotate', { apiKey: oldKey });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toEqual({ success: true, api_key: expect.stringMatching(/^mk_/), message: expect.any(String) });
    const newKey = rotated.body.api_key as string;
    expect(newKey).not.toBe(oldKey);

    const withOld = await service.request('GET', '/api-keys/current', { apiKey: oldKey });
    expect(withOld.status).toBe(401);
    expect(withOld.body).toEqual(invalidKey);

    const withNew = await service.request('GET', '/api-keys/current', { apiKey: newKey });
    expect(withNew.status).toBe(200);
    expect(withNew.body.api_key).toBe(newKey);
  });
});

describe('DELETE /api-keys/current', () => {
  test('revokes the main key with no replacement; the key then gets 401', async () => {
    const { apiKey } = await service.createAccount();
    const revoked = await service.request('DELETE', '/api-keys/current', { apiKey });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ success: true, revoked: true, message: expect.any(String) });
    const after = await service.request('GET', '/api-keys/current', { apiKey });
    expect(after.status).toBe(401);
    expect(after.body).toEqual(invalidKey);
  });
});

test('a scoped key cannot inspect, rotate or revoke the main key (403 key_scope_denied)', async () => {
  const { apiKey } = await service.createAccount();
  const created = await service.request('POST', '/api-keys', { apiKey, body: { scopes: { tags: [], read_only: false } } });
  const scoped = created.body.api_key as string;
  for (const [method, path] of [['GET', '/api-keys/current'], ['POST', '/api-keys/rotate'], ['DELETE', '/api-keys/current']] as const) {
    const response = await service.request(method, path, { apiKey: scoped });
    expect(response.status, `${method} ${path}`).toBe(403);
    expect(response.body).toEqual({ success: false, error: expect.any(String), error_code: 'key_scope_denied' });
  }
  expect((await service.request('GET', '/api-keys/current', { apiKey })).body.api_key).toBe(apiKey);
});

describe("key management is the account's own: an agency's key with userId is refused (403)", () => {
  const refused = { success: false, error: 'userId cannot be used on key management endpoints', error_code: 403 };

  async function agencyWithClient() {
    const agency = await service.createAccount({ agency: true });
    const client = await service.createAccount();
    await service.services.pool.query('update accounts set agency_id = $1 where id = $2', [agency.userId, client.userId]);
    // The relation works where it should: the agency acts on the client's data.
    expect((await service.request('GET', '/lists', { apiKey: agency.apiKey, query: { userId: client.userId } })).status).toBe(200);
    return { agency, client };
  }

  test("POST /api-keys/rotate?userId=<client> mints nothing; the client's key keeps working", async () => {
    const { agency, client } = await agencyWithClient();
    const response = await service.request('POST', '/api-keys/rotate', { apiKey: agency.apiKey, query: { userId: client.userId } });
    expect(response.status).toBe(403);
    expect(response.body).toEqual(refused);
    expect(response.text).not.toMatch(/mk_/);
    const current = await service.request('GET', '/api-keys/current', { apiKey: client.apiKey });
    expect(current.status).toBe(200);
    expect(current.body.api_key).toBe(client.apiKey);
  });

  test("the client's main key cannot be read or revoked, nor its scoped keys listed, made, changed or revoked", async () => {
    const { agency, client } = await agencyWithClient();
    const made = await service.request('POST', '/api-keys', { apiKey: client.apiKey, body: { label: 'client-own', scopes: { tags: [] } } });
    expect(made.status).toBe(201);
    const calls = [
      ['GET', '/api-keys/current', undefined],
      ['GET', '/api-keys/usage', undefined],
      ['DELETE', '/api-keys/current', undefined],
      ['GET', '/api-keys', undefined],
      ['POST', '/api-keys', { label: 'planted by the agency' }],
      ['PATCH', `/api-keys/${made.body.key.id}`, { label: 'renamed by the agency' }],
      ['DELETE', `/api-keys/${made.body.key.id}`, undefined],
    ] as const;
    for (const [method, path, body] of calls) {
      const response = await service.request(method, path, { apiKey: agency.apiKey, query: { userId: client.userId }, body });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(response.body, `${method} ${path}`).toEqual(refused);
    }
    // Nothing changed on the client's side.
    const listed = await service.request('GET', '/api-keys', { apiKey: client.apiKey });
    expect(listed.body.api_keys.map((key: { label: string; revoked: boolean }) => [key.label, key.revoked])).toEqual([['client-own', false]]);
    expect((await service.request('GET', '/lists', { apiKey: made.body.api_key })).status).toBe(200);
    expect((await service.request('GET', '/api-keys/current', { apiKey: client.apiKey })).body.api_key).toBe(client.apiKey);
  });

  test('userId naming the caller\'s own account is refused too; without it the agency manages its own keys', async () => {
    const { agency } = await agencyWithClient();
    const own = await service.request('GET', '/api-keys/current', { apiKey: agency.apiKey, query: { userId: agency.userId } });
    expect(own.status).toBe(403);
    expect(own.body).toEqual(refused);
    const current = await service.request('GET', '/api-keys/current', { apiKey: agency.apiKey });
    expect(current.status).toBe(200);
    expect(current.body.api_key).toBe(agency.apiKey);
  });
});
