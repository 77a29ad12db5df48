// POST /contacts/{contactId}/typing over real HTTPS (contract "Conversations both ways"):
// while on (at most 15 s unless renewed) the visitor's GET /chat-widget-messages answers
// isBotTyping: true and the visitor's socket is told; off, or expired, both say false.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TYPING_EXPIRED_TASK, TYPING_TTL_SECONDS } from '../../server/widgets/set-typing.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { connectVisitor, type Heard, type Visitor } from '../realtime/widget-fixtures.ts';
import { createContact } from '../webhooks/webhook-fixtures.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

type Conversation = { account: { userId: string; apiKey: string }; widgetId: string; visitorId: string; contactId: string };

/** A widget visitor who sent a message, once the bot's turn (and its typing) is over. */
async function visitorConversation(): Promise<Conversation> {
  const account = await service.createAccount();
  const widget = await service.request('POST', '/chat-widgets', { apiKey: account.apiKey, body: { name: 'Site', settings: {} } });
  expect(widget.status).toBe(201);
  const widgetId = widget.body.data.id;
  const visitorId = `v_${randomUUID().replaceAll('-', '')}`;
  const sent = await service.request('POST', '/incoming-chat-widget-message', {
    query: { userId: account.userId },
    body: { customData: { body: 'hello', fromId: visitorId, toId: widgetId }, messageType: 'text' },
  });
  expect(sent.status).toBe(200);
  await pollUntil(widgetId, visitorId, (body) => !body.isBotTyping && body.messages.length === 2);
  const { rows } = await service.services.pool.query<{ id: string }>('select id from contacts where widget_visitor_id = $1', [visitorId]);
  return { account, widgetId, visitorId, contactId: rows[0].id };
}

async function pollUntil(widgetId: string, visitorId: string, done: (body: { messages: unknown[]; isBotTyping: boolean }) => boolean) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const response = await service.request('GET', '/chat-widget-messages', { query: { fromId: visitorId, toId: widgetId } });
    expect(response.status).toBe(200);
    if (done(response.body)) return response.body;
    if (Date.now() > deadline) throw new Error(`conversation never settled: ${response.text}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function isBotTyping(conversation: Conversation): Promise<boolean> {
  const response = await service.request('GET', '/chat-widget-messages', { query: { fromId: conversation.visitorId, toId: conversation.widgetId } });
  expect(response.status).toBe(200);
  return response.body.isBotTyping;
}

function typing(conversation: Conversation, on: boolean) {
  return service.request('POST', `/contacts/${conversation.contactId}/typing`, { apiKey: conversation.account.apiKey, body: { typing: on } });
}

/** The first typing event the visitor hears after the first `from` events, within a deadline. */
async function heardTyping(visitor: Visitor, from: number): Promise<Heard> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const found = visitor.heard.slice(from).find((heard) => heard.name === 'typing');
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no typing event heard: ${JSON.stringify(visitor.heard)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits until the socket has heard `count` typing-on events (those already announced arrive asynchronously). */
async function heardTypingOn(visitor: Visitor, count: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  const on = () => visitor.heard.filter((heard) => heard.name === 'typing' && (heard.payload as { isBotTyping?: boolean }).isBotTyping === true).length;
  while (on() < count) {
    if (Date.now() > deadline) throw new Error(`fewer than ${count} typing-on events heard: ${JSON.stringify(visitor.heard)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('POST /contacts/{contactId}/typing', () => {
  test('on: 200 {success}, the poll answers isBotTyping true and the socket hears it; off: false on both', async () => {
    const conversation = await visitorConversation();
    const visitor = await connectVisitor(service.origin, { configId: conversation.widgetId, visitorId: conversation.visitorId });
    try {
      expect(await isBotTyping(conversation)).toBe(false);

      let from = visitor.heard.length;
      const on = await typing(conversation, true);
      expect(on.status).toBe(200);
      expect(on.body).toEqual({ success: true });
      expect(await isBotTyping(conversation)).toBe(true);
      expect((await heardTyping(visitor, from)).payload).toEqual({ isBotTyping: true });

      from = visitor.heard.length;
      const off = await typing(conversation, false);
      expect(off.status).toBe(200);
      expect(off.body).toEqual({ success: true });
      expect(await isBotTyping(conversation)).toBe(false);
      expect((await heardTyping(visitor, from)).payload).toEqual({ isBotTyping: false });
    } finally {
      visitor.close();
    }
  });

  test(`on lasts at most ${TYPING_TTL_SECONDS} s unless renewed: past its time the poll answers false and the socket hears false`, async () => {
    const conversation = await visitorConversation();
    const visitor = await connectVisitor(service.origin, { configId: conversation.widgetId, visitorId: conversation.visitorId });
    try {
      const databaseTime = async () =>
        Number((await service.services.pool.query<{ at: number }>('select extract(epoch from clock_timestamp())::float8 as at')).rows[0]!.at);
      const before = await databaseTime();
      await typing(conversation, true);
      const after = await databaseTime();
      const { rows } = await service.services.pool.query<{ until: number }>(
        'select extract(epoch from bot_typing_until)::float8 as until from contacts where id = $1',
        [conversation.contactId],
      );
      // It ends TYPING_TTL_SECONDS after the call set it, by the database clock (whenever
      // within the call that was: it depends on the machine's speed).
      expect(rows[0].until).toBeGreaterThanOrEqual(before + TYPING_TTL_SECONDS);
      expect(rows[0].until).toBeLessThanOrEqual(after + TYPING_TTL_SECONDS);

      // Renewing moves the end (one pending expiry per contact).
      await typing(conversation, true);
      const jobs = await service.services.pool.query('select 1 from graphile_worker.jobs where task_identifier = $1 and key = $2', [
        TYPING_EXPIRED_TASK,
        `${TYPING_EXPIRED_TASK}:${conversation.contactId}`,
      ]);
      expect(jobs.rowCount).toBe(1);

      // Instead of waiting 15 s: the stored end and the expiry job move into the past. Both
      // announcements of "on" are heard first, so the next typing event is the expiry's.
      await heardTypingOn(visitor, 2);
      const from = visitor.heard.length;
      await service.services.pool.query(`update contacts set bot_typing_until = now() - interval '1 second' where id = $1`, [conversation.contactId]);
      expect(await isBotTyping(conversation)).toBe(false);
      await service.services.pool.query(`update graphile_worker._private_jobs set run_at = now() where key = $1`, [`${TYPING_EXPIRED_TASK}:${conversation.contactId}`]);
      expect((await heardTyping(visitor, from)).payload).toEqual({ isBotTyping: false });
    } finally {
      visitor.close();
    }
  });

  test('the bot finishing its turn leaves the indicator on while someone types through the API', async () => {
    const conversation = await visitorConversation();
    const visitor = await connectVisitor(service.origin, { configId: conversation.widgetId, visitorId: conversation.visitorId });
    try {
      await typing(conversation, true);
      await heardTyping(visitor, 0);
      const from = visitor.heard.length;
      const sent = await service.request('POST', '/incoming-chat-widget-message', {
        query: { userId: conversation.account.userId },
        body: { customData: { body: 'anyone there?', fromId: conversation.visitorId, toId: conversation.widgetId }, messageType: 'text' },
      });
      expect(sent.status).toBe(200);
      // The bot's turn has committed once its flag is down again.
      const deadline = Date.now() + 20_000;
      for (;;) {
        const { rows } = await service.services.pool.query<{ is_bot_typing: boolean }>('select is_bot_typing from contacts where id = $1', [conversation.contactId]);
        if (!rows[0].is_bot_typing) break;
        if (Date.now() > deadline) throw new Error("the bot's turn never ended");
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(await isBotTyping(conversation)).toBe(true);

      // Turning it off is announced after anything the bot's turn announced (commit order):
      // the visitor heard typing on (the message), then off only from this call.
      await typing(conversation, false);
      const end = Date.now() + 20_000;
      const typingHeard = () => visitor.heard.slice(from).filter((heard) => heard.name === 'typing').map((heard) => heard.payload);
      while (!typingHeard().some((payload) => (payload as { isBotTyping: boolean }).isBotTyping === false)) {
        if (Date.now() > end) throw new Error(`typing off never heard: ${JSON.stringify(visitor.heard)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(typingHeard()).toEqual([{ isBotTyping: true }, { isBotTyping: false }]);
    } finally {
      visitor.close();
    }
  });

  test('a contact that is not a widget visitor: 200 {success} and nothing to tell', async () => {
    const account = await service.createAccount();
    const contactId = await createContact(service, account.apiKey);
    const response = await service.request('POST', `/contacts/${contactId}/typing`, { apiKey: account.apiKey, body: { typing: true } });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true });
    const { rows } = await service.services.pool.query('select bot_typing_until from contacts where id = $1', [contactId]);
    expect(rows[0].bot_typing_until).toBeNull();
  });

  test("typing is required and boolean (400); an unknown contact or another account's is 404", async () => {
    const conversation = await visitorConversation();
    for (const body of [{}, { typing: 'yes' }]) {
      const response = await service.request('POST', `/contacts/${conversation.contactId}/typing`, { apiKey: conversation.account.apiKey, body });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ success: false, error_code: 400 });
      expect(response.body.error).toContain('typing');
    }
    const other = await service.createAccount();
    for (const [apiKey, id] of [
      [other.apiKey, conversation.contactId],
      [conversation.account.apiKey, 'ct_unknown'],
    ]) {
      const response = await service.request('POST', `/contacts/${id}/typing`, { apiKey, body: { typing: true } });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ success: false, error: 'Contact not found', error_code: 404 });
    }
    expect(await isBotTyping(conversation)).toBe(false);
  });
});
