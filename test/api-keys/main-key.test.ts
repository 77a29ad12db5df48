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

  test('404 {success:false, error} when the account has no key', async () => {
    const agency = await service.createAccount({ agency: true });
    const client = await service.createAccount();
    await service.services.pool.query('update accounts set agency_id = $1 where id = $2', [agency.userId, client.userId]);
    await service.request('DELETE', '/api-keys/current', { apiKey: client.apiKey });
    // The agency's main key acts on the client account, which has no key any more.
    const response = await service.request('GET', '/api-keys/current', { apiKey: agency.apiKey, query: { userId: client.userId } });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ success: false, error: 'No API key found for this account' });
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

  test('404 when there is no key', async () => {
    const agency = await service.createAccount({ agency: true });
    const client = await service.createAccount();
    await service.services.pool.query('update accounts set agency_id = $1 where id = $2', [agency.userId, client.userId]);
    await service.request('DELETE', '/api-keys/current', { apiKey: client.apiKey });
    const response = await service.request('DELETE', '/api-keys/current', { apiKey: agency.apiKey, query: { userId: client.userId } });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ success: false, error: 'No API key found for this account', error_code: 404 });
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
