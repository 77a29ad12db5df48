import { describe, expect, test } from 'vitest';
import { serviceForFile } from '../helpers/service-for-file.ts';
import type { TestService } from '../helpers/service.ts';

let service: TestService;
serviceForFile({}, (started) => ({ service } = started));

let emailCounter = 0;
function uniqueEmail(prefix = 'client'): string {
  emailCounter += 1;
  return `${prefix}${emailCounter}-${process.pid}-${Date.now()}@example.com`;
}

function envelope(status: number, error: string) {
  return { success: false, error, error_code: status };
}

const NO_PROFILE = {
  business_name: null,
  description: null,
  address_line: null,
  city: null,
  country: null,
  postal_code: null,
  state: null,
  time_zone_id: null,
  language: null,
};

async function newClient(apiKey: string, body: Record<string, unknown> = {}) {
  const response = await service.request('POST', '/sub-accounts', {
    apiKey,
    body: { email: uniqueEmail(), first_name: 'Cleo', last_name: 'Client', usage_limits: { monthly_credits: 100 }, ...body },
  });
  expect(response.status).toBe(201);
  return response.body.data;
}

async function rowCount(table: string, accountId: string): Promise<number> {
  const column = table === 'accounts' ? 'id' : 'account_id';
  const { rows } = await service.services.pool.query<{ count: string }>(`select count(*) from ${table} where ${column} = $1`, [accountId]);
  return Number(rows[0].count);
}

describe('POST /sub-accounts', () => {
  test('creates a client sub-account: 201 {success, data: SubAccount & {id}} with the defaults', async () => {
    const agency = await service.createAccount({ agency: true });
    const email = uniqueEmail();
    const response = await service.request('POST', '/sub-accounts', {
      apiKey: agency.apiKey,
      body: { email, first_name: 'Cleo', last_name: 'Client', usage_limits: { monthly_credits: 250 } },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      success: true,
      data: {
        id: expect.stringMatching(/^usr_/),
        email,
        first_name: 'Cleo',
        last_name: 'Client',
        role: 'Sub Account',
        is_agency_sub_account: true,
        ...NO_PROFILE,
        // credits start at the monthly allocation; usage at 0; no roll-over.
        usage_limits: { monthly_credits: 250, monthly_credits_used: 0, credits: 250, roll_over_to_next_month: false },
      },
    });
    const { rows } = await service.services.pool.query('select agency_id, plan, role, is_agency from accounts where id = $1', [response.body.data.id]);
    expect(rows).toEqual([{ agency_id: agency.userId, plan: 'pro', role: 'Sub Account', is_agency: false }]);
    expect(await rowCount('api_keys', response.body.data.id)).toBe(0);
  });

  test('stores every SubAccount field sent', async () => {
    const agency = await service.createAccount({ agency: true });
    const profile = {
      business_name: 'Cleo Bakes',
      description: 'Bakery',
      address_line: '1 Main St',
      city: 'Springfield',
      country: 'US',
      postal_code: '12345',
      state: 'IL',
      time_zone_id: 'America/Chicago',
      language: 'en',
    };
    const body = {
      email: uniqueEmail(),
      first_name: 'Cleo',
      last_name: 'Client',
      role: 'Sub Account',
      is_agency_sub_account: false,
      ...profile,
      usage_limits: { monthly_credits: 500, monthly_credits_used: 20, credits: 80, roll_over_to_next_month: true },
    };
    const response = await service.request('POST', '/sub-accounts', { apiKey: agency.apiKey, body });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({ success: true, data: { id: expect.any(String), ...body } });
  });

  test('validation errors are 400 naming the field', async () => {
    const agency = await service.createAccount({ agency: true });
    const valid = { email: uniqueEmail(), first_name: 'A', last_name: 'B', usage_limits: { monthly_credits: 1 } };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...valid, email: undefined }, 'email is required'],
      [{ ...valid, email: 'not-an-email' }, 'email: must be a valid e-mail address'],
      [{ ...valid, first_name: undefined }, 'first_name is required'],
      [{ ...valid, last_name: '' }, 'last_name: must not be empty'],
      [{ ...valid, role: 'Admin' }, 'role: must be Sub Account'],
      [{ ...valid, usage_limits: undefined }, 'usage_limits is required'],
      [{ ...valid, usage_limits: {} }, 'usage_limits.monthly_credits is required'],
      [{ ...valid, usage_limits: { monthly_credits: 0 } }, 'usage_limits.monthly_credits: must be at least 1'],
      [{ ...valid, usage_limits: { monthly_credits: 5, credits: -1 } }, 'usage_limits.credits: must not be negative'],
    ];
    for (const [body, error] of cases) {
      const response = await service.request('POST', '/sub-accounts', { apiKey: agency.apiKey, body });
      expect({ status: response.status, body: response.body }).toEqual({ status: 400, body: envelope(400, error) });
    }
    // Only the field is asserted here: the shared describeZodError words every zod type failure as "is required".
    const fraction = await service.request('POST', '/sub-accounts', { apiKey: agency.apiKey, body: { ...valid, usage_limits: { monthly_credits: 1.5 } } });
    expect(fraction.status).toBe(400);
    expect(fraction.body).toEqual(envelope(400, expect.stringMatching(/^usage_limits\.monthly_credits\b/)));
    expect((await service.request('GET', '/sub-accounts', { apiKey: agency.apiKey })).body.sub_accounts).toEqual([]);
  });

  test("a duplicate e-mail among the agency's clients is 409 (any letter case)", async () => {
    const agency = await service.createAccount({ agency: true });
    const client = await newClient(agency.apiKey);
    for (const email of [client.email, client.email.toUpperCase()]) {
      const response = await service.request('POST', '/sub-accounts', {
        apiKey: agency.apiKey,
        body: { email, first_name: 'A', last_name: 'B', usage_limits: { monthly_credits: 1 } },
      });
      expect(response.status).toBe(409);
      expect(response.body).toEqual(envelope(409, 'An account with that e-mail already exists'));
    }
  });

  test("e-mails are unique per agency, so a client's e-mail tells nothing of accounts elsewhere", async () => {
    const agency = await service.createAccount({ agency: true });
    const otherAgency = await service.createAccount({ agency: true });
    const owner = await service.createAccount({ email: uniqueEmail('owner') });
    const { rows } = await service.services.pool.query<{ email: string }>('select email from accounts where id = $1', [owner.userId]);
    const elsewhere = await newClient(otherAgency.apiKey);
    for (const email of [rows[0].email, elsewhere.email]) {
      const response = await service.request('POST', '/sub-accounts', {
        apiKey: agency.apiKey,
        body: { email, first_name: 'A', last_name: 'B', usage_limits: { monthly_credits: 1 } },
      });
      expect(response.status).toBe(201);
      expect(response.body.data.email).toBe(email);
    }
  });
});

describe('agency-only', () => {
  test('a non-agency account gets 403 on every /sub-accounts operation', async () => {
    const plain = await service.createAccount();
    const agency = await service.createAccount({ agency: true });
    const client = await newClient(agency.apiKey);
    const calls: [string, string, unknown][] = [
      ['POST', '/sub-accounts', { email: uniqueEmail(), first_name: 'A', last_name: 'B', usage_limits: { monthly_credits: 1 } }],
      ['GET', '/sub-accounts', undefined],
      ['GET', `/sub-accounts/${client.id}`, undefined],
      ['PUT', `/sub-accounts/${client.id}`, { first_name: 'X' }],
      ['DELETE', `/sub-accounts/${client.id}`, undefined],
    ];
    for (const [method, path, body] of calls) {
      const response = await service.request(method, path, { apiKey: plain.apiKey, body });
      expect({ call: `${method} ${path}`, status: response.status, body: response.body }).toEqual({
        call: `${method} ${path}`,
        status: 403,
        body: envelope(403, 'Only agency accounts can manage sub-accounts'),
      });
    }
    expect((await service.request('GET', `/sub-accounts/${client.id}`, { apiKey: agency.apiKey })).body.data).toEqual(client);
  });

  test('userId cannot be used on agency-only endpoints (403)', async () => {
    const agency = await service.createAccount({ agency: true });
    const client = await newClient(agency.apiKey);
    for (const [method, path] of [['GET', '/sub-accounts'], ['GET', `/sub-accounts/${client.id}`], ['POST', '/sub-accounts'], ['DELETE', `/sub-accounts/${client.id}`]]) {
      const response = await service.request(method, path, {
        apiKey: agency.apiKey,
        query: { userId: client.id },
        body: method === 'POST' ? { email: uniqueEmail(), first_name: 'A', last_name: 'B', usage_limits: { monthly_credits: 1 } } : undefined,
      });
      expect(response.status).toBe(403);
      expect(response.body).toEqual(envelope(403, 'userId cannot be used on agency-only endpoints'));
    }
    expect(await rowCount('accounts', client.id)).toBe(1);
  });

  test('a request carrying only userId is 401', async () => {
    const agency = await service.createAccount({ agency: true });
    const response = await service.request('GET', '/sub-accounts', { query: { userId: agency.userId } });
    expect(response.status).toBe(401);
    expect(response.body).toEqual(envelope(401, 'Invalid API key'));
  });
});

describe('acting on a client account with userId', () => {
  test("the agency key plus userId acts in the client account, whose data is separate from the agency's", async () => {
    const agency = await service.createAccount({ agency: true });
    const client = await newClient(agency.apiKey);
    const phoneNumber = '+14155550101';

    const inClient = await service.request('POST', '/contacts', { apiKey: agency.apiKey, query: { userId: client.id }, body: { phoneNumber } });
    expect(inClient.status).toBe(200);
    expect(await rowCount('contacts', client.id)).toBe(1);
    expect(await rowCount('contacts', agency.userId)).toBe(0);

    const foundInClient = await service.request('GET', '/contacts', { apiKey: agency.apiKey, query: { userId: client.id, phoneNumber } });
    expect(foundInClient.body).toEqual({ success: true, contactId: inClient.body.data.contactId });
    const notInAgency = await service.request('GET', '/contacts', { apiKey: agency.apiKey, query: { phoneNumber } });
    expect(notInAgency.status).toBe(404);
    expect(notInAgency.body).toEqual({ success: false, message: 'Contact not found' });

    // The same phone number is free in the agency's own account.
    const inAgency = await service.request('POST', '/contacts', { apiKey: agency.apiKey, body: { phoneNumber } });
    expect(inAgency.status).toBe(200);
    expect(inAgency.body.data.contactId).not.toBe(inClient.body.data.contactId);
  });

  test('any other account id as userId is 403', async () => {
    const agencyA = await service.createAccount({ agency: true });
    const agencyB = await service.createAccount({ agency: true });
    const clientOfB = await newClient(agencyB.apiKey);
    const unrelated = await service.createAccount();
    for (const userId of [clientOfB.id, agencyB.userId, unrelated.userId, 'usr_unknown']) {
      const response = await service.request('POST', '/contacts', { apiKey: agencyA.apiKey, query: { userId }, body: { phoneNumber: '+14155550102' } });
      expect(response.status).toBe(403);
      expect(response.body).toEqual(envelope(403, 'You do not have access to that account'));
    }
    expect(await rowCount('contacts', clientOfB.id)).toBe(0);
  });
});

describe('GET /sub-accounts/{id}', () => {
  test('returns {success, data} for a client of the agency', async () => {
    const agency = await service.createAccount({ agency: true });
    const client = await newClient(agency.apiKey);
    const response = await service.request('GET', `/sub-accounts/${client.id}`, { apiKey: agency.apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, data: client });
  });

  test("an unknown id, the agency's own id or another agency's client is 404", async () => {
    const agencyA = await service.createAccount({ agency: true });
    const agencyB = await service.createAccount({ agency: true });
    const clientOfB = await newClient(agencyB.apiKey);
    for (const id of ['usr_unknown', agencyA.userId, clientOfB.id]) {
      const response = await service.request('GET', `/sub-accounts/${id}`, { apiKey: agencyA.apiKey });
      expect(response.status).toBe(404);
      expect(response.body).toEqual(envelope(404, 'Sub-account not found'));
    }
  });
});

describe('PUT /sub-accounts/{id}', () => {
  test('changes any SubAccount field; usage_limits members merge', async () => {
    const agency = await service.createAccount({ agency: true });
    const client = await newClient(agency.apiKey, { city: 'Old Town', usage_limits: { monthly_credits: 100, roll_over_to_next_month: true } });
    const email = uniqueEmail();
    const response = await service.request('PUT', `/sub-accounts/${client.id}`, {
      apiKey: agency.apiKey,
      body: { email, last_name: 'Renamed', business_name: 'Cleo Ltd', usage_limits: { credits: 40 } },
    });
    expect(response.status).toBe(200);
    const expected = {
      ...client,
      email,
      last_name: 'Renamed',
      business_name: 'Cleo Ltd',
      usage_limits: { monthly_credits: 100, monthly_credits_used: 0, credits: 40, roll_over_to_next_month: true },
    };
    expect(response.body).toEqual({ success: true, data: expected });
    expect((await service.request('GET', `/sub-accounts/${client.id}`, { apiKey: agency.apiKey })).body.data).toEqual(expected);

    const cleared = await service.request('PUT', `/sub-accounts/${client.id}`, { apiKey: agency.apiKey, body: { city: null, usage_limits: { monthly_credits: 7 } } });
    expect(cleared.body.data).toEqual({ ...expected, city: null, usage_limits: { ...expected.usage_limits, monthly_credits: 7 } });
  });

  test('no fields to update is 400; invalid fields are 400 naming the field', async () => {
    const agency = await service.createAccount({ agency: true });
    const client = await newClient(agency.apiKey);
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'No fields to update'],
      [{ usage_limits: {} }, 'No fields to update'],
      [{ role: 'Owner' }, 'role: must be Sub Account'],
      [{ email: 'nope' }, 'email: must be a valid e-mail address'],
      [{ usage_limits: { monthly_credits: 0 } }, 'usage_limits.monthly_credits: must be at least 1'],
    ];
    for (const [body, error] of cases) {
      const response = await service.request('PUT', `/sub-accounts/${client.id}`, { apiKey: agency.apiKey, body });
      expect({ status: response.status, body: response.body }).toEqual({ status: 400, body: envelope(400, error) });
    }
    expect((await service.request('GET', `/sub-accounts/${client.id}`, { apiKey: agency.apiKey })).body.data).toEqual(client);
  });

  test("changing the e-mail to one in use is 409; another agency's client is 404 and unchanged", async () => {
    const agencyA = await service.createAccount({ agency: true });
    const agencyB = await service.createAccount({ agency: true });
    const first = await newClient(agencyA.apiKey);
    const second = await newClient(agencyA.apiKey);
    const duplicate = await service.request('PUT', `/sub-accounts/${second.id}`, { apiKey: agencyA.apiKey, body: { email: first.email } });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body).toEqual(envelope(409, 'An account with that e-mail already exists'));

    const foreign = await service.request('PUT', `/sub-accounts/${first.id}`, { apiKey: agencyB.apiKey, body: { first_name: 'Hijack' } });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(envelope(404, 'Sub-account not found'));
    expect((await service.request('GET', `/sub-accounts/${first.id}`, { apiKey: agencyA.apiKey })).body.data).toEqual(first);
  });
});

describe('PUT /sub-accounts/{id} and credit events', () => {
  async function eventNames(accountId: string): Promise<string[]> {
    const { rows } = await service.services.pool.query<{ name: string }>('select name from events where account_id = $1 order by name', [accountId]);
    return rows.map((row) => row.name);
  }

  test('raising usage_limits.credits emits Credits Recharged on the client account; other changes emit nothing', async () => {
    const agency = await service.createAccount({ agency: true });
    const client = await newClient(agency.apiKey, { usage_limits: { monthly_credits: 100, credits: 10 } });
    await service.request('PUT', `/sub-accounts/${client.id}`, { apiKey: agency.apiKey, body: { city: 'Paris', usage_limits: { credits: 5, monthly_credits_used: 3 } } });
    expect(await eventNames(client.id)).toEqual([]);
    const raised = await service.request('PUT', `/sub-accounts/${client.id}`, { apiKey: agency.apiKey, body: { usage_limits: { credits: 60 } } });
    expect(raised.status).toBe(200);
    expect(raised.body.data.usage_limits).toEqual({ monthly_credits: 100, monthly_credits_used: 3, credits: 60, roll_over_to_next_month: false });
    expect(await eventNames(client.id)).toEqual(['Credits Recharged']);
    expect(await eventNames(agency.userId)).toEqual([]);
  });

  test('a refused change (e-mail in use) changes nothing and emits nothing', async () => {
    const agency = await service.createAccount({ agency: true });
    const first = await newClient(agency.apiKey);
    const second = await newClient(agency.apiKey, { usage_limits: { monthly_credits: 100, credits: 10 } });
    const response = await service.request('PUT', `/sub-accounts/${second.id}`, {
      apiKey: agency.apiKey,
      body: { email: first.email, city: 'Rome', usage_limits: { credits: 90 } },
    });
    expect(response.status).toBe(409);
    expect((await service.request('GET', `/sub-accounts/${second.id}`, { apiKey: agency.apiKey })).body.data).toEqual(second);
    expect(await eventNames(second.id)).toEqual([]);
  });
});

describe('DELETE /sub-accounts/{id}', () => {
  test('removes the client account and everything of it', async () => {
    const agency = await service.createAccount({ agency: true });
    const client = await newClient(agency.apiKey);
    await service.request('POST', '/contacts', { apiKey: agency.apiKey, query: { userId: client.id }, body: { phoneNumber: '+14155550103' } });
    await service.request('POST', '/lists', { apiKey: agency.apiKey, query: { userId: client.id }, body: { name: 'Leads' } });
    expect(await rowCount('contacts', client.id)).toBe(1);

    const response = await service.request('DELETE', `/sub-accounts/${client.id}`, { apiKey: agency.apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true });
    for (const table of ['accounts', 'contacts', 'lists', 'events']) expect({ table, count: await rowCount(table, client.id) }).toEqual({ table, count: 0 });

    const gone = await service.request('GET', `/sub-accounts/${client.id}`, { apiKey: agency.apiKey });
    expect(gone.status).toBe(404);
    const actOn = await service.request('GET', '/contacts', { apiKey: agency.apiKey, query: { userId: client.id, phoneNumber: '+14155550103' } });
    expect(actOn.status).toBe(403);
    expect(actOn.body).toEqual(envelope(403, 'You do not have access to that account'));
  });

  test("an unknown id or another agency's client is 404 and nothing is deleted", async () => {
    const agencyA = await service.createAccount({ agency: true });
    const agencyB = await service.createAccount({ agency: true });
    const clientOfA = await newClient(agencyA.apiKey);
    for (const id of ['usr_unknown', clientOfA.id, agencyA.userId]) {
      const response = await service.request('DELETE', `/sub-accounts/${id}`, { apiKey: agencyB.apiKey });
      expect(response.status).toBe(404);
      expect(response.body).toEqual(envelope(404, 'Sub-account not found'));
    }
    expect(await rowCount('accounts', clientOfA.id)).toBe(1);
    expect(await rowCount('accounts', agencyA.userId)).toBe(1);
  });
});

describe('GET /sub-accounts (pagination)', () => {
  test("pages through only the caller's clients with limit and next_cursor, null on the last page", async () => {
    const agencyA = await service.createAccount({ agency: true });
    const agencyB = await service.createAccount({ agency: true });
    const clientsOfA = [];
    for (let i = 0; i < 3; i++) clientsOfA.push(await newClient(agencyA.apiKey, { first_name: `A${i}` }));
    const clientOfB = await newClient(agencyB.apiKey);

    const first = await service.request('GET', '/sub-accounts', { apiKey: agencyA.apiKey, query: { limit: 2 } });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ success: true, sub_accounts: expect.any(Array), next_cursor: expect.any(String) });
    expect(first.body.sub_accounts).toHaveLength(2);
    const second = await service.request('GET', '/sub-accounts', { apiKey: agencyA.apiKey, query: { limit: 2, cursor: first.body.next_cursor } });
    expect(second.body).toEqual({ success: true, sub_accounts: expect.any(Array), next_cursor: null });
    expect(second.body.sub_accounts).toHaveLength(1);
    const listed = [...first.body.sub_accounts, ...second.body.sub_accounts];
    expect([...listed].sort((a, b) => (a.id < b.id ? -1 : 1))).toEqual(listed);
    expect(listed.map((client) => client.id).sort()).toEqual(clientsOfA.map((client) => client.id).sort());
    expect(listed).toEqual(expect.arrayContaining(clientsOfA));

    const ofB = await service.request('GET', '/sub-accounts', { apiKey: agencyB.apiKey });
    expect(ofB.body).toEqual({ success: true, sub_accounts: [clientOfB], next_cursor: null });
  });

  test('an invalid cursor is 400, also a cursor of another agency', async () => {
    const agencyA = await service.createAccount({ agency: true });
    const agencyB = await service.createAccount({ agency: true });
    await newClient(agencyA.apiKey);
    await newClient(agencyA.apiKey);
    const first = await service.request('GET', '/sub-accounts', { apiKey: agencyA.apiKey, query: { limit: 1 } });
    for (const [apiKey, cursor] of [[agencyA.apiKey, 'garbage'], [agencyB.apiKey, first.body.next_cursor]]) {
      const response = await service.request('GET', '/sub-accounts', { apiKey, query: { cursor } });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(envelope(400, 'Invalid cursor'));
    }
  });
});

describe("scoped keys: a client named in the path is held to the key's sub_account_ids", () => {
  const scopeDeniedBody = { success: false, error: 'This API key is not allowed to act on that account', error_code: 'key_scope_denied' };
  const everyClientDeniedBody = {
    success: false,
    error: 'This API key is not allowed to act on every client account; that needs sub_account_ids ["*"]',
    error_code: 'key_scope_denied',
  };
  const writable = { tags: ['Sub Accounts'], read_only: false };

  test('a key limited to [SC1] cannot delete SC2 (403 key_scope_denied, SC2 and its data still there); it can act on SC1', async () => {
    const agency = await service.createAccount({ agency: true });
    const sc1 = await newClient(agency.apiKey);
    const sc2 = await newClient(agency.apiKey);
    await service.request('POST', '/lists', { apiKey: agency.apiKey, query: { userId: sc2.id }, body: { name: 'Leads' } });
    const key = await service.createScopedKey(agency.userId, { ...writable, sub_account_ids: [sc1.id] });

    const refused = await service.request('DELETE', `/sub-accounts/${sc2.id}`, { apiKey: key });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual(scopeDeniedBody);
    expect(await rowCount('accounts', sc2.id)).toBe(1);
    expect(await rowCount('lists', sc2.id)).toBe(1);
    for (const [method, path, body] of [
      ['GET', `/sub-accounts/${sc2.id}`, undefined],
      ['PUT', `/sub-accounts/${sc2.id}`, { first_name: 'Taken' }],
      ['PUT', `/sub-accounts/${sc2.id}/usage-limits`, { credits: 999999 }],
    ] as const) {
      const response = await service.request(method, path, { apiKey: key, body });
      expect({ call: `${method} ${path}`, status: response.status, body: response.body }).toEqual({ call: `${method} ${path}`, status: 403, body: scopeDeniedBody });
    }
    expect((await service.request('GET', `/sub-accounts/${sc2.id}`, { apiKey: agency.apiKey })).body.data).toEqual(sc2);

    // The listed client stays within reach, down to deleting it.
    expect((await service.request('GET', `/sub-accounts/${sc1.id}`, { apiKey: key })).body.data).toEqual(sc1);
    expect((await service.request('PUT', `/sub-accounts/${sc1.id}/usage-limits`, { apiKey: key, body: { credits: 150 } })).body.data.credits).toBe(150);
    expect((await service.request('DELETE', `/sub-accounts/${sc1.id}`, { apiKey: key })).status).toBe(200);
    expect(await rowCount('accounts', sc1.id)).toBe(0);
  });

  test('a key limited to [] cannot create, list, read or edit sub-accounts, nor set their credits; nothing changes', async () => {
    const agency = await service.createAccount({ agency: true });
    const sc1 = await newClient(agency.apiKey);
    const key = await service.createScopedKey(agency.userId, { ...writable, sub_account_ids: [] });
    const newEmail = uniqueEmail('refused');
    const oneClient: [string, string, unknown][] = [
      ['GET', `/sub-accounts/${sc1.id}`, undefined],
      ['PUT', `/sub-accounts/${sc1.id}`, { first_name: 'Taken' }],
      ['PUT', `/sub-accounts/${sc1.id}/usage-limits`, { credits: 999999 }],
      ['DELETE', `/sub-accounts/${sc1.id}`, undefined],
    ];
    for (const [method, path, body] of oneClient) {
      const response = await service.request(method, path, { apiKey: key, body });
      expect({ call: `${method} ${path}`, status: response.status, body: response.body }).toEqual({ call: `${method} ${path}`, status: 403, body: scopeDeniedBody });
    }
    const everyClient: [string, string, unknown][] = [
      ['POST', '/sub-accounts', { email: newEmail, first_name: 'A', last_name: 'B', usage_limits: { monthly_credits: 1 } }],
      ['GET', '/sub-accounts', undefined],
    ];
    for (const [method, path, body] of everyClient) {
      const response = await service.request(method, path, { apiKey: key, body });
      expect({ call: `${method} ${path}`, status: response.status, body: response.body }).toEqual({ call: `${method} ${path}`, status: 403, body: everyClientDeniedBody });
    }
    expect((await service.request('GET', `/sub-accounts/${sc1.id}`, { apiKey: agency.apiKey })).body.data).toEqual(sc1);
    const { rows } = await service.services.pool.query('select count(*)::int as count from accounts where email = $1', [newEmail]);
    expect(rows[0].count).toBe(0);
  });

  test('a key limited to [SC1] still cannot create or list sub-accounts: that needs ["*"]', async () => {
    const agency = await service.createAccount({ agency: true });
    const sc1 = await newClient(agency.apiKey);
    const key = await service.createScopedKey(agency.userId, { ...writable, sub_account_ids: [sc1.id] });
    const listed = await service.request('GET', '/sub-accounts', { apiKey: key });
    expect(listed.status).toBe(403);
    expect(listed.body).toEqual(everyClientDeniedBody);
  });

  test('a key with ["*"] creates, lists, reads, edits and recharges any client of the agency', async () => {
    const agency = await service.createAccount({ agency: true });
    const key = await service.createScopedKey(agency.userId, { ...writable, sub_account_ids: ['*'] });
    const created = await newClient(key);
    expect((await service.request('GET', '/sub-accounts', { apiKey: key })).body.sub_accounts).toEqual([created]);
    expect((await service.request('PUT', `/sub-accounts/${created.id}`, { apiKey: key, body: { first_name: 'Renamed' } })).body.data.first_name).toBe('Renamed');
    expect((await service.request('PUT', `/sub-accounts/${created.id}/usage-limits`, { apiKey: key, body: { credits: 500 } })).body.data.credits).toBe(500);
  });

  test("a key with [\"*\"] naming another agency's client in the path gets 404, as the main key does", async () => {
    const agency = await service.createAccount({ agency: true });
    const otherAgency = await service.createAccount({ agency: true });
    const foreign = await newClient(otherAgency.apiKey);
    const key = await service.createScopedKey(agency.userId, { ...writable, sub_account_ids: ['*'] });
    const response = await service.request('DELETE', `/sub-accounts/${foreign.id}`, { apiKey: key });
    expect(response.status).toBe(404);
    expect(await rowCount('accounts', foreign.id)).toBe(1);
  });
});
