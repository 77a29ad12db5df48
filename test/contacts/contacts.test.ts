// Contacts over real HTTPS: every rule of POST/GET/PUT /contacts and
// POST/DELETE /contacts/lists, with exact statuses and bodies.
import { describe, expect, test } from 'vitest';
import { serviceForFile } from '../helpers/service-for-file.ts';
import type { TestService } from '../helpers/service.ts';

let service: TestService;
let a: { userId: string; apiKey: string };
let b: { userId: string; apiKey: string };

serviceForFile({ accounts: [{}, {}] }, (started) => ({ service, accounts: [a, b] } = started));

let phoneSeq = 0;
/** Distinct valid US numbers. */
function nextPhone(): string {
  phoneSeq += 1;
  return `+1415555${String(2000 + phoneSeq).padStart(4, '0')}`;
}

async function createList(apiKey: string, name = 'List') {
  const response = await service.request('POST', '/lists', { apiKey, body: { name } });
  expect(response.status).toBe(201);
  return response.body.data.id as string;
}

async function eventNames(accountId: string): Promise<string[]> {
  const { rows } = await service.services.pool.query<{ name: string }>(
    'select name from events where account_id = $1 order by id',
    [accountId],
  );
  return rows.map((row) => row.name);
}

describe('POST /contacts', () => {
  test('creates a contact with the defaults and answers 200 with message, contactId and listsAdded', async () => {
    const phoneNumber = nextPhone();
    const response = await service.request('POST', '/contacts', { apiKey: a.apiKey, body: { phoneNumber } });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      success: true,
      data: { message: expect.any(String), contactId: expect.stringMatching(/^ct_/), listsAdded: [] },
    });
    const page = await service.request('GET', '/contacts', { apiKey: a.apiKey, query: { limit: 100 } });
    const record = page.body.contacts.find((contact: { id: string }) => contact.id === response.body.data.contactId);
    expect(record).toMatchObject({ first_name: 'Unknown', last_name: 'Unknown', phone_number: phoneNumber, is_bot_active: true, do_not_disturb: false });
  });

  test('phone numbers are normalised to E.164', async () => {
    const response = await service.request('POST', '/contacts', { apiKey: a.apiKey, body: { phoneNumber: '+44 20 7946 0958' } });
    expect(response.status).toBe(200);
    const found = await service.request('GET', '/contacts', { apiKey: a.apiKey, query: { phoneNumber: '+442079460958' } });
    expect(found.body).toEqual({ success: true, contactId: response.body.data.contactId });
  });

  test('an invalid phone number is 400 in the envelope', async () => {
    const response = await service.request('POST', '/contacts', { apiKey: a.apiKey, body: { phoneNumber: '+1 123' } });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ success: false, error: expect.stringMatching(/phone number/i), error_code: 400 });
  });

  test('"Must include a valid country code": a number without + or 00 is 400 naming the reason, and nothing is created', async () => {
    for (const phoneNumber of ['14155550406', '4155550406', ' 1 415 555 0406']) {
      const response = await service.request('POST', '/contacts', { apiKey: a.apiKey, body: { phoneNumber } });
      expect(response.status, phoneNumber).toBe(400);
      expect(response.body, phoneNumber).toEqual({
        success: false,
        error: 'Invalid phone number: it must start with its country code (+ or 00), such as +14155552671',
        error_code: 400,
      });
    }
    const lookup = await service.request('GET', '/contacts', { apiKey: a.apiKey, query: { phoneNumber: '+14155550406' } });
    expect(lookup.status).toBe(404);
  });

  test('the 00 international prefix is a country code: 0014155550407 is stored as +14155550407', async () => {
    const response = await service.request('POST', '/contacts', { apiKey: a.apiKey, body: { phoneNumber: '0014155550407' } });
    expect(response.status).toBe(200);
    const found = await service.request('GET', '/contacts', { apiKey: a.apiKey, query: { phoneNumber: '+14155550407' } });
    expect(found.body).toEqual({ success: true, contactId: response.body.data.contactId });
  });

  test('an extension is refused (400 naming the reason), not silently dropped', async () => {
    for (const phoneNumber of ['+1-415-555-0404 ext 2', '+1 415 555 0404 x2', '+14155550404;ext=2']) {
      const response = await service.request('POST', '/contacts', { apiKey: a.apiKey, body: { phoneNumber } });
      expect(response.status, phoneNumber).toBe(400);
      expect(response.body, phoneNumber).toEqual({
        success: false,
        error: 'Invalid phone number: extensions are not accepted; send the number without one',
        error_code: 400,
      });
    }
    const lookup = await service.request('GET', '/contacts', { apiKey: a.apiKey, query: { phoneNumber: '+14155550404' } });
    expect(lookup.status).toBe(404);
  });

  test('a missing phoneNumber is 400 naming the field', async () => {
    const response = await service.request('POST', '/contacts', { apiKey: a.apiKey, body: { firstName: 'Ada' } });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ success: false, error: 'phoneNumber is required', error_code: 400 });
  });

  test('a contact with that phone number already exists: 409', async () => {
    const phoneNumber = nextPhone();
    expect((await service.request('POST', '/contacts', { apiKey: a.apiKey, body: { phoneNumber } })).status).toBe(200);
    const again = await service.request('POST', '/contacts', { apiKey: a.apiKey, body: { phoneNumber } });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ success: false, error: expect.stringMatching(/already exists/), error_code: 409 });
  });

  test('the same phone number may exist in two accounts', async () => {
    const phoneNumber = nextPhone();
    expect((await service.request('POST', '/contacts', { apiKey: a.apiKey, body: { phoneNumber } })).status).toBe(200);
    expect((await service.request('POST', '/contacts', { apiKey: b.apiKey, body: { phoneNumber } })).status).toBe(200);
  });

  test('two racing creates of one phone number give one 200 and one 409', async () => {
    const phoneNumber = nextPhone();
    const results = await Promise.all(
      Array.from({ length: 6 }, () => service.request('POST', '/contacts', { apiKey: a.apiKey, body: { phoneNumber } })),
    );
    const statuses = results.map((result) => result.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409]);
    const { rows } = await service.services.pool.query('select count(*)::int as n from contacts where account_id = $1 and phone_number = $2', [a.userId, phoneNumber]);
    expect(rows[0].n).toBe(1);
  });

  test('the 401 body has success and error only', async () => {
    const response = await service.request('POST', '/contacts', { apiKey: 'mk_wrong', body: { phoneNumber: nextPhone() } });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ success: false, error: 'Invalid API key' });
  });

  test('listIds takes precedence over listId when both are sent', async () => {
    const first = await createList(a.apiKey, 'first');
    const second = await createList(a.apiKey, 'second');
    const response = await service.request('POST', '/contacts', {
      apiKey: a.apiKey,
      body: { phoneNumber: nextPhone(), listId: first, listIds: [second] },
    });
    expect(response.status).toBe(200);
    expect(response.body.data.listsAdded).toEqual([second]);
    const members = await service.request('GET', `/lists/${second}/contacts`, { apiKey: a.apiKey });
    expect(members.body.contacts.map((contact: { id: string }) => contact.id)).toEqual([response.body.data.contactId]);
    const firstList = await service.request('GET', `/lists/${first}`, { apiKey: a.apiKey });
    expect(firstList.body.data.contact_count).toBe(0);
  });

  test('listId alone adds the contact to that list', async () => {
    const list = await createList(a.apiKey);
    const response = await service.request('POST', '/contacts', { apiKey: a.apiKey, body: { phoneNumber: nextPhone(), listId: list } });
    expect(response.body.data.listsAdded).toEqual([list]);
  });

  test('a list not found is 404 and the contact is not created', async () => {
    const own = await createList(a.apiKey);
    const phoneNumber = nextPhone();
    const response = await service.request('POST', '/contacts', {
      apiKey: a.apiKey,
      body: { phoneNumber, listIds: [own, 'lst_doesnotexist'] },
    });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ success: false, error: expect.stringMatching(/not found/), error_code: 404 });
    const lookup = await service.request('GET', '/contacts', { apiKey: a.apiKey, query: { phoneNumber } });
    expect(lookup.status).toBe(404);
  });

  test("no permission to add to another account's list is 403 and the contact is not created", async () => {
    const foreign = await createList(b.apiKey, 'B only');
    const phoneNumber = nextPhone();
    const response = await service.request('POST', '/contacts', { apiKey: a.apiKey, body: { phoneNumber, listIds: [foreign] } });
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ success: false, error: expect.stringMatching(/permission/), error_code: 403 });
    expect((await service.request('GET', '/contacts', { apiKey: a.apiKey, query: { phoneNumber } })).status).toBe(404);
  });

  test('existence is checked before permission: a missing list wins over a foreign one', async () => {
    const foreign = await createList(b.apiKey);
    const response = await service.request('POST', '/contacts', {
      apiKey: a.apiKey,
      body: { phoneNumber: nextPhone(), listIds: [foreign, 'lst_missing'] },
    });
    expect(response.status).toBe(404);
  });

  test('Contact Created is written to the outbox with the contact, and not when creation fails', async () => {
    const account = await service.createAccount();
    const ok = await service.request('POST', '/contacts', { apiKey: account.apiKey, body: { phoneNumber: nextPhone() } });
    expect(ok.status).toBe(200);
    await service.request('POST', '/contacts', { apiKey: account.apiKey, body: { phoneNumber: nextPhone(), listId: 'lst_missing' } });
    expect(await eventNames(account.userId)).toEqual(['Contact Created']);
    const { rows } = await service.services.pool.query('select payload from events where account_id = $1', [account.userId]);
    expect(rows[0].payload.user.id).toBe(account.userId);
    expect(rows[0].payload.data.contact.id).toBe(ok.body.data.contactId);
  });
});

describe('GET /contacts (lookup)', () => {
  test('finds a contact by e-mail', async () => {
    const email = `lookup-${Date.now()}@example.com`;
    const created = await service.request('POST', '/contacts', { apiKey: a.apiKey, body: { phoneNumber: nextPhone(), email } });
    const found = await service.request('GET', '/contacts', { apiKey: a.apiKey, query: { email } });
    expect(found.status).toBe(200);
    expect(found.body).toEqual({ success: true, contactId: created.body.data.contactId });
  });

  test('neither identifier, or only blank ones, pages through the contacts instead (a rule the OpenAPI document states)', async () => {
    const bare = await service.request('GET', '/contacts', { apiKey: a.apiKey });
    expect(bare.status).toBe(200);
    expect(bare.body).toEqual({ success: true, contacts: expect.any(Array), next_cursor: bare.body.next_cursor });
    const firstPage = await service.request('GET', '/contacts', { apiKey: a.apiKey, query: { limit: 1 } });
    expect(firstPage.status).toBe(200);
    for (const query of [{ email: '' }, { phoneNumber: ' ', email: '\t' }]) {
      const response = await service.request('GET', '/contacts', { apiKey: a.apiKey, query: { ...query, limit: 1 } });
      expect(response.status, JSON.stringify(query)).toBe(200);
      expect(response.body, JSON.stringify(query)).toEqual(firstPage.body);
    }
  });

  test('a lookup carrying a cursor holds it to the rule of every cursor: one this listing issued, else 400 Invalid cursor', async () => {
    const phoneNumber = nextPhone();
    const created = await service.request('POST', '/contacts', { apiKey: a.apiKey, body: { phoneNumber } });
    await service.request('POST', '/contacts', { apiKey: a.apiKey, body: { phoneNumber: nextPhone() } });
    const page = await service.request('GET', '/contacts', { apiKey: a.apiKey, query: { limit: 1 } });
    const issued = page.body.next_cursor as string;
    const found = await service.request('GET', '/contacts', { apiKey: a.apiKey, query: { phoneNumber, cursor: issued } });
    expect(found.body).toEqual({ success: true, contactId: created.body.data.contactId });
    const forged = await service.request('GET', '/contacts', { apiKey: a.apiKey, query: { phoneNumber, cursor: `${issued.split('.')[0]}.AAAA` } });
    expect(forged.status).toBe(400);
    expect(forged.body).toEqual({ success: false, error: 'Invalid cursor', error_code: 400 });
  });

  test('invalid phone number: 400 {error}', async () => {
    const response = await service.request('GET', '/contacts', { apiKey: a.apiKey, query: { phoneNumber: '+12' } });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: expect.stringMatching(/phone number/i) });
  });

  test('a lookup without a country code or with an extension is 400 {error}, not a guess', async () => {
    for (const [phoneNumber, why] of [['14155552671', /country code/], ['+1 415 555 2671 ext 9', /extensions/]] as const) {
      const response = await service.request('GET', '/contacts', { apiKey: a.apiKey, query: { phoneNumber } });
      expect(response.status, phoneNumber).toBe(400);
      expect(response.body, phoneNumber).toEqual({ error: expect.stringMatching(why) });
    }
  });

  test('unknown contact: 404 {success:false, message}', async () => {
    const response = await service.request('GET', '/contacts', { apiKey: a.apiKey, query: { phoneNumber: '+14155550199' } });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ success: false, message: 'Contact not found' });
  });

  test('wrong key: 401 plain string', async () => {
    const response = await service.request('GET', '/contacts', { apiKey: 'nope', query: { phoneNumber: '+14155550199' } });
    expect(response.status).toBe(401);
    expect(response.contentType).toMatch(/^text\/plain/);
    expect(response.text).toBe('Invalid API key');
  });
});

describe('GET /contacts (paged listing)', () => {
  test('pages with limit and an opaque next_cursor that is null on the last page', async () => {
    const account = await service.createAccount();
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const created = await service.request('POST', '/contacts', { apiKey: account.apiKey, body: { phoneNumber: nextPhone() } });
      ids.push(created.body.data.contactId);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await service.request('GET', '/contacts', { apiKey: account.apiKey, query: { limit: 2, cursor } });
      expect(page.status).toBe(200);
      expect(Object.keys(page.body).sort()).toEqual(['contacts', 'next_cursor', 'success']);
      for (const contact of page.body.contacts) {
        expect(contact).toMatchObject({ id: expect.any(String), first_name: expect.any(String), phone_number: expect.any(String) });
        seen.push(contact.id);
      }
      cursor = page.body.next_cursor ?? undefined;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(ids);
  });

  test('the default page size is 50 and the maximum is 100', async () => {
    const account = await service.createAccount();
    const values = Array.from({ length: 52 }, (_, i) => `('ct_bulk${String(i).padStart(4, '0')}', '${account.userId}', '+1415556${1000 + i}')`);
    await service.services.pool.query(`insert into contacts (id, account_id, phone_number) values ${values.join(',')}`);
    const first = await service.request('GET', '/contacts', { apiKey: account.apiKey, query: { limit: 1 } });
    expect(first.body.contacts).toHaveLength(1);
    // Only `cursor`: the page size is the default.
    const second = await service.request('GET', '/contacts', { apiKey: account.apiKey, query: { cursor: first.body.next_cursor } });
    expect(second.body.contacts).toHaveLength(50);
    const third = await service.request('GET', '/contacts', { apiKey: account.apiKey, query: { cursor: second.body.next_cursor } });
    expect(third.body.contacts).toHaveLength(1);
    expect(third.body.next_cursor).toBeNull();
    expect((await service.request('GET', '/contacts', { apiKey: account.apiKey, query: { limit: 100 } })).body.contacts).toHaveLength(52);
    const tooMany = await service.request('GET', '/contacts', { apiKey: account.apiKey, query: { limit: 101 } });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toEqual({ success: false, error: expect.stringMatching(/limit/), error_code: 400 });
  });

  test('an invalid or tampered cursor is 400', async () => {
    const account = await service.createAccount();
    for (let i = 0; i < 3; i += 1) await service.request('POST', '/contacts', { apiKey: account.apiKey, body: { phoneNumber: nextPhone() } });
    const page = await service.request('GET', '/contacts', { apiKey: account.apiKey, query: { limit: 1 } });
    const cursor: string = page.body.next_cursor;
    const [payload, signature] = cursor.split('.');
    const forged = Buffer.from(JSON.stringify({ k: 'ct_0' })).toString('base64url');
    for (const bad of ['garbage', `${forged}.${signature}`, `${payload}.AAAA${signature.slice(4)}`]) {
      const response = await service.request('GET', '/contacts', { apiKey: account.apiKey, query: { cursor: bad } });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ success: false, error: 'Invalid cursor', error_code: 400 });
    }
  });

  test("a cursor from one account is refused for another (cursors are bound to the account)", async () => {
    const owner = await service.createAccount();
    for (let i = 0; i < 2; i += 1) await service.request('POST', '/contacts', { apiKey: owner.apiKey, body: { phoneNumber: nextPhone() } });
    const page = await service.request('GET', '/contacts', { apiKey: owner.apiKey, query: { limit: 1 } });
    const replay = await service.request('GET', '/contacts', { apiKey: b.apiKey, query: { cursor: page.body.next_cursor } });
    expect(replay.status).toBe(400);
  });
});

describe('PUT /contacts/{contactId}', () => {
  test('updates the allowed fields: 200 {success, message}', async () => {
    const created = await service.request('POST', '/contacts', { apiKey: a.apiKey, body: { phoneNumber: nextPhone() } });
    const id = created.body.data.contactId;
    const response = await service.request('PUT', `/contacts/${id}`, { apiKey: a.apiKey, body: { firstName: 'Grace', email: 'grace@example.com' } });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, message: expect.any(String) });
    const found = await service.request('GET', '/contacts', { apiKey: a.apiKey, query: { email: 'grace@example.com' } });
    expect(found.body.contactId).toBe(id);
  });

  test('no fields to update: 400 {success:false, message}', async () => {
    const created = await service.request('POST', '/contacts', { apiKey: a.apiKey, body: { phoneNumber: nextPhone() } });
    const response = await service.request('PUT', `/contacts/${created.body.data.contactId}`, { apiKey: a.apiKey, body: {} });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ success: false, message: 'No fields to update' });
  });

  test('fields outside the five are not updatable (phone number stays)', async () => {
    const phoneNumber = nextPhone();
    const created = await service.request('POST', '/contacts', { apiKey: a.apiKey, body: { phoneNumber } });
    const response = await service.request('PUT', `/contacts/${created.body.data.contactId}`, { apiKey: a.apiKey, body: { phoneNumber: nextPhone() } });
    expect(response.status).toBe(400);
    expect((await service.request('GET', '/contacts', { apiKey: a.apiKey, query: { phoneNumber } })).status).toBe(200);
  });

  test('unknown contact: 404 {success:false, message}; 401 plain string', async () => {
    const missing = await service.request('PUT', '/contacts/ct_missing', { apiKey: a.apiKey, body: { firstName: 'X' } });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ success: false, message: 'Contact not found' });
    const unauthorized = await service.request('PUT', '/contacts/ct_missing', { apiKey: 'bad', body: { firstName: 'X' } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.text).toBe('Invalid API key');
  });

  test('pausing, resuming and do-not-disturb are announced as events in the same change', async () => {
    const account = await service.createAccount();
    const created = await service.request('POST', '/contacts', { apiKey: account.apiKey, body: { phoneNumber: nextPhone() } });
    const id = created.body.data.contactId;
    await service.request('PUT', `/contacts/${id}`, { apiKey: account.apiKey, body: { is_bot_active: false } });
    await service.request('PUT', `/contacts/${id}`, { apiKey: account.apiKey, body: { is_bot_active: false } });
    await service.request('PUT', `/contacts/${id}`, { apiKey: account.apiKey, body: { is_bot_active: true, do_not_disturb: true } });
    expect(await eventNames(account.userId)).toEqual(['Contact Created', 'Contact Paused', 'Contact Resumed', 'Contact Do Not Disturb']);
  });
});

describe('POST and DELETE /contacts/lists', () => {
  test('adds and removes a contact: 200 {success, message}', async () => {
    const list = await createList(a.apiKey);
    const created = await service.request('POST', '/contacts', { apiKey: a.apiKey, body: { phoneNumber: nextPhone() } });
    const contactId = created.body.data.contactId;
    const added = await service.request('POST', '/contacts/lists', { apiKey: a.apiKey, body: { contactId, listId: list } });
    expect(added.status).toBe(200);
    expect(added.body).toEqual({ success: true, message: expect.any(String) });
    expect((await service.request('GET', `/lists/${list}`, { apiKey: a.apiKey })).body.data.contact_count).toBe(1);
    const removed = await service.request('DELETE', '/contacts/lists', { apiKey: a.apiKey, query: { contactId, listId: list } });
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ success: true, message: expect.any(String) });
    expect((await service.request('GET', `/lists/${list}`, { apiKey: a.apiKey })).body.data.contact_count).toBe(0);
  });

  test('missing parameters: 400 plain string (POST and DELETE)', async () => {
    const post = await service.request('POST', '/contacts/lists', { apiKey: a.apiKey, body: { contactId: 'ct_x' } });
    expect(post.status).toBe(400);
    expect(post.contentType).toMatch(/^text\/plain/);
    const del = await service.request('DELETE', '/contacts/lists', { apiKey: a.apiKey, query: { listId: 'lst_x' } });
    expect(del.status).toBe(400);
    expect(del.contentType).toMatch(/^text\/plain/);
  });

  test("another account's list: 403 plain string (no permission)", async () => {
    const foreign = await createList(b.apiKey);
    const created = await service.request('POST', '/contacts', { apiKey: a.apiKey, body: { phoneNumber: nextPhone() } });
    for (const [method, options] of [
      ['POST', { body: { contactId: created.body.data.contactId, listId: foreign } }],
      ['DELETE', { query: { contactId: created.body.data.contactId, listId: foreign } }],
    ] as const) {
      const response = await service.request(method, '/contacts/lists', { apiKey: a.apiKey, ...options });
      expect(response.status).toBe(403);
      expect(response.contentType).toMatch(/^text\/plain/);
      expect(response.text).toMatch(/permission/);
    }
  });

  test('401 plain string', async () => {
    const response = await service.request('POST', '/contacts/lists', { apiKey: 'bad', body: { contactId: 'x', listId: 'y' } });
    expect(response.status).toBe(401);
    expect(response.text).toBe('Invalid API key');
  });
});

describe('account isolation', () => {
  test("account B cannot read, update or list A's contacts", async () => {
    const phoneNumber = nextPhone();
    const created = await service.request('POST', '/contacts', { apiKey: a.apiKey, body: { phoneNumber, email: 'iso@example.com' } });
    const id = created.body.data.contactId;
    expect((await service.request('GET', '/contacts', { apiKey: b.apiKey, query: { phoneNumber } })).status).toBe(404);
    expect((await service.request('GET', '/contacts', { apiKey: b.apiKey, query: { email: 'iso@example.com' } })).status).toBe(404);
    expect((await service.request('PUT', `/contacts/${id}`, { apiKey: b.apiKey, body: { firstName: 'Mallory' } })).status).toBe(404);
    const listing = await service.request('GET', '/contacts', { apiKey: b.apiKey, query: { limit: 100 } });
    expect(listing.body.contacts.map((contact: { id: string }) => contact.id)).not.toContain(id);
    const list = await createList(b.apiKey);
    const add = await service.request('POST', '/contacts/lists', { apiKey: b.apiKey, body: { contactId: id, listId: list } });
    expect(add.status).toBe(404);
  });

  test('userId of an account the caller does not manage is 403', async () => {
    const response = await service.request('GET', '/contacts', { apiKey: a.apiKey, query: { limit: 10, userId: b.userId } });
    expect(response.status).toBe(403);
    const own = await service.request('GET', '/contacts', { apiKey: a.apiKey, query: { limit: 10, userId: a.userId } });
    expect(own.status).toBe(200);
  });
});
