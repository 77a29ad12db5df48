// What a team's inbox reads, over real HTTPS (contract "A team on the conversations"): GET
// /chat-sessions/recent leaves archived contacts' sessions out unless archived=true, lists by
// newest activity, and says per session whether the bot is on, the last message and what is
// unread after the business's read mark (POST /contacts/{contactId}/read); GET
// /contacts/{contactId} shows one contact, with what a chat-widget visitor's page reported.
import { describe, expect, test } from 'vitest';
import { visitorSuffix } from '../../server/contacts/contact-name.ts';
import { serviceForFile } from '../helpers/service-for-file.ts';
import type { TestService } from '../helpers/service.ts';
import { createContact, eventsOf, record } from './conversation-fixtures.ts';
import { widgetConversation } from './reply-fixtures.ts';

let service: TestService;
serviceForFile({}, (started) => {
  service = started.service;
});

type Account = { userId: string; apiKey: string };
type RecentItem = Record<string, any> & { session_id: string; contact_id: string };

async function recent(account: Account, query: Record<string, string | number> = {}): Promise<{ data: RecentItem[]; next_cursor: string | null }> {
  const response = await service.request('GET', '/chat-sessions/recent', { apiKey: account.apiKey, query });
  expect(response.status, response.text).toBe(200);
  return response.body;
}

/** Every page of the listing, `limit` at a time, in order. */
async function allPages(account: Account, limit: number, query: Record<string, string> = {}): Promise<RecentItem[]> {
  const items: RecentItem[] = [];
  let cursor: string | null = null;
  do {
    const page = await recent(account, { ...query, limit, ...(cursor ? { cursor } : {}) });
    items.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor !== null);
  return items;
}

async function widgetOf(account: Account): Promise<string> {
  const widget = await service.request('POST', '/chat-widgets', { apiKey: account.apiKey, body: { name: 'Site', settings: {} } });
  expect(widget.status, widget.text).toBe(201);
  return widget.body.data.id;
}

let visitorCounter = 0;
function newVisitorId(): string {
  visitorCounter += 1;
  return `inboxvisitor${process.pid}x${visitorCounter}x${Date.now()}`;
}

/** A visitor message through the public endpoint, with what the page reports and the browser's User-Agent. */
async function visitorWrites(account: Account, widgetId: string, visitorId: string, body: string, page: Record<string, string> = {}, userAgent?: string) {
  return service.request('POST', '/v1/incoming-chat-widget-message', {
    query: { userId: account.userId },
    body: { messageType: 'text', customData: { body, fromId: visitorId, toId: widgetId, ...page } },
    headers: userAgent ? { 'user-agent': userAgent } : {},
  });
}

async function visitorContactId(visitorId: string): Promise<string> {
  const { rows } = await service.services.pool.query<{ id: string }>('select id from contacts where widget_visitor_id = $1', [visitorId]);
  expect(rows).toHaveLength(1);
  return rows[0]!.id;
}

describe('GET /chat-sessions/recent', () => {
  test("archived contacts' sessions are left out unless archived=true, which lists only theirs; each says whether the bot is on and whether its contact is archived", async () => {
    const account = await service.createAccount();
    const active = await createContact(service, account.apiKey, { firstName: 'Ada' });
    const paused = await createContact(service, account.apiKey, { firstName: 'Bea' });
    const gone = await createContact(service, account.apiKey, { firstName: 'Cy' });
    const goneToo = await createContact(service, account.apiKey, { firstName: 'Di' });
    for (const contact of [active, paused, gone, goneToo]) await record(service, account.userId, contact.contactId, 'inbound', 'hello');
    expect((await service.request('PUT', `/contacts/${paused.contactId}`, { apiKey: account.apiKey, body: { is_bot_active: false } })).status).toBe(200);
    for (const contact of [gone, goneToo]) {
      expect((await service.request('POST', `/contacts/${contact.contactId}/archive`, { apiKey: account.apiKey })).status).toBe(200);
    }

    const listed = await recent(account);
    expect(listed.data.map((item) => [item.contact_id, item.is_bot_active, item.archived])).toEqual([
      [paused.contactId, false, false],
      [active.contactId, true, false],
    ]);
    const archived = await recent(account, { archived: 'true' });
    expect(archived.data.map((item) => [item.contact_id, item.is_bot_active, item.archived])).toEqual([
      [goneToo.contactId, true, true],
      [gone.contactId, true, true],
    ]);
    expect(await recent(account, { archived: 'false' })).toEqual(listed);

    // Each listing signs its own cursors.
    const firstArchived = await recent(account, { archived: 'true', limit: 1 });
    const crossed = await service.request('GET', '/chat-sessions/recent', { apiKey: account.apiKey, query: { cursor: firstArchived.next_cursor! } });
    expect(crossed.status).toBe(400);
    expect(crossed.body).toEqual({ success: false, error: 'Invalid cursor', error_code: 400 });

    // Unarchiving brings the sessions back.
    await service.request('POST', `/contacts/${gone.contactId}/unarchive`, { apiKey: account.apiKey });
    expect((await recent(account)).data.map((item) => item.contact_id)).toContain(gone.contactId);
  });

  test('newest activity first: a session that gets a message moves to the top, and paging by cursor visits every session once, in that order', async () => {
    const account = await service.createAccount();
    const contacts = [];
    for (let n = 0; n < 5; n += 1) contacts.push(await createContact(service, account.apiKey));
    const sessions: string[] = [];
    for (const contact of contacts) sessions.push((await record(service, account.userId, contact.contactId, 'inbound', 'first')).sessionId);
    // The second-oldest session is the latest to hear from its contact; the oldest gets a reply.
    await record(service, account.userId, contacts[1]!.contactId, 'inbound', 'again');
    await record(service, account.userId, contacts[0]!.contactId, 'outbound', 'a reply');
    const expected = [sessions[0], sessions[1], sessions[4], sessions[3], sessions[2]];

    expect((await recent(account)).data.map((item) => item.session_id)).toEqual(expected);
    for (const limit of [1, 2, 3]) expect((await allPages(account, limit)).map((item) => item.session_id), `limit ${limit}`).toEqual(expected);
  });

  test('the last message: its time, and its text on one line cut to 140 characters', async () => {
    const account = await service.createAccount();
    const { contactId } = await createContact(service, account.apiKey);
    await record(service, account.userId, contactId, 'inbound', 'Do you ship to Portugal?');
    const last = await record(service, account.userId, contactId, 'outbound', `Yes, we do.\n\nShipping takes  three days. ${'x'.repeat(300)}`);

    const [item] = (await recent(account)).data;
    expect(item!.last_message_at).toBe(last.message.createdAt.toISOString());
    expect(item!.last_message_preview).toBe(`Yes, we do. Shipping takes  three days. ${'x'.repeat(300)}`.slice(0, 140));
    expect(item!.last_message_preview).toHaveLength(140);
  });

  test('contact_name is never "Unknown Unknown": an unnamed visitor is "Visitor" and a suffix of its contact id, a contact without names its e-mail, else its phone number', async () => {
    const account = await service.createAccount();
    const widgetId = await widgetOf(account);
    const first = newVisitorId();
    const second = newVisitorId();
    for (const visitorId of [first, second]) expect((await visitorWrites(account, widgetId, visitorId, 'hi')).status).toBe(200);
    const byEmail = await createContact(service, account.apiKey, { email: 'noname@example.com' });
    await record(service, account.userId, byEmail.contactId, 'inbound', 'hello');
    const byPhone = await createContact(service, account.apiKey);
    await record(service, account.userId, byPhone.contactId, 'inbound', 'hello');

    const names = new Map((await recent(account)).data.map((item) => [item.contact_id, item.contact_name]));
    const firstId = await visitorContactId(first);
    const secondId = await visitorContactId(second);
    expect(names.get(firstId)).toBe(`Visitor ${visitorSuffix(firstId)}`);
    expect(names.get(secondId)).toBe(`Visitor ${visitorSuffix(secondId)}`);
    expect(names.get(firstId)).toMatch(/^Visitor [0-9a-f]{6}$/);
    expect(names.get(firstId)).not.toBe(names.get(secondId));
    expect(names.get(byEmail.contactId)).toBe('noname@example.com');
    expect(names.get(byPhone.contactId)).toBe(byPhone.phoneNumber);
    expect([...names.values()]).not.toContain('Unknown Unknown');
  });
});

describe("POST /contacts/{contactId}/read: the business's read mark", () => {
  test('unread_count counts the messages from the contact after the mark; marking answers 200 {success, data: {contactId, unread_count: 0}}', async () => {
    const account = await service.createAccount();
    const { contactId } = await createContact(service, account.apiKey);
    await record(service, account.userId, contactId, 'inbound', 'one');
    await record(service, account.userId, contactId, 'outbound', 'an answer');
    await record(service, account.userId, contactId, 'inbound', 'two');
    expect((await recent(account)).data[0]!.unread_count).toBe(2);

    const read = await service.request('POST', `/contacts/${contactId}/read`, { apiKey: account.apiKey });
    expect(read.status, read.text).toBe(200);
    expect(read.body).toEqual({ success: true, data: { contactId, unread_count: 0 } });
    expect((await recent(account)).data[0]!.unread_count).toBe(0);

    await record(service, account.userId, contactId, 'outbound', 'more from us');
    await record(service, account.userId, contactId, 'inbound', 'three');
    expect((await recent(account)).data[0]!.unread_count).toBe(1);
    // Reading announces nothing: it is the business's own bookkeeping.
    expect((await eventsOf(service, account.userId, 'Reads')).length).toBe(0);
  });

  test("read_at is the mark: null until read, then the time of the contact's newest message; a session begun after it has read_at before its start (nobody has opened it)", async () => {
    const account = await service.createAccount();
    const { contactId } = await createContact(service, account.apiKey);
    await record(service, account.userId, contactId, 'inbound', 'one');
    const newest = await record(service, account.userId, contactId, 'outbound', 'an answer');
    expect((await recent(account)).data[0]!.read_at).toBeNull();

    expect((await service.request('POST', `/contacts/${contactId}/read`, { apiKey: account.apiKey })).status).toBe(200);
    const [read] = (await recent(account)).data;
    expect(read!.read_at).toBe(newest.message.createdAt.toISOString());
    expect(read!.read_at! >= read!.start_date_time).toBe(true);

    const closed = await service.request('POST', `/contacts/${contactId}/chat-sessions/close`, { apiKey: account.apiKey });
    expect(closed.status, closed.text).toBe(200);
    await record(service, account.userId, contactId, 'inbound', 'a new question');
    const [fresh, old] = (await recent(account)).data;
    expect(fresh!.session_id).not.toBe(old!.session_id);
    expect([fresh!.read_at, fresh!.unread_count]).toEqual([read!.read_at, 1]);
    expect(fresh!.read_at! < fresh!.start_date_time).toBe(true);
  });

  test("404 for an unknown contact or another account's", async () => {
    const account = await service.createAccount();
    const other = await service.createAccount();
    const { contactId } = await createContact(service, other.apiKey);
    for (const id of [contactId, 'ct_nope']) {
      const response = await service.request('POST', `/contacts/${id}/read`, { apiKey: account.apiKey });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ success: false, error: 'Contact not found', error_code: 404 });
    }
  });
});

describe("a chat session's messages say who wrote them", () => {
  test('with includeMessages=true each message carries its sender, the sender_name a reply showed the visitor, and its media, in both session listings', async () => {
    const account = await service.createAccount();
    const { contactId } = await widgetConversation(service, account);
    const reply = await service.request('POST', `/contacts/${contactId}/messages`, {
      apiKey: account.apiKey,
      body: { text: 'Here is the map.', sender_name: 'Ana', media_url: 'https://cdn.example/map.png', media_content_type: 'image/png' },
    });
    expect(reply.status, reply.text).toBe(201);

    const expected = [
      ['hello', 'inbound', 'contact', null, null, null],
      [expect.any(String), 'outbound', 'bot', null, null, null],
      ['Here is the map.', 'outbound', 'api', 'Ana', 'https://cdn.example/map.png', 'image/png'],
    ];
    const shown = (messages: Record<string, unknown>[]) =>
      messages.map((message) => [message.body, message.direction, message.sender, message.sender_name, message.media_url, message.media_content_type]);
    const sessions = await service.request('GET', `/contacts/${contactId}/chat-sessions`, { apiKey: account.apiKey, query: { includeMessages: 'true' } });
    expect(sessions.status, sessions.text).toBe(200);
    expect(shown(sessions.body.data[0].messages)).toEqual(expected);
    const listed = await recent(account, { includeMessages: 'true' });
    expect(shown(listed.data[0]!.messages)).toEqual(expected);
  });
});

describe('GET /contacts/{contactId}', () => {
  test('200 {success, data}: the fields, flags and tag names of a contact that is not a widget visitor, whose widget is null', async () => {
    const account = await service.createAccount();
    const { contactId, phoneNumber } = await createContact(service, account.apiKey, { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' });
    for (const tag of ['vip', 'lead']) expect((await service.request('POST', '/tags', { apiKey: account.apiKey, query: { tag, phoneNumber } })).status).toBe(201);
    await service.request('PUT', `/contacts/${contactId}`, { apiKey: account.apiKey, body: { do_not_disturb: true } });

    const response = await service.request('GET', `/contacts/${contactId}`, { apiKey: account.apiKey });
    expect(response.status, response.text).toBe(200);
    expect(response.body).toEqual({
      success: true,
      data: {
        id: contactId,
        firstName: 'Ada',
        lastName: 'Lovelace',
        email: 'ada@example.com',
        phoneNumber,
        channel: null,
        is_bot_active: true,
        do_not_disturb: true,
        archived: false,
        tags: ['lead', 'vip'],
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        widget: null,
      },
    });
  });

  test("a visitor's widget block: the page, first referrer and language its page reported and the browser, first and last seen; never the visitor id", async () => {
    const account = await service.createAccount();
    const widgetId = await widgetOf(account);
    const visitorId = newVisitorId();
    const browser = 'Mozilla/5.0 (X11; Linux x86_64) InboxTest/1.0';
    const first = await visitorWrites(
      account,
      widgetId,
      visitorId,
      'hello',
      { pageUrl: 'https://shop.example/pricing', referrer: 'https://search.example/?q=shoes', language: 'pt-BR' },
      browser,
    );
    expect(first.status, first.text).toBe(200);
    expect((await visitorWrites(account, widgetId, visitorId, 'still here', { pageUrl: 'https://shop.example/checkout', referrer: 'https://shop.example/pricing' }, browser)).status).toBe(200);
    const contactId = await visitorContactId(visitorId);
    const { rows } = await service.services.pool.query<{ first: string; last: string }>(
      `select to_char(min(created_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as first,
              to_char(max(created_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as last
         from messages where contact_id = $1 and direction = 'inbound'`,
      [contactId],
    );

    const response = await service.request('GET', `/contacts/${contactId}`, { apiKey: account.apiKey });
    expect(response.status, response.text).toBe(200);
    expect(response.body).toEqual({
      success: true,
      data: {
        id: contactId,
        firstName: 'Unknown',
        lastName: 'Unknown',
        email: null,
        phoneNumber: null,
        channel: 'chat_widget',
        is_bot_active: true,
        do_not_disturb: false,
        archived: false,
        tags: [],
        created_at: expect.any(String),
        widget: {
          id: widgetId,
          name: 'Site',
          page_url: 'https://shop.example/checkout',
          referrer: 'https://search.example/?q=shoes',
          language: 'pt-BR',
          user_agent: browser,
          first_seen_at: rows[0]!.first,
          last_seen_at: rows[0]!.last,
        },
      },
    });
    expect(response.body.data.widget.first_seen_at < response.body.data.widget.last_seen_at).toBe(true);
    expect(response.text).not.toContain(visitorId);
  });

  test('the page details are checked: an address that is not http(s) or longer than 2,000 characters, or a language that is no tag, is 400 naming the field, and nothing is stored', async () => {
    const account = await service.createAccount();
    const widgetId = await widgetOf(account);
    const visitorId = newVisitorId();
    for (const [field, value] of [
      ['pageUrl', 'javascript:alert(1)'],
      ['pageUrl', `https://shop.example/${'a'.repeat(2000)}`],
      ['referrer', 'not a url'],
      ['language', 'en_US; drop table'],
    ]) {
      const response = await visitorWrites(account, widgetId, visitorId, 'hello', { [field!]: value! });
      expect(response.status, `${field}: ${response.text}`).toBe(400);
      expect(response.body.details).toEqual([expect.objectContaining({ path: `customData.${field}` })]);
    }
    const { rows } = await service.services.pool.query('select 1 from contacts where widget_visitor_id = $1', [visitorId]);
    expect(rows).toEqual([]);
  });

  test("404 {success:false, error} for an unknown id or another account's contact", async () => {
    const account = await service.createAccount();
    const other = await service.createAccount();
    const { contactId } = await createContact(service, other.apiKey);
    for (const id of [contactId, 'ct_nope']) {
      const response = await service.request('GET', `/contacts/${id}`, { apiKey: account.apiKey });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ success: false, error: 'Contact not found' });
    }
  });

  test('GET /contacts/messages and /contacts/tags without an id are still those endpoints missing their id, not a contact named "messages"', async () => {
    const account = await service.createAccount();
    for (const path of ['/contacts/messages', '/contacts/messages/', '/contacts/tags', '/contacts/tags/']) {
      const response = await service.request('GET', path, { apiKey: account.apiKey });
      expect(response.status, path).toBe(400);
      expect(response.body, path).toEqual({ success: false, message: 'Missing required parameter: contactId' });
    }
  });
});
