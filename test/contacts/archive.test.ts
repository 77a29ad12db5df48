// Archiving contacts over real HTTPS (contract "Conversations both ways"): archived contacts
// leave GET /contacts pages unless archived=true is asked for; lookups still find them;
// unarchiving, by the call or by a new inbound message from the contact, emits Contact
// Unarchived, delivered to a real webhook receiver.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { recordInboundMessage } from '../../server/messaging/callbacks/record-inbound-message.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { createContact, subscribe, WEBHOOK_ENV } from '../webhooks/webhook-fixtures.ts';

let service: TestService;
let receiver: WebhookReceiver;
beforeAll(async () => {
  service = await startTestService({ env: WEBHOOK_ENV });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await service?.stop();
});

const unarchivedOf = (accountId: string) => (requests: WebhookReceiver['requests']) =>
  requests.filter((request) => request.headers['x-webhook-event'] === 'Contact Unarchived' && JSON.parse(request.body).user?.id === accountId);

async function unarchivedEvents(accountId: string): Promise<any[]> {
  const { rows } = await service.services.pool.query<{ payload: any }>(
    `select payload from events where account_id = $1 and name = 'Contact Unarchived' order by id`,
    [accountId],
  );
  return rows.map((row) => row.payload);
}

function archive(apiKey: string, contactId: string, action: 'archive' | 'unarchive') {
  return service.request('POST', `/contacts/${contactId}/${action}`, { apiKey });
}

async function pageIds(apiKey: string, query: Record<string, string | number>): Promise<string[]> {
  const response = await service.request('GET', '/contacts', { apiKey, query });
  expect(response.status).toBe(200);
  return response.body.contacts.map((contact: { id: string }) => contact.id);
}

describe('POST /contacts/{contactId}/archive and /unarchive', () => {
  test('archive answers 200 {success, data: {contactId, archived: true}}; unarchive {archived: false} and emits Contact Unarchived, delivered', async () => {
    const account = await service.createAccount();
    await subscribe(service, account.userId, { url: receiver.url, events: ['Contact Unarchived'] });
    const contactId = await createContact(service, account.apiKey);

    const archived = await archive(account.apiKey, contactId, 'archive');
    expect(archived.status).toBe(200);
    expect(archived.body).toEqual({ success: true, data: { contactId, archived: true } });
    // Archiving twice is still archived; the spec has no event for archiving.
    expect((await archive(account.apiKey, contactId, 'archive')).body).toEqual({ success: true, data: { contactId, archived: true } });
    expect(await unarchivedEvents(account.userId)).toEqual([]);

    const unarchived = await archive(account.apiKey, contactId, 'unarchive');
    expect(unarchived.status).toBe(200);
    expect(unarchived.body).toEqual({ success: true, data: { contactId, archived: false } });

    const [delivered] = unarchivedOf(account.userId)(await receiver.waitFor((all) => unarchivedOf(account.userId)(all).length >= 1));
    const payload = JSON.parse(delivered.body);
    expect(payload).toMatchObject({
      event: 'Contact Unarchived',
      user: { id: account.userId },
      data: { contact: { id: contactId, phone_number: expect.stringMatching(/^\+1415555/) }, unarchived_by: 'api' },
    });
  });

  test('Contact Unarchived once per unarchive: unarchiving a contact that is not archived emits nothing', async () => {
    const account = await service.createAccount();
    const contactId = await createContact(service, account.apiKey);
    expect((await archive(account.apiKey, contactId, 'unarchive')).body).toEqual({ success: true, data: { contactId, archived: false } });
    expect(await unarchivedEvents(account.userId)).toEqual([]);

    await archive(account.apiKey, contactId, 'archive');
    const twice = await Promise.all([archive(account.apiKey, contactId, 'unarchive'), archive(account.apiKey, contactId, 'unarchive')]);
    expect(twice.map((response) => response.status)).toEqual([200, 200]);
    expect(await unarchivedEvents(account.userId)).toHaveLength(1);
  });

  test("an unknown contact or another account's contact is 404", async () => {
    const owner = await service.createAccount();
    const other = await service.createAccount();
    const contactId = await createContact(service, owner.apiKey);
    for (const action of ['archive', 'unarchive'] as const) {
      for (const [apiKey, id] of [
        [other.apiKey, contactId],
        [owner.apiKey, 'ct_unknown'],
      ]) {
        const response = await archive(apiKey, id, action);
        expect(response.status).toBe(404);
        expect(response.body).toEqual({ success: false, error: 'Contact not found', error_code: 404 });
      }
    }
    await archive(owner.apiKey, contactId, 'archive');
    expect((await archive(other.apiKey, contactId, 'unarchive')).status).toBe(404);
    expect(await unarchivedEvents(owner.userId)).toEqual([]);
  });
});

describe('GET /contacts with archived contacts', () => {
  test('archived contacts leave the pages; archived=true pages through the archived ones only; a lookup still finds them', async () => {
    const account = await service.createAccount();
    const [kept, gone, alsoKept] = [await createContact(service, account.apiKey), await createContact(service, account.apiKey), await createContact(service, account.apiKey)];
    await archive(account.apiKey, gone, 'archive');

    expect(await pageIds(account.apiKey, { limit: 10 })).toEqual([kept, alsoKept]);
    expect(await pageIds(account.apiKey, { archived: 'false' })).toEqual([kept, alsoKept]);
    expect(await pageIds(account.apiKey, { archived: 'true' })).toEqual([gone]);

    // Pages of one contact each: the cursor walks the unarchived ones only.
    const first = await service.request('GET', '/contacts', { apiKey: account.apiKey, query: { limit: 1 } });
    expect(first.body.contacts.map((c: { id: string }) => c.id)).toEqual([kept]);
    const second = await service.request('GET', '/contacts', { apiKey: account.apiKey, query: { limit: 1, cursor: first.body.next_cursor } });
    expect(second.body.contacts.map((c: { id: string }) => c.id)).toEqual([alsoKept]);
    // A cursor of one listing is not accepted by the other.
    const crossed = await service.request('GET', '/contacts', { apiKey: account.apiKey, query: { limit: 1, archived: 'true', cursor: first.body.next_cursor } });
    expect(crossed.status).toBe(400);

    const { rows } = await service.services.pool.query<{ phone_number: string }>('select phone_number from contacts where id = $1', [gone]);
    const lookup = await service.request('GET', '/contacts', { apiKey: account.apiKey, query: { phoneNumber: rows[0].phone_number } });
    expect(lookup.status).toBe(200);
    expect(lookup.body).toEqual({ success: true, contactId: gone });

    await archive(account.apiKey, gone, 'unarchive');
    expect(await pageIds(account.apiKey, { limit: 10 })).toEqual([kept, gone, alsoKept]);
    expect(await pageIds(account.apiKey, { archived: 'true' })).toEqual([]);
  });

  test('archived must be true or false (400)', async () => {
    const account = await service.createAccount();
    const response = await service.request('GET', '/contacts', { apiKey: account.apiKey, query: { archived: 'maybe' } });
    expect(response.status).toBe(400);
  });
});

describe('a new inbound message unarchives the contact', () => {
  test("a chat-widget visitor's next message unarchives the visitor's contact and emits Contact Unarchived, delivered", async () => {
    const account = await service.createAccount();
    await subscribe(service, account.userId, { url: receiver.url, events: ['Contact Unarchived'] });
    const widget = await service.request('POST', '/chat-widgets', { apiKey: account.apiKey, body: { name: 'Site', settings: {} } });
    expect(widget.status).toBe(201);
    const fromId = `v_${randomUUID().replaceAll('-', '')}`;
    const send = (body: string) =>
      service.request('POST', '/incoming-chat-widget-message', {
        query: { userId: account.userId },
        body: { customData: { body, fromId, toId: widget.body.data.id }, messageType: 'text' },
      });

    expect((await send('hello')).status).toBe(200);
    const { rows } = await service.services.pool.query<{ id: string }>('select id from contacts where account_id = $1 and widget_visitor_id = $2', [account.userId, fromId]);
    const contactId = rows[0].id;
    // A message from a contact that is not archived unarchives nothing.
    expect((await send('still here')).status).toBe(200);
    expect(await unarchivedEvents(account.userId)).toEqual([]);

    await archive(account.apiKey, contactId, 'archive');
    expect(await pageIds(account.apiKey, { archived: 'true' })).toEqual([contactId]);
    expect((await send('back again')).status).toBe(200);

    expect(await pageIds(account.apiKey, { archived: 'true' })).toEqual([]);
    expect(await pageIds(account.apiKey, { limit: 10 })).toEqual([contactId]);
    const [delivered] = unarchivedOf(account.userId)(await receiver.waitFor((all) => unarchivedOf(account.userId)(all).length >= 1));
    expect(JSON.parse(delivered.body)).toMatchObject({ event: 'Contact Unarchived', data: { contact: { id: contactId }, unarchived_by: 'inbound_message' } });
    expect(await unarchivedEvents(account.userId)).toHaveLength(1);
  });

  test('a WhatsApp message from an archived contact unarchives it (Contact Unarchived once)', async () => {
    const account = await service.createAccount();
    const contactId = await createContact(service, account.apiKey);
    const { rows } = await service.services.pool.query<{ phone_number: string }>('select phone_number from contacts where id = $1', [contactId]);
    await archive(account.apiKey, contactId, 'archive');

    const inbound = { providerMessageId: `wamid.${randomUUID()}`, from: rows[0].phone_number.slice(1), type: 'text', body: 'hi', sentAt: new Date() };
    expect(await recordInboundMessage(service.services.orm.em.fork(), account.userId, inbound)).toMatchObject({ recorded: true, contactId });
    // The provider retrying the same callback stores nothing and unarchives nothing again.
    expect(await recordInboundMessage(service.services.orm.em.fork(), account.userId, inbound)).toEqual({ recorded: false, reason: 'duplicate' });

    const events = await unarchivedEvents(account.userId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ data: { contact: { id: contactId }, unarchived_by: 'inbound_message' }, user: { id: account.userId } });
    expect(await pageIds(account.apiKey, { limit: 10 })).toEqual([contactId]);
  });
});
