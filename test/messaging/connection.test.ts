// The messaging-provider connection over real HTTPS: GET/PUT/DELETE /messaging/connection
// (contract: the token is never returned), the token stored only sealed, one phone number
// per account (409), connecting queues a template sync and announces no event.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadProviderCredentials } from '../../server/messaging/connection.ts';
import { startFakeMessagingProvider, type FakeMessagingProvider } from '../helpers/fake-messaging-provider.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { eventually } from '../webhooks/webhook-fixtures.ts';

let service: TestService;
let fake: FakeMessagingProvider;

beforeAll(async () => {
  fake = await startFakeMessagingProvider();
  service = await startTestService({ env: { MESSAGING_API_URL: fake.url, WEBHOOK_ALLOW_HOSTS: 'localhost,127.0.0.1' } });
});

afterAll(async () => {
  await service?.stop();
  await fake?.close();
});

const TOKEN = 'EAAG-connection-test-token-0001';

async function connectionRow(accountId: string) {
  const result = await service.services.pool.query<{ phone_number_id: string; business_account_id: string | null; access_token_sealed: string }>(
    'select phone_number_id, business_account_id, access_token_sealed from messaging_connections where account_id = $1',
    [accountId],
  );
  return result.rows[0];
}

describe('GET/PUT/DELETE /messaging/connection', () => {
  test('an account without a connection reads connected false and null ids', async () => {
    const { apiKey } = await service.createAccount();
    const response = await service.request('GET', '/messaging/connection', { apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, data: { connected: false, phone_number_id: null, business_account_id: null } });
  });

  test('connecting stores the ids, never returns the token and stores it only sealed', async () => {
    const { userId, apiKey } = await service.createAccount();
    const put = await service.request('PUT', '/messaging/connection', {
      apiKey,
      body: { phone_number_id: '100200300', business_account_id: 'waba_conn_1', access_token: TOKEN },
    });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ success: true, data: { connected: true, phone_number_id: '100200300', business_account_id: 'waba_conn_1' } });
    expect(put.text).not.toContain(TOKEN);

    const get = await service.request('GET', '/messaging/connection', { apiKey });
    expect(get.body).toEqual(put.body);
    expect(get.text).not.toContain(TOKEN);

    const row = await connectionRow(userId);
    expect(row).toMatchObject({ phone_number_id: '100200300', business_account_id: 'waba_conn_1' });
    expect(row!.access_token_sealed).not.toContain(TOKEN);
    expect(row!.access_token_sealed).not.toContain(Buffer.from(TOKEN).toString('base64'));
    expect(service.services.secrets.unseal(row!.access_token_sealed)).toBe(TOKEN);
    expect(await loadProviderCredentials(service.services.orm.em.fork(), service.services.secrets, userId)).toEqual({
      phoneNumberId: '100200300',
      businessAccountId: 'waba_conn_1',
      accessToken: TOKEN,
    });
  });

  test('connecting again replaces the credentials; business_account_id may be left out', async () => {
    const { userId, apiKey } = await service.createAccount();
    await service.request('PUT', '/messaging/connection', { apiKey, body: { phone_number_id: '555000111', access_token: 'first-token' } });
    const again = await service.request('PUT', '/messaging/connection', { apiKey, body: { phone_number_id: '555000112', access_token: 'second-token' } });
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual({ connected: true, phone_number_id: '555000112', business_account_id: null });
    const row = await connectionRow(userId);
    expect(service.services.secrets.unseal(row!.access_token_sealed)).toBe('second-token');
  });

  test("a phone_number_id already connected to another account is a 409", async () => {
    const first = await service.createAccount();
    const second = await service.createAccount();
    const body = { phone_number_id: '777888999', access_token: TOKEN };
    expect((await service.request('PUT', '/messaging/connection', { apiKey: first.apiKey, body })).status).toBe(200);
    const taken = await service.request('PUT', '/messaging/connection', { apiKey: second.apiKey, body });
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({ success: false, error: 'That phone_number_id is already connected to another account' });
    expect(await connectionRow(second.userId)).toBeUndefined();
  });

  test('a missing access_token or phone_number_id is a 400 naming the field', async () => {
    const { apiKey } = await service.createAccount();
    const noToken = await service.request('PUT', '/messaging/connection', { apiKey, body: { phone_number_id: '123' } });
    expect(noToken.status).toBe(400);
    expect(noToken.text).toContain('access_token');
    const noNumber = await service.request('PUT', '/messaging/connection', { apiKey, body: { access_token: TOKEN } });
    expect(noNumber.status).toBe(400);
    expect(noNumber.text).toContain('phone_number_id');
    const badNumber = await service.request('PUT', '/messaging/connection', { apiKey, body: { phone_number_id: '../me', access_token: TOKEN } });
    expect(badNumber.status).toBe(400);
  });

  test('disconnecting removes the credentials', async () => {
    const { userId, apiKey } = await service.createAccount();
    await service.request('PUT', '/messaging/connection', { apiKey, body: { phone_number_id: '424242', access_token: TOKEN } });
    const deleted = await service.request('DELETE', '/messaging/connection', { apiKey });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, data: { connected: false, phone_number_id: null, business_account_id: null } });
    expect(await connectionRow(userId)).toBeUndefined();
    expect((await service.request('GET', '/messaging/connection', { apiKey })).body.data.connected).toBe(false);
    // The number is free for another account afterwards.
    const other = await service.createAccount();
    expect((await service.request('PUT', '/messaging/connection', { apiKey: other.apiKey, body: { phone_number_id: '424242', access_token: TOKEN } })).status).toBe(200);
  });

  test('a read-only key may read the connection but not change it', async () => {
    const { userId } = await service.createAccount();
    const readOnly = await service.createScopedKey(userId, { read_only: true, tags: ['Integrations'] });
    expect((await service.request('GET', '/messaging/connection', { apiKey: readOnly })).status).toBe(200);
    const put = await service.request('PUT', '/messaging/connection', { apiKey: readOnly, body: { phone_number_id: '9090', access_token: TOKEN } });
    expect(put.status).toBe(403);
    expect(put.body).toMatchObject({ success: false, error_code: 'key_read_only' });
    expect(await connectionRow(userId)).toBeUndefined();
  });
});

describe('connecting and template sync', () => {
  test('connecting queues a template sync, which the worker runs against the provider with the token', async () => {
    const { apiKey } = await service.createAccount();
    fake.setTemplates('waba_sync_on_connect', [
      { id: 't1', name: 'welcome', language: 'en', status: 'APPROVED', category: 'UTILITY', components: [{ type: 'BODY', text: 'Hi {{first_name}}' }] },
    ]);
    await service.request('PUT', '/messaging/connection', {
      apiKey,
      body: { phone_number_id: '31313131', business_account_id: 'waba_sync_on_connect', access_token: 'token-sync-on-connect' },
    });
    const templates = await eventually(
      () => service.request('GET', '/whatsapp-templates', { apiKey }),
      (response) => response.body.data.length === 1,
    );
    expect(templates.body.data[0]).toMatchObject({ name: 'welcome', status: 'APPROVED', language: 'en', category: 'UTILITY' });
    const listing = fake.requests.find((request) => request.path.startsWith('/v21.0/waba_sync_on_connect/message_templates'));
    expect(listing?.authorization).toBe('Bearer token-sync-on-connect');
  });

  test('connecting announces no event', async () => {
    const { userId, apiKey } = await service.createAccount();
    const count = async () =>
      Number((await service.services.pool.query<{ n: string }>('select count(*) as n from events where account_id = $1', [userId])).rows[0]!.n);
    const before = await count();
    await service.request('PUT', '/messaging/connection', { apiKey, body: { phone_number_id: '60606060', access_token: TOKEN } });
    await service.request('DELETE', '/messaging/connection', { apiKey });
    expect(await count()).toBe(before);
  });
});
