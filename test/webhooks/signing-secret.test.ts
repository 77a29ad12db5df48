// The signing-secret routes over real HTTPS: GET/POST/DELETE /webhooks/{id}/signing-secret
// and generate_signing_secret on create, the at-rest sealing, and rule 3 (the Integrations
// edit permission, GET and minting at creation included).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;

const RECEIVER = 'https://localhost:9/hook';

beforeAll(async () => {
  service = await startTestService({ env: { WEBHOOK_ALLOW_HOSTS: 'localhost,127.0.0.1' } });
});
afterAll(async () => {
  await service?.stop();
});

async function accountWithWebhook(body: Record<string, unknown> = {}) {
  const account = await service.createAccount();
  const created = await service.request('POST', '/webhooks', { apiKey: account.apiKey, body: { url: RECEIVER, subscribed_to: ['Replies'], name: 'signed', ...body } });
  expect(created.status, created.text).toBe(200);
  return { ...account, created: created.body };
}

async function storedSecret(accountId: string): Promise<{ sealed: string | null; created_at: Date | null }> {
  const { rows } = await service.services.pool.query(
    'select signing_secret_sealed as sealed, signing_secret_created_at as created_at from webhook_subscriptions where account_id = $1',
    [accountId],
  );
  return rows[0];
}

describe('GET /webhooks/{id}/signing-secret', () => {
  test('"with signing off: signing_enabled false and signing_secret null"', async () => {
    const account = await accountWithWebhook();
    const response = await service.request('GET', '/webhooks/1/signing-secret', { apiKey: account.apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, webhook_id: '1', signing_enabled: false, signing_secret: null, signing_secret_created_at: null });
  });

  test('an unknown id or name is 404', async () => {
    const account = await accountWithWebhook();
    for (const method of ['GET', 'POST', 'DELETE']) {
      const response = await service.request(method, '/webhooks/7/signing-secret', { apiKey: account.apiKey });
      expect(response.status, method).toBe(404);
      expect(response.body, method).toEqual({ success: false, error: 'Webhook not found', error_code: 404 });
    }
  });
});

describe('POST /webhooks/{id}/signing-secret', () => {
  test('turns signing on: the same shape with the new secret, which GET then returns; the list shows signing_enabled', async () => {
    const account = await accountWithWebhook();
    const response = await service.request('POST', '/webhooks/signed/signing-secret', { apiKey: account.apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      success: true,
      webhook_id: '1',
      signing_enabled: true,
      signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      signing_secret_created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
    const read = await service.request('GET', '/webhooks/1/signing-secret', { apiKey: account.apiKey });
    expect(read.body).toEqual(response.body);
    const listed = await service.request('GET', '/webhooks', { apiKey: account.apiKey });
    expect(listed.body.webhooks[0]).toMatchObject({ signing_enabled: true, signing_secret_created_at: response.body.signing_secret_created_at });
  });

  test('"Secret replaced": a second POST rotates it and only the new one is returned from then on', async () => {
    const account = await accountWithWebhook();
    const first = await service.request('POST', '/webhooks/1/signing-secret', { apiKey: account.apiKey });
    const second = await service.request('POST', '/webhooks/1/signing-secret', { apiKey: account.apiKey });
    expect(second.status).toBe(200);
    expect(second.body.signing_secret).toMatch(/^whsec_/);
    expect(second.body.signing_secret).not.toBe(first.body.signing_secret);
    const read = await service.request('GET', '/webhooks/1/signing-secret', { apiKey: account.apiKey });
    expect(read.body.signing_secret).toBe(second.body.signing_secret);
  });

  test('the secret is sealed at rest: the stored value is not the secret and opens to it with the service key', async () => {
    const account = await accountWithWebhook();
    const response = await service.request('POST', '/webhooks/1/signing-secret', { apiKey: account.apiKey });
    const secret = response.body.signing_secret as string;
    const stored = await storedSecret(account.userId);
    expect(stored.sealed).not.toBeNull();
    expect(stored.sealed).not.toBe(secret);
    expect(stored.sealed).not.toContain(secret.slice('whsec_'.length, 20));
    expect(stored.sealed).toMatch(/^v1\./);
    expect(service.services.secrets.unseal(stored.sealed!)).toBe(secret);
  });
});

describe('DELETE /webhooks/{id}/signing-secret', () => {
  test('answers {success, webhook_id, signing_enabled:false} and signing is off afterwards', async () => {
    const account = await accountWithWebhook({ generate_signing_secret: true });
    const response = await service.request('DELETE', '/webhooks/1/signing-secret', { apiKey: account.apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, webhook_id: '1', signing_enabled: false });
    const read = await service.request('GET', '/webhooks/1/signing-secret', { apiKey: account.apiKey });
    expect(read.body).toEqual({ success: true, webhook_id: '1', signing_enabled: false, signing_secret: null, signing_secret_created_at: null });
    expect(await storedSecret(account.userId)).toEqual({ sealed: null, created_at: null });
  });
});

describe('generate_signing_secret:true on create', () => {
  test('returns a top-level signing_secret, the one GET returns; the secret is never part of the list response', async () => {
    const account = await accountWithWebhook({ generate_signing_secret: true });
    expect(account.created.signing_secret).toMatch(/^whsec_/);
    expect(Object.keys(account.created).sort()).toEqual(['signing_secret', 'success', 'webhook', 'webhook_id']);
    const read = await service.request('GET', '/webhooks/1/signing-secret', { apiKey: account.apiKey });
    expect(read.body).toMatchObject({ signing_enabled: true, signing_secret: account.created.signing_secret });
    const listed = await service.request('GET', '/webhooks', { apiKey: account.apiKey });
    expect(listed.text).not.toContain(account.created.signing_secret);
    const stored = await storedSecret(account.userId);
    expect(stored.sealed).not.toBe(account.created.signing_secret);
  });
});

describe('rule 3: all three signing-secret routes, including GET, and minting one at creation require the Integrations edit permission', () => {
  const routes = [
    ['GET', '/webhooks/1/signing-secret'],
    ['POST', '/webhooks/1/signing-secret'],
    ['DELETE', '/webhooks/1/signing-secret'],
  ] as const;

  test('a writable key with Webhooks but not Integrations gets 403 key_scope_denied, and the secret is unchanged', async () => {
    const account = await accountWithWebhook({ generate_signing_secret: true });
    const key = await service.createScopedKey(account.userId, { tags: ['Webhooks'], read_only: false });
    // The key does reach the Webhooks section.
    const listed = await service.request('GET', '/webhooks', { apiKey: key });
    expect(listed.status).toBe(200);
    for (const [method, path] of routes) {
      const response = await service.request(method, path, { apiKey: key });
      expect(response.status, method).toBe(403);
      expect(response.body, method).toEqual({
        success: false,
        error: 'This API key is not allowed to use the Integrations section',
        error_code: 'key_scope_denied',
      });
    }
    expect(service.services.secrets.unseal((await storedSecret(account.userId)).sealed!)).toBe(account.created.signing_secret);
  });

  test('minting at creation too: generate_signing_secret with a key that has Webhooks but not Integrations is 403 key_scope_denied and creates nothing', async () => {
    const account = await service.createAccount();
    const key = await service.createScopedKey(account.userId, { tags: ['Webhooks'], read_only: false });
    const body = { url: RECEIVER, subscribed_to: ['Replies'], name: 'minted' };
    const refused = await service.request('POST', '/webhooks', { apiKey: key, body: { ...body, generate_signing_secret: true } });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ success: false, error: 'This API key is not allowed to use the Integrations section', error_code: 'key_scope_denied' });
    expect((await service.request('GET', '/webhooks', { apiKey: account.apiKey })).body.webhooks).toEqual([]);
    // Without the flag (or with it false) the same key creates the subscription, unsigned.
    const unsigned = await service.request('POST', '/webhooks', { apiKey: key, body: { ...body, generate_signing_secret: false } });
    expect(unsigned.status, unsigned.text).toBe(200);
    expect(unsigned.body).not.toHaveProperty('signing_secret');
  });

  test('minting at creation: a writable key with Webhooks and Integrations gets the secret, one with Webhooks alone 403', async () => {
    const account = await service.createAccount();
    const both = await service.createScopedKey(account.userId, { tags: ['Webhooks', 'Integrations'], read_only: false });
    const webhooksOnly = await service.createScopedKey(account.userId, { tags: ['Webhooks'], read_only: false });
    const body = { url: RECEIVER, subscribed_to: ['Replies'], name: 'minted', generate_signing_secret: true };
    expect((await service.request('POST', '/webhooks', { apiKey: webhooksOnly, body })).status).toBe(403);
    const created = await service.request('POST', '/webhooks', { apiKey: both, body });
    expect(created.status, created.text).toBe(200);
    expect(created.body.signing_secret).toMatch(/^whsec_/);
    expect(service.services.secrets.unseal((await storedSecret(account.userId)).sealed!)).toBe(created.body.signing_secret);
  });

  test('a read-only key with Integrations gets 403 key_read_only, even on GET', async () => {
    const account = await accountWithWebhook({ generate_signing_secret: true });
    const key = await service.createScopedKey(account.userId, { tags: ['Webhooks', 'Integrations'] });
    for (const [method, path] of routes) {
      const response = await service.request(method, path, { apiKey: key });
      expect(response.status, method).toBe(403);
      expect(response.body, method).toEqual({ success: false, error: 'This API key is read-only', error_code: 'key_read_only' });
    }
  });

  test('a writable key with Integrations may read, rotate and remove the secret', async () => {
    const account = await accountWithWebhook({ generate_signing_secret: true });
    const key = await service.createScopedKey(account.userId, { tags: ['Integrations'], read_only: false });
    const read = await service.request('GET', '/webhooks/1/signing-secret', { apiKey: key });
    expect(read.status).toBe(200);
    expect(read.body.signing_secret).toBe(account.created.signing_secret);
    const rotated = await service.request('POST', '/webhooks/1/signing-secret', { apiKey: key });
    expect(rotated.status).toBe(200);
    const removed = await service.request('DELETE', '/webhooks/1/signing-secret', { apiKey: key });
    expect(removed.body).toEqual({ success: true, webhook_id: '1', signing_enabled: false });
  });
});
