// Provider callbacks (contract: GET / POST /provider-callbacks/whatsapp): the verification
// handshake, signed statuses and inbound messages over real HTTPS, their events, and the
// 24-hour customer-service window.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createContact } from '../../server/contacts/create-contact.ts';
import { recordMessage } from '../../server/messages/record-message.ts';
import { closeExpiredChatWindows } from '../../server/messaging/callbacks/close-expired-chat-windows.ts';
import { enqueueJob } from '../../server/jobs.ts';
import { CLOSE_CHAT_WINDOWS_TASK } from '../../workers/close-chat-windows.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const APP_SECRET = 'app-secret-for-callbacks';
const VERIFY_TOKEN = 'verify-token-for-callbacks';
const PATH = '/provider-callbacks/whatsapp';

let service: TestService;
let counter = 0;

beforeAll(async () => {
  service = await startTestService({ env: { MESSAGING_APP_SECRET: APP_SECRET, MESSAGING_VERIFY_TOKEN: VERIFY_TOKEN } });
});

afterAll(async () => {
  await service?.stop();
});

function unique(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}`;
}

/** A fresh account connected with its own phone number id. */
async function connectedAccount(): Promise<{ userId: string; apiKey: string; phoneNumberId: string }> {
  const account = await service.createAccount();
  const phoneNumberId = unique('pn');
  await service.services.pool.query(
    'insert into messaging_connections (account_id, phone_number_id, access_token_sealed) values ($1, $2, $3)',
    [account.userId, phoneNumberId, service.services.secrets.seal('t')],
  );
  return { ...account, phoneNumberId };
}

/** The contact's `is_chat_window_open` as the contact listing reports it. */
async function windowOpenThroughApi(apiKey: string, phoneNumber: string): Promise<boolean> {
  const page = await service.request('GET', '/v1/contacts', { apiKey, query: { limit: 100 } });
  expect(page.status, page.text).toBe(200);
  const contact = page.body.contacts.find((candidate: { phone_number: string }) => candidate.phone_number === phoneNumber);
  return contact.is_chat_window_open;
}

async function newContact(accountId: string, phoneNumber: string): Promise<string> {
  return (await createContact(service.services.orm.em.fork(), accountId, { phoneNumber })).contactId;
}

/** An outbound message the provider accepted under `providerMessageId`. */
async function sentMessage(accountId: string, contactId: string, providerMessageId: string): Promise<string> {
  const recorded = await recordMessage(service.services.orm.em.fork(), accountId, { contactId, direction: 'outbound-api', body: 'hi', providerMessageId });
  return recorded.messageId;
}

function sign(body: string, secret = APP_SECRET): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

function seconds(date = new Date()): string {
  return String(Math.floor(date.getTime() / 1000));
}

type Value = { messages?: unknown[]; statuses?: unknown[]; contacts?: unknown[] };

function callback(phoneNumberId: string, ...values: Value[]) {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: 'waba-1',
        changes: values.map((value) => ({
          field: 'messages',
          value: { messaging_product: 'whatsapp', metadata: { display_phone_number: '15550000000', phone_number_id: phoneNumberId }, ...value },
        })),
      },
    ],
  };
}

function statusValue(providerMessageId: string, status: string, at = new Date()): Value {
  return { statuses: [{ id: providerMessageId, status, timestamp: seconds(at), recipient_id: '14155552671' }] };
}

function inboundValue(from: string, providerMessageId: string, options: { body?: string; name?: string; at?: Date; message?: Record<string, unknown> } = {}): Value {
  return {
    contacts: options.name ? [{ profile: { name: options.name }, wa_id: from }] : undefined,
    messages: [
      {
        from,
        id: providerMessageId,
        timestamp: seconds(options.at),
        ...(options.message ?? { type: 'text', text: { body: options.body ?? 'hello' } }),
      },
    ],
  };
}

async function post(payload: unknown, options: { secret?: string; signature?: string | null; raw?: string } = {}) {
  const rawBody = options.raw ?? JSON.stringify(payload);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const signature = options.signature === undefined ? sign(rawBody, options.secret) : options.signature;
  if (signature !== null) headers['x-hub-signature-256'] = signature;
  return service.request('POST', PATH, { rawBody, headers });
}

/** A timestamp column as ISO text (the pool returns them as text). */
function iso(value: string | Date | null): string | null {
  return value === null ? null : new Date(value).toISOString();
}

async function eventNames(accountId: string): Promise<string[]> {
  const { rows } = await service.services.pool.query<{ name: string }>('select name from events where account_id = $1 order by id', [accountId]);
  return rows.map((row) => row.name);
}

async function eventsNamed(accountId: string, name: string): Promise<Record<string, any>[]> {
  const { rows } = await service.services.pool.query<{ payload: Record<string, any> }>(
    'select payload from events where account_id = $1 and name = $2 order by id',
    [accountId, name],
  );
  return rows.map((row) => row.payload);
}

async function messageRow(messageId: string) {
  const { rows } = await service.services.pool.query<{ status: string; read_at: string | null }>('select status, read_at from messages where id = $1', [messageId]);
  return rows[0]!;
}

async function contactByPhone(accountId: string, phoneNumber: string) {
  const { rows } = await service.services.pool.query<{ id: string; first_name: string; channel: string | null; is_chat_window_open: boolean; chat_window_expires_at: string | null }>(
    'select id, first_name, channel, is_chat_window_open, chat_window_expires_at from contacts where account_id = $1 and phone_number = $2',
    [accountId, phoneNumber],
  );
  return rows[0];
}

async function messagesWithProviderId(providerMessageId: string) {
  const { rows } = await service.services.pool.query<{ account_id: string; contact_id: string; direction: string; body: string; type: string; channel: string; status: string }>(
    'select account_id, contact_id, direction, body, type, channel, status from messages where provider_message_id = $1',
    [providerMessageId],
  );
  return rows;
}

describe('the verification handshake', () => {
  test('answers hub.challenge as text when hub.mode is subscribe and hub.verify_token is MESSAGING_VERIFY_TOKEN', async () => {
    const response = await service.request('GET', PATH, { query: { 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': '1158201444' } });
    expect(response.status).toBe(200);
    expect(response.contentType).toMatch(/^text\/plain/);
    expect(response.text).toBe('1158201444');
  });

  test('is 403 with a wrong or missing verify token, or another mode', async () => {
    for (const query of [
      { 'hub.mode': 'subscribe', 'hub.verify_token': 'wrong', 'hub.challenge': '1' },
      { 'hub.mode': 'subscribe', 'hub.challenge': '1' },
      { 'hub.mode': 'unsubscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': '1' },
      {},
    ]) {
      const response = await service.request('GET', PATH, { query });
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ success: false, error: expect.any(String), error_code: 403 });
    }
  });
});

describe('signatures', () => {
  test('an unsigned, wrongly signed or otherwise-signed callback is 401 and changes nothing', async () => {
    const account = await connectedAccount();
    const contactId = await newContact(account.userId, '+14155550101');
    const wamid = unique('wamid.sig');
    const messageId = await sentMessage(account.userId, contactId, wamid);
    const before = await eventNames(account.userId);
    const payload = callback(account.phoneNumberId, statusValue(wamid, 'read'), inboundValue('14155550102', unique('wamid.in')));
    const body = JSON.stringify(payload);

    for (const signature of [null, 'sha256=' + '0'.repeat(64), 'sha256=nothex', sign(body, 'another-secret'), sign(body).replace('sha256=', 'sha1=')]) {
      const response = await post(payload, { signature });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ success: false, error: expect.any(String), error_code: 401 });
    }
    // A signature of other bytes (the same JSON, spaced differently) does not cover this body.
    const response = await post(payload, { raw: JSON.stringify(payload, null, 2), signature: sign(body) });
    expect(response.status).toBe(401);

    expect((await messageRow(messageId)).status).toBe('sent');
    expect(await contactByPhone(account.userId, '+14155550102')).toBeUndefined();
    expect(await eventNames(account.userId)).toEqual(before);
  });

  test('a correctly signed body that is not JSON is 400 in the envelope', async () => {
    const response = await post(undefined, { raw: '{"entry": [' });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ success: false, error: 'Request body is not valid JSON', error_code: 400 });
  });
});

describe('statuses', () => {
  test('a delivered status moves the message forward and emits Deliveries once, even when the callback is posted twice', async () => {
    const account = await connectedAccount();
    const contactId = await newContact(account.userId, '+14155550111');
    const wamid = unique('wamid.del');
    const messageId = await sentMessage(account.userId, contactId, wamid);

    const payload = callback(account.phoneNumberId, statusValue(wamid, 'delivered'));
    for (let i = 0; i < 2; i++) {
      const response = await post(payload);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ success: true });
    }
    expect((await messageRow(messageId)).status).toBe('delivered');
    const deliveries = await eventsNamed(account.userId, 'Deliveries');
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]!.data).toMatchObject({ status: 'delivered', message: { id: messageId, status: 'delivered' }, contact: { id: contactId, phone_number: '+14155550111' } });

    const readAt = new Date(Math.floor(Date.now() / 1000) * 1000);
    const read = callback(account.phoneNumberId, statusValue(wamid, 'read', readAt));
    expect((await post(read)).status).toBe(200);
    expect((await post(read)).status).toBe(200);
    const row = await messageRow(messageId);
    expect(row.status).toBe('read');
    expect(iso(row.read_at)).toBe(readAt.toISOString());
    expect(await eventsNamed(account.userId, 'Reads')).toHaveLength(1);
    expect(await eventsNamed(account.userId, 'Deliveries')).toHaveLength(1);
  });

  test('a status never moves a message backwards: a late delivered after read changes nothing', async () => {
    const account = await connectedAccount();
    const contactId = await newContact(account.userId, '+14155550121');
    const wamid = unique('wamid.back');
    const messageId = await sentMessage(account.userId, contactId, wamid);

    expect((await post(callback(account.phoneNumberId, statusValue(wamid, 'read')))).status).toBe(200);
    const before = await eventNames(account.userId);
    for (const status of ['delivered', 'sent', 'failed']) {
      expect((await post(callback(account.phoneNumberId, statusValue(wamid, status)))).status).toBe(200);
    }
    expect((await messageRow(messageId)).status).toBe('read');
    expect(await eventNames(account.userId)).toEqual(before);
  });

  test('a message read before its delivery was reported emits Deliveries, then Reads', async () => {
    const account = await connectedAccount();
    const contactId = await newContact(account.userId, '+14155550131');
    const wamid = unique('wamid.jump');
    const messageId = await sentMessage(account.userId, contactId, wamid);

    expect((await post(callback(account.phoneNumberId, statusValue(wamid, 'read')))).status).toBe(200);
    expect((await messageRow(messageId)).status).toBe('read');
    const names = (await eventNames(account.userId)).filter((name) => name === 'Deliveries' || name === 'Reads');
    expect(names).toEqual(['Deliveries', 'Reads']);
  });

  test('failed applies to a sent message; an unknown message id is ignored', async () => {
    const account = await connectedAccount();
    const contactId = await newContact(account.userId, '+14155550141');
    const wamid = unique('wamid.fail');
    const messageId = await sentMessage(account.userId, contactId, wamid);
    const failed = callback(account.phoneNumberId, {
      statuses: [{ id: wamid, status: 'failed', timestamp: seconds(), recipient_id: '14155550141', errors: [{ code: 131026, title: 'Message undeliverable' }] }],
    });
    expect((await post(failed)).status).toBe(200);
    expect((await messageRow(messageId)).status).toBe('failed');

    const before = await eventNames(account.userId);
    const unknown = await post(callback(account.phoneNumberId, statusValue(unique('wamid.unknown'), 'delivered')));
    expect(unknown.status).toBe(200);
    expect(await eventNames(account.userId)).toEqual(before);
  });
});

describe('inbound messages', () => {
  test('from a new number: creates the contact, stores the message once and emits Contact Created and New Message once, even when retried', async () => {
    const account = await connectedAccount();
    const wamid = unique('wamid.new');
    const sentAt = new Date(Math.floor(Date.now() / 1000) * 1000);
    const payload = callback(account.phoneNumberId, inboundValue('14155550151', wamid, { body: 'Hi there', name: 'Ada', at: sentAt }));

    for (let i = 0; i < 2; i++) {
      const response = await post(payload);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ success: true });
    }

    const contact = await contactByPhone(account.userId, '+14155550151');
    expect(contact).toMatchObject({ first_name: 'Ada', channel: 'whatsapp', is_chat_window_open: true });
    expect(iso(contact!.chat_window_expires_at)).toBe(new Date(sentAt.getTime() + 24 * 3600_000).toISOString());
    expect(await messagesWithProviderId(wamid)).toEqual([
      { account_id: account.userId, contact_id: contact!.id, direction: 'inbound', body: 'Hi there', type: 'text', channel: 'whatsapp', status: 'received' },
    ]);
    expect(await eventNames(account.userId)).toEqual(['Contact Created', 'New Message']);
  });

  test('an inbound message after an outbound one emits Replies once, even when retried', async () => {
    const account = await connectedAccount();
    const contactId = await newContact(account.userId, '+14155550161');
    await sentMessage(account.userId, contactId, unique('wamid.out'));
    const wamid = unique('wamid.reply');
    const payload = callback(account.phoneNumberId, inboundValue('14155550161', wamid, { body: 'Yes please' }));

    expect((await post(payload)).status).toBe(200);
    expect((await post(payload)).status).toBe(200);

    const replies = await eventsNamed(account.userId, 'Replies');
    expect(replies).toHaveLength(1);
    expect(replies[0]!.data).toMatchObject({ message: { body: 'Yes please', direction: 'inbound' }, contact: { id: contactId } });
    // The outbound message's and the reply's.
    expect(await eventsNamed(account.userId, 'New Message')).toHaveLength(2);
    expect(await messagesWithProviderId(wamid)).toHaveLength(1);
  });

  test('media messages store their type, with the caption or [type] as body', async () => {
    const account = await connectedAccount();
    const captioned = unique('wamid.img1');
    const bare = unique('wamid.img2');
    const payload = callback(
      account.phoneNumberId,
      inboundValue('14155550171', captioned, { message: { type: 'image', image: { id: 'media-1', mime_type: 'image/jpeg', caption: 'Our shop' } } }),
      inboundValue('14155550171', bare, { message: { type: 'image', image: { id: 'media-2', mime_type: 'image/jpeg' } } }),
    );
    expect((await post(payload)).status).toBe(200);
    expect(await messagesWithProviderId(captioned)).toMatchObject([{ type: 'image', body: 'Our shop' }]);
    expect(await messagesWithProviderId(bare)).toMatchObject([{ type: 'image', body: '[image]' }]);
  });

  test('a later message extends the window; an earlier one never shortens it', async () => {
    const account = await connectedAccount();
    const now = Math.floor(Date.now() / 1000) * 1000;
    const post1 = await post(callback(account.phoneNumberId, inboundValue('14155550181', unique('wamid.w1'), { at: new Date(now - 3600_000) })));
    expect(post1.status).toBe(200);
    const opened = iso((await contactByPhone(account.userId, '+14155550181'))!.chat_window_expires_at);
    expect(opened).toBe(new Date(now - 3600_000 + 24 * 3600_000).toISOString());

    expect((await post(callback(account.phoneNumberId, inboundValue('14155550181', unique('wamid.w2'), { at: new Date(now) })))).status).toBe(200);
    const extended = iso((await contactByPhone(account.userId, '+14155550181'))!.chat_window_expires_at);
    expect(extended).toBe(new Date(now + 24 * 3600_000).toISOString());

    expect((await post(callback(account.phoneNumberId, inboundValue('14155550181', unique('wamid.w3'), { at: new Date(now - 7200_000) })))).status).toBe(200);
    expect(iso((await contactByPhone(account.userId, '+14155550181'))!.chat_window_expires_at)).toBe(extended);
  });
});

describe('the customer-service window', () => {
  test('is open after an inbound message and closed once it expires', async () => {
    const account = await connectedAccount();
    expect((await post(callback(account.phoneNumberId, inboundValue('14155550191', unique('wamid.win'))))).status).toBe(200);
    expect((await post(callback(account.phoneNumberId, inboundValue('14155550192', unique('wamid.win'))))).status).toBe(200);
    const expiring = (await contactByPhone(account.userId, '+14155550191'))!;
    expect(expiring.is_chat_window_open).toBe(true);
    expect(await windowOpenThroughApi(account.apiKey, '+14155550191')).toBe(true);

    await service.services.pool.query(`update contacts set chat_window_expires_at = now() - interval '1 minute' where id = $1`, [expiring.id]);
    const closed = await closeExpiredChatWindows(service.services.orm.em.fork(), new Date());
    expect(closed).toBeGreaterThanOrEqual(1);

    expect(await contactByPhone(account.userId, '+14155550191')).toMatchObject({ is_chat_window_open: false, chat_window_expires_at: null });
    expect(await windowOpenThroughApi(account.apiKey, '+14155550191')).toBe(false);
    // A window still running is left open.
    expect(await contactByPhone(account.userId, '+14155550192')).toMatchObject({ is_chat_window_open: true });
  });

  test('the worker task closes expired windows (run now rather than waiting for its minute)', async () => {
    const account = await connectedAccount();
    expect((await post(callback(account.phoneNumberId, inboundValue('14155550193', unique('wamid.job'))))).status).toBe(200);
    const contact = (await contactByPhone(account.userId, '+14155550193'))!;
    await service.services.pool.query(`update contacts set chat_window_expires_at = now() - interval '1 second' where id = $1`, [contact.id]);

    await enqueueJob(service.services.orm.em.fork(), CLOSE_CHAT_WINDOWS_TASK, {});
    let current = contact;
    for (let tries = 0; tries < 150 && current.is_chat_window_open; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      current = (await contactByPhone(account.userId, '+14155550193'))!;
    }
    expect(current).toMatchObject({ is_chat_window_open: false, chat_window_expires_at: null });
  });
});

describe('retries and bad items', () => {
  test('the same inbound callback posted concurrently stores one message and emits once', async () => {
    const account = await connectedAccount();
    const wamid = unique('wamid.race');
    const payload = callback(account.phoneNumberId, inboundValue('14155550221', wamid, { name: 'Grace' }));
    const responses = await Promise.all([post(payload), post(payload), post(payload)]);
    expect(responses.map((response) => response.status)).toEqual([200, 200, 200]);
    expect(await messagesWithProviderId(wamid)).toHaveLength(1);
    expect(await eventNames(account.userId)).toEqual(['Contact Created', 'New Message']);
  });

  test('an item that can never apply is skipped; the others in the callback still are', async () => {
    const account = await connectedAccount();
    const good = unique('wamid.good');
    const payload = callback(
      account.phoneNumberId,
      inboundValue('123', unique('wamid.badnumber')),
      { messages: [{ id: unique('wamid.nofrom'), type: 'text', text: { body: 'x' } }] },
      inboundValue('14155550231', good, { body: 'still here' }),
    );
    const response = await post(payload);
    expect(response.status).toBe(200);
    expect(await messagesWithProviderId(good)).toMatchObject([{ body: 'still here' }]);
  });

  test('an item with text PostgreSQL cannot store (a lone surrogate, a NUL) is skipped; the others still apply', async () => {
    const account = await connectedAccount();
    const good = unique('wamid.good');
    const surrogate = unique('wamid.surrogate');
    const nul = unique('wamid.nul');
    const payload = callback(
      account.phoneNumberId,
      inboundValue('14155550232', surrogate, { body: 'SURROGATE' }),
      inboundValue('14155550233', nul, { body: 'x\u0000y' }),
      inboundValue('14155550234', good, { body: 'still here' }),
    );
    // JSON.stringify escapes a lone surrogate as \ud800, which decodes back to one: put it in the text as that escape.
    const raw = JSON.stringify(payload).replace('SURROGATE', 'a\\ud800');
    const response = await post(undefined, { raw });
    expect(response.status, response.text).toBe(200);
    expect(await messagesWithProviderId(good)).toMatchObject([{ body: 'still here' }]);
    expect(await messagesWithProviderId(surrogate)).toEqual([]);
    expect(await messagesWithProviderId(nul)).toEqual([]);
  });
});

describe('accounts', () => {
  test("a callback for another account's phone number id never touches this account", async () => {
    const mine = await connectedAccount();
    const other = await connectedAccount();
    const contactId = await newContact(mine.userId, '+14155550201');
    const wamid = unique('wamid.mine');
    const messageId = await sentMessage(mine.userId, contactId, wamid);
    const before = await eventNames(mine.userId);

    const payload = callback(other.phoneNumberId, statusValue(wamid, 'read'), inboundValue('14155550201', unique('wamid.other')));
    expect((await post(payload)).status).toBe(200);

    expect((await messageRow(messageId)).status).toBe('sent');
    expect(await eventNames(mine.userId)).toEqual(before);
    // The inbound message belongs to the other account, with its own contact.
    expect(await contactByPhone(other.userId, '+14155550201')).toMatchObject({ is_chat_window_open: true });
    expect((await contactByPhone(mine.userId, '+14155550201'))!.is_chat_window_open).toBe(false);
  });

  test('a callback for a phone number id no account connected is answered 200 and ignored', async () => {
    const wamid = unique('wamid.nobody');
    const response = await post(callback(unique('pn-unknown'), inboundValue('14155550211', wamid)));
    expect(response.status).toBe(200);
    expect(await messagesWithProviderId(wamid)).toEqual([]);
  });
});

describe('without MESSAGING_VERIFY_TOKEN and MESSAGING_APP_SECRET', () => {
  test('the handshake is always 403 and every callback 401', async () => {
    const bare = await startTestService();
    try {
      const handshake = await bare.request('GET', PATH, { query: { 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': '1' } });
      expect(handshake.status).toBe(403);
      const body = JSON.stringify(callback('pn-x', statusValue('wamid.x', 'read')));
      const signed = await bare.request('POST', PATH, { rawBody: body, headers: { 'content-type': 'application/json', 'x-hub-signature-256': sign(body) } });
      expect(signed.status).toBe(401);
    } finally {
      await bare.stop();
    }
  });
});
