// Idempotency-Key over real HTTPS, on /v1 POSTs and single /trpc mutations: the first
// response to a key is replayed to retries of the same request by the same credential,
// a different request (or credential) with the key is 409, a concurrent retry never runs
// it twice, and a stored response carrying a secret is sealed at rest.
import { describe, expect, test } from 'vitest';
import { serviceForFile } from '../helpers/service-for-file.ts';
import type { ApiResponse, TestService } from '../helpers/service.ts';
import { sweepIdempotencyKeys } from '../../workers/sweep-idempotency-keys.ts';

let service: TestService;
let a: { userId: string; apiKey: string };
let b: { userId: string; apiKey: string };

serviceForFile({ start: { env: { WEBHOOK_ALLOW_HOSTS: 'localhost,127.0.0.1' } }, accounts: [{}, {}] }, (started) => ({ service, accounts: [a, b] } = started));

let seq = 0;
function unique(prefix: string): string {
  seq += 1;
  return `${prefix}-${Date.now()}-${seq}`;
}
function nextPhone(): string {
  seq += 1;
  return `+1415556${String(1000 + seq).padStart(4, '0')}`;
}

async function count(sql: string, values: unknown[]): Promise<number> {
  const { rows } = await service.services.pool.query<{ n: number }>(`select count(*)::int as n from ${sql}`, values);
  return rows[0]!.n;
}
const tasksTitled = (accountId: string, title: string) => count('tasks where account_id = $1 and title = $2', [accountId, title]);

function post(path: string, apiKey: string, body: unknown, key?: string): Promise<ApiResponse> {
  return service.request('POST', path, { apiKey, body, headers: key === undefined ? {} : { 'idempotency-key': key } });
}

function expectReplayOf(replay: ApiResponse, first: ApiResponse) {
  expect(replay.status).toBe(first.status);
  expect(replay.text).toBe(first.text);
  expect(replay.contentType).toBe(first.contentType);
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
}

describe('a retry with the same key replays the first response', () => {
  test('a success is replayed with the identical status and body, and the task is created once', async () => {
    const key = unique('k');
    const title = unique('task');
    const first = await post('/tasks', a.apiKey, { title }, key);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await post('/tasks', a.apiKey, { title }, key);
    expectReplayOf(again, first);
    // Keys of the same input in another order are the same request.
    const reordered = await post('/tasks', a.apiKey, { status: undefined, title }, key);
    expectReplayOf(reordered, first);
    expect(await tasksTitled(a.userId, title)).toBe(1);
  });

  test('a stored 409 (duplicate contact) is replayed, not run again into a different answer', async () => {
    const phoneNumber = nextPhone();
    expect((await post('/contacts', a.apiKey, { phoneNumber })).status).toBe(200);
    const key = unique('k');
    const first = await post('/contacts', a.apiKey, { phoneNumber }, key);
    expect(first.status).toBe(409);
    expect(first.body).toEqual({ success: false, error: expect.stringMatching(/already exists/), error_code: 409 });
    // The contact goes away; a retry still gets the stored 409, not a new 200.
    await service.services.pool.query('delete from contacts where account_id = $1 and phone_number = $2', [a.userId, phoneNumber]);
    const again = await post('/contacts', a.apiKey, { phoneNumber }, key);
    expectReplayOf(again, first);
    expect(await count('contacts where account_id = $1 and phone_number = $2', [a.userId, phoneNumber])).toBe(0);
  });

  test('a stored 404 is replayed', async () => {
    const key = unique('k');
    const title = unique('task');
    const first = await post('/tasks', a.apiKey, { title, contactId: 'ct_missing' }, key);
    expect(first.status).toBe(404);
    const again = await post('/tasks', a.apiKey, { title, contactId: 'ct_missing' }, key);
    expectReplayOf(again, first);
    expect(await tasksTitled(a.userId, title)).toBe(0);
  });
});

describe('the same key with a different request', () => {
  test('a different body is 409 in the envelope, and nothing runs', async () => {
    const key = unique('k');
    const title = unique('task');
    expect((await post('/tasks', a.apiKey, { title }, key)).status).toBe(201);
    const other = await post('/tasks', a.apiKey, { title: `${title}-other` }, key);
    expect(other.status).toBe(409);
    expect(other.body).toEqual({ success: false, error: expect.stringMatching(/Idempotency-Key was already used with a different request/), error_code: 'idempotency_key_reused' });
    expect(other.headers.get('idempotent-replayed')).toBeNull();
    expect(await tasksTitled(a.userId, `${title}-other`)).toBe(0);
  });

  test('another path is a different request: 409', async () => {
    const key = unique('k');
    expect((await post('/tasks', a.apiKey, { title: unique('task') }, key)).status).toBe(201);
    expect((await post('/lists', a.apiKey, { name: unique('list') }, key)).status).toBe(409);
  });
});

test('20 concurrent requests with one key run it exactly once; the others get the replay or 409', async () => {
  const key = unique('k');
  const title = unique('task');
  const answers = await Promise.all(Array.from({ length: 20 }, () => post('/tasks', a.apiKey, { title }, key)));
  expect(await tasksTitled(a.userId, title)).toBe(1);
  const ran = answers.filter((answer) => answer.status === 201 && answer.headers.get('idempotent-replayed') === null);
  expect(ran).toHaveLength(1);
  for (const answer of answers) {
    if (answer === ran[0]) continue;
    if (answer.status === 409) {
      expect(answer.body).toEqual({
        success: false,
        error: 'A request with this Idempotency-Key is still being processed; retry later',
        error_code: 'idempotency_key_in_use',
      });
    } else {
      expectReplayOf(answer, ran[0]!);
    }
  }
});

test('keys belong to the account acted on: another account uses the same key independently', async () => {
  const key = unique('k');
  const title = unique('task');
  const fromA = await post('/tasks', a.apiKey, { title }, key);
  const fromB = await post('/tasks', b.apiKey, { title }, key);
  expect(fromA.status).toBe(201);
  expect(fromB.status).toBe(201);
  expect(fromB.headers.get('idempotent-replayed')).toBeNull();
  expect(fromB.body.data.id).not.toBe(fromA.body.data.id);
  expect(await tasksTitled(a.userId, title)).toBe(1);
  expect(await tasksTitled(b.userId, title)).toBe(1);
});

test('without the header nothing changes: each request runs, no key is stored', async () => {
  const title = unique('task');
  const before = await count('idempotency_keys', []);
  expect((await post('/tasks', a.apiKey, { title })).status).toBe(201);
  const second = await post('/tasks', a.apiKey, { title });
  expect(second.status).toBe(201);
  expect(second.headers.get('idempotent-replayed')).toBeNull();
  expect(await tasksTitled(a.userId, title)).toBe(2);
  expect(await count('idempotency_keys', [])).toBe(before);
});

describe('a malformed key is 400 naming the header, and nothing runs', () => {
  test.each([
    ['256 characters', 'x'.repeat(256)],
    ['empty', ''],
    ['not ASCII', 'clé'],
  ])('%s', async (_name, key) => {
    const title = unique('task');
    const response = await service.request('POST', '/tasks', {
      apiKey: a.apiKey,
      body: { title },
      headers: { 'idempotency-key': key === 'clé' ? Buffer.from(key).toString('latin1') : key },
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ success: false, error: 'Idempotency-Key header must be 1 to 255 printable ASCII characters', error_code: 400 });
    expect(await tasksTitled(a.userId, title)).toBe(0);
  });

  test('255 characters are accepted', async () => {
    expect((await post('/tasks', a.apiKey, { title: unique('task') }, `${unique('k')}${'y'.repeat(255)}`.slice(-255))).status).toBe(201);
  });
});

test('refusals before the account is known are not stored: a 401 then a valid retry runs', async () => {
  const key = unique('k');
  const title = unique('task');
  expect((await post('/tasks', 'mk_wrong', { title }, key)).status).toBe(401);
  const retry = await post('/tasks', a.apiKey, { title }, key);
  expect(retry.status).toBe(201);
  expect(retry.headers.get('idempotent-replayed')).toBeNull();
});

describe('single /trpc mutations honour the key too', () => {
  function trpc(path: string, input: unknown, key: string, apiKey = a.apiKey) {
    return service.request('POST', `/trpc/${path}`, {
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'idempotency-key': key },
      rawBody: JSON.stringify(input),
      unchecked: true,
    });
  }

  test('replayed with the identical body; created once; a different input is 409', async () => {
    const key = unique('k');
    const title = unique('task');
    const first = await trpc('tasks.create', { title }, key);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ result: { data: { success: true, data: { title } } } });
    const again = await trpc('tasks.create', { title }, key);
    expectReplayOf(again, first);
    expect(await tasksTitled(a.userId, title)).toBe(1);

    const other = await trpc('tasks.create', { title: `${title}-other` }, key);
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ error: { data: { code: 'CONFLICT', httpStatus: 409, error_code: 'idempotency_key_reused' } } });
  });

  test('the same key on /v1 and /trpc names two different requests', async () => {
    const key = unique('k');
    const title = unique('task');
    expect((await trpc('tasks.create', { title }, key)).status).toBe(200);
    expect((await post('/tasks', a.apiKey, { title }, key)).status).toBe(409);
  });
});

const RECEIVER = 'https://localhost:9/hook';
const signedWebhook = (name: string) => ({ url: RECEIVER, subscribed_to: ['Replies'], name, generate_signing_secret: true });

/** The stored row of a key as PostgreSQL prints it, every column included. */
async function storedRow(accountId: string, key: string): Promise<string> {
  const { rows } = await service.services.pool.query<{ row: string }>('select k::text as row from idempotency_keys k where account_id = $1 and key = $2', [accountId, key]);
  expect(rows).toHaveLength(1);
  return rows[0]!.row;
}

describe('a stored response that carries a secret', () => {
  test('a scoped key made with a key is replayed to the same credential, and the row holds it only sealed', async () => {
    const account = await service.createAccount();
    const key = unique('k');
    const body = { label: unique('scoped'), scopes: { tags: ['Tasks'], read_only: false } };
    const first = await post('/api-keys', account.apiKey, body, key);
    expect(first.status).toBe(201);
    const secret = first.body.api_key as string;
    expect(secret).toMatch(/^sk_/);
    const again = await post('/api-keys', account.apiKey, body, key);
    expectReplayOf(again, first);
    expect(again.body.api_key).toBe(secret);
    expect(await count('api_keys where account_id = $1 and label = $2', [account.userId, body.label])).toBe(1);
    const row = await storedRow(account.userId, key);
    expect(row).not.toContain(secret);
    expect(row).not.toContain(first.body.key.id);
    expect(row).toMatch(/v1\.[\w-]+\.[\w-]+\.[\w-]+/);
  });

  test('a rotated main key: the row holds it only sealed, and a retry with the new key (same credential) replays it', async () => {
    const account = await service.createAccount();
    const key = unique('k');
    const first = await post('/api-keys/rotate', account.apiKey, {}, key);
    expect(first.status).toBe(200);
    const secret = first.body.api_key as string;
    expect(await storedRow(account.userId, key)).not.toContain(secret);
    // The old key is gone; the same main key, under its new value, is the same credential.
    expect((await post('/api-keys/rotate', account.apiKey, {}, key)).status).toBe(401);
    const again = await post('/api-keys/rotate', secret, {}, key);
    expectReplayOf(again, first);
    expect((await service.request('GET', '/api-keys/current', { apiKey: secret })).body.api_key).toBe(secret);
  });

  test("a scoped key that may write webhooks but not read signing secrets, replaying the main key's POST /webhooks, is refused, never given the secret", async () => {
    const account = await service.createAccount();
    const scoped = await service.createScopedKey(account.userId, { tags: ['Webhooks'], read_only: false });
    const key = unique('k');
    const body = signedWebhook(unique('hook'));
    const first = await post('/webhooks', account.apiKey, body, key);
    expect(first.status, first.text).toBe(200);
    const secret = first.body.signing_secret as string;
    expect(secret).toMatch(/^whsec_/);
    expect(await storedRow(account.userId, key)).not.toContain(secret);
    // The key is refused the secret directly...
    const direct = await service.request('GET', `/webhooks/${first.body.webhook_id}/signing-secret`, { apiKey: scoped });
    expect(direct.status).toBe(403);
    // ...and through a replay of the main key's request, which asks to mint a secret: a
    // permission it lacks, so it is refused before any stored response is looked at.
    const replay = await post('/webhooks', scoped, body, key);
    expect(replay.status).toBe(403);
    expect(replay.body).toEqual({ success: false, error: expect.any(String), error_code: 'key_scope_denied' });
    expect(replay.text).not.toContain(secret);
    expect(replay.headers.get('idempotent-replayed')).toBeNull();
    // The main key still gets its own response.
    const own = await post('/webhooks', account.apiKey, body, key);
    expectReplayOf(own, first);
    expect(own.body.signing_secret).toBe(secret);
  });

  test("an agency acting on its client with a key, then the client's own key with it: 409, not the agency's response", async () => {
    const agency = await service.createAccount({ agency: true });
    const client = await service.createAccount();
    await service.services.pool.query('update accounts set agency_id = $1 where id = $2', [agency.userId, client.userId]);
    const key = unique('k');
    const body = signedWebhook(unique('hook'));
    const first = await service.request('POST', '/webhooks', { apiKey: agency.apiKey, query: { userId: client.userId }, body, headers: { 'idempotency-key': key } });
    expect(first.status, first.text).toBe(200);
    const secret = first.body.signing_secret as string;
    expect(await storedRow(client.userId, key)).not.toContain(secret);
    const byClient = await post('/webhooks', client.apiKey, body, key);
    expect(byClient.status).toBe(409);
    expect(byClient.body.error_code).toBe('idempotency_key_reused');
    expect(byClient.text).not.toContain(secret);
    // And the other way round: the agency's retry is still its own replay.
    const retry = await service.request('POST', '/webhooks', { apiKey: agency.apiKey, query: { userId: client.userId }, body, headers: { 'idempotency-key': key } });
    expectReplayOf(retry, first);
  });

  test('a stored response that cannot be unsealed is refused (422), never run a second time', async () => {
    const key = unique('k');
    const title = unique('task');
    expect((await post('/tasks', a.apiKey, { title }, key)).status).toBe(201);
    // As if SECRET_KEY had changed since: the sealed text no longer opens.
    await service.services.pool.query(`update idempotency_keys set response_sealed = 'v1.AAAA.AAAA.AAAA' where account_id = $1 and key = $2`, [a.userId, key]);
    const again = await post('/tasks', a.apiKey, { title }, key);
    expect(again.status).toBe(422);
    expect(again.body).toEqual({ success: false, error: expect.stringMatching(/can no longer be read; use a new key/), error_code: 'idempotency_key_unreadable' });
    expect(await tasksTitled(a.userId, title)).toBe(1);
  });

  describe('over /trpc', () => {
    function trpc(path: string, input: unknown, key: string, apiKey: string) {
      return service.request('POST', `/trpc/${path}`, {
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'idempotency-key': key },
        rawBody: JSON.stringify(input),
        unchecked: true,
      });
    }

    test("the same credential gets its secret again; a scoped key replaying the main key's webhooks.create gets 409", async () => {
      const account = await service.createAccount();
      // A key that may mint signing secrets itself: the replay is refused for being another credential's.
      const scoped = await service.createScopedKey(account.userId, { tags: ['Webhooks', 'Integrations'], read_only: false });
      const key = unique('k');
      const body = signedWebhook(unique('hook'));
      const first = await trpc('webhooks.create', body, key, account.apiKey);
      expect(first.status, first.text).toBe(200);
      const secret = first.body.result.data.signing_secret as string;
      expect(secret).toMatch(/^whsec_/);
      expect(await storedRow(account.userId, key)).not.toContain(secret);
      expectReplayOf(await trpc('webhooks.create', body, key, account.apiKey), first);
      const replay = await trpc('webhooks.create', body, key, scoped);
      expect(replay.status).toBe(409);
      expect(replay.body).toMatchObject({ error: { data: { httpStatus: 409, error_code: 'idempotency_key_reused' } } });
      expect(replay.text).not.toContain(secret);
    });
  });
});

describe('expiry', () => {
  test('an abandoned claim (a crash before the response was stored) is taken over after 5 minutes', async () => {
    const key = unique('k');
    const title = unique('task');
    expect((await post('/tasks', a.apiKey, { title }, key)).status).toBe(201);
    // As if the first process had died while running: unfinished, and claimed long ago.
    await service.services.pool.query(
      `update idempotency_keys set state = 'running', status = null, response_sealed = null, content_type = null, completed_at = null,
         created_at = now() - interval '1 minute' where account_id = $1 and key = $2`,
      [a.userId, key],
    );
    expect((await post('/tasks', a.apiKey, { title }, key)).status).toBe(409);
    await service.services.pool.query(`update idempotency_keys set created_at = now() - interval '6 minutes' where account_id = $1 and key = $2`, [a.userId, key]);
    const retry = await post('/tasks', a.apiKey, { title }, key);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(await tasksTitled(a.userId, title)).toBe(2);
  });

  test('the hourly sweep deletes keys older than 24 hours and keeps newer ones', async () => {
    const oldKey = unique('k');
    const newKey = unique('k');
    expect((await post('/tasks', a.apiKey, { title: unique('task') }, oldKey)).status).toBe(201);
    expect((await post('/tasks', a.apiKey, { title: unique('task') }, newKey)).status).toBe(201);
    await service.services.pool.query(`update idempotency_keys set created_at = now() - interval '25 hours' where account_id = $1 and key = $2`, [a.userId, oldKey]);
    expect(await sweepIdempotencyKeys(service.services)).toBeGreaterThanOrEqual(1);
    expect(await count('idempotency_keys where account_id = $1 and key = $2', [a.userId, oldKey])).toBe(0);
    expect(await count('idempotency_keys where account_id = $1 and key = $2', [a.userId, newKey])).toBe(1);
  });
});
