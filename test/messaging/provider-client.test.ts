// The messaging provider client against the fake provider over real HTTPS: the Cloud API's
// template send (digits-only number, body parameters, bearer token), its error mapping (a
// 4xx is final and names the provider's error, 429/5xx/time-outs may be retried, the token
// never appears), and the template listing followed across pages.
import { afterEach, describe, expect, test } from 'vitest';
import { createMessagingProvider, ProviderRequestError } from '../../server/messaging/provider-client.ts';
import type { MessagingProvider } from '../../server/messaging/provider.ts';
import { startFakeMessagingProvider, type FakeMessagingProvider } from '../helpers/fake-messaging-provider.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const credentials = { phoneNumberId: '1049', businessAccountId: 'waba_77', accessToken: 'EAAG-secret-token-123' };
const send = { to: '+14155550100', templateName: 'order_update', language: 'en_US', parameters: ['Ada', 'A-17'] };

async function setup(options: { timeoutMs?: number } = {}): Promise<{ fake: FakeMessagingProvider; provider: MessagingProvider }> {
  const fake = await startFakeMessagingProvider();
  cleanups.push(() => fake.close());
  fake.grant(credentials.accessToken, { phoneNumberId: credentials.phoneNumberId, businessAccountId: credentials.businessAccountId });
  const provider = createMessagingProvider({ baseUrl: fake.url, timeoutMs: options.timeoutMs ?? 10_000, allowHosts: ['localhost'] });
  cleanups.push(() => provider.close());
  return { fake, provider };
}

describe('template sends', () => {
  test('a send is a POST to {phoneNumberId}/messages with the bearer token, the number as digits and the body parameters', async () => {
    const { fake, provider } = await setup();
    const result = await provider.sendTemplate(credentials, send);
    expect(result).toEqual({ ok: true, providerMessageId: 'wamid.fake.1' });
    const [request] = fake.sends();
    expect(request).toMatchObject({ method: 'POST', path: '/v21.0/1049/messages', authorization: 'Bearer EAAG-secret-token-123' });
    expect(request!.body).toEqual({
      messaging_product: 'whatsapp',
      to: '14155550100',
      type: 'template',
      template: {
        name: 'order_update',
        language: { code: 'en_US' },
        components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ada' }, { type: 'text', text: 'A-17' }] }],
      },
    });
  });

  test('a template without parameters is sent with no components', async () => {
    const { fake, provider } = await setup();
    await provider.sendTemplate(credentials, { ...send, parameters: [] });
    expect(fake.sends()[0]!.body.template.components).toEqual([]);
  });

  test('a 4xx is final and its message names the provider error, never the token', async () => {
    const { fake, provider } = await setup();
    fake.answerSendsWith(() => ({
      status: 400,
      body: { error: { message: 'Re-engagement message', type: 'OAuthException', code: 131047, error_subcode: 2494010 } },
    }));
    const result = await provider.sendTemplate(credentials, send);
    expect(result).toEqual({
      ok: false,
      status: 400,
      retryable: false,
      message: 'The messaging provider refused the send (131047): Re-engagement message',
    });
  });

  test('429 and 5xx may be retried', async () => {
    const { fake, provider } = await setup();
    fake.answerSendsWith((_request, index) =>
      index === 0
        ? { status: 429, body: { error: { message: 'Rate limit hit', code: 130429, type: 'OAuthException' } } }
        : { status: 503, body: 'upstream unavailable' },
    );
    const limited = await provider.sendTemplate(credentials, send);
    expect(limited).toMatchObject({ ok: false, status: 429, retryable: true, message: 'The messaging provider refused the send (130429): Rate limit hit' });
    const unavailable = await provider.sendTemplate(credentials, send);
    expect(unavailable).toMatchObject({ ok: false, status: 503, retryable: true, message: 'The messaging provider refused the send with HTTP 503' });
  });

  test('no answer within the time-out may be retried', async () => {
    const { fake, provider } = await setup({ timeoutMs: 300 });
    fake.answerSendsWith(() => ({ status: 200, body: { messages: [{ id: 'wamid.late' }] }, delayMs: 3_000 }));
    const result = await provider.sendTemplate(credentials, send);
    expect(result).toMatchObject({ ok: false, status: null, retryable: true });
    if (!result.ok) expect(result.message).toMatch(/did not answer in time/);
  });

  test('an unreachable provider may be retried, and its message does not carry the token', async () => {
    const { fake } = await setup();
    const url = fake.url;
    await fake.close();
    cleanups.length = 0;
    const provider = createMessagingProvider({ baseUrl: url, timeoutMs: 5_000, allowHosts: ['localhost'] });
    cleanups.push(() => provider.close());
    const result = await provider.sendTemplate(credentials, send);
    expect(result).toMatchObject({ ok: false, status: null, retryable: true });
    expect(JSON.stringify(result)).not.toContain(credentials.accessToken);
  });

  test('an answer larger than the 1 MiB read cap is not buffered; the send is reported without an id and not retried', async () => {
    const { fake, provider } = await setup();
    fake.answerSendsWith(() => ({ status: 200, body: { messages: [{ id: 'wamid.huge' }], padding: 'x'.repeat(1024 * 1024 + 10) } }));
    const result = await provider.sendTemplate(credentials, send);
    expect(result).toEqual({ ok: false, status: 200, retryable: false, message: 'The messaging provider accepted the send but returned no message id' });
  });

  test('the outbound address guard applies: a private address not allowed is refused', async () => {
    const { fake } = await setup();
    const provider = createMessagingProvider({ baseUrl: fake.url, timeoutMs: 5_000, allowHosts: [] });
    cleanups.push(() => provider.close());
    const result = await provider.sendTemplate(credentials, send);
    expect(result).toMatchObject({ ok: false, status: null });
    expect(fake.requests).toHaveLength(0);
  });
});

describe('template listing', () => {
  test('every template of the business account is listed, following the paging', async () => {
    const { fake, provider } = await setup();
    const listed = Array.from({ length: 5 }, (_, index) => ({
      id: `tpl_${index}`,
      name: `template_${index}`,
      language: 'en_US',
      status: index === 4 ? 'REJECTED' : 'APPROVED',
      category: 'UTILITY',
      components: [{ type: 'BODY', text: `Hello {{1}} number ${index}` }],
    }));
    fake.setTemplates('waba_77', listed);
    const templates = await provider.listTemplates(credentials);
    expect(templates.map((template) => template.name)).toEqual(listed.map((template) => template.name));
    expect(templates[4]).toEqual({
      id: 'tpl_4',
      name: 'template_4',
      language: 'en_US',
      category: 'UTILITY',
      status: 'REJECTED',
      components: [{ type: 'BODY', text: 'Hello {{1}} number 4' }],
      raw: listed[4],
    });
    const pages = fake.requests.filter((request) => request.method === 'GET');
    expect(pages).toHaveLength(3);
    expect(pages[0]!.path).toBe('/v21.0/waba_77/message_templates?limit=100');
    expect(pages.every((request) => request.authorization === 'Bearer EAAG-secret-token-123')).toBe(true);
  });

  test('a refused listing throws a clear error without the token', async () => {
    const { provider } = await setup();
    const error = await provider.listTemplates({ ...credentials, accessToken: '' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderRequestError);
    expect(error).toMatchObject({
      status: 401,
      retryable: false,
      message: 'The messaging provider refused the template listing (190): Invalid OAuth access token - Cannot parse access token',
    });
  });
});

describe('connection check', () => {
  test('a token that reaches the number, and the business account holding it, passes; both are read with the token', async () => {
    const { fake, provider } = await setup();
    expect(await provider.checkConnection(credentials)).toEqual({ ok: true });
    const reads = fake.requests.map((request) => `${request.method} ${request.path.split('?')[0]} ${request.authorization}`);
    expect(reads).toEqual([
      'GET /v21.0/1049 Bearer EAAG-secret-token-123',
      'GET /v21.0/waba_77/phone_numbers Bearer EAAG-secret-token-123',
    ]);
    expect(await provider.checkConnection({ ...credentials, businessAccountId: null })).toEqual({ ok: true });
  });

  test('an unknown token is refused as such, and the message never carries it', async () => {
    const { provider } = await setup();
    const check = await provider.checkConnection({ ...credentials, accessToken: 'junk-token-never-granted' });
    expect(check).toMatchObject({ ok: false, problem: 'token_refused' });
    if (!check.ok) expect(check.message).toMatch(/^The access token was refused by the messaging provider \(provider error 190: Invalid OAuth access token/);
    expect(JSON.stringify(check)).not.toContain('junk-token-never-granted');
  });

  test('a valid token that cannot reach the number, or the business account, is refused naming it', async () => {
    const { fake, provider } = await setup();
    fake.grant('other-token', { phoneNumberId: '2000', businessAccountId: 'waba_other' });
    const number = await provider.checkConnection({ phoneNumberId: '1049', businessAccountId: null, accessToken: 'other-token' });
    expect(number).toMatchObject({ ok: false, problem: 'phone_number_unreachable' });
    if (!number.ok) expect(number.message).toMatch(/^The access token cannot reach phone_number_id 1049 \(provider error 100: Unsupported get request/);
    const business = await provider.checkConnection({ phoneNumberId: '2000', businessAccountId: 'waba_77', accessToken: 'other-token' });
    expect(business).toMatchObject({ ok: false, problem: 'business_account_unreachable', message: expect.stringMatching(/^The access token cannot reach business_account_id waba_77 /) });
  });

  test('a number the business account does not hold is refused', async () => {
    const { fake, provider } = await setup();
    fake.grant('two-things', { phoneNumberId: '3000' });
    fake.grant('two-things', { businessAccountId: 'waba_empty' });
    expect(await provider.checkConnection({ phoneNumberId: '3000', businessAccountId: 'waba_empty', accessToken: 'two-things' })).toEqual({
      ok: false,
      problem: 'phone_number_not_in_business_account',
      message: 'phone_number_id 3000 does not belong to business_account_id waba_empty',
    });
  });

  test('a provider that does not answer is unavailable rather than a refusal', async () => {
    const { fake } = await setup();
    const url = fake.url;
    await fake.close();
    cleanups.length = 0;
    const provider = createMessagingProvider({ baseUrl: url, timeoutMs: 5_000, allowHosts: ['localhost'] });
    cleanups.push(() => provider.close());
    const check = await provider.checkConnection(credentials);
    expect(check).toMatchObject({ ok: false, problem: 'provider_unavailable' });
    expect(JSON.stringify(check)).not.toContain(credentials.accessToken);
  });
});
