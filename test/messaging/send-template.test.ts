// POST /whatsapp-templates/send over real HTTPS against the fake provider: the template is
// rendered against the contact, charged, recorded and sent, all or nothing.
import { afterAll, beforeAll, beforeEach, describe, expect, onTestFinished, test } from 'vitest';
import { startFakeMessagingProvider, type FakeMessagingProvider } from '../helpers/fake-messaging-provider.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { addTemplate, connectAccount, createContact, creditsOf, eventsOf, MESSAGING_ALLOW_HOSTS, messagesOf } from './send-template-fixtures.ts';

let service: TestService;
let fake: FakeMessagingProvider;
let account: { userId: string; apiKey: string };
let phoneNumberSeq = 0;
const logLines: string[] = [];

beforeAll(async () => {
  fake = await startFakeMessagingProvider();
  service = await startTestService({ env: { MESSAGING_API_URL: fake.url, ...MESSAGING_ALLOW_HOSTS }, logLines });
});
afterAll(async () => {
  await service?.stop();
  await fake?.close();
});
beforeEach(async () => {
  fake.answerSendsWith(null);
  account = await service.createAccount({ credits: 100 });
  phoneNumberSeq += 1;
  await connectAccount(service, fake, account.userId, { phoneNumberId: `pn${phoneNumberSeq}`, token: `token-${phoneNumberSeq}` });
});

function send(body: Record<string, unknown>, apiKey = account.apiKey) {
  return service.request('POST', '/v1/whatsapp-templates/send', { apiKey, body });
}

test('a send reaches the provider with the phone-number id in the path, the bearer token, the contact number and the numbered parameters in order', async () => {
  const contactId = await createContact(service, account.apiKey, {
    phoneNumber: '+14155550123',
    firstName: 'ada',
    lastName: 'Lovelace',
    currentCampaignData: { company: 'Analytical Engines', seats: 3, nested: { ignored: true } },
  });
  const templateId = await addTemplate(service, account.userId, {
    name: 'welcome',
    body: 'Hi {{first_name|capitalize}} {{last_name|uppercase}} from {{company}} ({{seats}} seats), {{email|no e-mail}}; again {{first_name|capitalize}}',
  });
  const before = fake.sends().length;

  const answer = await send({ contactId, whatsappTemplateId: templateId });
  expect(answer.status, answer.text).toBe(200);
  expect(answer.body).toEqual({ success: true, data: expect.stringMatching(/^msg_/) });

  const sends = fake.sends().slice(before);
  expect(sends).toHaveLength(1);
  const request = sends[0]!;
  expect(request.path).toBe(`/v21.0/pn${phoneNumberSeq}/messages`);
  expect(request.authorization).toBe(`Bearer token-${phoneNumberSeq}`);
  expect(request.body.to).toBe('14155550123');
  expect(request.body.template.name).toBe('welcome');
  expect(request.body.template.language).toEqual({ code: 'en' });
  // Equal expressions share one number, so `first_name|capitalize` is sent once.
  expect(request.body.template.components[0].parameters.map((p: { text: string }) => p.text)).toEqual([
    'Ada',
    'LOVELACE',
    'Analytical Engines',
    '3',
    'no e-mail',
  ]);

  const [message] = await messagesOf(service, contactId);
  expect(message).toMatchObject({
    id: answer.body.data,
    direction: 'outbound-api',
    channel: 'whatsapp',
    status: 'sent',
    template_id: templateId,
    provider_message_id: expect.stringMatching(/^wamid\.fake\./),
    body: 'Hi Ada LOVELACE from Analytical Engines (3 seats), no e-mail; again Ada',
  });
  expect(await creditsOf(service, account.userId)).toBe(99);
  expect(await eventsOf(service, account.userId, 'Credits Spent')).toEqual([expect.objectContaining({ data: { amount: 1, reason: 'template_send', balance: 99 } })]);
  const newMessages = await eventsOf(service, account.userId, 'New Message');
  expect(newMessages).toHaveLength(1);
  expect(newMessages[0]!.data.message.id).toBe(answer.body.data);
});

test('the stored defaults (name "Unknown", the placeholder e-mail) count as empty, so the variable default is used', async () => {
  const contactId = await createContact(service, account.apiKey);
  const templateId = await addTemplate(service, account.userId, { name: 'hello', body: 'Hello {{first_name|there}} {{last_name}}<{{email|none}}>' });
  const answer = await send({ contactId, whatsappTemplateId: templateId });
  expect(answer.status, answer.text).toBe(200);
  const request = fake.sends().at(-1)!;
  expect(request.body.template.components[0].parameters.map((p: { text: string }) => p.text)).toEqual(['there', '', 'none']);
  expect((await messagesOf(service, contactId))[0]!.body).toBe('Hello there <none>');
});

describe('refusals, each with nothing sent, charged or announced', () => {
  async function expectNothingHappened(contactId: string | null, sendsBefore: number) {
    expect(fake.sends().length).toBe(sendsBefore);
    expect(await creditsOf(service, account.userId)).toBe(100);
    expect(await eventsOf(service, account.userId, 'Credits Spent')).toEqual([]);
    expect(await eventsOf(service, account.userId, 'New Message')).toEqual([]);
    if (contactId) expect(await messagesOf(service, contactId)).toEqual([]);
  }

  test('400 when a required field is missing', async () => {
    const contactId = await createContact(service, account.apiKey);
    const before = fake.sends().length;
    const noTemplate = await send({ contactId });
    expect(noTemplate.status).toBe(400);
    expect(noTemplate.body).toEqual({ success: false, error_code: 400, error: 'whatsappTemplateId is required' });
    const noContact = await send({ whatsappTemplateId: 'tpl_x' });
    expect(noContact.status).toBe(400);
    expect(noContact.body).toEqual({ success: false, error_code: 400, error: 'contactId is required' });
    await expectNothingHappened(contactId, before);
  });

  test("404 for an unknown contact, an unknown template and another account's template", async () => {
    const contactId = await createContact(service, account.apiKey);
    const templateId = await addTemplate(service, account.userId, { name: 'mine', body: 'Hi' });
    const other = await service.createAccount();
    const theirs = await addTemplate(service, other.userId, { name: 'theirs', body: 'Hi' });
    const before = fake.sends().length;

    const unknownContact = await send({ contactId: 'ct_nope', whatsappTemplateId: templateId });
    expect(unknownContact.status).toBe(404);
    expect(unknownContact.body).toEqual({ success: false, error_code: 404, error: 'Contact not found' });
    for (const whatsappTemplateId of ['tpl_nope', theirs]) {
      const answer = await send({ contactId, whatsappTemplateId });
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({ success: false, error_code: 404, error: 'Template not found' });
    }
    await expectNothingHappened(contactId, before);
  });

  test('403 when the account has no messaging-provider credentials', async () => {
    await service.services.pool.query('delete from messaging_connections where account_id = $1', [account.userId]);
    const contactId = await createContact(service, account.apiKey);
    const templateId = await addTemplate(service, account.userId, { name: 'hi', body: 'Hi' });
    const before = fake.sends().length;
    const answer = await send({ contactId, whatsappTemplateId: templateId });
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({ success: false, error_code: 403, error: expect.any(String) });
    await expectNothingHappened(contactId, before);
  });

  test('400 for a template that is not APPROVED, naming its status', async () => {
    const contactId = await createContact(service, account.apiKey);
    const templateId = await addTemplate(service, account.userId, { name: 'promo', body: 'Hi', status: 'PENDING' });
    const before = fake.sends().length;
    const answer = await send({ contactId, whatsappTemplateId: templateId });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ success: false, error_code: 400, error: 'Template "promo" is PENDING; only APPROVED templates can be sent' });
    await expectNothingHappened(contactId, before);
  });

  test('400 for a template body whose variables cannot be rendered, naming the problem', async () => {
    const contactId = await createContact(service, account.apiKey);
    const templateId = await addTemplate(service, account.userId, { name: 'broken', body: 'Hi {{first_name|x|shout}}' });
    const before = fake.sends().length;
    const answer = await send({ contactId, whatsappTemplateId: templateId });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toContain('unknown transform "shout"');
    await expectNothingHappened(contactId, before);
  });

  test('402 with no credits left, and nothing is sent', async () => {
    account = await service.createAccount({ credits: 0 });
    await connectAccount(service, fake, account.userId, { phoneNumberId: `pn-broke-${phoneNumberSeq}`, token: 't' });
    const contactId = await createContact(service, account.apiKey);
    const templateId = await addTemplate(service, account.userId, { name: 'hi', body: 'Hi' });
    const before = fake.sends().length;
    const answer = await send({ contactId, whatsappTemplateId: templateId });
    expect(answer.status).toBe(402);
    expect(answer.body).toMatchObject({ success: false, error_code: 402 });
    expect(fake.sends().length).toBe(before);
    expect(await creditsOf(service, account.userId)).toBe(0);
    expect(await messagesOf(service, contactId)).toEqual([]);
    expect(await eventsOf(service, account.userId, 'New Message')).toEqual([]);
  });

  test("a provider refusal (4xx) is 400 with the provider's reason; no message, no charge, no events", async () => {
    const contactId = await createContact(service, account.apiKey);
    const templateId = await addTemplate(service, account.userId, { name: 'hi', body: 'Hi {{first_name|there}}' });
    fake.answerSendsWith(() => ({ status: 400, body: { error: { message: 'Recipient phone number not in allowed list', code: 131030 } } }));
    const before = fake.sends().length;
    const answer = await send({ contactId, whatsappTemplateId: templateId });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ success: false, error_code: 400, error: expect.stringContaining('Recipient phone number not in allowed list') });
    // The provider was asked, and refused: everything written for the send rolled back.
    await expectNothingHappened(contactId, before + 1);
  });

  test('a provider failure (5xx) is 500 "did not answer"; no message, no charge, no events', async () => {
    const contactId = await createContact(service, account.apiKey);
    const templateId = await addTemplate(service, account.userId, { name: 'hi', body: 'Hi' });
    fake.answerSendsWith(() => ({ status: 500, body: { error: { message: 'Service temporarily unavailable', code: 2 } } }));
    const before = fake.sends().length;
    const answer = await send({ contactId, whatsappTemplateId: templateId });
    expect(answer.status).toBe(500);
    expect(answer.body).toEqual({ success: false, error_code: 500, error: 'The messaging provider did not answer; nothing was sent or charged' });
    await expectNothingHappened(contactId, before + 1);
    // The provider's failure is logged as a warning naming it, without a stack; not as an error.
    const requestId = answer.headers.get('x-request-id');
    const lines = logLines.map((line) => JSON.parse(line)).filter((line) => line.requestId === requestId);
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 40, msg: 'request failed: an outside service failed', reason: 'provider_unavailable', failure: expect.stringContaining('Service temporarily unavailable') }),
    );
    expect(JSON.stringify(lines)).not.toContain('"stack"');
  });
});

test('a template send to a closed chat reopens that chat session, which then holds the message; sessions and the export show it', async () => {
  const contactId = await createContact(service, account.apiKey, { firstName: 'Grace' });
  const templateId = await addTemplate(service, account.userId, { name: 'followup', body: 'Hello {{first_name}}' });
  const first = await send({ contactId, whatsappTemplateId: templateId });
  expect(first.status, first.text).toBe(200);
  const closed = await service.request('POST', `/v1/contacts/${contactId}/chat-sessions/close`, { apiKey: account.apiKey });
  expect(closed.status, closed.text).toBe(200);
  expect(closed.body.data.status).toBe('ChatSessionClosed');
  const sessionId = closed.body.data.id;

  const second = await send({ contactId, whatsappTemplateId: templateId });
  expect(second.status, second.text).toBe(200);

  const sessions = await service.request('GET', `/v1/contacts/${contactId}/chat-sessions`, { apiKey: account.apiKey, query: { includeMessages: true } });
  expect(sessions.status).toBe(200);
  expect(sessions.body.data).toHaveLength(1);
  expect(sessions.body.data[0]).toMatchObject({ id: sessionId, status: 'ChatSessionOpened', end_date_time: null });
  expect(sessions.body.data[0].messages.map((m: { id: string }) => m.id)).toEqual([first.body.data, second.body.data]);

  const exported = await service.request('GET', `/v1/contacts/${contactId}/chat-export`, { apiKey: account.apiKey });
  expect(exported.status).toBe(200);
  expect(exported.body.data.messageCount).toBe(2);
  expect(exported.body.data.chatExport).toContain('Hello Grace');

  const messages = await service.request('GET', `/v1/contacts/messages/${contactId}`, { apiKey: account.apiKey });
  expect(messages.status).toBe(200);
  expect(messages.body.data.map((m: { content: string; channel: string }) => [m.content, m.channel])).toEqual([
    ['Hello Grace', 'whatsapp'],
    ['Hello Grace', 'whatsapp'],
  ]);
});

test("the account's credits are not locked while the provider answers: a tag assignment completes while a send waits for it", async () => {
  const contactId = await createContact(service, account.apiKey, { phoneNumber: '+14155550177' });
  const templateId = await addTemplate(service, account.userId, { name: 'slow', body: 'Hello' });
  // The provider answers this send only once the tag assignment has finished. A send holding
  // the account row while it waits would make the assignment wait for the send and the send
  // for the gate: the test would never finish.
  let openGate!: () => void;
  const gate = new Promise<void>((resolve) => (openGate = resolve));
  onTestFinished(() => openGate());
  fake.answerSendsWith(() => ({ status: 200, body: { messages: [{ id: 'wamid.held' }] }, heldUntil: gate }));
  const sendsBefore = fake.sends().length;
  const sending = send({ contactId, whatsappTemplateId: templateId });
  await fake.waitForSends(sendsBefore + 1);
  // Tag assignment spends a credit on the same account row.
  const tagged = await service.request('POST', '/v1/tags', { apiKey: account.apiKey, query: { tag: 'vip', phoneNumber: '+14155550177' } });
  expect(tagged.status, tagged.text).toBe(201);
  openGate();
  const answer = await sending;
  expect(answer.status, answer.text).toBe(200);
  expect(await creditsOf(service, account.userId)).toBe(98);
});
