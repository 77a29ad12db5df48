// Identity-provider ID tokens on the bearer carrier: first-party (owner) sessions.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { updateAccount } from '../../server/accounts/update-account.ts';
import { startIdentityProvider, type TestIdentityProvider } from '../helpers/jwks.ts';
import { startTestService, TEST_SECRET_KEY, type TestService } from '../helpers/service.ts';
import { inOneWindow } from '../rate-limit/fresh-window.ts';

let idp: TestIdentityProvider;
let service: TestService;
beforeAll(async () => {
  idp = await startIdentityProvider();
  service = await startTestService({ env: idp.env });
});
afterAll(async () => {
  await service?.stop();
  await idp?.stop();
});

let subjectCounter = 0;
/** An account whose sign-in subject is set, and a good ID token for it. */
async function signedInAccount(options: { plan?: 'pro' | 'free'; agency?: boolean } = {}) {
  const account = await service.createAccount(options);
  subjectCounter += 1;
  const subject = `idp|user-${subjectCounter}-${Date.now()}`;
  await updateAccount(service.services.orm.em.fork(), { userId: account.userId, oidcSubject: subject });
  return { ...account, subject, token: await idp.sign({ sub: subject }) };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('a valid ID token', () => {
  test('is mapped to the signed-in account and has full access, like the main key', async () => {
    const { token, apiKey } = await signedInAccount();
    const created = await service.request('POST', '/lists', { headers: bearer(token), body: { name: 'From the app' } });
    expect(created.status).toBe(201);
    const listed = await service.request('GET', '/lists', { apiKey });
    expect(listed.body.lists.map((list: { name: string }) => list.name)).toEqual(['From the app']);
  });

  test('is an owner session: it may list, create and revoke keys and read the main key', async () => {
    const { token, apiKey } = await signedInAccount();
    const current = await service.request('GET', '/api-keys/current', { headers: bearer(token) });
    expect(current.status).toBe(200);
    expect(current.body.api_key).toBe(apiKey);
    const created = await service.request('POST', '/api-keys', { headers: bearer(token), body: { label: 'from a session' } });
    expect(created.status).toBe(201);
    const listed = await service.request('GET', '/api-keys', { headers: bearer(token) });
    expect(listed.body.api_keys.map((key: { id: string }) => key.id)).toEqual([created.body.key.id]);
    expect((await service.request('DELETE', `/api-keys/${created.body.key.id}`, { headers: bearer(token) })).status).toBe(200);
  });

  test('after the main key was revoked, the session gets 404 for it and can issue a new one by rotating', async () => {
    const { token, apiKey } = await signedInAccount();
    expect((await service.request('DELETE', '/api-keys/current', { headers: bearer(token) })).status).toBe(200);
    const missing = await service.request('GET', '/api-keys/current', { headers: bearer(token) });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ success: false, error: 'No API key found for this account' });
    const again = await service.request('DELETE', '/api-keys/current', { headers: bearer(token) });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ success: false, error: 'No API key found for this account', error_code: 404 });
    expect((await service.request('GET', '/lists', { apiKey })).status).toBe(401);

    const rotated = await service.request('POST', '/api-keys/rotate', { headers: bearer(token) });
    expect(rotated.status).toBe(200);
    expect((await service.request('GET', '/lists', { apiKey: rotated.body.api_key })).status).toBe(200);
  });

  test("is its own credential for Idempotency-Key: the session's retry is replayed, the account's main key gets 409", async () => {
    const { token, apiKey } = await signedInAccount();
    const idempotencyKey = { 'idempotency-key': `session-${Date.now()}` };
    const body = { label: 'made by a session' };
    const first = await service.request('POST', '/api-keys', { headers: { ...bearer(token), ...idempotencyKey }, body });
    expect(first.status).toBe(201);
    const again = await service.request('POST', '/api-keys', { headers: { ...bearer(token), ...idempotencyKey }, body });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.api_key).toBe(first.body.api_key);
    const byMainKey = await service.request('POST', '/api-keys', { apiKey, headers: idempotencyKey, body });
    expect(byMainKey.status).toBe(409);
    expect(byMainKey.body.error_code).toBe('idempotency_key_reused');
    expect(byMainKey.text).not.toContain(first.body.api_key);
  });

  test('is not subject to the plan\'s api_access (that gates API keys, not the product\'s own app)', async () => {
    const { token, apiKey } = await signedInAccount({ plan: 'free' });
    expect((await service.request('GET', '/lists', { apiKey })).status).toBe(403);
    expect((await service.request('GET', '/lists', { headers: bearer(token) })).status).toBe(200);
  });

  test('is rate-limited at the main-key budget, in a bucket of its own', async () => {
    await inOneWindow(service.services.pool, async () => {
      const { token } = await signedInAccount();
      const response = await service.request('GET', '/lists', { headers: bearer(token) });
      expect(response.headers.get('ratelimit-policy')).toBe('"session";q=300;w=60, "account";q=1200;w=60');
      const usage = await service.request('GET', '/api-keys/usage', { headers: bearer(token) });
      expect(usage.body.usage).toMatchObject({ limit: 300, used: 1 });
    });
  });
});

describe('ID tokens that are refused with 401', () => {
  const cases: [string, (subject: string) => Promise<string>, string][] = [
    ['expired', (sub) => idp.sign({ sub, exp: Math.floor(Date.now() / 1000) - 120 }), 'Invalid ID token: expired'],
    ['for another audience', (sub) => idp.sign({ sub, aud: 'some-other-app' }), 'Invalid ID token'],
    ['from another issuer', (sub) => idp.sign({ sub, iss: 'https://evil.example/' }), 'Invalid ID token'],
    ['signed with a key the provider does not publish', (sub) => idp.signWithUnpublishedKey({ sub }), 'Invalid ID token'],
  ];
  for (const [name, makeToken, error] of cases) {
    test(`a token ${name}`, async () => {
      const { subject } = await signedInAccount();
      const response = await service.request('GET', '/lists', { headers: bearer(await makeToken(subject)) });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ success: false, error, error_code: 401 });
    });
  }

  test('a token whose subject maps to no account', async () => {
    const response = await service.request('GET', '/lists', { headers: bearer(await idp.sign({ sub: 'idp|nobody' })) });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ success: false, error: 'Invalid ID token: no account for this subject', error_code: 401 });
  });

  test('a tampered token', async () => {
    const { token } = await signedInAccount();
    const [header, payload, signature] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...claims, sub: 'idp|someone-else' })).toString('base64url');
    const response = await service.request('GET', '/lists', { headers: bearer(`${header}.${forged}.${signature}`) });
    expect(response.status).toBe(401);
  });

  // Token claims pass the same input rules as any field (server/input-rules.ts): text
  // PostgreSQL cannot store makes the token invalid, never a 5xx.
  const unstorableClaims: [string, (subject: string) => { sub: string; [claim: string]: unknown }, string][] = [
    ['a NUL in sub', (sub) => ({ sub: `${sub}\u0000` }), 'sub must not contain a NUL character (\\u0000)'],
    ['a lone surrogate in sub', (sub) => ({ sub: `${sub}\ud800` }), 'sub must not contain a lone UTF-16 surrogate (\\ud800 to \\udfff without its pair)'],
    ['a NUL in email', (sub) => ({ sub, email: 'ada\u0000@example.com' }), 'email must not contain a NUL character (\\u0000)'],
    ['a lone surrogate in email', (sub) => ({ sub, email: 'ada\udc00@example.com' }), 'email must not contain a lone UTF-16 surrogate (\\ud800 to \\udfff without its pair)'],
    ['a NUL in name', (sub) => ({ sub, name: 'Ada\u0000' }), 'name must not contain a NUL character (\\u0000)'],
    ['a lone surrogate in name', (sub) => ({ sub, name: 'Ada \ud83d' }), 'name must not contain a lone UTF-16 surrogate (\\ud800 to \\udfff without its pair)'],
  ];
  for (const [name, claims, problem] of unstorableClaims) {
    test(`a token with ${name}`, async () => {
      const { subject } = await signedInAccount();
      const response = await service.request('GET', '/lists', { headers: bearer(await idp.sign(claims(subject))) });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ success: false, error: `Invalid ID token: ${problem}`, error_code: 401 });
    });
  }

  test('an ID token is only accepted on the bearer carrier', async () => {
    const { token } = await signedInAccount();
    expect((await service.request('GET', '/lists', { headers: { 'x-api-key': token } })).status).toBe(401);
    expect((await service.request('GET', '/lists', { apiKey: token })).status).toBe(401);
  });
});

test('precedence still applies: a wrong API key in X-API-Key (or the query) beats a good ID token in Authorization', async () => {
  const { token } = await signedInAccount();
  const wrong = 'mk_' + 'A'.repeat(43);
  const viaHeader = await service.request('GET', '/lists', { headers: { ...bearer(token), 'x-api-key': wrong } });
  expect(viaHeader.status).toBe(401);
  expect(viaHeader.body).toEqual({ success: false, error: 'Invalid API key', error_code: 401 });
  const viaQuery = await service.request('GET', '/lists', { apiKey: wrong, headers: bearer(token) });
  expect(viaQuery.status).toBe(401);
  expect((await service.request('GET', '/lists', { headers: bearer(token) })).status).toBe(200);
});

test('with OIDC unset, ID tokens get 401', async () => {
  const plain = await startTestService();
  try {
    const { userId } = await plain.createAccount();
    await updateAccount(plain.services.orm.em.fork(), { userId, oidcSubject: 'idp|configured-elsewhere' });
    const response = await plain.request('GET', '/lists', { headers: bearer(await idp.sign({ sub: 'idp|configured-elsewhere' })) });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ success: false, error: 'Invalid API key: ID tokens are not accepted by this server', error_code: 401 });
  } finally {
    await plain.stop();
  }
});

test('the admin commands account:create and account:update take --oidc-subject', async () => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'mapi-admin-'));
  const admin = (...args: string[]) =>
    new Promise<{ code: number | null; output: any }>((resolve) => {
      const child = spawn(process.execPath, ['server/admin/cli.ts', ...args], {
        cwd: path.resolve(import.meta.dirname, '../..'),
        env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: service.databaseUrl, SECRET_KEY: TEST_SECRET_KEY, DATA_DIR: dataDir },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let stdout = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.on('exit', (code) => resolve({ code, output: JSON.parse(stdout) }));
    });
  try {
    const created = await admin('account:create', '--email', `cli-${Date.now()}@example.com`, '--oidc-subject', 'idp|cli-created');
    expect(created.code).toBe(0);
    expect(created.output).toMatchObject({ userId: expect.any(String), apiKey: expect.stringMatching(/^mk_/), oidcSubject: 'idp|cli-created' });
    const first = await service.request('GET', '/api-keys/current', { headers: bearer(await idp.sign({ sub: 'idp|cli-created' })) });
    expect(first.body.api_key).toBe(created.output.apiKey);

    const updated = await admin('account:update', '--user', created.output.userId, '--oidc-subject', 'idp|cli-updated');
    expect(updated.code).toBe(0);
    expect(updated.output).toMatchObject({ userId: created.output.userId, oidcSubject: 'idp|cli-updated' });
    expect((await service.request('GET', '/lists', { headers: bearer(await idp.sign({ sub: 'idp|cli-created' })) })).status).toBe(401);
    expect((await service.request('GET', '/lists', { headers: bearer(await idp.sign({ sub: 'idp|cli-updated' })) })).status).toBe(200);

    const other = await service.createAccount();
    const taken = await admin('account:update', '--user', other.userId, '--oidc-subject', 'idp|cli-updated');
    expect(taken).toEqual({ code: 1, output: { error: 'Another account already has that OIDC subject' } });
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
