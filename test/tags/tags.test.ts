// Tags over real HTTPS: POST /tags (create-or-add, one credit per new
// assignment), GET /tags, GET /tags/{name}, GET /contacts/tags/{contactId},
// scoped-key sections, account isolation and the events written with each change.
import { describe, expect, test } from 'vitest';
import { serviceForFile } from '../helpers/service-for-file.ts';
import type { TestService } from '../helpers/service.ts';

let service: TestService;
serviceForFile({}, (started) => ({ service } = started));

let phoneCounter = 0;
/** A fresh valid US number per call (+1 415 555 2xxx). */
function nextPhone(): string {
  phoneCounter += 1;
  return `+1415555${String(2000 + phoneCounter).padStart(4, '0')}`;
}

async function createContact(apiKey: string, body: Record<string, unknown> = {}): Promise<{ id: string; phoneNumber: string }> {
  const phoneNumber = (body.phoneNumber as string | undefined) ?? nextPhone();
  const response = await service.request('POST', '/contacts', { apiKey, body: { phoneNumber, ...body } });
  expect(response.status, response.text).toBe(200);
  return { id: response.body.data.contactId, phoneNumber };
}

type EventRow = { name: string; account_id: string; payload: { user: { id: string }; data: Record<string, unknown> } };

async function eventsOf(accountId: string, name?: string): Promise<EventRow[]> {
  const { rows } = await service.services.pool.query<EventRow>(
    'select name, account_id, payload from events where account_id = $1 and ($2::text is null or name = $2) order by created_at, id',
    [accountId, name ?? null],
  );
  return rows;
}

async function creditsOf(accountId: string): Promise<number> {
  const { rows } = await service.services.pool.query<{ credits: number }>('select credits from accounts where id = $1', [accountId]);
  return rows[0]!.credits;
}


describe('POST /tags', () => {
  test('when the tag does not exist it is created: 201 {success, data: Tag} from query parameters', async () => {
    const { apiKey, userId } = await service.createAccount();
    const contact = await createContact(apiKey);
    const response = await service.request('POST', '/tags', { apiKey, query: { tag: 'VIP', phoneNumber: contact.phoneNumber } });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({ success: true, data: { id: expect.stringMatching(/^tag_/), name: 'VIP', description: null } });
    const listed = await service.request('GET', `/contacts/tags/${contact.id}`, { apiKey });
    expect(listed.body).toEqual([response.body.data]);
    expect(await creditsOf(userId)).toBe(999);
  });

  test('accepts tag, email and description in a JSON body; description is kept on creation', async () => {
    const { apiKey } = await service.createAccount();
    const contact = await createContact(apiKey, { email: 'ada@example.com' });
    const response = await service.request('POST', '/tags', { apiKey, body: { tag: 'Lead', email: 'ada@example.com', description: 'Warm leads' } });
    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({ name: 'Lead', description: 'Warm leads' });
    const listed = await service.request('GET', `/contacts/tags/${contact.id}`, { apiKey });
    expect(listed.body.map((tag: { name: string }) => tag.name)).toEqual(['Lead']);
  });

  test('when the tag exists the contact is added to it (same tag id, description unchanged)', async () => {
    const { apiKey } = await service.createAccount();
    const first = await createContact(apiKey);
    const second = await createContact(apiKey);
    const created = await service.request('POST', '/tags', { apiKey, query: { tag: 'Customer', phoneNumber: first.phoneNumber, description: 'Paying' } });
    const added = await service.request('POST', '/tags', { apiKey, query: { tag: 'Customer', phoneNumber: second.phoneNumber, description: 'ignored' } });
    expect(added.status).toBe(201);
    expect(added.body).toEqual(created.body);
    expect((await service.request('GET', `/contacts/tags/${second.id}`, { apiKey })).body).toEqual([created.body.data]);
  });

  test('phoneNumber is matched after normalising it to E.164 (spaces and dashes)', async () => {
    const { apiKey } = await service.createAccount();
    const contact = await createContact(apiKey, { phoneNumber: '+14155552671' });
    const response = await service.request('POST', '/tags', { apiKey, query: { tag: 'Normalised', phoneNumber: '+1 415-555 2671' } });
    expect(response.status).toBe(201);
    expect((await service.request('GET', `/contacts/tags/${contact.id}`, { apiKey })).body).toHaveLength(1);
  });

  test('a new assignment spends one credit and emits Credits Spent; re-adding a contact that has the tag spends nothing and still answers 201', async () => {
    const { apiKey, userId } = await service.createAccount({ credits: 100 });
    const contact = await createContact(apiKey);
    const first = await service.request('POST', '/tags', { apiKey, query: { tag: 'Once', phoneNumber: contact.phoneNumber } });
    const again = await service.request('POST', '/tags', { apiKey, query: { tag: 'Once', phoneNumber: contact.phoneNumber } });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await creditsOf(userId)).toBe(99);
    const spent = await eventsOf(userId, 'Credits Spent');
    expect(spent).toHaveLength(1);
    expect(spent[0]!.payload.user.id).toBe(userId);
    expect(spent[0]!.payload.data).toEqual({ amount: 1, reason: 'tag_assignment', balance: 99 });
    const usage = await service.request('GET', '/usage-limits', { apiKey });
    expect(usage.body.data).toMatchObject({ credits: 99, monthly_credits_used: 1 });
  });

  test('400 missing tag (default envelope)', async () => {
    const { apiKey } = await service.createAccount();
    const contact = await createContact(apiKey);
    for (const query of [{ phoneNumber: contact.phoneNumber }, { tag: '  ', phoneNumber: contact.phoneNumber }]) {
      const response = await service.request('POST', '/tags', { apiKey, query });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ success: false, error: 'Missing required parameter: tag', error_code: 400 });
    }
  });

  test('400 when neither phoneNumber nor email is sent (default envelope), and nothing is created', async () => {
    const { apiKey } = await service.createAccount();
    const response = await service.request('POST', '/tags', { apiKey, query: { tag: 'Orphan' } });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ success: false, error: 'Missing required parameters: phoneNumber or email', error_code: 400 });
    expect((await service.request('GET', '/tags', { apiKey })).body).toEqual([]);
  });

  test('400 invalid phone number', async () => {
    const { apiKey } = await service.createAccount();
    const response = await service.request('POST', '/tags', { apiKey, query: { tag: 'X', phoneNumber: '+12' } });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ success: false, error_code: 400 });
    expect(response.body.error).toMatch(/phone number/i);
  });

  test('401 invalid key (default envelope)', async () => {
    const response = await service.request('POST', '/tags', { apiKey: 'mk_wrong', query: { tag: 'X', phoneNumber: '+14155552671' } });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ success: false, error: 'Invalid API key', error_code: 401 });
  });

  test('402 insufficient credits: nothing is written (no tag, no membership, no event)', async () => {
    const { apiKey, userId } = await service.createAccount({ credits: 0 });
    const contact = await createContact(apiKey);
    const eventsBefore = await eventsOf(userId);
    const response = await service.request('POST', '/tags', { apiKey, query: { tag: 'Costly', phoneNumber: contact.phoneNumber } });
    expect(response.status).toBe(402);
    expect(response.body).toEqual({ success: false, error: 'Insufficient credits', error_code: 402 });
    expect((await service.request('GET', '/tags', { apiKey })).body).toEqual([]);
    expect((await service.request('GET', `/contacts/tags/${contact.id}`, { apiKey })).body).toEqual([]);
    expect(await eventsOf(userId)).toEqual(eventsBefore);
    expect(await creditsOf(userId)).toBe(0);
  });

  test('404 contact not found (default envelope)', async () => {
    const { apiKey } = await service.createAccount();
    const byPhone = await service.request('POST', '/tags', { apiKey, query: { tag: 'X', phoneNumber: '+14155550199' } });
    expect(byPhone.status).toBe(404);
    expect(byPhone.body).toEqual({ success: false, error: 'Contact not found', error_code: 404 });
    const byEmail = await service.request('POST', '/tags', { apiKey, query: { tag: 'X', email: 'nobody@example.com' } });
    expect(byEmail.status).toBe(404);
  });
});

describe('GET /tags and GET /tags/{name}', () => {
  test('GET /tags: 200 a bare array of Tag, by name', async () => {
    const { apiKey } = await service.createAccount();
    const contact = await createContact(apiKey);
    for (const tag of ['Beta', 'Alpha']) await service.request('POST', '/tags', { apiKey, query: { tag, phoneNumber: contact.phoneNumber } });
    const response = await service.request('GET', '/tags', { apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual([
      { id: expect.stringMatching(/^tag_/), name: 'Alpha', description: null },
      { id: expect.stringMatching(/^tag_/), name: 'Beta', description: null },
    ]);
  });

  test('GET /tags/{name}: 200 a bare Tag, also for a name that needs percent-encoding', async () => {
    const { apiKey } = await service.createAccount();
    const contact = await createContact(apiKey);
    const created = await service.request('POST', '/tags', { apiKey, query: { tag: 'Hot lead/2024', phoneNumber: contact.phoneNumber } });
    const response = await service.request('GET', `/tags/${encodeURIComponent('Hot lead/2024')}`, { apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(created.body.data);
  });

  test('GET /tags/{name}: 404 tag not found', async () => {
    const { apiKey } = await service.createAccount();
    const response = await service.request('GET', '/tags/Nope', { apiKey });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ success: false, error: 'Tag not found', error_code: 404 });
  });
});

describe('GET /contacts/tags/{contactId}', () => {
  test("200 a bare array of the contact's tags", async () => {
    const { apiKey } = await service.createAccount();
    const tagged = await createContact(apiKey);
    const other = await createContact(apiKey);
    await service.request('POST', '/tags', { apiKey, query: { tag: 'Mine', phoneNumber: tagged.phoneNumber } });
    await service.request('POST', '/tags', { apiKey, query: { tag: 'Theirs', phoneNumber: other.phoneNumber } });
    const response = await service.request('GET', `/contacts/tags/${tagged.id}`, { apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual([{ id: expect.stringMatching(/^tag_/), name: 'Mine', description: null }]);
  });

  test('400 {success:false, message} missing contact id', async () => {
    const { apiKey } = await service.createAccount();
    for (const path of ['/contacts/tags/%20', '/contacts/tags/']) {
      const response = await service.request('GET', path, { apiKey });
      expect(response.status, path).toBe(400);
      expect(response.body).toEqual({ success: false, message: 'Missing required parameter: contactId' });
    }
  });

  test('401 {success:false, error}', async () => {
    const response = await service.request('GET', '/contacts/tags/ct_x', { apiKey: 'mk_wrong' });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ success: false, error: 'Invalid API key' });
  });

  test('404 {success:false, error}', async () => {
    const { apiKey } = await service.createAccount();
    const response = await service.request('GET', '/contacts/tags/ct_unknown', { apiKey });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ success: false, error: 'Contact not found' });
  });
});

describe('account isolation', () => {
  test("account B cannot see or change account A's tags", async () => {
    const a = await service.createAccount();
    const b = await service.createAccount();
    const contactA = await createContact(a.apiKey, { email: 'shared@example.com' });
    const tagA = await service.request('POST', '/tags', { apiKey: a.apiKey, query: { tag: 'Private', phoneNumber: contactA.phoneNumber } });
    expect(tagA.status).toBe(201);

    expect((await service.request('GET', '/tags', { apiKey: b.apiKey })).body).toEqual([]);
    const byName = await service.request('GET', '/tags/Private', { apiKey: b.apiKey });
    expect(byName.status).toBe(404);
    const contactTags = await service.request('GET', `/contacts/tags/${contactA.id}`, { apiKey: b.apiKey });
    expect(contactTags.status).toBe(404);
    expect(contactTags.body).toEqual({ success: false, error: 'Contact not found' });

    // B cannot tag A's contact, by phone or by e-mail.
    const byPhone = await service.request('POST', '/tags', { apiKey: b.apiKey, query: { tag: 'Private', phoneNumber: contactA.phoneNumber } });
    expect(byPhone.status).toBe(404);
    const byEmail = await service.request('POST', '/tags', { apiKey: b.apiKey, query: { tag: 'Private', email: 'shared@example.com' } });
    expect(byEmail.status).toBe(404);
    expect((await service.request('GET', `/contacts/tags/${contactA.id}`, { apiKey: a.apiKey })).body).toEqual([tagA.body.data]);
    expect(await eventsOf(b.userId, 'Credits Spent')).toEqual([]);
  });

  test('tag names are unique per account: B gets its own tag with the same name', async () => {
    const a = await service.createAccount();
    const b = await service.createAccount();
    const contactA = await createContact(a.apiKey);
    const contactB = await createContact(b.apiKey);
    const tagA = await service.request('POST', '/tags', { apiKey: a.apiKey, query: { tag: 'Same', phoneNumber: contactA.phoneNumber } });
    const tagB = await service.request('POST', '/tags', { apiKey: b.apiKey, query: { tag: 'Same', phoneNumber: contactB.phoneNumber } });
    expect(tagB.status).toBe(201);
    expect(tagB.body.data.id).not.toBe(tagA.body.data.id);
    expect((await service.request('GET', '/tags/Same', { apiKey: a.apiKey })).body).toEqual(tagA.body.data);
    expect((await service.request('GET', '/tags/Same', { apiKey: b.apiKey })).body).toEqual(tagB.body.data);
  });
});

describe('scoped keys: section Tags', () => {
  test('a read-only key may list tags but POST /tags is 403 key_read_only', async () => {
    const { apiKey, userId } = await service.createAccount();
    const contact = await createContact(apiKey);
    const readOnly = await service.createScopedKey(userId, { read_only: true, tags: ['Tags'] });
    expect((await service.request('GET', '/tags', { apiKey: readOnly })).status).toBe(200);
    const write = await service.request('POST', '/tags', { apiKey: readOnly, query: { tag: 'X', phoneNumber: contact.phoneNumber } });
    expect(write.status).toBe(403);
    expect(write.body).toMatchObject({ success: false, error_code: 'key_read_only' });
  });

  test('a key scoped to another section gets 403 key_scope_denied on the tag endpoints', async () => {
    const { apiKey, userId } = await service.createAccount();
    const contact = await createContact(apiKey);
    const contactsOnly = await service.createScopedKey(userId, { read_only: false, tags: ['Contacts'] });
    for (const [method, path] of [['GET', '/tags'], ['GET', '/tags/X'], ['GET', `/contacts/tags/${contact.id}`]] as const) {
      const response = await service.request(method, path, { apiKey: contactsOnly });
      expect(response.status, path).toBe(403);
      expect(response.body).toMatchObject({ success: false, error_code: 'key_scope_denied' });
    }
    const write = await service.request('POST', '/tags', { apiKey: contactsOnly, query: { tag: 'X', phoneNumber: contact.phoneNumber } });
    expect(write.body).toMatchObject({ success: false, error_code: 'key_scope_denied' });
  });
});
