// The bot's turn (server/widgets/take-bot-turn.ts) run directly on messages recorded without
// a queued turn, so the order of turns is the test's: a turn for an earlier message replies
// but leaves typing on while a later visitor message waits; the later one's turn ends it,
// silent within the away interval; a keyword hands off and ends typing too.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { recordMessage } from '../../server/messages/record-message.ts';
import { takeBotTurn } from '../../server/widgets/take-bot-turn.ts';
import { DEFAULT_GREETING } from '../../server/widgets/widget-settings.ts';
import type { ConversationEvent } from '../../server/realtime/conversation-event.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

async function conversation(settings: Record<string, unknown>) {
  const { apiKey, userId } = await service.createAccount();
  const created = await service.request('POST', '/chat-widgets', { apiKey, body: { name: 'Site', settings } });
  expect(created.status).toBe(201);
  const widgetId = created.body.data.id as string;
  const fromId = `v_${randomUUID().replaceAll('-', '')}`;
  const sent = await service.request('POST', '/incoming-chat-widget-message', {
    query: { userId },
    body: { customData: { body: 'hello', fromId, toId: widgetId }, messageType: 'text' },
  });
  expect(sent.status).toBe(200);
  const { rows } = await service.services.pool.query<{ contact_id: string }>('select contact_id from messages where id = $1', [sent.body.messageId]);
  const contactId = rows[0]!.contact_id;
  // The worker's own turn for that first message: the greeting, typing ended.
  const deadline = Date.now() + 20_000;
  while ((await state(contactId)).bot.length < 1 || (await state(contactId)).typing) {
    if (Date.now() > deadline) throw new Error('the first turn never finished');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const visitorSays = async (body: string) =>
    (await recordMessage(service.services.orm.em.fork(), userId, { contactId, direction: 'inbound', body, channel: 'chat_widget', sender: 'contact' })).messageId;
  const announced: ConversationEvent[] = [];
  const feed = { announce: async (events: ConversationEvent[]) => void announced.push(...events) };
  const turn = (messageId: string, firstOfSession: boolean) =>
    takeBotTurn(service.services.orm.em.fork(), { accountId: userId, widgetId, contactId, messageId, firstOfSession }, feed);
  return { contactId, visitorSays, turn, announced };
}

async function state(contactId: string) {
  const { rows } = await service.services.pool.query<{ is_bot_typing: boolean; is_bot_active: boolean }>('select is_bot_typing, is_bot_active from contacts where id = $1', [contactId]);
  const bot = await service.services.pool.query<{ body: string }>(`select body from messages where contact_id = $1 and sender = 'bot' order by created_at, id`, [contactId]);
  return { typing: rows[0]!.is_bot_typing, active: rows[0]!.is_bot_active, bot: bot.rows.map((row) => row.body) };
}

const setTyping = (contactId: string) => service.services.pool.query('update contacts set is_bot_typing = true where id = $1', [contactId]);

test('a turn replies and leaves typing on while a later message waits; the later turn, silent within the away interval, ends it', async () => {
  const { contactId, visitorSays, turn, announced } = await conversation({ awayMessage: 'We are away.' });
  const earlier = await visitorSays('one');
  const later = await visitorSays('two');
  await setTyping(contactId);

  expect(await turn(earlier, true)).toBe('replied');
  expect(await state(contactId)).toMatchObject({ typing: true, bot: [DEFAULT_GREETING, DEFAULT_GREETING] });
  expect(announced.map((event) => event.kind)).toEqual(['message']);

  expect(await turn(later, false)).toBe('silent');
  expect(await state(contactId)).toMatchObject({ typing: false, bot: [DEFAULT_GREETING, DEFAULT_GREETING] });
  expect(announced.map((event) => event.kind)).toEqual(['message', 'typing']);
  // Run again, the reply is not repeated.
  expect(await turn(earlier, true)).toBe('already-taken');
  expect((await state(contactId)).bot).toHaveLength(2);
});

test('past the away interval the later turn gives the away message and ends typing', async () => {
  const { contactId, visitorSays, turn, announced } = await conversation({ awayMessage: 'We are away.' });
  await service.services.pool.query(`update messages set created_at = created_at - interval '1 hour' where contact_id = $1`, [contactId]);
  const later = await visitorSays('anyone?');
  await setTyping(contactId);
  expect(await turn(later, false)).toBe('replied');
  expect(await state(contactId)).toMatchObject({ typing: false, bot: [DEFAULT_GREETING, 'We are away.'] });
  expect(announced.map((event) => event.kind)).toEqual(['message', 'typing']);
});

test('a keyword hands off, and typing ends', async () => {
  const { contactId, visitorSays, turn } = await conversation({ handoffKeywords: ['person'], handoffMessage: 'A person is coming.' });
  const asked = await visitorSays('A person, please');
  await setTyping(contactId);
  expect(await turn(asked, false)).toBe('handed-off');
  expect(await state(contactId)).toMatchObject({ typing: false, active: false, bot: [DEFAULT_GREETING, 'A person is coming.'] });
});
