// A team answering over real HTTPS (contract "A team on the conversations"): a reply from a
// person or an app stops the bot for the contact until PUT /contacts/{id} turns it on again
// (Contact Paused, no Human Alerted, no hand-off message); a reply's `sender` names the
// credential that wrote it, and its `sender_name` is what the visitor sees; a hand-off may say
// in its own words what the visitor is told.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { updateAccount } from '../../server/accounts/update-account.ts';
import { startIdentityProvider, type TestIdentityProvider } from '../helpers/jwks.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { connectVisitor } from '../realtime/widget-fixtures.ts';
import { eventsOf } from './conversation-fixtures.ts';
import { poll, pollUntil, visitorWrites, widgetConversation } from './reply-fixtures.ts';

const GREETING = 'Hi! We will be right with you.';
const AWAY = 'We are away right now.';

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

type Account = { userId: string; apiKey: string };

function reply(contactId: string, body: Record<string, unknown>, credential: { apiKey?: string; token?: string }) {
  return service.request('POST', `/v1/contacts/${contactId}/messages`, {
    ...(credential.apiKey ? { apiKey: credential.apiKey } : {}),
    headers: credential.token ? { authorization: `Bearer ${credential.token}` } : {},
    body,
  });
}

async function bodies(conversation: { widgetId: string; visitorId: string }): Promise<string[]> {
  return (await poll(service, conversation.widgetId, conversation.visitorId)).messages.map((message) => message.body);
}

async function closeSession(account: Account, contactId: string): Promise<void> {
  const closed = await service.request('POST', `/v1/contacts/${contactId}/chat-sessions/close`, { apiKey: account.apiKey });
  expect(closed.status, closed.text).toBe(200);
}

describe("a person's reply stops the bot", () => {
  test('no greeting, away message or bot answer after it until PUT /contacts/{id} sets is_bot_active true; Contact Paused once, no Human Alerted, no hand-off message', async () => {
    const account = await service.createAccount();
    const conversation = await widgetConversation(service, account, { greeting: GREETING, awayMessage: AWAY, handoffMessage: 'A person is coming.' });
    const { contactId } = conversation;
    expect(await bodies(conversation)).toEqual(['hello', GREETING]);
    // The greeting is old news: the away message would be due for the visitor's next message.
    await service.services.pool.query(`update messages set created_at = created_at - interval '1 hour' where contact_id = $1`, [contactId]);

    const answered = await reply(contactId, { text: 'Ana here, how can I help?' }, account);
    expect(answered.status, answered.text).toBe(201);
    const contact = await service.request('GET', `/v1/contacts/${contactId}`, { apiKey: account.apiKey });
    expect(contact.body.data.is_bot_active).toBe(false);

    // The bot's answers are written in the visitor message's own transaction: one poll after it shows all there is.
    await visitorWrites(service, account.userId, conversation.widgetId, conversation.visitorId, 'Is the blue one in stock?');
    expect(await bodies(conversation)).toEqual(['hello', GREETING, 'Ana here, how can I help?', 'Is the blue one in stock?']);
    await closeSession(account, contactId);
    await visitorWrites(service, account.userId, conversation.widgetId, conversation.visitorId, 'Hello again');
    expect((await bodies(conversation)).slice(-2)).toEqual(['Is the blue one in stock?', 'Hello again']);

    // A second reply finds the bot off already.
    expect((await reply(contactId, { text: 'Yes, it is.' }, account)).status).toBe(201);
    const paused = await eventsOf(service, account.userId, 'Contact Paused');
    expect(paused.map((event) => event.payload.data.contact)).toEqual([{ id: contactId, phone_number: null, email: null }]);
    expect(await eventsOf(service, account.userId, 'Human Alerted')).toEqual([]);

    // Turned on again, the bot greets the next session.
    const resumed = await service.request('PUT', `/v1/contacts/${contactId}`, { apiKey: account.apiKey, body: { is_bot_active: true } });
    expect(resumed.status, resumed.text).toBe(200);
    await closeSession(account, contactId);
    await visitorWrites(service, account.userId, conversation.widgetId, conversation.visitorId, 'Anyone there?');
    expect((await bodies(conversation)).slice(-2)).toEqual(['Anyone there?', GREETING]);
  });
});

describe('who answered', () => {
  let subjectCounter = 0;

  test("a reply's sender names its credential: a scoped key's label (its id without one), an ID token's name, else e-mail, else subject, `api` for the main key", async () => {
    const account = await service.createAccount();
    subjectCounter += 1;
    const subject = `idp|agent-${subjectCounter}-${Date.now()}`;
    await updateAccount(service.services.orm.em.fork(), { userId: account.userId, oidcSubject: subject });
    const scopes = { tags: ['Messages'], read_only: false };
    const labelled = await service.request('POST', '/v1/api-keys', { apiKey: account.apiKey, body: { label: 'Ana (support)', scopes } });
    const unlabelled = await service.request('POST', '/v1/api-keys', { apiKey: account.apiKey, body: { scopes } });
    expect([labelled.status, unlabelled.status]).toEqual([201, 201]);
    const conversation = await widgetConversation(service, account);

    const credentials = [
      { apiKey: account.apiKey },
      { apiKey: labelled.body.api_key },
      { apiKey: unlabelled.body.api_key },
      { token: await idp.sign({ sub: subject, name: 'Maria Silva', email: 'maria@example.com' }) },
      { token: await idp.sign({ sub: subject, email: 'maria@example.com' }) },
      { token: await idp.sign({ sub: subject }) },
    ];
    for (const [index, credential] of credentials.entries()) {
      const answered = await reply(conversation.contactId, { text: `answer ${index}` }, credential);
      expect(answered.status, answered.text).toBe(201);
    }

    const messages = await service.request('GET', `/v1/contacts/messages/${conversation.contactId}`, { apiKey: account.apiKey });
    expect(messages.status).toBe(200);
    expect(messages.body.data.map((message: { sender: string }) => message.sender)).toEqual([
      'contact',
      'bot',
      'api',
      'Ana (support)',
      unlabelled.body.key.id,
      'Maria Silva',
      'maria@example.com',
      subject,
    ]);
  });

  test("sender_name is shown to the visitor: the poll and the socket's message carry it, null for the visitor's own and the bot's", async () => {
    const account = await service.createAccount();
    const conversation = await widgetConversation(service, account);
    const visitor = await connectVisitor(service.origin, { configId: conversation.widgetId, visitorId: conversation.visitorId });
    try {
      const answered = await reply(conversation.contactId, { text: 'Ana here.', sender_name: ' Ana ' }, account);
      expect(answered.status, answered.text).toBe(201);
      const heard = await visitor.waitFor((entry) => entry.name === 'message' && (entry.payload as { messageSid: string }).messageSid === answered.body.data.id);
      expect(heard.at(-1)!.payload).toMatchObject({ body: 'Ana here.', sender_name: 'Ana' });
      const shown = (await poll(service, conversation.widgetId, conversation.visitorId)).messages;
      expect(shown.map((message) => [message.body, message.sender_name])).toEqual([
        ['hello', null],
        [expect.any(String), null],
        ['Ana here.', 'Ana'],
      ]);
      // Without a sender_name the visitor sees no name.
      expect((await reply(conversation.contactId, { text: 'Anything else?' }, account)).status).toBe(201);
      const later = await pollUntil(service, conversation.widgetId, conversation.visitorId, (body) => body.messages.length === 4);
      expect(later.messages.at(-1)!.sender_name).toBeNull();
    } finally {
      visitor.close();
    }
  });

  test('sender_name is 1 to 60 characters', async () => {
    const account = await service.createAccount();
    const conversation = await widgetConversation(service, account);
    for (const senderName of ['', '   ', 'x'.repeat(61)]) {
      const answered = await reply(conversation.contactId, { text: 'hi', sender_name: senderName }, account);
      expect(answered.status, JSON.stringify(senderName)).toBe(400);
      expect(answered.body).toEqual({ success: false, error: expect.stringContaining('sender_name'), error_code: 400 });
    }
    expect((await reply(conversation.contactId, { text: 'hi', sender_name: 'x'.repeat(60) }, account)).status).toBe(201);
  });
});

describe('POST /contacts/{contactId}/handoff with a message', () => {
  test("the visitor is told the message instead of the widget's handoffMessage; it is 1 to 1,000 characters", async () => {
    const account = await service.createAccount();
    const conversation = await widgetConversation(service, account, { handoffMessage: 'A person is coming.' });
    for (const message of ['', ' ', 'x'.repeat(1001)]) {
      const refused = await service.request('POST', `/v1/contacts/${conversation.contactId}/handoff`, { apiKey: account.apiKey, body: { message } });
      expect(refused.status, JSON.stringify(message)).toBe(400);
      expect(refused.body).toEqual({ success: false, error: expect.stringContaining('message'), error_code: 400 });
    }
    const handed = await service.request('POST', `/v1/contacts/${conversation.contactId}/handoff`, {
      apiKey: account.apiKey,
      body: { reason: 'Refund', message: 'Maria from billing will answer in a minute.' },
    });
    expect(handed.status, handed.text).toBe(200);
    expect(handed.body).toEqual({ success: true, data: { contactId: conversation.contactId, is_bot_active: false } });
    expect((await bodies(conversation)).slice(-1)).toEqual(['Maria from billing will answer in a minute.']);
    expect(await eventsOf(service, account.userId, 'Human Alerted')).toHaveLength(1);
  });
});
