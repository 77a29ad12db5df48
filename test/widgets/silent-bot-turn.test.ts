// A visitor message the bot has nothing to say to (no session opened, no away message, no
// hand-off keyword in it) queues no turn and shows no typing; an earlier message's turn still
// pending then ends the typing it started, though its message is no longer the newest. A
// keyword still gets its turn, and an away message is still given (written with the message).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ConversationEvent } from '../../server/realtime/conversation-event.ts';
import { CHAT_WIDGET_MESSAGE_TASK } from '../../server/widgets/receive-visitor-message.ts';
import { takeBotTurn } from '../../server/widgets/take-bot-turn.ts';
import { DEFAULT_GREETING } from '../../server/widgets/widget-settings.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { connectVisitor, heardUntilNow } from '../realtime/widget-fixtures.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

/** A widget visitor whose first message was greeted, once that turn is over. */
async function greetedVisitor(settings: Record<string, unknown>) {
  const { apiKey, userId } = await service.createAccount();
  const created = await service.request('POST', '/chat-widgets', { apiKey, body: { name: 'Site', settings } });
  expect(created.status).toBe(201);
  const widgetId = created.body.data.id as string;
  const visitorId = `v_${randomUUID().replaceAll('-', '')}`;
  const send = async (body: string) => {
    const sent = await service.request('POST', '/incoming-chat-widget-message', {
      query: { userId },
      body: { customData: { body, fromId: visitorId, toId: widgetId }, messageType: 'text' },
    });
    expect(sent.status).toBe(200);
    return sent.body.messageId as string;
  };
  const first = await send('hello');
  const { rows } = await service.services.pool.query<{ contact_id: string }>('select contact_id from messages where id = $1', [first]);
  const contactId = rows[0]!.contact_id;
  const deadline = Date.now() + 20_000;
  while ((await state(contactId)).typing || (await state(contactId)).bot.length < 1) {
    if (Date.now() > deadline) throw new Error('the first turn never finished');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { userId, widgetId, visitorId, contactId, first, send };
}

async function state(contactId: string) {
  const { rows } = await service.services.pool.query<{ is_bot_typing: boolean; is_bot_active: boolean }>('select is_bot_typing, is_bot_active from contacts where id = $1', [contactId]);
  const bot = await service.services.pool.query<{ body: string }>(`select body from messages where contact_id = $1 and sender = 'bot' order by created_at, id`, [contactId]);
  return { typing: rows[0]!.is_bot_typing, active: rows[0]!.is_bot_active, bot: bot.rows.map((row) => row.body) };
}

const targetOf = (conversation: { userId: string; widgetId: string; visitorId: string; contactId: string }) => ({
  accountId: conversation.userId,
  widgetId: conversation.widgetId,
  visitorId: conversation.visitorId,
  contactId: conversation.contactId,
});

const queuedTurns = async (messageId: string) =>
  (await service.services.pool.query('select 1 from graphile_worker.jobs where key = $1', [`${CHAT_WIDGET_MESSAGE_TASK}:${messageId}`])).rowCount;

test('a later message with nothing for the bot to say: no turn queued, no typing shown, no reply', async () => {
  const conversation = await greetedVisitor({});
  const visitor = await connectVisitor(service.origin, { configId: conversation.widgetId, visitorId: conversation.visitorId });
  try {
    // What was announced before the socket joined may still be on its way: let it arrive first.
    const from = (await heardUntilNow(service, targetOf(conversation), visitor)).length + 1;
    const later = await conversation.send('thanks');
    // Typing would have been announced with the message.
    const heard = await heardUntilNow(service, targetOf(conversation), visitor, from);
    expect(heard.map((entry) => [entry.name, (entry.payload as { body?: string }).body])).toEqual([['message', 'thanks']]);
    expect(await queuedTurns(later)).toBe(0);
    expect(await state(conversation.contactId)).toMatchObject({ typing: false, bot: [DEFAULT_GREETING] });
  } finally {
    visitor.close();
  }
});

test("an earlier message's pending turn ends typing though a silent message came after it", async () => {
  const conversation = await greetedVisitor({});
  // As when the first message's turn has not run yet: typing on, for that message.
  await service.services.pool.query('update contacts set is_bot_typing = true, bot_typing_for = $2 where id = $1', [conversation.contactId, conversation.first]);
  const visitor = await connectVisitor(service.origin, { configId: conversation.widgetId, visitorId: conversation.visitorId });
  try {
    // What was announced before the socket joined may still be on its way: let it arrive first.
    const from = (await heardUntilNow(service, targetOf(conversation), visitor)).length + 1;
    await conversation.send('are you there?');
    // The message shows the indicator that is on (in the same notification), and nothing turns it off.
    expect(await heardUntilNow(service, targetOf(conversation), visitor, from)).toEqual([
      { name: 'message', payload: expect.objectContaining({ body: 'are you there?' }) },
      { name: 'typing', payload: { isBotTyping: true } },
    ]);
    expect((await state(conversation.contactId)).typing).toBe(true);
  } finally {
    visitor.close();
  }
  const announced: ConversationEvent[] = [];
  const job = { accountId: conversation.userId, widgetId: conversation.widgetId, contactId: conversation.contactId, messageId: conversation.first, firstOfSession: true };
  expect(await takeBotTurn(service.services.orm.em.fork(), job, { announce: async (events) => void announced.push(...events) })).toBe('already-taken');
  expect(await state(conversation.contactId)).toMatchObject({ typing: false, bot: [DEFAULT_GREETING] });
  expect(announced).toEqual([expect.objectContaining({ kind: 'typing', isBotTyping: false })]);
});

test('a hand-off keyword or an away message still gets its turn', async () => {
  const keyword = await greetedVisitor({ handoffKeywords: ['person'], handoffMessage: 'A person is coming.' });
  await keyword.send('A person, please');
  const deadline = Date.now() + 20_000;
  while ((await state(keyword.contactId)).active || (await state(keyword.contactId)).typing) {
    if (Date.now() > deadline) throw new Error('the hand-off never happened');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect((await state(keyword.contactId)).bot).toEqual([DEFAULT_GREETING, 'A person is coming.']);

  // A human has the conversation now: no turn for its next message.
  const paused = await keyword.send('hello?');
  expect(await queuedTurns(paused)).toBe(0);

  const away = await greetedVisitor({ awayMessage: 'Away for now.' });
  await service.services.pool.query(`update messages set created_at = created_at - interval '11 minutes' where contact_id = $1`, [away.contactId]);
  await away.send('anyone?');
  while ((await state(away.contactId)).bot.length < 2 || (await state(away.contactId)).typing) {
    if (Date.now() > deadline) throw new Error('the away message never came');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect((await state(away.contactId)).bot).toEqual([DEFAULT_GREETING, 'Away for now.']);
});
