// Messages, chat sessions and chat export over real HTTPS: status and body exactly.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ChatSession, Message } from '../../server/db/entities/index.ts';
import { PLACEHOLDER_EMAIL } from '../../server/contacts/contact-record.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { createContact, eventsOf, record } from './conversation-fixtures.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

const JSON_TYPE = 'application/json; charset=utf-8';
const INVALID_KEY = 'Invalid API key';

async function storedMessages(contactId: string): Promise<Message[]> {
  return service.services.orm.em.fork().find(Message, { contact: contactId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
}

describe('GET /contacts/messages/{contactId}', () => {
  test('200 {success, data: Message[]}: content, timestamp, sender, channel, oldest first', async () => {
    const { userId, apiKey } = await service.createAccount();
    const { contactId } = await createContact(service, apiKey);
    await record(service, userId, contactId, 'inbound', 'Is the shop open on Sunday?', { channel: 'whatsapp' });
    await record(service, userId, contactId, 'outbound', 'Yes, from 10 to 4.', { channel: 'whatsapp' });
    await record(service, userId, contactId, 'outbound-api', 'Reminder: we close at 4.', { sender: 'Store bot' });
    const stored = await storedMessages(contactId);

    const response = await service.request('GET', `/contacts/messages/${contactId}`, { apiKey });
    expect(response.status).toBe(200);
    expect(response.contentType).toBe(JSON_TYPE);
    expect(response.body).toEqual({
      success: true,
      data: [
        { content: 'Is the shop open on Sunday?', timestamp: stored[0].createdAt.toISOString(), sender: 'contact', channel: 'whatsapp' },
        { content: 'Yes, from 10 to 4.', timestamp: stored[1].createdAt.toISOString(), sender: 'agent', channel: 'whatsapp' },
        { content: 'Reminder: we close at 4.', timestamp: stored[2].createdAt.toISOString(), sender: 'Store bot', channel: 'api' },
      ],
    });
  });

  test('a contact without messages has an empty list', async () => {
    const { apiKey } = await service.createAccount();
    const { contactId } = await createContact(service, apiKey);
    const response = await service.request('GET', `/contacts/messages/${contactId}`, { apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, data: [] });
  });

  test('400 {success:false, message} when the contact id is missing', async () => {
    const { apiKey } = await service.createAccount();
    for (const path of ['/contacts/messages/', '/contacts/messages']) {
      const response = await service.request('GET', path, { apiKey });
      expect(response.status).toBe(400);
      expect(response.contentType).toBe(JSON_TYPE);
      expect(response.body).toEqual({ success: false, message: 'Missing required parameter: contactId' });
    }
  });

  test('401 {success:false, error} without a valid API key', async () => {
    const { apiKey } = await service.createAccount();
    const { contactId } = await createContact(service, apiKey);
    const response = await service.request('GET', `/contacts/messages/${contactId}`, { apiKey: 'wrong' });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ success: false, error: INVALID_KEY });
    const none = await service.request('GET', `/contacts/messages/${contactId}`);
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ success: false, error: INVALID_KEY });
  });

  test("404 {success:false, error} for an unknown contact, and for another account's contact", async () => {
    const a = await service.createAccount();
    const b = await service.createAccount();
    const { contactId } = await createContact(service, a.apiKey);
    await record(service, a.userId, contactId, 'inbound', 'private');
    for (const [apiKey, id] of [[a.apiKey, 'ct_unknown'], [b.apiKey, contactId]]) {
      const response = await service.request('GET', `/contacts/messages/${id}`, { apiKey });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ success: false, error: 'Contact not found' });
    }
  });
});

describe('GET /contacts/{contactId}/chat-sessions', () => {
  test('sessions newest first; an open session has end_date_time null; messages only with includeMessages=true', async () => {
    const { userId, apiKey } = await service.createAccount();
    const { contactId } = await createContact(service, apiKey);
    const first = await record(service, userId, contactId, 'inbound', 'First visit');
    const close = await service.request('POST', `/contacts/${contactId}/chat-sessions/close`, { apiKey });
    const second = await record(service, userId, contactId, 'inbound', 'Second visit');
    const answer = await record(service, userId, contactId, 'outbound-api', 'Welcome back', { channel: 'whatsapp', status: 'delivered' });
    const stored = await storedMessages(contactId);
    const secondStart = (await service.services.orm.em.fork().findOneOrFail(ChatSession, second.sessionId)).startedAt.toISOString();

    const closedSession = close.body.data;
    // Who wrote each message, and its media (none here).
    const fromContact = { sender: 'contact', sender_name: null, media_url: null, media_content_type: null };
    const fromApp = { ...fromContact, sender: 'agent' };
    const openSession = { id: second.sessionId, start_date_time: secondStart, end_date_time: null, status: 'ChatSessionOpened', tag: null };
    for (const query of [{}, { includeMessages: 'false' }]) {
      const response = await service.request('GET', `/contacts/${contactId}/chat-sessions`, { apiKey, query });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ success: true, data: [openSession, closedSession] });
    }

    const withMessages = await service.request('GET', `/contacts/${contactId}/chat-sessions`, { apiKey, query: { includeMessages: 'true' } });
    expect(withMessages.status).toBe(200);
    expect(withMessages.body).toEqual({
      success: true,
      data: [
        {
          ...openSession,
          messages: [
            { id: second.messageId, body: 'Second visit', direction: 'inbound', timestamp: stored[1].createdAt.toISOString(), type: 'text', channel: 'api', status: 'received', ...fromContact },
            { id: answer.messageId, body: 'Welcome back', direction: 'outbound', timestamp: stored[2].createdAt.toISOString(), type: 'text', channel: 'whatsapp', status: 'delivered', ...fromApp },
          ],
        },
        {
          ...closedSession,
          messages: [{ id: first.messageId, body: 'First visit', direction: 'inbound', timestamp: stored[0].createdAt.toISOString(), type: 'text', channel: 'api', status: 'received', ...fromContact }],
        },
      ],
    });
  });

  test('a contact without sessions has an empty list', async () => {
    const { apiKey } = await service.createAccount();
    const { contactId } = await createContact(service, apiKey);
    const response = await service.request('GET', `/contacts/${contactId}/chat-sessions`, { apiKey, query: { includeMessages: 'true' } });
    expect(response.body).toEqual({ success: true, data: [] });
  });

  test('400 when includeMessages is neither true nor false', async () => {
    const { apiKey } = await service.createAccount();
    const { contactId } = await createContact(service, apiKey);
    const response = await service.request('GET', `/contacts/${contactId}/chat-sessions`, { apiKey, query: { includeMessages: 'yes' } });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ success: false, error: 'includeMessages must be true or false', error_code: 400 });
  });

  test("401 without a key; 404 for an unknown contact and for another account's contact", async () => {
    const a = await service.createAccount();
    const b = await service.createAccount();
    const { contactId } = await createContact(service, a.apiKey);
    await record(service, a.userId, contactId, 'inbound', 'private');
    const anonymous = await service.request('GET', `/contacts/${contactId}/chat-sessions`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ success: false, error: INVALID_KEY, error_code: 401 });
    for (const [apiKey, id] of [[a.apiKey, 'ct_unknown'], [b.apiKey, contactId]]) {
      const response = await service.request('GET', `/contacts/${id}/chat-sessions`, { apiKey, query: { includeMessages: 'true' } });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ success: false, error: 'Contact not found', error_code: 404 });
    }
  });
});

describe('POST /contacts/{contactId}/chat-sessions/close', () => {
  test('closes the open session: {success, data: ChatSession} and Chat Concluded with the session, the contact and its tag ids', async () => {
    const { userId, apiKey } = await service.createAccount();
    const { contactId, phoneNumber } = await createContact(service, apiKey, { firstName: 'Ada', email: 'ada@example.com' });
    const opened = await record(service, userId, contactId, 'inbound', 'Thanks, that is all');
    // A tag on the contact, written directly: tags are another area's endpoint.
    await service.services.pool.query(`insert into tags (id, account_id, name) values ('tag_vip', $1, 'vip')`, [userId]);
    await service.services.pool.query(`insert into contact_tags (contact_id, tag_id, account_id) values ($1, 'tag_vip', $2)`, [contactId, userId]);

    const response = await service.request('POST', `/contacts/${contactId}/chat-sessions/close`, { apiKey });
    expect(response.status).toBe(200);
    expect(response.contentType).toBe(JSON_TYPE);
    const session = response.body.data;
    expect(response.body).toEqual({
      success: true,
      data: { id: opened.sessionId, start_date_time: expect.any(String), end_date_time: expect.any(String), status: 'ChatSessionClosed', tag: null },
    });
    expect(Date.parse(session.end_date_time)).toBeGreaterThanOrEqual(Date.parse(session.start_date_time));

    const concluded = await eventsOf(service, userId, 'Chat Concluded');
    expect(concluded).toHaveLength(1);
    expect(concluded[0].payload).toMatchObject({
      event: 'Chat Concluded',
      user: { id: userId },
      data: {
        kind: 'chat_session_closed',
        session,
        contact: { id: contactId, phone_number: phoneNumber, email: 'ada@example.com', first_name: 'Ada' },
        tags: ['tag_vip'],
      },
    });
  });

  test('404 when the contact has no open session, and nothing is emitted', async () => {
    const { userId, apiKey } = await service.createAccount();
    const { contactId } = await createContact(service, apiKey);
    const never = await service.request('POST', `/contacts/${contactId}/chat-sessions/close`, { apiKey });
    expect(never.status).toBe(404);
    expect(never.body).toEqual({ success: false, error: 'No open chat session for this contact', error_code: 404 });

    await record(service, userId, contactId, 'inbound', 'hello');
    expect((await service.request('POST', `/contacts/${contactId}/chat-sessions/close`, { apiKey })).status).toBe(200);
    const again = await service.request('POST', `/contacts/${contactId}/chat-sessions/close`, { apiKey });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ success: false, error: 'No open chat session for this contact', error_code: 404 });
    expect(await eventsOf(service, userId, 'Chat Concluded')).toHaveLength(1);
  });

  test("404 for an unknown contact and for another account's contact, whose session stays open", async () => {
    const a = await service.createAccount();
    const b = await service.createAccount();
    const { contactId } = await createContact(service, a.apiKey);
    await record(service, a.userId, contactId, 'inbound', 'hello');
    for (const [apiKey, id] of [[a.apiKey, 'ct_unknown'], [b.apiKey, contactId]]) {
      const response = await service.request('POST', `/contacts/${id}/chat-sessions/close`, { apiKey });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ success: false, error: 'Contact not found', error_code: 404 });
    }
    const sessions = await service.request('GET', `/contacts/${contactId}/chat-sessions`, { apiKey: a.apiKey });
    expect(sessions.body.data.map((session: { status: string }) => session.status)).toEqual(['ChatSessionOpened']);
    expect(await eventsOf(service, a.userId, 'Chat Concluded')).toHaveLength(0);
    expect(await eventsOf(service, b.userId)).toHaveLength(0);
  });
});

describe('GET /chat-sessions/recent', () => {
  test('RecentChatSession pages, newest first, with session_id and the contact; next_cursor null on the last page', async () => {
    const { userId, apiKey } = await service.createAccount();
    const ada = await createContact(service, apiKey, { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' });
    const bob = await createContact(service, apiKey, { firstName: 'Bob' });
    const s1 = await record(service, userId, ada.contactId, 'inbound', 'one');
    await service.request('POST', `/contacts/${ada.contactId}/chat-sessions/close`, { apiKey });
    const s2 = await record(service, userId, bob.contactId, 'inbound', 'two');
    const s3 = await record(service, userId, ada.contactId, 'inbound', 'three');

    const first = await service.request('GET', '/chat-sessions/recent', { apiKey, query: { limit: 2 } });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      success: true,
      data: [
        {
          session_id: s3.sessionId,
          start_date_time: expect.any(String),
          end_date_time: null,
          status: 'ChatSessionOpened',
          tag: null,
          contact_id: ada.contactId,
          contact_name: 'Ada Lovelace',
          contact_phone: ada.phoneNumber,
          contact_email: 'ada@example.com',
          is_bot_active: true,
          archived: false,
          last_message_at: s3.message.createdAt.toISOString(),
          last_message_preview: 'three',
          unread_count: 1,
          read_at: null,
        },
        {
          session_id: s2.sessionId,
          start_date_time: expect.any(String),
          end_date_time: null,
          status: 'ChatSessionOpened',
          tag: null,
          contact_id: bob.contactId,
          // The default last name stands for none given.
          contact_name: 'Bob',
          contact_phone: bob.phoneNumber,
          contact_email: PLACEHOLDER_EMAIL,
          is_bot_active: true,
          archived: false,
          last_message_at: s2.message.createdAt.toISOString(),
          last_message_preview: 'two',
          unread_count: 1,
          read_at: null,
        },
      ],
      next_cursor: expect.any(String),
    });

    const second = await service.request('GET', '/chat-sessions/recent', { apiKey, query: { limit: 2, cursor: first.body.next_cursor } });
    expect(second.status).toBe(200);
    expect(second.body.next_cursor).toBeNull();
    expect(second.body.data).toEqual([
      expect.objectContaining({ session_id: s1.sessionId, status: 'ChatSessionClosed', end_date_time: expect.any(String), contact_id: ada.contactId }),
    ]);
    expect(second.body.data[0]).not.toHaveProperty('messages');

    const withMessages = await service.request('GET', '/chat-sessions/recent', { apiKey, query: { limit: 1, includeMessages: 'true' } });
    expect(withMessages.body.data[0].messages).toEqual([expect.objectContaining({ id: s3.messageId, body: 'three', direction: 'inbound' })]);
  });

  test("an account's recent sessions never include another account's, and its cursor is refused elsewhere", async () => {
    const a = await service.createAccount();
    const b = await service.createAccount();
    const contactA = await createContact(service, a.apiKey);
    const contactA2 = await createContact(service, a.apiKey);
    await record(service, a.userId, contactA.contactId, 'inbound', 'a1');
    await record(service, a.userId, contactA2.contactId, 'inbound', 'a2');
    const empty = await service.request('GET', '/chat-sessions/recent', { apiKey: b.apiKey });
    expect(empty.body).toEqual({ success: true, data: [], next_cursor: null });

    const pageA = await service.request('GET', '/chat-sessions/recent', { apiKey: a.apiKey, query: { limit: 1 } });
    const replayed = await service.request('GET', '/chat-sessions/recent', { apiKey: b.apiKey, query: { cursor: pageA.body.next_cursor } });
    expect(replayed.status).toBe(400);
    expect(replayed.body).toEqual({ success: false, error: 'Invalid cursor', error_code: 400 });
  });

  test('400 for an invalid cursor or a limit above 100', async () => {
    const { apiKey } = await service.createAccount();
    const cursor = await service.request('GET', '/chat-sessions/recent', { apiKey, query: { cursor: 'not-a-cursor' } });
    expect(cursor.status).toBe(400);
    expect(cursor.body).toEqual({ success: false, error: 'Invalid cursor', error_code: 400 });
    const limit = await service.request('GET', '/chat-sessions/recent', { apiKey, query: { limit: 101 } });
    expect(limit.status).toBe(400);
    expect(limit.body).toEqual({ success: false, error: 'limit must be at most 100', error_code: 400 });
  });
});

describe('GET /contacts/{contactId}/chat-export', () => {
  test('{success, data: ChatExport}: the whole conversation as text, one line per message', async () => {
    const { userId, apiKey } = await service.createAccount();
    const { contactId, phoneNumber } = await createContact(service, apiKey, { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' });
    await record(service, userId, contactId, 'inbound', 'Hello,\nI need help.');
    await service.request('POST', `/contacts/${contactId}/chat-sessions/close`, { apiKey });
    await record(service, userId, contactId, 'outbound', 'Sure!', { sender: 'Grace' });
    await record(service, userId, contactId, 'outbound-api', 'Your ticket is 42.');
    const [m1, m2, m3] = (await storedMessages(contactId)).map((message) => message.createdAt.toISOString());

    const response = await service.request('GET', `/contacts/${contactId}/chat-export`, { apiKey });
    expect(response.status).toBe(200);
    expect(response.contentType).toBe(JSON_TYPE);
    expect(response.body).toEqual({
      success: true,
      data: {
        contactId,
        contactName: 'Ada Lovelace',
        phoneNumber,
        email: 'ada@example.com',
        messageCount: 3,
        chatExport: [
          `[${m1}] Inbound (contact): Hello, I need help.`,
          `[${m2}] Outbound (Grace): Sure!`,
          `[${m3}] Outbound (agent): Your ticket is 42.`,
        ].join('\n'),
      },
    });
  });

  test('a contact without messages exports an empty text', async () => {
    const { apiKey } = await service.createAccount();
    const { contactId, phoneNumber } = await createContact(service, apiKey);
    const response = await service.request('GET', `/contacts/${contactId}/chat-export`, { apiKey });
    expect(response.body).toEqual({
      success: true,
      // No name given: the contact is named by its phone number.
      data: { contactId, contactName: phoneNumber, phoneNumber, email: PLACEHOLDER_EMAIL, messageCount: 0, chatExport: '' },
    });
  });

  test("404 for an unknown contact and for another account's contact; 401 without a key", async () => {
    const a = await service.createAccount();
    const b = await service.createAccount();
    const { contactId } = await createContact(service, a.apiKey);
    await record(service, a.userId, contactId, 'inbound', 'private');
    for (const [apiKey, id] of [[a.apiKey, 'ct_unknown'], [b.apiKey, contactId]]) {
      const response = await service.request('GET', `/contacts/${id}/chat-export`, { apiKey });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ success: false, error: 'Contact not found', error_code: 404 });
    }
    const anonymous = await service.request('GET', `/contacts/${contactId}/chat-export`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ success: false, error: INVALID_KEY, error_code: 401 });
  });
});
