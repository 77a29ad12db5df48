// A visitor message's `customData.messageSid` (or `customData.id`) is its `messageSid` when
// read back, and a widget that retries a message whose answer it lost (the same id sent
// again) stores nothing new and gets 200 with the same `messageId` (contract: "The chat
// widget's visitors"), over real HTTPS and sockets with the real worker.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { connectVisitor, isMessage } from '../realtime/widget-fixtures.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

type Widget = { id: string; userId: string };

async function newWidget(): Promise<Widget> {
  const { apiKey, userId } = await service.createAccount();
  const created = await service.request('POST', '/chat-widgets', { apiKey, body: { name: 'Site', settings: { greeting: 'Hello!' } } });
  expect(created.status).toBe(201);
  return { id: created.body.data.id, userId };
}

const visitor = () => `v_${randomUUID().replaceAll('-', '')}`;

function send(widget: Widget, fromId: string, body: string, extra: Record<string, unknown> = {}) {
  return service.request('POST', '/incoming-chat-widget-message', {
    query: { userId: widget.userId },
    body: { customData: { body, fromId, toId: widget.id, ...extra }, messageType: 'text' },
  });
}

async function storedFor(widget: Widget, fromId: string) {
  const { rows } = await service.services.pool.query<{ id: string; body: string; direction: string; external_id: string | null }>(
    `select m.id, m.body, m.direction, m.external_id from messages m join contacts c on c.id = m.contact_id
      where c.account_id = $1 and c.widget_visitor_id = $2 order by m.created_at, m.id`,
    [widget.userId, fromId],
  );
  return rows;
}

async function inboundNewMessageEvents(widget: Widget) {
  const { rows } = await service.services.pool.query<{ id: string }>(
    `select payload->'data'->'message'->>'id' as id from events
      where account_id = $1 and name = 'New Message' and payload->'data'->'message'->>'direction' = 'inbound' order by id`,
    [widget.userId],
  );
  return rows.map((row) => row.id);
}

/** Polls the visitor's conversation until `done`, or fails at the deadline. */
async function conversationWhen(widget: Widget, fromId: string, done: (messages: { direction: string }[]) => boolean) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const response = await service.request('GET', '/chat-widget-messages', { query: { fromId, toId: widget.id } });
    expect(response.status).toBe(200);
    if (done(response.body.messages)) return response.body.messages as { messageSid: string; direction: string; body: string }[];
    if (Date.now() > deadline) throw new Error(`conversation never settled: ${response.text}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('POST /incoming-chat-widget-message retried', () => {
  test('the same messageSid again answers 200 with the same messageId and stores nothing new: no message, event, bot turn', async () => {
    const widget = await newWidget();
    const fromId = visitor();
    const first = await send(widget, fromId, 'Where is my order?', { messageSid: 'wsid-retry-1' });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ success: true, messageId: expect.stringMatching(/^msg_/) });
    // The bot's greeting answers the first message; the retry comes after it.
    await conversationWhen(widget, fromId, (messages) => messages.length === 2);

    const retried = await send(widget, fromId, 'Where is my order?', { messageSid: 'wsid-retry-1' });
    expect(retried.status).toBe(200);
    expect(retried.body).toEqual({ success: true, messageId: first.body.messageId });

    const stored = await storedFor(widget, fromId);
    expect(stored.filter((row) => row.direction === 'inbound')).toEqual([
      { id: first.body.messageId, body: 'Where is my order?', direction: 'inbound', external_id: 'wsid-retry-1' },
    ]);
    expect(await inboundNewMessageEvents(widget)).toEqual([first.body.messageId]);
    const { rows: replies } = await service.services.pool.query('select 1 from events where account_id = $1 and name = $2', [widget.userId, 'Replies']);
    expect(replies).toEqual([]);
    // The bot's flag was not raised again for a turn that will not come.
    const { rows: typing } = await service.services.pool.query('select is_bot_typing from contacts where account_id = $1 and widget_visitor_id = $2', [widget.userId, fromId]);
    expect(typing).toEqual([{ is_bot_typing: false }]);
    expect(stored.filter((row) => row.direction !== 'inbound')).toHaveLength(1);
  });

  test('customData.id names the message when messageSid is absent; a new id is a new message', async () => {
    const widget = await newWidget();
    const fromId = visitor();
    const first = await send(widget, fromId, 'hi', { id: 'wid-1' });
    const again = await send(widget, fromId, 'hi', { id: 'wid-1' });
    const other = await send(widget, fromId, 'hi', { id: 'wid-2' });
    expect([first.status, again.status, other.status]).toEqual([200, 200, 200]);
    expect(again.body.messageId).toBe(first.body.messageId);
    expect(other.body.messageId).not.toBe(first.body.messageId);
    const inbound = (await storedFor(widget, fromId)).filter((row) => row.direction === 'inbound');
    expect(inbound.map((row) => [row.id, row.external_id])).toEqual([
      [first.body.messageId, 'wid-1'],
      [other.body.messageId, 'wid-2'],
    ]);
  });

  test('messages without a messageSid are all stored, as before; another visitor may use the same messageSid', async () => {
    const widget = await newWidget();
    const fromId = visitor();
    const one = await send(widget, fromId, 'same words');
    const two = await send(widget, fromId, 'same words');
    expect([one.status, two.status]).toEqual([200, 200]);
    expect(two.body.messageId).not.toBe(one.body.messageId);
    expect((await storedFor(widget, fromId)).filter((row) => row.direction === 'inbound')).toHaveLength(2);

    const someoneElse = visitor();
    const mine = await send(widget, fromId, 'x', { messageSid: 'shared-sid' });
    const theirs = await send(widget, someoneElse, 'x', { messageSid: 'shared-sid' });
    expect(theirs.body.messageId).not.toBe(mine.body.messageId);
    expect((await storedFor(widget, someoneElse)).filter((row) => row.direction === 'inbound')).toHaveLength(1);
  });

  test('the same messageSid sent several times at once is stored once, every answer naming it', async () => {
    const widget = await newWidget();
    const fromId = visitor();
    const answers = await Promise.all(Array.from({ length: 5 }, () => send(widget, fromId, 'at once', { messageSid: 'wsid-race' })));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    const inbound = (await storedFor(widget, fromId)).filter((row) => row.direction === 'inbound');
    expect(inbound).toHaveLength(1);
    expect(new Set(answers.map((answer) => answer.body.messageId))).toEqual(new Set([inbound[0]!.id]));
  });

  test('a returning visitor sending the same messageSid several times at once: stored once, one New Message, every answer naming it', async () => {
    const widget = await newWidget();
    const fromId = visitor();
    // The visitor wrote before, so its contact exists and creating it serialises nothing.
    const earlier = await send(widget, fromId, 'hello again');
    expect(earlier.status).toBe(200);
    await conversationWhen(widget, fromId, (messages) => messages.length === 2);

    const answers = await Promise.all(Array.from({ length: 5 }, () => send(widget, fromId, 'at once', { messageSid: 'wsid-race-returning' })));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    const inbound = (await storedFor(widget, fromId)).filter((row) => row.direction === 'inbound');
    expect(inbound.map((row) => [row.body, row.external_id])).toEqual([
      ['hello again', null],
      ['at once', 'wsid-race-returning'],
    ]);
    const stored = inbound[1]!.id;
    expect(answers.map((answer) => answer.body.messageId)).toEqual(Array(5).fill(stored));
    expect((await inboundNewMessageEvents(widget)).sort()).toEqual([earlier.body.messageId, stored].sort());
  });

  test("the widget's messageSid is the message's messageSid when read back and when pushed to the visitor's sockets", async () => {
    const widget = await newWidget();
    const fromId = visitor();
    const socket = await connectVisitor(service.origin, { configId: widget.id, visitorId: fromId });
    try {
      const named = await send(widget, fromId, 'named by the widget', { messageSid: 'wsid-read-1' });
      const byId = await send(widget, fromId, 'named by id', { id: 'wid-read-2' });
      const unnamed = await send(widget, fromId, 'not named');
      expect([named.status, byId.status, unnamed.status]).toEqual([200, 200, 200]);

      const messages = await conversationWhen(widget, fromId, (list) => list.filter((message) => message.direction === 'inbound').length === 3);
      const inbound = messages.filter((message) => message.direction === 'inbound').map((message) => [message.body, message.messageSid]);
      expect(inbound).toEqual([
        ['named by the widget', 'wsid-read-1'],
        ['named by id', 'wid-read-2'],
        ['not named', unnamed.body.messageId],
      ]);
      // The bot's reply keeps our id.
      expect(messages.filter((message) => message.direction !== 'inbound').every((message) => message.messageSid.startsWith('msg_'))).toBe(true);

      const heard = await socket.waitFor(isMessage('not named'));
      const pushed = heard.filter((entry) => entry.name === 'message').map((entry) => entry.payload as { body: string; messageSid: string });
      expect(pushed.filter((message) => message.body.startsWith('named') || message.body === 'not named').map((message) => [message.body, message.messageSid])).toEqual([
        ['named by the widget', 'wsid-read-1'],
        ['named by id', 'wid-read-2'],
        ['not named', unnamed.body.messageId],
      ]);
    } finally {
      socket.close();
    }
  });
});
