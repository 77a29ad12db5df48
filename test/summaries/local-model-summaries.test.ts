// A model server of the operator's own, as usually run beside the service: plain HTTP on a
// loopback or private address (Ollama, vLLM). SUMMARY_API_URL is the operator's setting, not
// a tenant's URL, so the public-address and HTTPS rules that guard tenants' URLs do not apply
// to it; they still apply to every webhook URL.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { completion, startFakeChatCompletions, type FakeChatCompletions } from '../helpers/fake-chat-completions.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { createContact, eventually, record } from '../messages/conversation-fixtures.ts';

let service: TestService;
let model: FakeChatCompletions;
beforeAll(async () => {
  model = await startFakeChatCompletions('unused', { plain: true });
  // No WEBHOOK_ALLOW_HOSTS: nothing exempts loopback but the operator's own setting.
  service = await startTestService({ env: { ...model.env, WEBHOOK_ALLOW_HOSTS: '' } });
});
afterAll(async () => {
  await service?.stop();
  await model?.stop();
});

test('a plain-HTTP model server on 127.0.0.1 (SUMMARY_API_URL) produces the summary', async () => {
  expect(model.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  const { apiKey, userId } = await service.createAccount();
  const { contactId, phoneNumber } = await createContact(service, apiKey);
  await record(service, userId, contactId, 'inbound', 'Is the shop open on Sunday?');
  model.script({ status: 200, body: completion('The contact asked about Sunday opening hours.') });

  await service.request('POST', '/summaries', { apiKey, body: { phoneNumber } });
  const listed = await eventually(async () => {
    const response = await service.request('GET', `/contacts/${contactId}/summaries`, { apiKey });
    return response.body.data.length ? response.body.data : undefined;
  }, 'the summary from the local model');
  expect(listed).toEqual([expect.objectContaining({ summary: 'The contact asked about Sunday opening hours.' })]);
  expect(model.requests.map((request) => request.path)).toEqual(['/v1/chat/completions']);
});

test("a tenant's webhook URL on the same loopback address is still refused", async () => {
  const { apiKey } = await service.createAccount();
  const response = await service.request('POST', '/webhooks', {
    apiKey,
    body: { url: model.url.replace('http:', 'https:'), subscribed_to: ['Contact Created'] },
  });
  expect(response.status).toBe(400);
  expect(JSON.stringify(response.body)).toMatch(/loopback/);
});
