// The reads of a contact's conversation are bounded, over real HTTPS: each shows the newest
// messages up to its limit, oldest first, and the export says how many it leaves out.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SESSION_MESSAGES_LIMIT } from '../../server/chat-sessions/session-record.ts';
import { EXPORT_MESSAGES_LIMIT, EXPORT_TEXT_LIMIT, omittedMessagesLine } from '../../server/messages/export-chat.ts';
import { CONTACT_MESSAGES_LIMIT } from '../../server/messages/list-contact-messages.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { bulkMessageTime, createContact, insertConversation, insertSession } from './conversation-fixtures.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

/** Numbers from..to. */
function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, index) => from + index);
}

/** Message n of insertConversation as an export line. */
function exportLine(n: number, padding = 0): string {
  const who = n % 2 === 1 ? 'Inbound (contact)' : 'Outbound (agent)';
  return `[${bulkMessageTime(n).toISOString()}] ${who}: message ${n}${'x'.repeat(padding)}`;
}

async function conversationOf(count: number, padding = 0) {
  const { userId, apiKey } = await service.createAccount();
  const { contactId } = await createContact(service, apiKey);
  await insertConversation(service, userId, contactId, { from: 1, to: count, padding });
  return { userId, apiKey, contactId };
}

describe('GET /contacts/messages/{contactId} shows the newest CONTACT_MESSAGES_LIMIT messages', () => {
  test('of limit + 5 messages, exactly the newest limit, oldest first', async () => {
    const total = CONTACT_MESSAGES_LIMIT + 5;
    const { apiKey, contactId } = await conversationOf(total);
    const response = await service.request('GET', `/contacts/messages/${contactId}`, { apiKey });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual(
      range(6, total).map((n) => ({
        content: `message ${n}`,
        timestamp: bulkMessageTime(n).toISOString(),
        sender: n % 2 === 1 ? 'contact' : 'agent',
        channel: 'api',
      })),
    );
  });
});

describe('GET /contacts/{contactId}/chat-export', () => {
  test('of limit + 5 messages: the newest limit as lines under "… 5 earlier messages not included"; messageCount counts all', async () => {
    const total = EXPORT_MESSAGES_LIMIT + 5;
    const { apiKey, contactId } = await conversationOf(total);
    const response = await service.request('GET', `/contacts/${contactId}/chat-export`, { apiKey });
    expect(response.status).toBe(200);
    expect(response.body.data.messageCount).toBe(total);
    expect(response.body.data.chatExport).toBe(['… 5 earlier messages not included', ...range(6, total).map((n) => exportLine(n))].join('\n'));
  });

  test('its text stays within EXPORT_TEXT_LIMIT characters: as many of the newest long messages as fit, the rest counted', async () => {
    const padding = 4_000;
    const total = Math.ceil(EXPORT_TEXT_LIMIT / padding) + 10;
    const { apiKey, contactId } = await conversationOf(total, padding);
    const response = await service.request('GET', `/contacts/${contactId}/chat-export`, { apiKey });
    expect(response.status).toBe(200);
    expect(response.body.data.messageCount).toBe(total);

    const text: string = response.body.data.chatExport;
    const [header, ...lines] = text.split('\n');
    const shown = lines.length;
    expect(shown).toBeGreaterThan(0);
    expect(header).toBe(omittedMessagesLine(total - shown));
    expect(lines).toEqual(range(total - shown + 1, total).map((n) => exportLine(n, padding)));
    expect(text.length).toBeLessThanOrEqual(EXPORT_TEXT_LIMIT);
    // Not one more line would have fitted.
    expect(text.length + exportLine(total - shown, padding).length + 1).toBeGreaterThan(EXPORT_TEXT_LIMIT);
  });
});

describe('includeMessages=true shows the newest SESSION_MESSAGES_LIMIT messages across the sessions of the answer', () => {
  test('of limit + 5 messages in three sessions: the newest session whole, the middle one cut, the oldest empty', async () => {
    const total = SESSION_MESSAGES_LIMIT + 5;
    const { userId, apiKey } = await service.createAccount();
    const { contactId } = await createContact(service, apiKey);
    // Time-ordered ids, as the service's own: the listings order sessions by id.
    const [oldest, middle, newest] = ['1', '2', '3'].map((n) => `cs_${contactId}_${n}`);
    await insertSession(service, userId, contactId, { id: oldest!, startedAt: 1, open: false });
    await insertSession(service, userId, contactId, { id: middle!, startedAt: 4, open: false });
    await insertSession(service, userId, contactId, { id: newest!, startedAt: 9, open: true });
    await insertConversation(service, userId, contactId, { from: 1, to: 3, sessionId: oldest });
    await insertConversation(service, userId, contactId, { from: 4, to: 8, sessionId: middle });
    await insertConversation(service, userId, contactId, { from: 9, to: total, sessionId: newest });

    const chatMessage = (n: number) => ({
      id: `msg_${contactId}_${String(n).padStart(6, '0')}`,
      body: `message ${n}`,
      direction: n % 2 === 1 ? 'inbound' : 'outbound',
      timestamp: bulkMessageTime(n).toISOString(),
      type: 'text',
      channel: 'api',
      status: 'received',
      sender: n % 2 === 1 ? 'contact' : 'agent',
      sender_name: null,
      media_url: null,
      media_content_type: null,
    });
    const expected = [
      { id: newest, messages: range(9, total).map(chatMessage) },
      { id: middle, messages: range(6, 8).map(chatMessage) },
      { id: oldest, messages: [] },
    ];

    const ofContact = await service.request('GET', `/contacts/${contactId}/chat-sessions`, { apiKey, query: { includeMessages: 'true' } });
    expect(ofContact.status).toBe(200);
    expect(ofContact.body.data.map((session: { id: string; messages: unknown[] }) => ({ id: session.id, messages: session.messages }))).toEqual(expected);

    const recent = await service.request('GET', '/chat-sessions/recent', { apiKey, query: { includeMessages: 'true' } });
    expect(recent.status).toBe(200);
    expect(recent.body.data.map((session: { session_id: string; messages: unknown[] }) => ({ id: session.session_id, messages: session.messages }))).toEqual(
      expected,
    );
  });
});
