// The chat widget's public message endpoints over real HTTPS (spec "Chat widget" table):
// POST /incoming-chat-widget-message, GET /chat-widget-messages,
// POST /update-message-read-status; with the queue's bot turn run by the real worker.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { recordMessage } from '../../server/messages/record-message.ts';
import { WIDGET_CHANNEL } from '../../server/widgets/find-or-create-visitor.ts';
import { CONVERSATION_PAGE_SIZE } from '../../server/widgets/list-conversation-messages.ts';
import { takeBotTurn } from '../../server/widgets/take-bot-turn.ts';
import { DEFAULT_GREETING } from '../../server/widgets/widget-settings.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { inOneWindow } from '../rate-limit/fresh-window.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const JSON_TYPE = /^application\/json/;

type Widget = { id: string; userId: string; apiKey: string };

async function newWidget(settings: Record<string, unknown> = {}): Promise<Widget> {
  const { apiKey, userId } = await service.createAccount();
  const created = await service.request('POST', '/chat-widgets', { apiKey, body: { name: 'Site', settings } });
  expect(created.status).toBe(201);
  return { id: created.body.data.id, userId, apiKey };
}

function visitor(): string {
  return `v_${randomUUID().replaceAll('-', '')}`;
}

function send(widget: Widget, fromId: string, body: string, extra: Record<string, unknown> = {}, headers?: Record<string, string>) {
  return service.request('POST', '/incoming-chat-widget-message', {
    query: { userId: widget.userId },
    body: { customData: { body, fromId, toId: widget.id, ...extra }, messageType: 'text' },
    headers,
  });
}

function poll(widget: Widget, fromId: string, after?: string | number) {
  return service.request('GET', '/chat-widget-messages', { query: { fromId, toId: widget.id, after } });
}

/** Polls (as the widget page does) until the conversation satisfies `done`, or fails at the deadline. */
async function pollUntil(widget: Widget, fromId: string, done: (body: { messages: any[]; isBotTyping: boolean }) => boolean) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const response = await poll(widget, fromId);
    expect(response.status).toBe(200);
    if (done(response.body)) return response.body as { messages: any[]; isBotTyping: boolean };
    if (Date.now() > deadline) throw new Error(`conversation never settled: ${response.text}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function eventsOf(accountId: string, name: string) {
  const { rows } = await service.services.pool.query<{ payload: any }>('select payload from events where account_id = $1 and name = $2 order by id', [accountId, name]);
  return rows.map((row) => row.payload);
}

describe('POST /incoming-chat-widget-message', () => {
  test('200 {success, messageId}: the message is stored on the visitor\'s new contact, the bot greets, typing ends', async () => {
    const widget = await newWidget({ greeting: 'Welcome to the shop!' });
    const fromId = visitor();
    const response = await send(widget, fromId, 'Hello there', { messageSid: 'wsid-1' });
    expect(response.status).toBe(200);
    expect(response.contentType).toMatch(JSON_TYPE);
    expect(response.body).toEqual({ success: true, messageId: expect.stringMatching(/^msg_/) });

    const { rows: contacts } = await service.services.pool.query(
      'select id, phone_number, channel, chat_widget_id from contacts where account_id = $1 and widget_visitor_id = $2',
      [widget.userId, fromId],
    );
    expect(contacts).toEqual([{ id: expect.any(String), phone_number: null, channel: 'chat_widget', chat_widget_id: widget.id }]);
    const { rows: stored } = await service.services.pool.query('select contact_id, body, direction, external_id from messages where id = $1', [response.body.messageId]);
    expect(stored).toEqual([{ contact_id: contacts[0].id, body: 'Hello there', direction: 'inbound', external_id: 'wsid-1' }]);
    // The queued job is keyed by the same id.
    const { rows: jobs } = await service.services.pool.query(
      `select key from graphile_worker.jobs where key = $1 union all select $1 from messages where external_id = $2`,
      [`chat_widget_message:${response.body.messageId}`, `bot-turn:${response.body.messageId}`],
    );
    expect(jobs.length).toBeGreaterThan(0);

    const conversation = await pollUntil(widget, fromId, (body) => body.messages.length === 2 && !body.isBotTyping);
    expect(conversation).toEqual({
      messages: [
        { messageSid: 'wsid-1', body: 'Hello there', mediaUrl: null, mediaContentType: null, timestamp: expect.stringMatching(ISO), type: 'text', direction: 'inbound', status: 'received', sender_name: null },
        { messageSid: expect.stringMatching(/^msg_/), body: 'Welcome to the shop!', mediaUrl: null, mediaContentType: null, timestamp: expect.stringMatching(ISO), type: 'text', direction: 'outbound', status: 'sent', sender_name: null },
      ],
      isBotTyping: false,
    });

    const created = await eventsOf(widget.userId, 'Contact Created');
    expect(created).toHaveLength(1);
    expect(created[0].data.contact).toMatchObject({ id: contacts[0].id, phone_number: null });
  });

  test('New Message for each visitor message, in its session, and Replies when it answers the bot', async () => {
    const widget = await newWidget({ greeting: 'Hello from the bot' });
    const fromId = visitor();
    const first = await send(widget, fromId, 'first', { messageSid: 'w-1' });
    expect(first.status).toBe(200);
    const settled = await pollUntil(widget, fromId, (body) => body.messages.length === 2 && !body.isBotTyping);
    const botReply = settled.messages[1].messageSid;
    const second = await send(widget, fromId, 'second');
    expect(second.status).toBe(200);

    const { rows: stored } = await service.services.pool.query<{ id: string; session_id: string; contact_id: string; created_at: string }>(
      `select id, session_id, contact_id, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at
         from messages where id = any($1) order by created_at, id`,
      [[first.body.messageId, second.body.messageId]],
    );
    expect(stored.map((row) => row.session_id)).toEqual([stored[0].session_id, stored[0].session_id]);
    const { rows: sessions } = await service.services.pool.query('select status from chat_sessions where contact_id = $1', [stored[0].contact_id]);
    expect(sessions).toEqual([{ status: 'ChatSessionOpened' }]);
    const { rows: account } = await service.services.pool.query('select email, name from accounts where id = $1', [widget.userId]);

    const newMessages = (await eventsOf(widget.userId, 'New Message')).filter((event) => event.data.message.direction === 'inbound');
    expect(newMessages).toHaveLength(2);
    expect(newMessages[0]).toEqual({
      event: 'New Message',
      event_id: expect.stringMatching(/^evt_/),
      occurred_at: expect.stringMatching(ISO),
      user: { id: widget.userId, email: account[0].email, name: account[0].name },
      data: {
        message: {
          id: first.body.messageId,
          body: 'first',
          direction: 'inbound',
          timestamp: stored[0].created_at,
          type: 'text',
          channel: 'chat_widget',
          status: 'received',
          session_id: stored[0].session_id,
          sender: 'contact',
          media_url: null,
          media_content_type: null,
          external_id: 'w-1',
        },
        contact: { id: stored[0].contact_id, phone_number: null, email: null, first_name: expect.any(String), last_name: expect.any(String) },
      },
    });
    // The first message answered nothing; the second answers the bot's greeting.
    const replies = await eventsOf(widget.userId, 'Replies');
    expect(replies).toHaveLength(1);
    expect(replies[0].data.message.id).toBe(second.body.messageId);
    expect(replies[0].data.in_reply_to).toBe(botReply);
  });

  test('a retried bot turn does not reply twice', async () => {
    const widget = await newWidget({ greeting: 'Only once' });
    const fromId = visitor();
    const sent = await send(widget, fromId, 'hello');
    await pollUntil(widget, fromId, (body) => body.messages.length === 2 && !body.isBotTyping);
    const { rows } = await service.services.pool.query('select contact_id from messages where id = $1', [sent.body.messageId]);
    const job = { accountId: widget.userId, widgetId: widget.id, contactId: rows[0].contact_id, visitorId: fromId, messageId: sent.body.messageId, firstOfSession: true };
    expect(await takeBotTurn(service.services.orm.em.fork(), job, service.services.conversationEvents)).toBe('already-taken');
    expect((await poll(widget, fromId)).body.messages.map((message: any) => message.body)).toEqual(['hello', 'Only once']);
  });

  test('two first messages at once create one contact; a later message gets the away message once', async () => {
    const widget = await newWidget({ awayMessage: 'We are away; we will answer soon.' });
    const fromId = visitor();
    const [a, b] = await Promise.all([send(widget, fromId, 'one'), send(widget, fromId, 'two')]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const { rows } = await service.services.pool.query('select id from contacts where chat_widget_id = $1 and widget_visitor_id = $2', [widget.id, fromId]);
    expect(rows).toHaveLength(1);
    expect(await eventsOf(widget.userId, 'Contact Created')).toHaveLength(1);

    // No greeting configured: the default greets the first message of the session; the
    // second, within the away interval of that reply, gets nothing more.
    const settled = await pollUntil(widget, fromId, (body) => body.messages.length >= 3 && !body.isBotTyping);
    const bot = settled.messages.filter((message) => message.direction === 'outbound');
    expect(bot.map((message) => message.body)).toEqual([DEFAULT_GREETING]);
  });

  test('the away message answers a later message when the bot has not replied recently', async () => {
    const widget = await newWidget({ greeting: 'Hi!', awayMessage: 'Away for now.' });
    const fromId = visitor();
    expect((await send(widget, fromId, 'first')).status).toBe(200);
    await pollUntil(widget, fromId, (body) => body.messages.length === 2 && !body.isBotTyping);
    // Age the greeting past the away interval.
    await service.services.pool.query(
      `update messages set created_at = created_at - interval '11 minutes' where contact_id = (select id from contacts where widget_visitor_id = $1)`,
      [fromId],
    );
    expect((await send(widget, fromId, 'second')).status).toBe(200);
    const settled = await pollUntil(widget, fromId, (body) => body.messages.length === 4 && !body.isBotTyping);
    expect(settled.messages.map((message) => message.body)).toEqual(['first', 'Hi!', 'second', 'Away for now.']);
  });

  test('400 {error, details} for empty or missing body text and over-long text; 400 {error} without userId', async () => {
    const widget = await newWidget();
    const fromId = visitor();
    for (const body of ['', '   ']) {
      const response = await send(widget, fromId, body);
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ error: 'customData.body: must not be empty', details: [{ path: 'customData.body', message: 'must not be empty' }] });
    }
    const missing = await service.request('POST', '/incoming-chat-widget-message', {
      query: { userId: widget.userId },
      body: { customData: { fromId, toId: widget.id }, messageType: 'text' },
    });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: 'customData.body is required', details: [{ path: 'customData.body', message: expect.any(String) }] });
    const long = await send(widget, fromId, 'x'.repeat(4001));
    expect(long.status).toBe(400);
    expect(long.body.details).toEqual([{ path: 'customData.body', message: 'must be at most 4000 characters' }]);

    const noUser = await service.request('POST', '/incoming-chat-widget-message', {
      body: { customData: { body: 'hi', fromId, toId: widget.id }, messageType: 'text' },
    });
    expect(noUser.status).toBe(400);
    expect(noUser.body).toEqual({ error: 'userId is required' });
  });

  test('404 {error} for an unknown widget, another owner\'s widget, or a deleted one', async () => {
    const widget = await newWidget();
    const other = await newWidget();
    const fromId = visitor();
    const unknown = await send({ ...widget, id: 'cw_unknown' }, fromId, 'hi');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'Chat widget not found' });
    const notOwned = await send({ ...widget, userId: other.userId }, fromId, 'hi');
    expect(notOwned.status).toBe(404);
    expect(notOwned.body).toEqual({ error: 'Chat widget not found' });
    expect((await send(widget, fromId, 'before')).status).toBe(200);
    expect((await service.request('DELETE', `/chat-widgets/${widget.id}`, { apiKey: widget.apiKey })).status).toBe(200);
    expect((await send(widget, fromId, 'after')).body).toEqual({ error: 'Chat widget not found' });
    expect((await poll(widget, fromId)).status).toBe(404);
    // The visitor stays a contact.
    const { rows } = await service.services.pool.query('select 1 from contacts where widget_visitor_id = $1', [fromId]);
    expect(rows).toHaveLength(1);
  });

  test('405 {error} for any other method on the path', async () => {
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
      const response = await service.request(method, '/incoming-chat-widget-message', { body: method === 'GET' || method === 'DELETE' ? undefined : {} });
      expect(response.status, method).toBe(405);
      expect(response.contentType).toMatch(JSON_TYPE);
      expect(response.body, method).toEqual({ error: `Method ${method} is not allowed on this path` });
      expect(response.headers.get('allow')).toBe('POST');
    }
  });

  test('429 with Retry-After after 20 messages a minute from one visitor; other visitors still pass', async () => {
    // All 21 must land in one minute's window: a run a window boundary split is run again.
    await inOneWindow(service.services.pool, async () => {
      const widget = await newWidget();
      const fromId = visitor();
      for (let i = 0; i < 20; i += 1) expect((await send(widget, fromId, `m${i}`)).status).toBe(200);
      const refused = await send(widget, fromId, 'one too many');
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ success: false, error: 'Rate limit exceeded, please try again later', error_code: 429 });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((await send(widget, visitor(), 'someone else')).status).toBe(200);
    });
  }, 120_000);

  test('403 {error} from a site outside allowedOrigins; this service and listed sites pass', async () => {
    const widget = await newWidget({ allowedOrigins: ['https://site.example'] });
    const fromId = visitor();
    const foreign = await send(widget, fromId, 'hi', {}, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual({ error: 'This site may not use the chat widget' });
    expect((await send(widget, fromId, 'hi', {}, { origin: 'https://site.example' })).status).toBe(200);
    expect((await send(widget, fromId, 'hi', {}, { origin: service.origin })).status).toBe(200);
    const pollForeign = await service.request('GET', '/chat-widget-messages', { query: { fromId, toId: widget.id }, headers: { origin: 'https://evil.example' } });
    expect(pollForeign.status).toBe(403);
    expect(pollForeign.body).toEqual({ error: 'This site may not use the chat widget' });
  });
});

describe('GET /chat-widget-messages', () => {
  test('`after` returns only messages strictly after that millisecond', async () => {
    const widget = await newWidget({ greeting: 'Hi' });
    const fromId = visitor();
    expect((await send(widget, fromId, 'first')).status).toBe(200);
    const all = await pollUntil(widget, fromId, (body) => body.messages.length === 2 && !body.isBotTyping);
    const firstAt = Date.parse(all.messages[0].timestamp);
    const secondAt = Date.parse(all.messages[1].timestamp);

    const afterFirst = await poll(widget, fromId, String(firstAt));
    expect(afterFirst.body.messages.map((message: any) => message.body)).toEqual(secondAt > firstAt ? ['Hi'] : []);
    expect((await poll(widget, fromId, String(firstAt - 1))).body.messages.map((message: any) => message.body)).toEqual(['first', 'Hi']);
    expect((await poll(widget, fromId, String(secondAt))).body).toEqual({ messages: [], isBotTyping: false });
  });

  test('`before` returns the newest messages strictly before that millisecond, at most a page of them, oldest first', async () => {
    const widget = await newWidget({ greeting: 'Hi' });
    const fromId = visitor();
    expect((await send(widget, fromId, 'first')).status).toBe(200);
    await pollUntil(widget, fromId, (body) => body.messages.length === 2 && !body.isBotTyping);
    // 250 more replies, then every message of the conversation a second apart, in the order written.
    const { rows } = await service.services.pool.query<{ id: string }>('select id from contacts where account_id = $1 and widget_visitor_id = $2', [widget.userId, fromId]);
    const contactId = rows[0]!.id;
    await service.services.orm.em.fork().transactional(async (em) => {
      for (let n = 1; n <= 250; n += 1) {
        await recordMessage(em, widget.userId, { contactId, direction: 'outbound', body: `reply ${n}`, channel: WIDGET_CHANNEL, sender: 'agent' });
      }
    });
    await service.services.pool.query(
      `update messages m set created_at = timestamptz '2030-01-01T00:00:00Z' + ordered.n * interval '1 second'
         from (select id, row_number() over (order by created_at, id) as n from messages where contact_id = $1) ordered
        where m.id = ordered.id`,
      [contactId],
    );
    const everything = ['first', 'Hi', ...Array.from({ length: 250 }, (_, index) => `reply ${index + 1}`)];
    const bodies = (response: { body: { messages: { body: string }[] } }) => response.body.messages.map((message) => message.body);
    const at = (index: number) => String(Date.parse('2030-01-01T00:00:00Z') + (index + 1) * 1000);
    const before = (value: string, after?: string) =>
      service.request('GET', '/chat-widget-messages', { query: { fromId, toId: widget.id, before: value, after } });

    const newest = await before('999999999999999');
    expect(newest.status, newest.text).toBe(200);
    expect(bodies(newest)).toEqual(everything.slice(-CONVERSATION_PAGE_SIZE));
    expect(newest.body.isBotTyping).toBe(false);
    // The page before the oldest one held: the rest, and nothing held already.
    expect(bodies(await before(at(everything.length - CONVERSATION_PAGE_SIZE)))).toEqual(everything.slice(0, everything.length - CONVERSATION_PAGE_SIZE));
    // Strictly before: the message at that millisecond is left out.
    expect(bodies(await before(at(5))).at(-1)).toBe(everything[4]);
    expect(bodies(await before(at(0)))).toEqual([]);
    // With `after` as well: the newest ones between the two.
    expect(bodies(await before(at(10), at(6)))).toEqual(everything.slice(7, 10));
    // Without `before`, the oldest page as before.
    expect(bodies(await poll(widget, fromId))).toEqual(everything.slice(0, CONVERSATION_PAGE_SIZE));
  });

  test('400 {error} for a missing fromId or toId or a bad after or before; 404 {error} for a visitor with no contact', async () => {
    const widget = await newWidget();
    for (const query of [
      { toId: widget.id },
      { fromId: 'visitor1' },
      { fromId: 'visitor1', toId: widget.id, after: 'yesterday' },
      { fromId: 'visitor1', toId: widget.id, after: '-5' },
      { fromId: 'visitor1', toId: widget.id, before: 'now' },
      { fromId: 'visitor1', toId: widget.id, before: '1e12' },
    ]) {
      const response = await service.request('GET', '/chat-widget-messages', { query });
      expect(response.status, JSON.stringify(query)).toBe(400);
      expect(Object.keys(response.body), JSON.stringify(query)).toEqual(['error']);
    }
    const unknown = await poll(widget, visitor());
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'Contact not found' });
  });
});

describe('POST /update-message-read-status', () => {
  test('marks the visitor\'s unread outbound messages read, with one Reads event per call that changed something', async () => {
    const widget = await newWidget({ greeting: 'Hello' });
    const fromId = visitor();
    const sent = await send(widget, fromId, 'question');
    await pollUntil(widget, fromId, (body) => body.messages.length === 2 && !body.isBotTyping);

    const marked = await service.request('POST', '/update-message-read-status', { body: { fromId, toId: widget.id } });
    expect(marked.status).toBe(200);
    expect(marked.body).toEqual({ success: true });
    const conversation = (await poll(widget, fromId)).body;
    expect(conversation.messages.map((message: any) => [message.direction, message.status])).toEqual([['inbound', 'received'], ['outbound', 'read']]);
    const { rows } = await service.services.pool.query('select id, read_at is not null as read from messages where contact_id = (select contact_id from messages where id = $1) order by created_at, id', [sent.body.messageId]);
    expect(rows.map((row) => row.read)).toEqual([false, true]);

    expect((await service.request('POST', '/update-message-read-status', { body: { fromId, toId: widget.id } })).body).toEqual({ success: true });
    const reads = await eventsOf(widget.userId, 'Reads');
    expect(reads).toHaveLength(1);
    expect(reads[0].data.message_ids).toEqual([conversation.messages[1].messageSid]);
  });

  test('400 {error} without fromId or toId; 404 {error} for an unknown conversation', async () => {
    const widget = await newWidget();
    for (const body of [{ toId: widget.id }, { fromId: 'visitor1' }]) {
      const response = await service.request('POST', '/update-message-read-status', { body });
      expect(response.status).toBe(400);
      expect(Object.keys(response.body)).toEqual(['error']);
    }
    const unknown = await service.request('POST', '/update-message-read-status', { body: { fromId: visitor(), toId: widget.id } });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'Contact not found' });
  });
});
