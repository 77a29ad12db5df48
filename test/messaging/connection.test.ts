// The messaging-provider connection over real HTTPS: GET/PUT/DELETE /messaging/connection
// (contract: the token is never returned), the credentials checked with the (fake) provider
// before anything is stored, so no account can claim a number whose token it does not hold,
// the token stored only sealed, one phone number per account (409, told only to a verified
// holder), connecting queues a template sync and announces no event.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadProviderCredentials } from '../../server/messaging/connection.ts';
import { startFakeMessagingProvider, type FakeMessagingProvider } from '../helpers/fake-messaging-provider.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { eventually } from '../webhooks/webhook-fixtures.ts';

let service: TestService;
let fake: FakeMessagingProvider;
const logLines: string[] = [];
/** Every access token sent, so the last test can look for them in the log. */
const sentTokens = new Set<string>();

beforeAll(async () => {
  fake = await startFakeMessagingProvider();
  service = await startTestService({
    env: { MESSAGING_API_URL: fake.url, WEBHOOK_ALLOW_HOSTS: 'localhost,127.0.0.1', MESSAGING_APP_SECRET: APP_SECRET },
    logLines,
  });
});

afterAll(async () => {
  await service?.stop();
  await fake?.close();
});

const TOKEN = 'EAAG-connection-test-token-0001';
const APP_SECRET = 'app-secret-for-connection-tests';

/** PUT /messaging/connection. */
function connect(apiKey: string, body: Record<string, unknown>) {
  if (typeof body.access_token === 'string') sentTokens.add(body.access_token);
  return service.request('PUT', '/messaging/connection', { apiKey, body });
}

/** A signed provider callback carrying one inbound text message to the number. */
function inboundCallback(phoneNumberId: string, from: string, providerMessageId: string, text: string) {
  const rawBody = JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: 'waba-callback',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550000000', phone_number_id: phoneNumberId },
              messages: [{ from, id: providerMessageId, timestamp: String(Math.floor(Date.now() / 1000)), type: 'text', text: { body: text } }],
            },
          },
        ],
      },
    ],
  });
  const signature = `sha256=${createHmac('sha256', APP_SECRET).update(rawBody).digest('hex')}`;
  return service.request('POST', '/provider-callbacks/whatsapp', { rawBody, headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature } });
}

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
    fake.grant(TOKEN, { phoneNumberId: '100200300', businessAccountId: '200300400' });
    const put = await service.request('PUT', '/messaging/connection', {
      apiKey,
      body: { phone_number_id: '100200300', business_account_id: '200300400', access_token: TOKEN },
    });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ success: true, data: { connected: true, phone_number_id: '100200300', business_account_id: '200300400' } });
    expect(put.text).not.toContain(TOKEN);

    const get = await service.request('GET', '/messaging/connection', { apiKey });
    expect(get.body).toEqual(put.body);
    expect(get.text).not.toContain(TOKEN);

    const row = await connectionRow(userId);
    expect(row).toMatchObject({ phone_number_id: '100200300', business_account_id: '200300400' });
    expect(row!.access_token_sealed).not.toContain(TOKEN);
    expect(row!.access_token_sealed).not.toContain(Buffer.from(TOKEN).toString('base64'));
    expect(service.services.secrets.unseal(row!.access_token_sealed)).toBe(TOKEN);
    expect(await loadProviderCredentials(service.services.orm.em.fork(), service.services.secrets, userId)).toEqual({
      phoneNumberId: '100200300',
      businessAccountId: '200300400',
      accessToken: TOKEN,
    });
  });

  test('connecting again replaces the credentials; business_account_id may be left out', async () => {
    const { userId, apiKey } = await service.createAccount();
    fake.grant('first-token', { phoneNumberId: '555000111' });
    fake.grant('second-token', { phoneNumberId: '555000112' });
    expect((await connect(apiKey, { phone_number_id: '555000111', access_token: 'first-token' })).status).toBe(200);
    const again = await service.request('PUT', '/messaging/connection', { apiKey, body: { phone_number_id: '555000112', access_token: 'second-token' } });
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual({ connected: true, phone_number_id: '555000112', business_account_id: null });
    const row = await connectionRow(userId);
    expect(service.services.secrets.unseal(row!.access_token_sealed)).toBe('second-token');
  });

  test('a phone_number_id already connected to another account is a 409, told only to an account whose token reaches the number', async () => {
    const first = await service.createAccount();
    const second = await service.createAccount();
    // Two holders of the number (two system users of one business account, say).
    fake.grant('holder-one', { phoneNumberId: '777888999' });
    fake.grant('holder-two', { phoneNumberId: '777888999' });
    expect((await connect(first.apiKey, { phone_number_id: '777888999', access_token: 'holder-one' })).status).toBe(200);
    const taken = await connect(second.apiKey, { phone_number_id: '777888999', access_token: 'holder-two' });
    expect(taken.status).toBe(409);
    expect(taken.body).toEqual({ success: false, error: 'That phone_number_id is already connected to another account', error_code: 409 });
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
    const unsendableToken = await connect(apiKey, { phone_number_id: '123', access_token: 'tok\u00e9n with spaces' });
    expect(unsendableToken.status).toBe(400);
    expect(unsendableToken.body.error).toBe('access_token may hold only visible ASCII characters (no spaces)');
  });

  test('a phone_number_id or business_account_id that is not the provider\'s digits ("." or "..", say) is a 400 naming the field; the provider is never asked', async () => {
    const { userId, apiKey } = await service.createAccount();
    fake.grant(TOKEN, { phoneNumberId: '515151', businessAccountId: '525252' });
    const asked = fake.requests.length;
    const cases: Array<[string, Record<string, string>]> = [];
    for (const id of ['.', '..', '../515151', '515151/..', '515.151', '515151a', '%2e%2e']) {
      cases.push(['phone_number_id', { phone_number_id: id, business_account_id: '525252' }]);
      cases.push(['business_account_id', { phone_number_id: '515151', business_account_id: id }]);
    }
    for (const [field, ids] of cases) {
      const refused = await connect(apiKey, { ...ids, access_token: TOKEN });
      expect(refused.status, JSON.stringify(ids)).toBe(400);
      expect(refused.body, JSON.stringify(ids)).toEqual({ success: false, error: `${field} must be the messaging provider's id: digits only`, error_code: 400 });
    }
    expect(fake.requests.slice(asked)).toEqual([]);
    expect(await connectionRow(userId)).toBeUndefined();
    // The provider's own digits still connect.
    expect((await connect(apiKey, { phone_number_id: '515151', business_account_id: '525252', access_token: TOKEN })).status).toBe(200);
  });

  test('disconnecting removes the credentials', async () => {
    const { userId, apiKey } = await service.createAccount();
    fake.grant(TOKEN, { phoneNumberId: '424242' });
    expect((await connect(apiKey, { phone_number_id: '424242', access_token: TOKEN })).status).toBe(200);
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

describe('the credentials are checked with the provider before anything is stored', () => {
  let numbers = 0;
  /** A phone-number id no other test uses. */
  const newNumber = () => `8${process.pid}${String(++numbers).padStart(3, '0')}`;

  async function ownerOf(phoneNumberId: string) {
    const owner = await service.createAccount();
    const token = `owner-token-${phoneNumberId}`;
    fake.grant(token, { phoneNumberId });
    return { ...owner, token };
  }

  async function contactWithPhone(apiKey: string, phoneNumber: string): Promise<string> {
    const created = await service.request('POST', '/contacts', { apiKey, body: { phoneNumber } });
    expect(created.status, created.text).toBe(200);
    return created.body.data.contactId;
  }

  async function messagesOf(apiKey: string, contactId: string): Promise<Array<Record<string, any>>> {
    const listed = await service.request('GET', `/contacts/messages/${contactId}`, { apiKey });
    expect(listed.status, listed.text).toBe(200);
    return listed.body.data;
  }

  test("a token the provider refuses claims nothing: 422 saying so, nothing stored, and the number's messages never reach the account", async () => {
    const victimNumber = newNumber();
    const owner = await ownerOf(victimNumber);
    const attacker = await service.createAccount();
    const sender = '+14155550177';
    const attackerContact = await contactWithPhone(attacker.apiKey, sender);

    const claim = await connect(attacker.apiKey, { phone_number_id: victimNumber, access_token: 'junk' });
    expect(claim.status, claim.text).toBe(422);
    expect(claim.body).toEqual({
      success: false,
      error: expect.stringMatching(/^The access token was refused by the messaging provider \(provider error 190: Invalid OAuth access token/),
      error_code: 'token_refused',
    });
    expect(claim.text).not.toContain('junk');
    expect(await connectionRow(attacker.userId)).toBeUndefined();
    expect((await service.request('GET', '/messaging/connection', { apiKey: attacker.apiKey })).body.data.connected).toBe(false);

    // A callback for the number while nobody holds it is ignored, not given to the attacker.
    expect((await inboundCallback(victimNumber, sender.slice(1), `wamid.before.${victimNumber}`, 'before the owner connected')).status).toBe(200);
    // The owner then connects, unhindered by the attempt, and receives the number's messages.
    const owned = await connect(owner.apiKey, { phone_number_id: victimNumber, access_token: owner.token });
    expect(owned.status, owned.text).toBe(200);
    expect((await inboundCallback(victimNumber, sender.slice(1), `wamid.after.${victimNumber}`, 'for the owner only')).status).toBe(200);
    const ownerContact = await eventually(
      async () => (await service.services.pool.query<{ id: string }>('select id from contacts where account_id = $1 and phone_number = $2', [owner.userId, sender])).rows[0]?.id,
      (id) => Boolean(id),
    );
    const ownerMessages = await messagesOf(owner.apiKey, ownerContact!);
    expect(JSON.stringify(ownerMessages)).toContain('for the owner only');
    expect(await messagesOf(attacker.apiKey, attackerContact)).toEqual([]);
  });

  test("a valid token that cannot reach the number is 422 naming the number, whether or not someone holds it (no 409 reveals a holder)", async () => {
    const heldNumber = newNumber();
    const owner = await ownerOf(heldNumber);
    expect((await connect(owner.apiKey, { phone_number_id: heldNumber, access_token: owner.token })).status).toBe(200);
    const other = await service.createAccount();
    const ownNumber = newNumber();
    fake.grant('other-account-token', { phoneNumberId: ownNumber });

    const held = await connect(other.apiKey, { phone_number_id: heldNumber, access_token: 'other-account-token' });
    expect(held.status, held.text).toBe(422);
    expect(held.body).toEqual({
      success: false,
      error: expect.stringMatching(new RegExp(`^The access token cannot reach phone_number_id ${heldNumber} \\(provider error 100: Unsupported get request`)),
      error_code: 'phone_number_unreachable',
    });
    const freeNumber = newNumber();
    const free = await connect(other.apiKey, { phone_number_id: freeNumber, access_token: 'other-account-token' });
    expect(free.status).toBe(422);
    expect(free.body.error_code).toBe('phone_number_unreachable');
    expect(free.body.error.replaceAll(freeNumber, 'N')).toBe(held.body.error.replaceAll(heldNumber, 'N'));
    expect(await connectionRow(other.userId)).toBeUndefined();
    expect((await service.request('GET', '/messaging/connection', { apiKey: owner.apiKey })).body.data.phone_number_id).toBe(heldNumber);

    // The same token connects the number it does reach.
    const own = await connect(other.apiKey, { phone_number_id: ownNumber, access_token: 'other-account-token' });
    expect(own.status, own.text).toBe(200);
    expect(own.body.data).toEqual({ connected: true, phone_number_id: ownNumber, business_account_id: null });
  });

  test('with a business_account_id the token must reach it and it must hold the number', async () => {
    const { userId, apiKey } = await service.createAccount();
    const number = newNumber();
    fake.grant('business-token', { phoneNumberId: number, businessAccountId: '6100001' });
    fake.grant('business-token', { businessAccountId: '6100002' });

    const unreachable = await connect(apiKey, { phone_number_id: number, business_account_id: '6100003', access_token: 'business-token' });
    expect(unreachable.status).toBe(422);
    expect(unreachable.body).toMatchObject({ error_code: 'business_account_unreachable', error: expect.stringMatching(/^The access token cannot reach business_account_id 6100003 /) });
    const elsewhere = await connect(apiKey, { phone_number_id: number, business_account_id: '6100002', access_token: 'business-token' });
    expect(elsewhere.status).toBe(422);
    expect(elsewhere.body).toEqual({
      success: false,
      error: `phone_number_id ${number} does not belong to business_account_id 6100002`,
      error_code: 'phone_number_not_in_business_account',
    });
    expect(await connectionRow(userId)).toBeUndefined();

    const connected = await connect(apiKey, { phone_number_id: number, business_account_id: '6100001', access_token: 'business-token' });
    expect(connected.status, connected.text).toBe(200);
    expect(await connectionRow(userId)).toMatchObject({ phone_number_id: number, business_account_id: '6100001' });
  });

  test('a provider that cannot answer the check is 502; nothing is stored and the previous connection stays', async () => {
    const { userId, apiKey } = await service.createAccount();
    const number = newNumber();
    fake.grant('outage-token', { phoneNumberId: number });
    expect((await connect(apiKey, { phone_number_id: number, access_token: 'outage-token' })).status).toBe(200);
    const next = newNumber();
    fake.grant('outage-token', { phoneNumberId: next });
    fake.answerRequestsWith(() => ({ status: 503, body: 'upstream unavailable' }));
    try {
      const down = await connect(apiKey, { phone_number_id: next, access_token: 'outage-token' });
      expect(down.status, down.text).toBe(502);
      expect(down.body).toEqual({
        success: false,
        error: 'The messaging provider could not be reached to check the credentials; nothing was stored, try again later',
        error_code: 'provider_unavailable',
      });
    } finally {
      fake.answerRequestsWith(null);
    }
    expect(await connectionRow(userId)).toMatchObject({ phone_number_id: number });
    // The provider's outage is a warning naming what failed, without a stack; not an error.
    const logged = await eventually(
      async () => logLines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'request failed: an outside service failed'),
      (lines) => lines.length > 0,
    );
    expect(logged).toEqual([expect.objectContaining({ level: 40, status: 502, reason: 'provider_unavailable', failure: expect.stringContaining('HTTP 503') })]);
    expect(JSON.stringify(logged)).not.toContain('"stack"');
    expect(logLines.filter((line) => JSON.parse(line).level >= 50)).toEqual([]);
  });

  test('no log line carries an access token', () => {
    expect(sentTokens.size).toBeGreaterThan(5);
    expect(logLines.length).toBeGreaterThan(0);
    for (const token of sentTokens) expect(logLines.filter((line) => line.includes(token))).toEqual([]);
  });
});

describe('connecting and template sync', () => {
  test('connecting queues a template sync, which the worker runs against the provider with the token', async () => {
    const { apiKey } = await service.createAccount();
    fake.grant('token-sync-on-connect', { phoneNumberId: '31313131', businessAccountId: '32323232' });
    fake.setTemplates('32323232', [
      { id: 't1', name: 'welcome', language: 'en', status: 'APPROVED', category: 'UTILITY', components: [{ type: 'BODY', text: 'Hi {{first_name}}' }] },
    ]);
    const put = await connect(apiKey, { phone_number_id: '31313131', business_account_id: '32323232', access_token: 'token-sync-on-connect' });
    expect(put.status, put.text).toBe(200);
    const templates = await eventually(
      () => service.request('GET', '/whatsapp-templates', { apiKey }),
      (response) => response.body.data.length === 1,
    );
    expect(templates.body.data[0]).toMatchObject({ name: 'welcome', status: 'APPROVED', language: 'en', category: 'UTILITY' });
    const listing = fake.requests.find((request) => request.path.startsWith('/v21.0/32323232/message_templates'));
    expect(listing?.authorization).toBe('Bearer token-sync-on-connect');
  });

  test('connecting announces no event', async () => {
    const { userId, apiKey } = await service.createAccount();
    const count = async () =>
      Number((await service.services.pool.query<{ n: string }>('select count(*) as n from events where account_id = $1', [userId])).rows[0]!.n);
    fake.grant(TOKEN, { phoneNumberId: '60606060' });
    const before = await count();
    const put = await connect(apiKey, { phone_number_id: '60606060', access_token: TOKEN });
    expect(put.status, put.text).toBe(200);
    expect(put.body.data.connected).toBe(true);
    const deleted = await service.request('DELETE', '/messaging/connection', { apiKey });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body.data.connected).toBe(false);
    expect(await count()).toBe(before);
  });
});
