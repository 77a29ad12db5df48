// "Events, webhook deliveries and subscription frames never carry a widget visitor id (it is
// the visitor's credential); they name the contact." Over real HTTPS, a real webhook
// receiver and a real /trpc WebSocket: the visitor id string occurs nowhere in what an
// account's credential holders receive.
import { randomUUID } from 'node:crypto';
import { expect, test } from 'vitest';
import { Migration20261128031500_events_without_visitor_id as ScrubMigration } from '../../server/db/migrations/Migration20261128031500_events_without_visitor_id.ts';
import { serviceForFile, type TestAccount } from '../helpers/service-for-file.ts';
import type { TestService } from '../helpers/service.ts';
import { openRawTrpcSocket } from '../helpers/trpc-socket.ts';
import { startWebhookReceiver } from '../helpers/webhook-receiver.ts';
import { subscribe, WEBHOOK_ENV } from '../webhooks/webhook-fixtures.ts';

let service: TestService;
let account: TestAccount;
serviceForFile({ start: { env: WEBHOOK_ENV }, accounts: [{}] }, (started) => {
  service = started.service;
  [account] = started.accounts as [TestAccount];
});

async function newWidget(): Promise<string> {
  const created = await service.request('POST', '/chat-widgets', { apiKey: account.apiKey, body: { name: 'Site', settings: { greeting: 'Hello from the bot' } } });
  expect(created.status).toBe(201);
  return created.body.data.id;
}

function sendAsVisitor(widgetId: string, visitorId: string, body: string) {
  return service.request('POST', '/incoming-chat-widget-message', {
    query: { userId: account.userId },
    body: { messageType: 'text', customData: { body, fromId: visitorId, toId: widgetId } },
  });
}

async function contactOf(visitorId: string): Promise<string> {
  const { rows } = await service.services.pool.query<{ id: string }>('select id from contacts where widget_visitor_id = $1', [visitorId]);
  return rows[0]!.id;
}

test('a webhook receiver gets Contact Created for a widget visitor naming the contact, with the visitor id nowhere in the body', async () => {
  const receiver = await startWebhookReceiver();
  try {
    await subscribe(service, account.userId, { url: receiver.url, events: ['Contact Created'] });
    const widgetId = await newWidget();
    const visitorId = `v_${randomUUID().replaceAll('-', '')}`;
    expect((await sendAsVisitor(widgetId, visitorId, 'hello')).status).toBe(200);

    const [delivery] = await receiver.waitFor(1);
    const contactId = await contactOf(visitorId);
    expect(delivery!.headers['x-webhook-event']).toBe('Contact Created');
    expect(JSON.parse(delivery!.body).data.contact).toEqual({ id: contactId, phone_number: null, email: null, lists: [], chat_widget_id: widgetId });
    expect(delivery!.body).not.toContain(visitorId);
    // Nor does the stored event, which retries and replays send again.
    const { rows } = await service.services.pool.query<{ payload: string }>(
      `select payload::text from events where account_id = $1 and name = 'Contact Created'`,
      [account.userId],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.payload).not.toContain(visitorId);
  } finally {
    await receiver.close();
  }
});

test("an onConversationEvent frame (a read-only Chat Widget key's WebSocket) names the contact, with the visitor id nowhere in it", async () => {
  const widgetId = await newWidget();
  const visitorId = `v_${randomUUID().replaceAll('-', '')}`;
  const readOnlyKey = await service.createScopedKey(account.userId, { tags: ['Chat Widget'] });
  const socket = await openRawTrpcSocket(service.origin, { apiKey: readOnlyKey });
  try {
    socket.send({ id: 1, method: 'subscription', params: { path: 'chatWidgets.onConversationEvent', input: { widgetId } } });
    await socket.waitFor((frame) => frame.id === 1 && frame.result?.type === 'started');
    expect((await sendAsVisitor(widgetId, visitorId, 'hello from the visitor')).status).toBe(200);

    // The visitor's message, then the bot's greeting: every frame up to the greeting is checked.
    await socket.waitFor((frame) => frame.result?.data?.message?.body === 'Hello from the bot');
    const contactId = await contactOf(visitorId);
    const events = socket.frames.filter((frame) => frame.result?.type === 'data').map((frame) => frame.result!.data);
    expect(events.filter((event) => event.kind === 'message').map((event) => event.message.body)).toEqual(['hello from the visitor', 'Hello from the bot']);
    for (const event of events) expect(event).toMatchObject({ accountId: account.userId, widgetId, contactId });
    expect(JSON.stringify(socket.frames)).not.toContain(visitorId);
  } finally {
    await socket.close();
  }
});

test('Contact Created events stored with a visitor id lose it when the service is upgraded', async () => {
  const visitorId = `v_${randomUUID().replaceAll('-', '')}`;
  const payload = { event: 'Contact Created', data: { contact: { id: 'ct_stored', phone_number: null, lists: [], chat_widget_id: 'cw_stored', widget_visitor_id: visitorId } } };
  await service.services.pool.query(`insert into events (id, account_id, name, payload, dispatched_at) values ('evt_stored_visitor', $1, 'Contact Created', $2, now())`, [
    account.userId,
    JSON.stringify(payload),
  ]);
  const orm = service.services.orm;
  const migration = new ScrubMigration(orm.em.getDriver(), orm.config);
  await migration.up();
  for (const query of migration.getQueries()) await service.services.pool.query(String(query));
  const { rows } = await service.services.pool.query<{ payload: any }>(`select payload from events where id = 'evt_stored_visitor'`);
  expect(rows[0]!.payload.data.contact).toEqual({ id: 'ct_stored', phone_number: null, lists: [], chat_widget_id: 'cw_stored' });
});
