// What the reply and hand-off tests share: a service with the fake messaging provider, signed
// provider callbacks (an inbound message opens the 24-hour window; statuses move a message
// on), a webhook receiver subscribed to the conversation events, and a widget visitor whose
// first message the bot has answered.
import { createHmac, randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import type { WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { eventually } from '../messaging/send-template-fixtures.ts';
import { subscribe } from '../webhooks/webhook-fixtures.ts';

export const APP_SECRET = 'app-secret-for-conversations';
export const CONVERSATION_EVENTS = ['New Message', 'Replies', 'Deliveries', 'Reads', 'Contact Paused', 'Human Alerted', 'Credits Spent'];

function seconds(date = new Date()): string {
  return String(Math.floor(date.getTime() / 1000));
}

/** A provider callback signed with the app secret, as the provider posts it. */
export async function postCallback(service: TestService, phoneNumberId: string, value: Record<string, unknown>) {
  const payload = {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: 'waba-1',
        changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata: { display_phone_number: '15550000000', phone_number_id: phoneNumberId }, ...value } }],
      },
    ],
  };
  const rawBody = JSON.stringify(payload);
  const signature = `sha256=${createHmac('sha256', APP_SECRET).update(rawBody).digest('hex')}`;
  const response = await service.request('POST', '/provider-callbacks/whatsapp', { rawBody, headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature } });
  expect(response.status, response.text).toBe(200);
}

/** The contact writes through the provider: stored inbound, and its 24-hour window opens. */
export async function inboundFrom(service: TestService, phoneNumberId: string, phoneNumber: string, body: string): Promise<void> {
  const from = phoneNumber.replace(/\D/g, '');
  await postCallback(service, phoneNumberId, {
    messages: [{ from, id: `wamid.in.${randomUUID()}`, timestamp: seconds(), type: 'text', text: { body } }],
  });
}

export async function statusFor(service: TestService, phoneNumberId: string, providerMessageId: string, status: string): Promise<void> {
  await postCallback(service, phoneNumberId, { statuses: [{ id: providerMessageId, status, timestamp: seconds(), recipient_id: '14155550000' }] });
}

/** Subscribes the receiver to the conversation events of the account. */
export async function subscribeConversationEvents(service: TestService, accountId: string, receiver: WebhookReceiver): Promise<void> {
  await subscribe(service, accountId, { url: receiver.url, events: CONVERSATION_EVENTS });
}

export type Delivered = { event: string; data: Record<string, any> };

/** The events the receiver got for the account, in arrival order. */
export function deliveredTo(receiver: WebhookReceiver, accountId: string): Delivered[] {
  return receiver.requests.map((request) => JSON.parse(request.body)).filter((payload) => payload.user?.id === accountId);
}

/** Waits until the receiver got events for the account that satisfy `done`. */
export async function waitForDeliveries(receiver: WebhookReceiver, accountId: string, done: (delivered: Delivered[]) => boolean): Promise<Delivered[]> {
  return eventually(async () => deliveredTo(receiver, accountId), done);
}

export type WidgetConversation = { widgetId: string; visitorId: string; contactId: string };

export type ConversationPoll = { messages: Array<{ messageSid: string; body: string; direction: string; sender_name: string | null }>; isBotTyping: boolean };

export async function poll(service: TestService, widgetId: string, visitorId: string): Promise<ConversationPoll> {
  const response = await service.request('GET', '/v1/chat-widget-messages', { query: { fromId: visitorId, toId: widgetId } });
  expect(response.status, response.text).toBe(200);
  return response.body;
}

/** Polls the visitor's conversation until `done` holds. */
export function pollUntil(service: TestService, widgetId: string, visitorId: string, done: (body: ConversationPoll) => boolean): Promise<ConversationPoll> {
  return eventually(() => poll(service, widgetId, visitorId), done);
}

/** The visitor writes through the widget; with `identityToken`, as the site user it names (X-Visitor-Identity). */
export async function visitorWrites(service: TestService, accountId: string, widgetId: string, visitorId: string, body: string, identityToken?: string): Promise<void> {
  const sent = await service.request('POST', '/v1/incoming-chat-widget-message', {
    query: { userId: accountId },
    body: { customData: { body, fromId: visitorId, toId: widgetId }, messageType: 'text' },
    headers: identityToken ? { 'x-visitor-identity': identityToken } : {},
  });
  expect(sent.status, sent.text).toBe(200);
}

/** A widget (with `settings`) whose visitor wrote once and got the greeting. */
export async function widgetConversation(service: TestService, account: { userId: string; apiKey: string }, settings: Record<string, unknown> = {}): Promise<WidgetConversation> {
  const widget = await service.request('POST', '/v1/chat-widgets', { apiKey: account.apiKey, body: { name: 'Site', settings } });
  expect(widget.status, widget.text).toBe(201);
  const widgetId = widget.body.data.id;
  const visitorId = `v_${randomUUID().replaceAll('-', '')}`;
  await visitorWrites(service, account.userId, widgetId, visitorId, 'hello');
  await pollUntil(service, widgetId, visitorId, (body) => !body.isBotTyping && body.messages.length === 2);
  const { rows } = await service.services.pool.query<{ id: string }>('select id from contacts where widget_visitor_id = $1', [visitorId]);
  return { widgetId, visitorId, contactId: rows[0]!.id };
}
