// recordMessage: the one way messages are written, with their session and events.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ChatSession, Message } from '../../server/db/entities/index.ts';
import { NotFoundError } from '../../server/errors.ts';
import { recordMessage } from '../../server/messages/record-message.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { createContact, eventsOf, record } from './conversation-fixtures.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

async function countRows(table: 'messages' | 'chat_sessions' | 'events', accountId: string): Promise<number> {
  const { rows } = await service.services.pool.query<{ count: string }>(`select count(*) as count from ${table} where account_id = $1`, [accountId]);
  return Number(rows[0].count);
}

describe('chat sessions', () => {
  test("a contact's first message opens a ChatSessionOpened session, and later messages go into the open session", async () => {
    const { userId, apiKey } = await service.createAccount();
    const { contactId } = await createContact(service, apiKey);
    const first = await record(service, userId, contactId, 'inbound', 'Hello');
    const second = await record(service, userId, contactId, 'outbound', 'Hi, how can we help?');
    expect(first.sessionOpened).toBe(true);
    expect(second.sessionOpened).toBe(false);
    expect(second.sessionId).toBe(first.sessionId);

    const em = service.services.orm.em.fork();
    const session = await em.findOneOrFail(ChatSession, first.sessionId);
    expect(session.status).toBe('ChatSessionOpened');
    expect(session.endedAt).toBeNull();
    const messages = await em.find(Message, { session: first.sessionId }, { orderBy: { createdAt: 'asc' } });
    expect(messages.map((message) => [message.id, message.direction, message.body])).toEqual([
      [first.messageId, 'inbound', 'Hello'],
      [second.messageId, 'outbound', 'Hi, how can we help?'],
    ]);
    expect(messages.map((message) => message.status)).toEqual(['received', 'sent']);
  });

  test('a message after the session was closed opens a new session', async () => {
    const { userId, apiKey } = await service.createAccount();
    const { contactId } = await createContact(service, apiKey);
    const first = await record(service, userId, contactId, 'inbound', 'Hello');
    const closed = await service.request('POST', `/contacts/${contactId}/chat-sessions/close`, { apiKey });
    expect(closed.status).toBe(200);
    const next = await record(service, userId, contactId, 'inbound', 'Me again');
    expect(next.sessionOpened).toBe(true);
    expect(next.sessionId).not.toBe(first.sessionId);
  });

  test('messages recorded at the same moment for a contact without a session open exactly one session', async () => {
    const { userId, apiKey } = await service.createAccount();
    const { contactId } = await createContact(service, apiKey);
    const results = await Promise.all(Array.from({ length: 5 }, (_, index) => record(service, userId, contactId, 'inbound', `message ${index}`)));
    expect(new Set(results.map((result) => result.sessionId)).size).toBe(1);
    expect(results.filter((result) => result.sessionOpened)).toHaveLength(1);
    expect(await countRows('chat_sessions', userId)).toBe(1);
  });
});

describe('events', () => {
  test('New Message is emitted for every message, with the message and the contact', async () => {
    const { userId, apiKey } = await service.createAccount();
    const { contactId, phoneNumber } = await createContact(service, apiKey);
    const inbound = await record(service, userId, contactId, 'inbound', 'Where is my order?', { channel: 'whatsapp' });
    const outbound = await record(service, userId, contactId, 'outbound-api', 'It ships today.', { sender: 'Ana' });
    const events = await eventsOf(service, userId, 'New Message');
    expect(events).toHaveLength(2);
    const byMessage = new Map(events.map((event) => [event.payload.data.message.id, event.payload]));
    expect(byMessage.get(inbound.messageId)).toMatchObject({
      event: 'New Message',
      user: { id: userId },
      data: {
        message: {
          id: inbound.messageId,
          session_id: inbound.sessionId,
          body: 'Where is my order?',
          direction: 'inbound',
          channel: 'whatsapp',
          sender: 'contact',
          status: 'received',
          type: 'text',
        },
        contact: { id: contactId, phone_number: phoneNumber },
      },
    });
    expect(byMessage.get(outbound.messageId)?.data.message).toMatchObject({ direction: 'outbound', sender: 'Ana', body: 'It ships today.' });
  });

  test('Replies is emitted for an inbound message that answers an earlier outbound one in the same session, once per answer', async () => {
    const { userId, apiKey } = await service.createAccount();
    const { contactId } = await createContact(service, apiKey);
    await record(service, userId, contactId, 'inbound', 'Hi');
    expect(await eventsOf(service, userId, 'Replies')).toHaveLength(0);
    const question = await record(service, userId, contactId, 'outbound', 'Which size do you need?');
    const answer = await record(service, userId, contactId, 'inbound', 'Medium, please');
    await record(service, userId, contactId, 'inbound', 'And in blue');
    const replies = await eventsOf(service, userId, 'Replies');
    expect(replies).toHaveLength(1);
    expect(replies[0].payload.data).toMatchObject({
      in_reply_to: question.messageId,
      message: { id: answer.messageId, direction: 'inbound', body: 'Medium, please' },
      contact: { id: contactId },
    });
  });

  test("the session's last message is the one of the latest time: a message written by a process whose clock runs behind does not take its place", async () => {
    const { userId, apiKey } = await service.createAccount();
    const { contactId } = await createContact(service, apiKey);
    const question = await record(service, userId, contactId, 'outbound', 'Which size do you need?');
    const pool = service.services.pool;
    const lastOf = async () =>
      (await pool.query<{ last_message_id: string; last_message_direction: string }>('select last_message_id, last_message_direction from chat_sessions where id = $1', [question.sessionId])).rows[0];
    expect(await lastOf()).toEqual({ last_message_id: question.messageId, last_message_direction: 'outbound' });
    // As if the question came from a process whose clock is an hour ahead.
    await pool.query(`update messages set created_at = created_at + interval '1 hour' where id = $1`, [question.messageId]);
    await pool.query(`update chat_sessions set last_activity_at = last_activity_at + interval '1 hour' where id = $1`, [question.sessionId]);
    const answer = await record(service, userId, contactId, 'inbound', 'Medium, please');
    expect(answer.sessionId).toBe(question.sessionId);
    expect(await lastOf()).toEqual({ last_message_id: question.messageId, last_message_direction: 'outbound' });
    await pool.query(`update chat_sessions set last_activity_at = last_activity_at - interval '2 hours' where id = $1`, [question.sessionId]);
    const later = await record(service, userId, contactId, 'inbound', 'And in blue');
    expect(await lastOf()).toEqual({ last_message_id: later.messageId, last_message_direction: 'inbound' });
  });

  test('an inbound message in a new session does not reply to an outbound message of a closed session', async () => {
    const { userId, apiKey } = await service.createAccount();
    const { contactId } = await createContact(service, apiKey);
    await record(service, userId, contactId, 'outbound', 'Anything else?');
    await service.request('POST', `/contacts/${contactId}/chat-sessions/close`, { apiKey });
    await record(service, userId, contactId, 'inbound', 'New question');
    expect(await eventsOf(service, userId, 'Replies')).toHaveLength(0);
    expect(await eventsOf(service, userId, 'New Message')).toHaveLength(2);
  });

  test('the message, its session and its events are written in one transaction: none of them remain when it fails', async () => {
    const { userId, apiKey } = await service.createAccount();
    const { contactId } = await createContact(service, apiKey);
    const eventsBefore = await countRows('events', userId);
    const em = service.services.orm.em.fork();
    await expect(
      em.transactional(async (tx) => {
        await recordMessage(tx, userId, { contactId, direction: 'inbound', body: 'lost' });
        throw new Error('the surrounding change failed');
      }),
    ).rejects.toThrow('the surrounding change failed');
    expect(await countRows('messages', userId)).toBe(0);
    expect(await countRows('chat_sessions', userId)).toBe(0);
    expect(await countRows('events', userId)).toBe(eventsBefore);
  });

  test("recording a message for an unknown contact or another account's contact is not found and writes nothing", async () => {
    const a = await service.createAccount();
    const b = await service.createAccount();
    const { contactId } = await createContact(service, a.apiKey);
    await expect(record(service, b.userId, contactId, 'inbound', 'hi')).rejects.toBeInstanceOf(NotFoundError);
    await expect(record(service, a.userId, 'ct_unknown', 'inbound', 'hi')).rejects.toBeInstanceOf(NotFoundError);
    expect(await countRows('messages', a.userId)).toBe(0);
    expect(await countRows('messages', b.userId)).toBe(0);
    expect(await countRows('events', b.userId)).toBe(0);
  });
});
