// The contact lookup rides in the statement that confirms its key (server/auth/caller-read.ts):
// once the key is held, GET /contacts?phoneNumber= costs one statement, and the value it read
// is used only for the caller's own account and only while the key is usable.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

/** The statements the API's pool ran while `run` ran that touch api_keys or contacts. */
async function statementsDuring<T>(run: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const pool = service.services.pool as unknown as { query: (...args: unknown[]) => unknown };
  const original = pool.query;
  const statements: string[] = [];
  pool.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0] as string | { text?: string };
    const text = typeof first === 'string' ? first : (first?.text ?? '');
    if (/\b(api_keys|contacts)\b/.test(text)) statements.push(text);
    return original.apply(this, args);
  };
  try {
    return { result: await run(), statements };
  } finally {
    pool.query = original;
  }
}

async function contact(apiKey: string, phoneNumber: string, email?: string): Promise<string> {
  const created = await service.request('POST', '/contacts', { apiKey, body: { phoneNumber, firstName: 'Rides', ...(email ? { email } : {}) } });
  expect(created.status, created.text).toBe(200);
  return created.body.data.contactId;
}

const lookup = (apiKey: string, query: Record<string, string>) => service.request('GET', '/contacts', { apiKey, query });

test('a held key looks a contact up in one statement, by phone, by e-mail and by both', async () => {
  const { apiKey } = await service.createAccount();
  const id = await contact(apiKey, '+14155550161', 'Rides.Along@example.com');
  expect((await lookup(apiKey, { phoneNumber: '+14155550161' })).body).toEqual({ success: true, contactId: id });
  const queries: Record<string, string>[] = [{ phoneNumber: '+14155550161' }, { email: 'rides.along@example.com' }, { phoneNumber: '+1 415 555 0161', email: 'RIDES.ALONG@example.com' }];
  for (const query of queries) {
    const { result, statements } = await statementsDuring(() => lookup(apiKey, query));
    expect(result.body, JSON.stringify(query)).toEqual({ success: true, contactId: id });
    expect(statements, JSON.stringify(query)).toHaveLength(1);
    expect(statements[0]).toMatch(/api_keys/);
    expect(statements[0]).toMatch(/from contacts/);
  }
  // Not found is found out in the same statement.
  const { result, statements } = await statementsDuring(() => lookup(apiKey, { phoneNumber: '+14155550162' }));
  expect(result.status).toBe(404);
  expect(statements).toHaveLength(1);
});

test("the read is of the caller's own account: another account's contact with the same number is not found", async () => {
  const first = await service.createAccount();
  const second = await service.createAccount();
  const firstId = await contact(first.apiKey, '+14155550171');
  await lookup(second.apiKey, { phoneNumber: '+14155550171' });
  const { result } = await statementsDuring(() => lookup(second.apiKey, { phoneNumber: '+14155550171' }));
  expect(result.status).toBe(404);
  const secondId = await contact(second.apiKey, '+14155550171');
  expect(secondId).not.toBe(firstId);
  expect((await lookup(second.apiKey, { phoneNumber: '+14155550171' })).body).toEqual({ success: true, contactId: secondId });
  expect((await lookup(first.apiKey, { phoneNumber: '+14155550171' })).body).toEqual({ success: true, contactId: firstId });
});

test("a key revoked after it was held gets 401, not the contact its statement could have read", async () => {
  const { apiKey: mainKey } = await service.createAccount();
  const minted = await service.request('POST', '/api-keys', { apiKey: mainKey, body: { scopes: { tags: ['Contacts'], read_only: true } } });
  expect(minted.status, minted.text).toBe(201);
  const scoped = minted.body.api_key as string;
  await contact(mainKey, '+14155550181');
  expect((await lookup(scoped, { phoneNumber: '+14155550181' })).status).toBe(200);
  expect((await service.request('DELETE', `/api-keys/${minted.body.key.id}`, { apiKey: mainKey })).status).toBe(200);
  const refused = await lookup(scoped, { phoneNumber: '+14155550181' });
  expect(refused.status).toBe(401);
  expect(refused.text).not.toMatch(/ctc_/);
});

test("an agency key looking up in a client's account (userId) reads that account, not its own", async () => {
  const agency = await service.createAccount({ agency: true });
  const created = await service.request('POST', '/sub-accounts', {
    apiKey: agency.apiKey,
    body: { email: `rides-client-${Date.now()}@example.com`, first_name: 'Cli', last_name: 'Ent', usage_limits: { monthly_credits: 10 } },
  });
  expect(created.status, created.text).toBe(201);
  const clientId = created.body.data.id as string;
  const agencyOwn = await contact(agency.apiKey, '+14155550191');
  const inClient = await service.request('POST', '/contacts', { apiKey: agency.apiKey, query: { userId: clientId }, body: { phoneNumber: '+14155550191' } });
  expect(inClient.status, inClient.text).toBe(200);
  const clientContact = await service.request('GET', '/contacts', { apiKey: agency.apiKey, query: { userId: clientId, phoneNumber: '+14155550191' } });
  expect(clientContact.body).toEqual({ success: true, contactId: inClient.body.data.contactId });
  expect(inClient.body.data.contactId).not.toBe(agencyOwn);
  expect((await lookup(agency.apiKey, { phoneNumber: '+14155550191' })).body).toEqual({ success: true, contactId: agencyOwn });
});
