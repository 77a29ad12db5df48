// Hand-off to a person over real HTTPS (contract "Conversations both ways"): by
// POST /v1/contacts/{id}/handoff, by a visitor message matching the widget's handoffKeywords
// (in the bot's turn), and by the widget page's POST /v1/chat-widget-handoff. The bot stops
// (Contact Paused), Human Alerted is delivered once per chat session with the reason and the
// newest messages, and the visitor is told a person will answer.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { DEFAULT_HANDOFF_MESSAGE } from '../../server/widgets/hand-off-conversation.ts';
import { matchHandoffKeyword } from '../../server/widgets/widget-settings.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { eventsOf, eventually, nextPhoneNumber } from '../messaging/send-template-fixtures.ts';
import { connectVisitor, isMessage } from '../realtime/widget-fixtures.ts';
import { poll, pollUntil, subscribeConversationEvents, visitorWrites, waitForDeliveries, widgetConversation } from '../messages/reply-fixtures.ts';

let service: TestService;
let receiver: WebhookReceiver;
let account: { userId: string; apiKey: string };

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  service = await startTestService({ env: { WEBHOOK_ALLOW_HOSTS: 'localhost,127.0.0.1' } });
});
afterAll(async () => {
  await service?.stop();
  await receiver?.close();
});
beforeEach(async () => {
  account = await service.createAccount();
  await subscribeConversationEvents(service, account.userId, receiver);
});

function handoff(contactId: string, body: Record<string, unknown> = {}) {
  return service.request('POST', `/v1/contacts/${contactId}/handoff`, { apiKey: account.apiKey, body });
}

async function botActive(contactId: string): Promise<boolean> {
  const { rows } = await service.services.pool.query<{ is_bot_active: boolean }>('select is_bot_active from contacts where id = $1', [contactId]);
  return rows[0]!.is_bot_active;
}

describe('POST /v1/contacts/{contactId}/handoff', () => {
  test('pauses the bot, delivers Contact Paused and Human Alerted (reason, newest messages) and tells the visitor; a second call in the session alerts nobody again', async () => {
    const conversation = await widgetConversation(service, account, { handoffMessage: 'One moment, a person is coming.' });
    const visitor = await connectVisitor(service.origin, { configId: conversation.widgetId, visitorId: conversation.visitorId });
    try {
      const answer = await handoff(conversation.contactId, { reason: 'Asked about a refund' });
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body).toEqual({ success: true, data: { contactId: conversation.contactId, is_bot_active: false } });
      expect(await botActive(conversation.contactId)).toBe(false);

      await visitor.waitFor(isMessage('One moment, a person is coming.'));
      const shown = (await poll(service, conversation.widgetId, conversation.visitorId)).messages;
      expect(shown.map((message) => [message.direction, message.body])).toEqual([
        ['inbound', 'hello'],
        ['outbound', expect.any(String)],
        ['outbound', 'One moment, a person is coming.'],
      ]);

      const delivered = await waitForDeliveries(receiver, account.userId, (all) => all.some((d) => d.event === 'Human Alerted') && all.some((d) => d.event === 'Contact Paused'));
      const alert = delivered.find((d) => d.event === 'Human Alerted')!.data;
      expect(alert).toMatchObject({ contact: { id: conversation.contactId }, reason: 'Asked about a refund', source: 'api', session_id: expect.stringMatching(/^cs_/) });
      // Newest first, before the bot's note to the visitor.
      expect(alert.recent_messages.map((message: { direction: string; body: string }) => [message.direction, message.body])).toEqual([
        ['outbound', expect.any(String)],
        ['inbound', 'hello'],
      ]);
      expect(delivered.find((d) => d.event === 'Contact Paused')!.data.contact.id).toBe(conversation.contactId);

      const again = await handoff(conversation.contactId);
      expect(again.status, again.text).toBe(200);
      expect(await eventsOf(service, account.userId, 'Human Alerted')).toHaveLength(1);
      expect(await eventsOf(service, account.userId, 'Contact Paused')).toHaveLength(1);
      expect((await poll(service, conversation.widgetId, conversation.visitorId)).messages).toHaveLength(3);
    } finally {
      visitor.close();
    }
  });

  test('a WhatsApp contact: the bot pauses and Human Alerted carries the conversation; nothing is sent to the contact', async () => {
    const created = await service.request('POST', '/v1/contacts', { apiKey: account.apiKey, body: { phoneNumber: nextPhoneNumber() } });
    const contactId = created.body.data.contactId;
    const answer = await handoff(contactId);
    expect(answer.status, answer.text).toBe(200);
    const [alert] = await eventsOf(service, account.userId, 'Human Alerted');
    expect(alert!.data).toMatchObject({ contact: { id: contactId }, reason: null, source: 'api', recent_messages: [] });
    const { rows } = await service.services.pool.query('select 1 from messages where contact_id = $1', [contactId]);
    expect(rows).toEqual([]);
  });

  test('404 for an unknown contact or another account\'s; 400 for a reason over 500 characters', async () => {
    expect((await handoff('ct_nope')).status).toBe(404);
    const other = await service.createAccount();
    const theirs = await service.request('POST', '/v1/contacts', { apiKey: other.apiKey, body: { phoneNumber: nextPhoneNumber() } });
    expect((await handoff(theirs.body.data.contactId)).status).toBe(404);
    expect(await botActive(theirs.body.data.contactId)).toBe(true);
    const own = await service.request('POST', '/v1/contacts', { apiKey: account.apiKey, body: { phoneNumber: nextPhoneNumber() } });
    expect((await handoff(own.body.data.contactId, { reason: 'x'.repeat(501) })).status).toBe(400);
    expect(await botActive(own.body.data.contactId)).toBe(true);
  });
});

describe('settings.handoffKeywords', () => {
  test('a visitor message holding a keyword as whole words hands off in the bot\'s turn; the visitor gets the default hand-off message instead of a reply', async () => {
    const conversation = await widgetConversation(service, account, { handoffKeywords: ['human', 'talk to a person'], awayMessage: 'We are away.' });
    // "humane" is not "human": the bot's turn passes and the bot stays on.
    await visitorWrites(service, account.userId, conversation.widgetId, conversation.visitorId, 'That is humane of you');
    await pollUntil(service, conversation.widgetId, conversation.visitorId, (body) => !body.isBotTyping && body.messages.length === 3);
    expect(await botActive(conversation.contactId)).toBe(true);

    await visitorWrites(service, account.userId, conversation.widgetId, conversation.visitorId, 'Can I TALK to a  person, please?');
    const after = await pollUntil(service, conversation.widgetId, conversation.visitorId, (body) => !body.isBotTyping && body.messages.length === 5);
    expect(after.messages.at(-1)).toMatchObject({ direction: 'outbound', body: DEFAULT_HANDOFF_MESSAGE });
    expect(await botActive(conversation.contactId)).toBe(false);
    const delivered = await waitForDeliveries(receiver, account.userId, (all) => all.some((d) => d.event === 'Human Alerted'));
    expect(delivered.find((d) => d.event === 'Human Alerted')!.data).toMatchObject({ source: 'keyword', reason: 'The visitor wrote "talk to a person"' });
  });

  test('matching is case-insensitive on whole words, phrases across any spacing', () => {
    expect(matchHandoffKeyword('I want a HUMAN!', ['human'])).toBe('human');
    expect(matchHandoffKeyword('humanity', ['human'])).toBeNull();
    expect(matchHandoffKeyword('talk  to\na person', ['talk to a person'])).toBe('talk to a person');
    expect(matchHandoffKeyword('Möchte einen Menschen', ['menschen'])).toBe('menschen');
    expect(matchHandoffKeyword('a (b) c', ['(b)'])).toBe('(b)');
    expect(matchHandoffKeyword('anything', undefined)).toBeNull();
  });
});

describe('POST /v1/chat-widget-handoff', () => {
  test('the widget page\'s "talk to a person": the visitor is told, Human Alerted is delivered once', async () => {
    const conversation = await widgetConversation(service, account);
    const ask = () => service.request('POST', '/v1/chat-widget-handoff', { body: { fromId: conversation.visitorId, toId: conversation.widgetId } });
    const answer = await ask();
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toEqual({ success: true });
    const shown = await poll(service, conversation.widgetId, conversation.visitorId);
    expect(shown.messages.at(-1)).toMatchObject({ direction: 'outbound', body: DEFAULT_HANDOFF_MESSAGE });
    await waitForDeliveries(receiver, account.userId, (all) => all.some((d) => d.event === 'Human Alerted' && d.data.source === 'visitor'));
    expect((await ask()).status).toBe(200);
    expect(await eventsOf(service, account.userId, 'Human Alerted')).toHaveLength(1);
  });

  test('404 for a visitor who never wrote or an unknown widget; 403 from a site the widget does not allow', async () => {
    const conversation = await widgetConversation(service, account, { allowedOrigins: ['https://shop.example'] });
    const unknownVisitor = await service.request('POST', '/v1/chat-widget-handoff', { body: { fromId: 'v_never_wrote', toId: conversation.widgetId } });
    expect(unknownVisitor.status).toBe(404);
    const unknownWidget = await service.request('POST', '/v1/chat-widget-handoff', { body: { fromId: conversation.visitorId, toId: 'cw_nope' } });
    expect(unknownWidget.status).toBe(404);
    const foreign = await service.request('POST', '/v1/chat-widget-handoff', {
      body: { fromId: conversation.visitorId, toId: conversation.widgetId },
      headers: { origin: 'https://elsewhere.example' },
    });
    expect(foreign.status).toBe(403);
    expect(await botActive(conversation.contactId)).toBe(true);
    expect(await eventually(() => eventsOf(service, account.userId, 'Human Alerted'), () => true)).toEqual([]);
  });
});
