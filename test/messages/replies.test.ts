// POST /v1/contacts/{contactId}/messages over real HTTPS (contract "Conversations both
// ways"): a reply to a chat-widget visitor is stored as outbound-api, pushed to the visitor's
// socket and read by the poll; a reply to a WhatsApp contact is a session message through the
// fake provider while the 24-hour window is open, charged one credit all or nothing, and moved
// on by the provider's signed statuses. Events reach a real webhook receiver.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { startFakeMessagingProvider, type FakeMessagingProvider } from '../helpers/fake-messaging-provider.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { connectAccount, creditsOf, eventsOf, MESSAGING_ALLOW_HOSTS, messagesOf, nextPhoneNumber } from '../messaging/send-template-fixtures.ts';
import { connectVisitor } from '../realtime/widget-fixtures.ts';
import { APP_SECRET, inboundFrom, poll, statusFor, subscribeConversationEvents, waitForDeliveries, widgetConversation } from './reply-fixtures.ts';

let service: TestService;
let fake: FakeMessagingProvider;
let receiver: WebhookReceiver;
let account: { userId: string; apiKey: string };
let phoneNumberId: string;
let sequence = 0;

beforeAll(async () => {
  fake = await startFakeMessagingProvider();
  receiver = await startWebhookReceiver();
  service = await startTestService({ env: { MESSAGING_API_URL: fake.url, MESSAGING_APP_SECRET: APP_SECRET, ...MESSAGING_ALLOW_HOSTS } });
});
afterAll(async () => {
  await service?.stop();
  await receiver?.close();
  await fake?.close();
});
beforeEach(async () => {
  fake.answerSendsWith(null);
  account = await service.createAccount({ credits: 100 });
  sequence += 1;
  phoneNumberId = `pn-replies-${process.pid}-${sequence}`;
  await connectAccount(service, fake, account.userId, { phoneNumberId, token: `token-replies-${sequence}` });
  await subscribeConversationEvents(service, account.userId, receiver);
});

function reply(contactId: string, body: Record<string, unknown>) {
  return service.request('POST', `/v1/contacts/${contactId}/messages`, { apiKey: account.apiKey, body });
}

/** A WhatsApp contact of the account; with `open`, it wrote through the provider, so its window is open. */
async function whatsappContact(open: boolean): Promise<{ contactId: string; phoneNumber: string }> {
  const phoneNumber = nextPhoneNumber();
  const created = await service.request('POST', '/v1/contacts', { apiKey: account.apiKey, body: { phoneNumber } });
  expect(created.status, created.text).toBe(200);
  if (open) await inboundFrom(service, phoneNumberId, phoneNumber, 'Is the shop open on Sunday?');
  return { contactId: created.body.data.contactId, phoneNumber };
}

describe('to a chat-widget visitor', () => {
  test('201 with the stored reply; the socket hears it, the poll shows it as outbound-api, and New Message is delivered', async () => {
    const conversation = await widgetConversation(service, account);
    const visitor = await connectVisitor(service.origin, { configId: conversation.widgetId, visitorId: conversation.visitorId });
    try {
      const answer = await reply(conversation.contactId, { text: 'A person here: yes, we are open.' });
      expect(answer.status, answer.text).toBe(201);
      expect(answer.body).toEqual({
        success: true,
        data: { id: expect.stringMatching(/^msg_/), body: 'A person here: yes, we are open.', direction: 'outbound-api', channel: 'chat_widget', status: 'sent', timestamp: expect.any(String) },
      });
      const id = answer.body.data.id;

      const heard = await visitor.waitFor((entry) => entry.name === 'message' && (entry.payload as { messageSid: string }).messageSid === id);
      expect(heard.at(-1)!.payload).toMatchObject({ body: 'A person here: yes, we are open.', direction: 'outbound-api' });
      const shown = (await poll(service, conversation.widgetId, conversation.visitorId)).messages;
      expect(shown.at(-1)).toMatchObject({ messageSid: id, direction: 'outbound-api', body: 'A person here: yes, we are open.' });

      const delivered = await waitForDeliveries(receiver, account.userId, (all) => all.some((d) => d.event === 'New Message' && d.data.message.id === id));
      expect(delivered.find((d) => d.data.message?.id === id)!.data.contact.id).toBe(conversation.contactId);
      // Replies go out free on the widget.
      expect(await creditsOf(service, account.userId)).toBe(100);
    } finally {
      visitor.close();
    }
  });

  test('the text is required (1 to 4096 characters) and media_url goes with media_content_type', async () => {
    const conversation = await widgetConversation(service, account);
    for (const body of [{}, { text: '' }, { text: 'x'.repeat(4097) }, { text: 'pic', media_url: 'https://cdn.example/a.png' }, { text: 'pic', media_content_type: 'image/png' }]) {
      const answer = await reply(conversation.contactId, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body).toMatchObject({ success: false, error: expect.any(String) });
    }
    expect((await poll(service, conversation.widgetId, conversation.visitorId)).messages).toHaveLength(2);
    expect((await reply('ct_nope', { text: 'hi' })).status).toBe(404);
  });
});

describe('to a WhatsApp contact', () => {
  test('inside the window: one credit, the provider gets the text, statuses delivered and read move it on (Deliveries, Reads), the next inbound message emits Replies', async () => {
    const { contactId, phoneNumber } = await whatsappContact(true);
    const before = fake.sends().length;

    const answer = await reply(contactId, { text: 'Yes, 10:00 to 16:00.' });
    expect(answer.status, answer.text).toBe(201);
    expect(answer.body.data).toMatchObject({ body: 'Yes, 10:00 to 16:00.', direction: 'outbound-api', channel: 'whatsapp', status: 'sent' });
    const id = answer.body.data.id;

    const sends = fake.sends().slice(before);
    expect(sends).toHaveLength(1);
    expect(sends[0]!.path).toBe(`/v21.0/${phoneNumberId}/messages`);
    expect(sends[0]!.body).toEqual({ messaging_product: 'whatsapp', to: phoneNumber.slice(1), type: 'text', text: { body: 'Yes, 10:00 to 16:00.' } });
    expect(await creditsOf(service, account.userId)).toBe(99);
    expect(await eventsOf(service, account.userId, 'Credits Spent')).toEqual([expect.objectContaining({ data: { amount: 1, reason: 'session_message', balance: 99 } })]);

    const stored = (await messagesOf(service, contactId)).find((row) => row.id === id)!;
    expect(stored.provider_message_id).toMatch(/^wamid\.fake\./);
    await statusFor(service, phoneNumberId, stored.provider_message_id, 'delivered');
    await statusFor(service, phoneNumberId, stored.provider_message_id, 'read');
    expect((await messagesOf(service, contactId)).find((row) => row.id === id)!.status).toBe('read');

    await inboundFrom(service, phoneNumberId, phoneNumber, 'Thanks!');
    const delivered = await waitForDeliveries(receiver, account.userId, (all) =>
      ['Deliveries', 'Reads', 'Replies'].every((name) => all.some((d) => d.event === name)) && all.some((d) => d.event === 'New Message' && d.data.message.id === id),
    );
    expect(delivered.find((d) => d.event === 'Deliveries')!.data.message.id).toBe(id);
    expect(delivered.find((d) => d.event === 'Reads')!.data.message.id).toBe(id);
    expect(delivered.find((d) => d.event === 'Replies')!.data.in_reply_to).toBe(id);
  });

  test('media goes by link with the text as its caption', async () => {
    const { contactId } = await whatsappContact(true);
    const before = fake.sends().length;
    const answer = await reply(contactId, { text: 'The menu', media_url: 'https://cdn.example/menu.pdf', media_content_type: 'application/pdf' });
    expect(answer.status, answer.text).toBe(201);
    const [sent] = fake.sends().slice(before);
    expect(sent!.body).toMatchObject({ type: 'document', document: { link: 'https://cdn.example/menu.pdf', caption: 'The menu' } });
    expect((await messagesOf(service, contactId)).find((row) => row.id === answer.body.data.id)).toMatchObject({ media_url: 'https://cdn.example/menu.pdf', media_content_type: 'application/pdf' });
  });

  test('outside the window: 409 chat_window_closed, nothing sent, charged or stored', async () => {
    const { contactId } = await whatsappContact(false);
    const before = fake.sends().length;
    const answer = await reply(contactId, { text: 'Hello?' });
    expect(answer.status, answer.text).toBe(409);
    expect(answer.body).toEqual({ success: false, error: expect.stringContaining('window'), error_code: 'chat_window_closed' });
    expect(fake.sends().length).toBe(before);
    expect(await creditsOf(service, account.userId)).toBe(100);
    expect(await messagesOf(service, contactId)).toEqual([]);
  });

  test('after the 24 hours, before the close job has marked the window closed: 409 chat_window_closed, nothing sent, charged or stored', async () => {
    const { contactId } = await whatsappContact(true);
    // The close job passes over contacts another transaction has locked (for update skip
    // locked): a key-share lock, which lets updates through, keeps it from closing this
    // window while the reply is made, whenever its minute comes round.
    const holder = await service.services.pool.connect();
    let held = true;
    const release = async () => {
      if (!held) return;
      held = false;
      await holder.query('rollback');
      holder.release();
    };
    try {
      await holder.query('begin');
      await holder.query('select 1 from contacts where id = $1 for key share', [contactId]);
      // The contact last wrote 25 hours ago: its message and the end of its window move back.
      await service.services.pool.query(`update messages set created_at = created_at - interval '25 hours' where contact_id = $1`, [contactId]);
      await service.services.pool.query(`update contacts set chat_window_expires_at = chat_window_expires_at - interval '25 hours' where id = $1`, [contactId]);
      // A reply wrongly sent would wait on the lock to be stored: let it through, to see its answer.
      fake.answerSendsWith(() => void release());
      const before = fake.sends().length;

      const answer = await reply(contactId, { text: 'Still there?' });
      expect(answer.status, answer.text).toBe(409);
      expect(answer.body).toEqual({ success: false, error: expect.stringContaining('window'), error_code: 'chat_window_closed' });
      expect(fake.sends().length).toBe(before);
      // The window had run out without the close job marking it so.
      const { rows } = await service.services.pool.query('select is_chat_window_open, chat_window_expires_at < now() as ended from contacts where id = $1', [contactId]);
      expect(rows).toEqual([{ is_chat_window_open: true, ended: true }]);
    } finally {
      await release();
    }
    expect(await creditsOf(service, account.userId)).toBe(100);
    expect(await eventsOf(service, account.userId, 'Credits Spent')).toEqual([]);
    expect((await messagesOf(service, contactId)).map((row) => row.direction)).toEqual(['inbound']);
  });

  test('402 when the account has no credit left, nothing sent or stored', async () => {
    const { contactId } = await whatsappContact(true);
    await service.services.pool.query('update accounts set credits = 0 where id = $1', [account.userId]);
    const before = fake.sends().length;
    const answer = await reply(contactId, { text: 'Hello' });
    expect(answer.status, answer.text).toBe(402);
    expect(fake.sends().length).toBe(before);
    expect((await messagesOf(service, contactId)).filter((row) => row.direction !== 'inbound')).toEqual([]);
  });

  test("a provider refusal is 400 with the provider's reason; the credit comes back and nothing is stored", async () => {
    const { contactId } = await whatsappContact(true);
    fake.answerSendsWith(() => ({ status: 400, body: { error: { message: 'Re-engagement message', code: 131047, type: 'OAuthException' } } }));
    const answer = await reply(contactId, { text: 'Hello' });
    expect(answer.status, answer.text).toBe(400);
    expect(answer.body).toMatchObject({ success: false, error: expect.stringContaining('Re-engagement message') });
    expect(await creditsOf(service, account.userId)).toBe(100);
    expect(await eventsOf(service, account.userId, 'Credits Spent')).toEqual([]);
    expect((await messagesOf(service, contactId)).filter((row) => row.direction !== 'inbound')).toEqual([]);
    const { rows } = await service.services.pool.query('select 1 from credit_reservations where account_id = $1', [account.userId]);
    expect(rows).toEqual([]);
  });

  test('a provider that fails is 500 saying nothing was sent or charged; the credit comes back', async () => {
    const { contactId } = await whatsappContact(true);
    fake.answerSendsWith(() => ({ status: 503, body: { error: { message: 'Service temporarily unavailable', code: 2 } } }));
    const answer = await reply(contactId, { text: 'Hello' });
    expect(answer.status, answer.text).toBe(500);
    expect(answer.body).toMatchObject({ success: false, error: 'The messaging provider did not answer; nothing was sent or charged' });
    expect(await creditsOf(service, account.userId)).toBe(100);
    expect((await messagesOf(service, contactId)).filter((row) => row.direction !== 'inbound')).toEqual([]);
  });

  test('403 without provider credentials; 400 for a contact with no channel to reply on', async () => {
    const { contactId } = await whatsappContact(true);
    await service.services.pool.query('delete from messaging_connections where account_id = $1', [account.userId]);
    const answer = await reply(contactId, { text: 'Hello' });
    expect(answer.status, answer.text).toBe(403);
    expect(await creditsOf(service, account.userId)).toBe(100);

    await service.services.pool.query('update contacts set phone_number = null where id = $1', [contactId]);
    const nowhere = await reply(contactId, { text: 'Hello' });
    expect(nowhere.status, nowhere.text).toBe(400);
    expect(nowhere.body.error).toMatch(/no channel/);
  });
});
