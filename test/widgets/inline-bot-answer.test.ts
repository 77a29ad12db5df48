// The bot's answers that the widget's settings alone decide are written with the visitor's
// message, in its own transaction: the greeting of a session's first message, and the away
// message of a later one unless the bot replied within AWAY_MESSAGE_INTERVAL_MINUTES. Such a
// message queues no job and shows no typing; only a hand-off keyword still takes the bot's
// turn through the job. The service here runs no `chat_widget_message` task, so a queued
// turn stays visible in the queue and nothing but the message's own write can answer.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { CHAT_WIDGET_MESSAGE_TASK } from '../../server/widgets/receive-visitor-message.ts';
import { takeBotTurn } from '../../server/widgets/take-bot-turn.ts';
import { DEFAULT_GREETING } from '../../server/widgets/widget-settings.ts';
import { workerDefinition } from '../../workers/index.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { connectVisitor, heardUntilNow } from '../realtime/widget-fixtures.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService({
    definition: {
      worker: (services) => {
        const definition = workerDefinition(services);
        const { [CHAT_WIDGET_MESSAGE_TASK]: _turn, ...taskList } = definition.taskList;
        return { ...definition, taskList };
      },
    },
  });
});
afterAll(async () => {
  await service?.stop();
});

type Conversation = { messages: { messageSid: string; body: string; direction: string; status: string; timestamp: string }[]; isBotTyping: boolean };

async function newVisitor(settings: Record<string, unknown> = {}) {
  const { apiKey, userId } = await service.createAccount();
  const created = await service.request('POST', '/chat-widgets', { apiKey, body: { name: 'Site', settings } });
  expect(created.status).toBe(201);
  const widgetId = created.body.data.id as string;
  const visitorId = `v_${randomUUID().replaceAll('-', '')}`;
  const send = async (body: string, messageSid?: string) => {
    const sent = await service.request('POST', '/incoming-chat-widget-message', {
      query: { userId },
      body: { customData: { body, fromId: visitorId, toId: widgetId, messageSid }, messageType: 'text' },
    });
    expect(sent.status).toBe(200);
    return sent.body.messageId as string;
  };
  const poll = async (after?: number): Promise<Conversation> => {
    const response = await service.request('GET', '/chat-widget-messages', { query: { fromId: visitorId, toId: widgetId, after } });
    expect(response.status).toBe(200);
    return response.body;
  };
  return { userId, widgetId, visitorId, send, poll };
}

const contactOf = async (messageId: string) =>
  (await service.services.pool.query<{ contact_id: string }>('select contact_id from messages where id = $1', [messageId])).rows[0]!.contact_id;

const turnJobs = async (userId: string) =>
  (
    await service.services.pool.query<{ key: string; payload: any }>(
      `select j.key, j.payload from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
        where t.identifier = $1 and j.payload->>'accountId' = $2`,
      [CHAT_WIDGET_MESSAGE_TASK, userId],
    )
  ).rows;

const counts = async (userId: string) => {
  const { rows } = await service.services.pool.query<{ messages: number; events: number }>(
    `select (select count(*)::int from messages where account_id = $1) as messages, (select count(*)::int from events where account_id = $1) as events`,
    [userId],
  );
  return rows[0]!;
};

test("a session's first message is greeted in its own write: one poll shows both, in order, no typing, no job", async () => {
  const visitor = await newVisitor();
  const socket = await connectVisitor(service.origin, { configId: visitor.widgetId, visitorId: visitor.visitorId });
  try {
    const messageId = await visitor.send('Where is my order?', 'wsid-first');
    const conversation = await visitor.poll();
    expect(conversation.isBotTyping).toBe(false);
    expect(conversation.messages.map((message) => [message.direction, message.body, message.status])).toEqual([
      ['inbound', 'Where is my order?', 'received'],
      ['outbound', DEFAULT_GREETING, 'sent'],
    ]);
    expect(conversation.messages[1]!.timestamp > conversation.messages[0]!.timestamp).toBe(true);
    // A poll after the visitor's message (the widget page's `after`: its time) finds the greeting.
    expect((await visitor.poll(Date.parse(conversation.messages[0]!.timestamp))).messages.map((message) => message.body)).toEqual([DEFAULT_GREETING]);
    expect(await turnJobs(visitor.userId)).toEqual([]);

    const contactId = await contactOf(messageId);
    const { rows: greeting } = await service.services.pool.query(
      `select sender, direction, status, channel, external_id, session_id = (select session_id from messages where id = $2) as same_session
         from messages where contact_id = $1 and sender = 'bot'`,
      [contactId, messageId],
    );
    expect(greeting).toEqual([{ sender: 'bot', direction: 'outbound', status: 'sent', channel: 'chat_widget', external_id: `bot-turn:${messageId}`, same_session: true }]);
    const { rows: typing } = await service.services.pool.query('select is_bot_typing from contacts where id = $1', [contactId]);
    expect(typing).toEqual([{ is_bot_typing: false }]);

    // The live events: the visitor's message, then the greeting, and no typing.
    const heard = await heardUntilNow(service, { accountId: visitor.userId, widgetId: visitor.widgetId, visitorId: visitor.visitorId, contactId }, socket);
    expect(heard.map((event) => [event.name, (event.payload as { body?: string }).body])).toEqual([
      ['message', 'Where is my order?'],
      ['message', DEFAULT_GREETING],
    ]);

    // Each message has its New Message event, the greeting's after the visitor's.
    const { rows: events } = await service.services.pool.query<{ name: string; body: string }>(
      `select name, payload->'data'->'message'->>'body' as body from events where account_id = $1 and name <> 'Contact Created' order by id`,
      [visitor.userId],
    );
    expect(events).toEqual([
      { name: 'New Message', body: 'Where is my order?' },
      { name: 'New Message', body: DEFAULT_GREETING },
    ]);

    // Sent again (a lost answer), the message is the same one and nothing is written.
    const before = await counts(visitor.userId);
    expect(await visitor.send('Where is my order?', 'wsid-first')).toBe(messageId);
    expect(await counts(visitor.userId)).toEqual(before);

    // The visitor's next message answers the greeting (Replies), and gets no answer itself.
    await visitor.send('It was due Monday.');
    const { rows: replies } = await service.services.pool.query<{ in_reply_to: string }>(
      `select payload->'data'->>'in_reply_to' as in_reply_to from events where account_id = $1 and name = 'Replies'`,
      [visitor.userId],
    );
    const { rows: greetingId } = await service.services.pool.query<{ id: string }>(`select id from messages where contact_id = $1 and sender = 'bot'`, [contactId]);
    expect(replies).toEqual([{ in_reply_to: greetingId[0]!.id }]);
    expect((await visitor.poll()).messages.map((message) => message.body)).toEqual(['Where is my order?', DEFAULT_GREETING, 'It was due Monday.']);
    expect(await turnJobs(visitor.userId)).toEqual([]);
  } finally {
    socket.close();
  }
});

test('the away message is written with a later message, and not when the bot replied lately', async () => {
  const visitor = await newVisitor({ greeting: 'Hello!', awayMessage: 'We are away.' });
  const first = await visitor.send('hi');
  const contactId = await contactOf(first);
  // Within AWAY_MESSAGE_INTERVAL_MINUTES of the greeting: no away message.
  await visitor.send('anyone?');
  expect((await visitor.poll()).messages.map((message) => message.body)).toEqual(['hi', 'Hello!', 'anyone?']);

  await service.services.pool.query(`update messages set created_at = created_at - interval '11 minutes' where contact_id = $1`, [contactId]);
  const later = await visitor.send('still there?');
  const conversation = await visitor.poll();
  expect(conversation).toMatchObject({ isBotTyping: false });
  expect(conversation.messages.map((message) => message.body)).toEqual(['hi', 'Hello!', 'anyone?', 'still there?', 'We are away.']);
  const { rows: away } = await service.services.pool.query(`select external_id from messages where contact_id = $1 and body = 'We are away.'`, [contactId]);
  expect(away).toEqual([{ external_id: `bot-turn:${later}` }]);

  // The away message was just given: the next message gets none.
  await visitor.send('hello?');
  expect((await visitor.poll()).messages.map((message) => message.body)).toEqual(['hi', 'Hello!', 'anyone?', 'still there?', 'We are away.', 'hello?']);
  expect(await turnJobs(visitor.userId)).toEqual([]);
});

test('a message naming a hand-off keyword still takes the bot\'s turn through its job, which hands off', async () => {
  const visitor = await newVisitor({ handoffKeywords: ['person'], handoffMessage: 'A person is coming.' });
  const messageId = await visitor.send('A person, please');
  const contactId = await contactOf(messageId);
  // No greeting written with it: typing shows, and the turn is queued.
  expect(await visitor.poll()).toMatchObject({ isBotTyping: true, messages: [{ body: 'A person, please' }] });
  const jobs = await turnJobs(visitor.userId);
  expect(jobs).toEqual([{ key: `${CHAT_WIDGET_MESSAGE_TASK}:${messageId}`, payload: expect.objectContaining({ messageId, contactId, firstOfSession: true }) }]);

  expect(await takeBotTurn(service.services.orm.em.fork(), jobs[0]!.payload, { announce: async () => {} })).toBe('handed-off');
  const conversation = await visitor.poll();
  expect(conversation).toMatchObject({ isBotTyping: false });
  expect(conversation.messages.map((message) => message.body)).toEqual(['A person, please', 'A person is coming.']);
  const { rows } = await service.services.pool.query('select is_bot_active from contacts where id = $1', [contactId]);
  expect(rows).toEqual([{ is_bot_active: false }]);
});
