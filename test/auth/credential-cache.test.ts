// The credentials an API process holds in memory (server/auth/credential-cache.ts): held by
// their HMAC once used, and still "checked on each request" as the Authentication rules say:
// a held key revoked through another process is refused on its very next call, a scope change
// applies on the next call, nothing held is used while the process cannot hear credential
// changes, and the process holds no more than its bound.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { updateAccount } from '../../server/accounts/update-account.ts';
import { updateScopedKey } from '../../server/api-keys/update-scoped-key.ts';
import { LISTENER_APPLICATION_NAME } from '../../server/realtime/conversation-event-feed.ts';
import { startIdentityProvider, type TestIdentityProvider } from '../helpers/jwks.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { serviceProcesses } from '../helpers/service-processes.ts';
import { call, waitFor } from '../reliability/fixtures.ts';

const invalidKey = { success: false, error: 'Invalid API key', error_code: 401 };

let idp: TestIdentityProvider;
let service: TestService;
const processes = serviceProcesses();
beforeAll(async () => {
  idp = await startIdentityProvider();
  service = await startTestService({ env: idp.env });
});
afterAll(async () => {
  await processes.stopAll();
  await service?.stop();
  await idp?.stop();
});

/** The name the service holds a key under: its HMAC. */
const heldName = (key: string) => service.services.secrets.hashApiKey(key).toString('base64');
const holds = (key: string) => service.services.credentialCache.holds(heldName(key));

async function scopedKey(mainKey: string, tags: string[]): Promise<{ id: string; apiKey: string }> {
  const response = await service.request('POST', '/api-keys', { apiKey: mainKey, body: { scopes: { tags } } });
  expect(response.status, response.text).toBe(201);
  const body = response.body as { api_key: string; key: { id: string } };
  return { id: body.key.id, apiKey: body.api_key };
}

test('the key is held by its HMAC, never by its value, once it has been used', async () => {
  const { apiKey } = await service.createAccount();
  expect(holds(apiKey)).toBe(false);
  expect((await service.request('GET', '/lists', { apiKey })).status).toBe(200);
  expect(holds(apiKey)).toBe(true);
  const cache = service.services.credentialCache as unknown as { entries: Map<string, unknown> };
  for (const [name, entry] of cache.entries) {
    expect(name).not.toContain(apiKey);
    expect(JSON.stringify(entry)).not.toContain(apiKey);
  }
});

test('a held key revoked through another API process is refused on its next call here', async () => {
  const other = await processes.spawn({ role: 'api', databaseUrl: service.databaseUrl });
  try {
    const { apiKey: mainKey } = await service.createAccount();
    const key = await scopedKey(mainKey, ['Lists']);
    expect((await service.request('GET', '/lists', { apiKey: key.apiKey })).status).toBe(200);
    expect(holds(key.apiKey)).toBe(true);
    const revoked = await call(other.origin, 'DELETE', `/v1/api-keys/${key.id}`, { apiKey: mainKey });
    expect(revoked.status, revoked.text).toBe(200);
    // The very next call, whether or not this process has heard of the change yet.
    const refused = await service.request('GET', '/lists', { apiKey: key.apiKey });
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual(invalidKey);
  } finally {
    await stopOthers();
  }
});

test("a change announced by another API process drops the account's held keys here, before any call", async () => {
  const other = await processes.spawn({ role: 'api', databaseUrl: service.databaseUrl });
  try {
    const { apiKey: mainKey } = await service.createAccount();
    const kept = await scopedKey(mainKey, ['Lists']);
    const revokedKey = await scopedKey(mainKey, ['Lists']);
    expect((await service.request('GET', '/lists', { apiKey: kept.apiKey })).status).toBe(200);
    expect(holds(kept.apiKey)).toBe(true);
    const revoked = await call(other.origin, 'DELETE', `/v1/api-keys/${revokedKey.id}`, { apiKey: mainKey });
    expect(revoked.status, revoked.text).toBe(200);
    // No call with the held key: only the notification can drop it.
    await waitFor(async () => (holds(kept.apiKey) ? undefined : true), "the account's held key dropped on the announcement");
  } finally {
    await stopOthers();
  }
});

test('a held key revoked with no announcement at all is refused on its next call: the call itself checks it is live', async () => {
  const { apiKey: mainKey } = await service.createAccount();
  const key = await scopedKey(mainKey, ['Lists']);
  expect((await service.request('GET', '/lists', { apiKey: key.apiKey })).status).toBe(200);
  expect(holds(key.apiKey)).toBe(true);
  await service.services.pool.query('update api_keys set revoked_at = now() where id = $1', [key.id]);
  const refused = await service.request('GET', '/lists', { apiKey: key.apiKey });
  expect(refused.status).toBe(401);
  expect(refused.body).toEqual(invalidKey);
  expect(holds(key.apiKey)).toBe(false);
});

test('a held main key rotated through another API process is refused on its next call here', async () => {
  const other = await processes.spawn({ role: 'api', databaseUrl: service.databaseUrl });
  try {
    const { apiKey: oldKey } = await service.createAccount();
    expect((await service.request('GET', '/lists', { apiKey: oldKey })).status).toBe(200);
    expect(holds(oldKey)).toBe(true);
    const rotated = await call(other.origin, 'POST', '/v1/api-keys/rotate', { apiKey: oldKey });
    expect(rotated.status, rotated.text).toBe(200);
    const refused = await service.request('GET', '/lists', { apiKey: oldKey });
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual(invalidKey);
  } finally {
    await stopOthers();
  }
});

test("a held key's scopes changed through another connection apply on its next call", async () => {
  const { userId, apiKey: mainKey } = await service.createAccount();
  const key = await scopedKey(mainKey, ['Lists', 'Contacts']);
  expect((await service.request('GET', '/lists', { apiKey: key.apiKey })).status).toBe(200);
  expect(holds(key.apiKey)).toBe(true);
  // The change commits on a connection of its own, announced as every change is.
  await updateScopedKey(service.services.orm.em.fork(), userId, key.id, { scopes: { tags: ['Contacts'] } });
  const refused = await service.request('GET', '/lists', { apiKey: key.apiKey });
  expect(refused.status).toBe(403);
  expect(refused.body.error_code).toBe('key_scope_denied');
  expect((await service.request('GET', '/contacts', { apiKey: key.apiKey })).status).toBe(200);
});

/** Stops the other processes; a later test counts this database's listening sessions, so only this service's may be left. */
async function stopOthers(): Promise<void> {
  await processes.stopAll();
  await waitFor(async () => {
    const { rows } = await service.services.pool.query<{ n: number }>(
      `select count(*)::int as n from pg_stat_activity where application_name = $1 and datname = current_database()`,
      [LISTENER_APPLICATION_NAME],
    );
    return rows[0]!.n === 1 ? true : undefined;
  }, "the stopped processes' sessions to end");
}

test('while the LISTEN connection is down nothing held is used, and what was held before is gone once it is back', async () => {
  const { apiKey: mainKey } = await service.createAccount();
  const key = await scopedKey(mainKey, ['Lists', 'Contacts']);
  expect((await service.request('GET', '/lists', { apiKey: key.apiKey })).status).toBe(200);
  expect(holds(key.apiKey)).toBe(true);
  // Changed behind the service's back: no announcement, no version raised, as if it had been missed.
  await service.services.pool.query(`update api_keys set scopes = jsonb_set(scopes, '{tags}', '["Contacts"]') where id = $1`, [key.id]);
  const { rows } = await service.services.pool.query<{ terminated: boolean }>(
    `select pg_terminate_backend(pid) as terminated from pg_stat_activity where application_name = $1 and datname = current_database()`,
    [LISTENER_APPLICATION_NAME],
  );
  expect(rows.map((row) => row.terminated)).toEqual([true]);
  const cache = service.services.credentialCache;
  await waitFor(async () => (cache.inUse ? undefined : true), 'the service to notice its LISTEN connection is lost', 10_000);
  expect(cache.size).toBe(0);
  expect(cache.get(heldName(key.apiKey))).toBeUndefined();
  await waitFor(async () => (cache.inUse ? true : undefined), 'the LISTEN connection to be back');
  const refused = await service.request('GET', '/lists', { apiKey: key.apiKey });
  expect(refused.status).toBe(403);
  expect(refused.body.error_code).toBe('key_scope_denied');
  expect(holds(key.apiKey)).toBe(true);
});

describe('ID-token sessions', () => {
  const heldToken = (token: string) => service.services.credentialCache.holds(service.services.secrets.hashIdToken(token).toString('base64'));

  async function signedIn(expiresIn?: string) {
    const account = await service.createAccount();
    const subject = `idp|cached-${account.userId}`;
    await updateAccount(service.services.orm.em.fork(), { userId: account.userId, oidcSubject: subject });
    return { ...account, subject, token: await idp.sign({ sub: subject }, expiresIn ? { expiresIn } : undefined) };
  }

  test('a verified token is held by its HMAC; once its subject signs in to another account it is refused on the next call', async () => {
    const { userId, token } = await signedIn();
    expect((await service.request('GET', '/lists', { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect(heldToken(token)).toBe(true);
    await updateAccount(service.services.orm.em.fork(), { userId, oidcSubject: `idp|elsewhere-${userId}` });
    const refused = await service.request('GET', '/lists', { headers: { authorization: `Bearer ${token}` } });
    expect(refused.status).toBe(401);
  });

  test('a held token is held until its exp, and refused after it', async () => {
    const { token } = await signedIn('2s');
    expect((await service.request('GET', '/lists', { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect(heldToken(token)).toBe(true);
    const refused = await waitFor(async () => {
      const response = await service.request('GET', '/lists', { headers: { authorization: `Bearer ${token}` }, unchecked: true });
      return response.status === 200 ? undefined : response;
    }, 'the token to expire', 10_000);
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe('Invalid ID token: expired');
    expect(heldToken(token)).toBe(false);
  });
});

describe('the bound', () => {
  let bounded: TestService;
  beforeAll(async () => {
    bounded = await startTestService({ databaseUrl: service.databaseUrl, env: { CREDENTIAL_CACHE_ENTRIES: '2' } });
  });
  afterAll(async () => {
    await bounded?.stop();
  });

  test('a process holds at most CREDENTIAL_CACHE_ENTRIES credentials, the least recently used going first', async () => {
    const keys = [];
    for (let i = 0; i < 3; i++) keys.push((await bounded.createAccount()).apiKey);
    const held = (key: string) => bounded.services.credentialCache.holds(bounded.services.secrets.hashApiKey(key).toString('base64'));
    const use = async (key: string) => expect((await bounded.request('GET', '/lists', { apiKey: key })).status).toBe(200);
    await use(keys[0]!);
    await use(keys[1]!);
    await use(keys[0]!);
    await use(keys[2]!);
    expect(bounded.services.credentialCache.size).toBe(2);
    expect(keys.map(held)).toEqual([true, false, true]);
    await use(keys[1]!);
    expect(bounded.services.credentialCache.size).toBe(2);
    expect(keys.map(held)).toEqual([false, true, true]);
  });
});
