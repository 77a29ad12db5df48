import { describe, expect, test } from 'vitest';
import { serviceForFile } from '../helpers/service-for-file.ts';
import type { TestService } from '../helpers/service.ts';

let service: TestService;
serviceForFile({}, (started) => ({ service } = started));

const isoDate = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
const inOneDay = () => new Date(Date.now() + 86_400_000).toISOString();

async function createKey(apiKey: string, body: unknown = {}) {
  const response = await service.request('POST', '/api-keys', { apiKey, body });
  expect(response.status, response.text).toBe(201);
  return response.body as { api_key: string; key: { id: string } & Record<string, unknown> };
}

describe('POST /api-keys', () => {
  test('201 {success, api_key, key:{id, label, key_preview, scopes, expires_at, revoked}, message}; the id starts with key_', async () => {
    const { apiKey } = await service.createAccount();
    const expiresAt = inOneDay();
    const response = await service.request('POST', '/api-keys', {
      apiKey,
      body: { label: 'Reporting', expires_at: expiresAt, scopes: { tags: ['Contacts'], read_only: false } },
    });
    expect(response.status).toBe(201);
    const value = response.body.api_key as string;
    expect(response.body).toEqual({
      success: true,
      api_key: expect.stringMatching(/^sk_/),
      key: {
        id: expect.stringMatching(/^key_/),
        label: 'Reporting',
        key_preview: `${value.slice(0, 4)}…${value.slice(-4)}`,
        scopes: { read_only: false, tags: ['Contacts'], sub_account_ids: [], rate_limit_per_min: 60 },
        expires_at: new Date(expiresAt).toISOString(),
        revoked: false,
      },
      message: expect.any(String),
    });
  });

  test('rule 1: omitting scopes yields read-only, section Analytics only, own account only, 60 requests per minute', async () => {
    const { apiKey } = await service.createAccount();
    const { key } = await createKey(apiKey);
    expect(key.scopes).toEqual({ read_only: true, tags: ['Analytics'], sub_account_ids: [], rate_limit_per_min: 60 });
    expect(key.expires_at).toBeNull();
    // No body at all: every field is optional.
    const bare = await service.request('POST', '/api-keys', { apiKey });
    expect(bare.status).toBe(201);
    expect(bare.body.key).toMatchObject({ label: '', scopes: key.scopes, expires_at: null, revoked: false });
  });

  test('rule 2: sending tags: [] on purpose yields a key for every section', async () => {
    const { apiKey } = await service.createAccount();
    const { api_key, key } = await createKey(apiKey, { scopes: { tags: [] } });
    expect(key.scopes).toEqual({ read_only: true, tags: [], sub_account_ids: [], rate_limit_per_min: 60 });
    expect((await service.request('GET', '/lists', { apiKey: api_key })).status).toBe(200);
    expect((await service.request('GET', '/contacts', { apiKey: api_key, query: { limit: 1 } })).status).toBe(200);
  });

  test('rule 3: read_only stays true unless false is sent explicitly', async () => {
    const { apiKey } = await service.createAccount();
    expect((await createKey(apiKey, { scopes: { tags: [] } })).key.scopes).toMatchObject({ read_only: true });
    expect((await createKey(apiKey, { scopes: { read_only: true } })).key.scopes).toMatchObject({ read_only: true });
    expect((await createKey(apiKey, { scopes: { read_only: false } })).key.scopes).toMatchObject({ read_only: false });
    for (const notBoolean of ['false', 0, '', null]) {
      const response = await service.request('POST', '/api-keys', { apiKey, body: { scopes: { read_only: notBoolean } } });
      expect(response.status, JSON.stringify(notBoolean)).toBe(400);
      expect(response.body).toEqual({ success: false, error: 'scopes.read_only must be true or false', error_code: 400 });
    }
  });

  test('rule 6: asking for the API Keys section returns 400 with error_code invalid_scopes', async () => {
    const { apiKey } = await service.createAccount();
    const response = await service.request('POST', '/api-keys', { apiKey, body: { scopes: { tags: ['Contacts', 'API Keys'] } } });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ success: false, error: expect.stringContaining('API Keys'), error_code: 'invalid_scopes' });
    expect((await service.request('GET', '/api-keys', { apiKey })).body.api_keys).toEqual([]);
  });

  test('an unknown section name is a 400 naming it', async () => {
    const { apiKey } = await service.createAccount();
    const response = await service.request('POST', '/api-keys', { apiKey, body: { scopes: { tags: ['Kontacts'] } } });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ success: false, error: expect.stringContaining('"Kontacts"'), error_code: 400 });
  });

  test('expires_at must be in the future (400)', async () => {
    const { apiKey } = await service.createAccount();
    const past = await service.request('POST', '/api-keys', { apiKey, body: { expires_at: '2020-01-01T00:00:00Z' } });
    expect(past.status).toBe(400);
    expect(past.body).toEqual({ success: false, error: 'expires_at must be in the future', error_code: 400 });
    const garbage = await service.request('POST', '/api-keys', { apiKey, body: { expires_at: 'next tuesday' } });
    expect(garbage.status).toBe(400);
    expect(garbage.body.error).toContain('expires_at');
  });

  test('rate_limit_per_min: maximum 300 (400 above it)', async () => {
    const { apiKey } = await service.createAccount();
    const tooMany = await service.request('POST', '/api-keys', { apiKey, body: { scopes: { rate_limit_per_min: 301 } } });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toEqual({ success: false, error: 'scopes.rate_limit_per_min must be at most 300', error_code: 400 });
    expect((await createKey(apiKey, { scopes: { rate_limit_per_min: 300 } })).key.scopes).toMatchObject({ rate_limit_per_min: 300 });
  });

  test('the key value works as a credential in every carrier', async () => {
    const { apiKey } = await service.createAccount();
    const { api_key } = await createKey(apiKey, { scopes: { tags: ['Lists'] } });
    expect((await service.request('GET', '/lists', { apiKey: api_key })).status).toBe(200);
    expect((await service.request('GET', '/lists', { headers: { 'x-api-key': api_key } })).status).toBe(200);
    expect((await service.request('GET', '/lists', { headers: { authorization: `Bearer ${api_key}` } })).status).toBe(200);
  });
});

describe('GET /api-keys', () => {
  test('newest first, revoked ones included with revoked_at, masked previews only', async () => {
    const { apiKey } = await service.createAccount();
    const first = await createKey(apiKey, { label: 'first' });
    const second = await createKey(apiKey, { label: 'second' });
    await service.request('DELETE', `/api-keys/${first.key.id}`, { apiKey });

    const response = await service.request('GET', '/api-keys', { apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      success: true,
      api_keys: [
        {
          id: second.key.id,
          label: 'second',
          key_preview: `${second.api_key.slice(0, 4)}…${second.api_key.slice(-4)}`,
          scopes: { read_only: true, tags: ['Analytics'], sub_account_ids: [], rate_limit_per_min: 60 },
          expires_at: null,
          last_used_at: null,
          created_at: isoDate,
          revoked_at: null,
          revoked: false,
        },
        expect.objectContaining({ id: first.key.id, label: 'first', revoked: true, revoked_at: isoDate }),
      ],
    });
    expect(response.text).not.toContain(second.api_key);
    expect(response.text).not.toContain(first.api_key);
    // The main key is not a scoped key.
    expect(response.text).not.toContain(apiKey.slice(-4) + '"');
  });

  test('at most 200 keys', async () => {
    const { userId, apiKey } = await service.createAccount();
    await service.services.pool.query(
      `insert into api_keys (id, account_id, kind, key_hash, key_preview, label, scopes, created_at)
       select 'key_' || lpad(g::text, 26, '0'), $1, 'scoped', decode(md5(g::text || $1), 'hex'), 'sk_x…xxxx', 'bulk',
         '{"read_only":true,"tags":["Analytics"],"sub_account_ids":[],"rate_limit_per_min":60}'::jsonb, now()
       from generate_series(1, 205) g`,
      [userId],
    );
    const response = await service.request('GET', '/api-keys', { apiKey });
    expect(response.body.api_keys).toHaveLength(200);
    expect(response.body.api_keys[0].id).toBe(`key_${'205'.padStart(26, '0')}`);
  });

  test('last_used_at is set once the scoped key is used', async () => {
    const { apiKey } = await service.createAccount();
    const created = await createKey(apiKey, { scopes: { tags: ['Lists'] } });
    expect((await service.request('GET', '/lists', { apiKey: created.api_key })).status).toBe(200);
    const [listed] = (await service.request('GET', '/api-keys', { apiKey })).body.api_keys;
    expect(listed.last_used_at).toEqual(isoDate);
  });
});

describe('PATCH /api-keys/{id}', () => {
  test('200 {success, key}; rule 4: scopes replaces the whole permission set (no merge)', async () => {
    const { apiKey } = await service.createAccount();
    const created = await createKey(apiKey, {
      label: 'before',
      scopes: { read_only: false, tags: ['Contacts', 'Lists'], sub_account_ids: ['*'], rate_limit_per_min: 200 },
    });
    const response = await service.request('PATCH', `/api-keys/${created.key.id}`, { apiKey, body: { scopes: { tags: ['Tags'] } } });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      success: true,
      key: {
        id: created.key.id,
        label: 'before',
        key_preview: created.key.key_preview,
        scopes: { read_only: true, tags: ['Tags'], sub_account_ids: [], rate_limit_per_min: 60 },
        expires_at: null,
        last_used_at: null,
        created_at: isoDate,
        revoked_at: null,
        revoked: false,
      },
    });
  });

  test('label and expires_at alone leave the scopes as they are; expires_at null means never expires', async () => {
    const { apiKey } = await service.createAccount();
    const created = await createKey(apiKey, { scopes: { tags: ['Lists'], read_only: false }, expires_at: inOneDay() });
    const renamed = await service.request('PATCH', `/api-keys/${created.key.id}`, { apiKey, body: { label: 'renamed', expires_at: null } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.key).toMatchObject({ label: 'renamed', expires_at: null, scopes: { tags: ['Lists'], read_only: false } });
  });

  test('rule 5: the key value never changes on update', async () => {
    const { apiKey } = await service.createAccount();
    const created = await createKey(apiKey, { scopes: { tags: ['Lists'] } });
    await service.request('PATCH', `/api-keys/${created.key.id}`, { apiKey, body: { scopes: { tags: ['Lists'], read_only: false } } });
    const write = await service.request('POST', '/lists', { apiKey: created.api_key, body: { name: 'by scoped key' } });
    expect(write.status).toBe(201);
  });

  test('the new scopes apply to the very next request', async () => {
    const { apiKey } = await service.createAccount();
    const created = await createKey(apiKey, { scopes: { tags: ['Lists'] } });
    expect((await service.request('GET', '/lists', { apiKey: created.api_key })).status).toBe(200);
    await service.request('PATCH', `/api-keys/${created.key.id}`, { apiKey, body: { scopes: { tags: ['Contacts'] } } });
    const denied = await service.request('GET', '/lists', { apiKey: created.api_key });
    expect(denied.status).toBe(403);
    expect(denied.body.error_code).toBe('key_scope_denied');
  });

  test('none of label, scopes, expires_at sent gives 400', async () => {
    const { apiKey } = await service.createAccount();
    const created = await createKey(apiKey);
    const response = await service.request('PATCH', `/api-keys/${created.key.id}`, { apiKey, body: {} });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ success: false, error: expect.stringContaining('No fields to update'), error_code: 400 });
  });

  test('the API Keys section, a past expires_at and rate_limit_per_min above 300 are refused on update too', async () => {
    const { apiKey } = await service.createAccount();
    const created = await createKey(apiKey);
    const path = `/api-keys/${created.key.id}`;
    const apiKeys = await service.request('PATCH', path, { apiKey, body: { scopes: { tags: ['API Keys'] } } });
    expect(apiKeys.status).toBe(400);
    expect(apiKeys.body.error_code).toBe('invalid_scopes');
    expect((await service.request('PATCH', path, { apiKey, body: { expires_at: '2001-01-01T00:00:00Z' } })).status).toBe(400);
    expect((await service.request('PATCH', path, { apiKey, body: { scopes: { rate_limit_per_min: 1000 } } })).status).toBe(400);
  });

  test('404 when no key with that id on the account (another account\'s key, the key value, an unknown id)', async () => {
    const a = await service.createAccount();
    const b = await service.createAccount();
    const created = await createKey(a.apiKey);
    for (const id of [created.key.id, created.api_key, 'key_unknown']) {
      const response = await service.request('PATCH', `/api-keys/${encodeURIComponent(id)}`, { apiKey: b.apiKey, body: { label: 'x' } });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ success: false, error: 'API key not found', error_code: 404 });
    }
    const byValue = await service.request('PATCH', `/api-keys/${created.api_key}`, { apiKey: a.apiKey, body: { label: 'x' } });
    expect(byValue.status).toBe(404);
  });
});

describe('DELETE /api-keys/{id}', () => {
  test('200 {success, revoked:true, id, message}; the key then gets 401; revoking again changes nothing', async () => {
    const { apiKey } = await service.createAccount();
    const created = await createKey(apiKey, { scopes: { tags: ['Lists'] } });
    const revoked = await service.request('DELETE', `/api-keys/${created.key.id}`, { apiKey });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ success: true, revoked: true, id: created.key.id, message: expect.any(String) });

    const after = await service.request('GET', '/lists', { apiKey: created.api_key });
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ success: false, error: 'Invalid API key', error_code: 401 });

    const [before] = (await service.request('GET', '/api-keys', { apiKey })).body.api_keys;
    const again = await service.request('DELETE', `/api-keys/${created.key.id}`, { apiKey });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(revoked.body);
    const [afterAgain] = (await service.request('GET', '/api-keys', { apiKey })).body.api_keys;
    expect(afterAgain.revoked_at).toBe(before.revoked_at);
  });

  test('404 when the id is unknown or belongs to another account', async () => {
    const a = await service.createAccount();
    const b = await service.createAccount();
    const created = await createKey(a.apiKey, { scopes: { tags: ['Lists'] } });
    const foreign = await service.request('DELETE', `/api-keys/${created.key.id}`, { apiKey: b.apiKey });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ success: false, error: 'API key not found', error_code: 404 });
    expect((await service.request('DELETE', '/api-keys/key_nope', { apiKey: a.apiKey })).status).toBe(404);
    expect((await service.request('GET', '/lists', { apiKey: created.api_key })).status).toBe(200);
  });
});

describe('key management needs the main key or an owner session', () => {
  test('a scoped key (even one granted every section, writable) listing, creating, editing or revoking keys gets 403 key_scope_denied', async () => {
    const { apiKey } = await service.createAccount();
    const created = await createKey(apiKey, { scopes: { tags: [], read_only: false, sub_account_ids: ['*'], rate_limit_per_min: 300 } });
    const scoped = created.api_key;
    const attempts: [string, string, unknown][] = [
      ['GET', '/api-keys', undefined],
      ['POST', '/api-keys', {}],
      ['PATCH', `/api-keys/${created.key.id}`, { label: 'mine now' }],
      ['DELETE', `/api-keys/${created.key.id}`, undefined],
      ['POST', '/api-keys/rotate', undefined],
      ['GET', '/api-keys/usage', undefined],
    ];
    for (const [method, path, body] of attempts) {
      const response = await service.request(method, path, { apiKey: scoped, body });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(response.body).toEqual({ success: false, error: expect.any(String), error_code: 'key_scope_denied' });
    }
    const [listed] = (await service.request('GET', '/api-keys', { apiKey })).body.api_keys;
    expect(listed).toMatchObject({ id: created.key.id, label: '', revoked: false });
  });
});

describe('scopes.sub_account_ids names only accounts the caller manages', () => {
  let clientCounter = 0;
  async function newClient(agencyKey: string): Promise<string> {
    clientCounter += 1;
    const response = await service.request('POST', '/sub-accounts', {
      apiKey: agencyKey,
      body: { email: `scoped-client${clientCounter}-${process.pid}-${Date.now()}@example.com`, first_name: 'C', last_name: 'L', usage_limits: { monthly_credits: 10 } },
    });
    expect(response.status, response.text).toBe(201);
    return response.body.data.id;
  }
  const notManaged = (id: string) => ({ success: false, error: `scopes.sub_account_ids: "${id}" is not a client account you manage`, error_code: 400 });

  test("an agency may list its own clients, or [\"*\"]; another agency's client, an unrelated account or an unknown id is 400 naming it", async () => {
    const agency = await service.createAccount({ agency: true });
    const otherAgency = await service.createAccount({ agency: true });
    const own = await newClient(agency.apiKey);
    const foreign = await newClient(otherAgency.apiKey);
    const unrelated = await service.createAccount();

    const listed = await createKey(agency.apiKey, { scopes: { sub_account_ids: [own] } });
    expect(listed.key.scopes).toMatchObject({ sub_account_ids: [own] });
    expect((await createKey(agency.apiKey, { scopes: { sub_account_ids: ['*'] } })).key.scopes).toMatchObject({ sub_account_ids: ['*'] });

    for (const stranger of [foreign, unrelated.userId, otherAgency.userId, agency.userId, 'usr_unknown']) {
      const response = await service.request('POST', '/api-keys', { apiKey: agency.apiKey, body: { scopes: { sub_account_ids: [own, stranger] } } });
      expect({ stranger, status: response.status, body: response.body }).toEqual({ stranger, status: 400, body: notManaged(stranger) });
    }
    // Nothing but the two accepted keys was made.
    expect((await service.request('GET', '/api-keys', { apiKey: agency.apiKey })).body.api_keys).toHaveLength(2);
  });

  test('a non-agency account manages no one: any concrete id is 400; ["*"] grants nothing and is accepted', async () => {
    const plain = await service.createAccount();
    const agency = await service.createAccount({ agency: true });
    const someoneElsesClient = await newClient(agency.apiKey);
    for (const id of [someoneElsesClient, agency.userId]) {
      const response = await service.request('POST', '/api-keys', { apiKey: plain.apiKey, body: { scopes: { sub_account_ids: [id] } } });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(notManaged(id));
    }
    const star = await createKey(plain.apiKey, { scopes: { tags: ['Lists'], sub_account_ids: ['*'] } });
    const reach = await service.request('GET', '/lists', { apiKey: star.api_key, query: { userId: someoneElsesClient } });
    expect(reach.status).toBe(403);
    expect(reach.body.error_code).toBe('key_scope_denied');
  });

  test('PATCH applies the same rule, and a refused update leaves the scopes as they were', async () => {
    const agency = await service.createAccount({ agency: true });
    const otherAgency = await service.createAccount({ agency: true });
    const own = await newClient(agency.apiKey);
    const foreign = await newClient(otherAgency.apiKey);
    const created = await createKey(agency.apiKey, { scopes: { tags: ['Lists'], sub_account_ids: [own] } });
    const path = `/api-keys/${created.key.id}`;

    const refused = await service.request('PATCH', path, { apiKey: agency.apiKey, body: { scopes: { tags: ['Lists'], sub_account_ids: [foreign] } } });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual(notManaged(foreign));
    const [unchanged] = (await service.request('GET', '/api-keys', { apiKey: agency.apiKey })).body.api_keys;
    expect(unchanged.scopes.sub_account_ids).toEqual([own]);

    const widened = await service.request('PATCH', path, { apiKey: agency.apiKey, body: { scopes: { tags: ['Lists'], sub_account_ids: ['*'] } } });
    expect(widened.status).toBe(200);
    expect(widened.body.key.scopes.sub_account_ids).toEqual(['*']);
  });
});

describe('PATCH /api-keys/{id} on a revoked key', () => {
  test('a revoked key cannot be edited: 409 saying it is revoked, and label, scopes and expiry stay as they were', async () => {
    const { apiKey } = await service.createAccount();
    const created = await createKey(apiKey, { label: 'old', scopes: { tags: ['Lists'] } });
    expect((await service.request('DELETE', `/api-keys/${created.key.id}`, { apiKey })).status).toBe(200);
    const [before] = (await service.request('GET', '/api-keys', { apiKey })).body.api_keys;

    for (const body of [{ scopes: { tags: [], read_only: false } }, { label: 'new' }, { expires_at: inOneDay() }]) {
      const response = await service.request('PATCH', `/api-keys/${created.key.id}`, { apiKey, body });
      expect(response.status).toBe(409);
      expect(response.body).toEqual({ success: false, error: 'This API key is revoked and cannot be changed', error_code: 409 });
    }
    const [after] = (await service.request('GET', '/api-keys', { apiKey })).body.api_keys;
    expect(after).toEqual(before);
    expect((await service.request('GET', '/lists', { apiKey: created.api_key })).status).toBe(401);
  });
});
