// Webhook subscriptions over real HTTPS: list, events, create, update, delete, health
// and re-enable, with exact statuses and bodies.
import { describe, expect, test } from 'vitest';
import { EVENT_NAMES } from '../../server/events/event-names.ts';
import { serviceForFile } from '../helpers/service-for-file.ts';
import type { TestService } from '../helpers/service.ts';

let service: TestService;
let a: { userId: string; apiKey: string };
let b: { userId: string; apiKey: string };

// Deliverable in tests only: WEBHOOK_ALLOW_HOSTS exempts localhost from the public-address rule.
const RECEIVER = 'https://localhost:9/hook';

serviceForFile({ start: { env: { WEBHOOK_ALLOW_HOSTS: 'localhost,127.0.0.1' } }, accounts: [{}, {}] }, (started) => ({ service, accounts: [a, b] } = started));

async function freshAccount() {
  return service.createAccount();
}

async function create(apiKey: string, body: Record<string, unknown>) {
  const response = await service.request('POST', '/webhooks', { apiKey, body: { url: RECEIVER, subscribed_to: ['Contact Created'], ...body } });
  expect(response.status, response.text).toBe(200);
  return response.body;
}

async function list(apiKey: string) {
  const response = await service.request('GET', '/webhooks', { apiKey });
  expect(response.status).toBe(200);
  return response.body.webhooks as Array<Record<string, unknown>>;
}

async function healthRows(subscriptionName: string) {
  const { rows } = await service.services.pool.query(
    `select h.* from webhook_health h join webhook_subscriptions s on s.id = h.subscription_id where s.name = $1`,
    [subscriptionName],
  );
  return rows;
}

async function subscriptionRowId(accountId: string, name: string): Promise<string> {
  const { rows } = await service.services.pool.query<{ id: string }>(
    'select id from webhook_subscriptions where account_id = $1 and name = $2',
    [accountId, name],
  );
  return rows[0]!.id;
}

/** A health row as the delivery engine leaves it after repeated failures. */
async function insertDisabledHealth(subscriptionId: string, accountId: string) {
  await service.services.pool.query(
    `insert into webhook_health (subscription_id, account_id, consecutive_failures, total_failures, total_successes, is_disabled, disabled_at, disabled_reason, last_failure, last_success_at)
     values ($1, $2, 5, 7, 3, true, now(), 'Disabled after 5 consecutive failed deliveries', '{"type":"temporary","status_code":500}', now() - interval '1 day')`,
    [subscriptionId, accountId],
  );
}

describe('"These require webhooks to be enabled for the account (otherwise 403)"', () => {
  test('every /webhooks route answers 403 in the envelope when webhooks are off', async () => {
    const off = await service.createAccount({ webhooks: false });
    const calls: Array<[string, string, unknown?]> = [
      ['GET', '/webhooks'],
      ['GET', '/webhooks/events'],
      ['POST', '/webhooks', { url: RECEIVER, subscribed_to: ['Replies'] }],
      ['PUT', '/webhooks/1', { name: 'x' }],
      ['DELETE', '/webhooks/1'],
      ['POST', '/webhooks/1/test', {}],
      ['GET', '/webhooks/1/health'],
      ['POST', '/webhooks/1/reenable', {}],
      ['GET', '/webhooks/1/signing-secret'],
      ['POST', '/webhooks/1/signing-secret', {}],
      ['DELETE', '/webhooks/1/signing-secret'],
      ['GET', '/webhooks/1/deliveries'],
      ['POST', '/webhooks/1/replay', { since: '2026-01-01T00:00:00Z' }],
    ];
    for (const [method, path, body] of calls) {
      const response = await service.request(method, path, { apiKey: off.apiKey, body });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(response.body, `${method} ${path}`).toEqual({ success: false, error: 'Webhooks are not enabled for this account', error_code: 403 });
    }
  });
});

describe('GET /webhooks/events', () => {
  test('"the subscribable event names; authoritative": the 22 names', async () => {
    const response = await service.request('GET', '/webhooks/events', { apiKey: a.apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, events: [...EVENT_NAMES] });
    expect(response.body.events).toHaveLength(22);
    expect(response.body.events).toContain('Channel Connected');
  });
});

describe('POST /webhooks', () => {
  test('answers 200 {success, webhook_id, webhook:{id, name, url, subscribed_to, subscribed_to_tags, created_at}} with the defaults', async () => {
    const account = await freshAccount();
    const response = await service.request('POST', '/webhooks', {
      apiKey: account.apiKey,
      body: { url: RECEIVER, subscribed_to: ['Contact Created', 'Replies'] },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      success: true,
      webhook_id: '1',
      webhook: {
        id: '1',
        name: expect.stringMatching(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/),
        url: RECEIVER,
        subscribed_to: ['Contact Created', 'Replies'],
        subscribed_to_tags: [],
        created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      },
    });
    expect(response.body.signing_secret).toBeUndefined();
    // Defaults: retries off, enabled, not applied to sub-accounts, signing off.
    expect(await list(account.apiKey)).toEqual([
      {
        ...response.body.webhook,
        signing_enabled: false,
        signing_secret_created_at: null,
        retries_enabled: false,
        enabled: true,
        apply_to_sub_accounts: false,
      },
    ]);
  });

  test('takes name, subscribed_to_tags, retries_enabled, enabled and apply_to_sub_accounts as sent', async () => {
    const account = await freshAccount();
    await create(account.apiKey, {
      name: 'CRM sync',
      subscribed_to: ['Task Created'],
      subscribed_to_tags: ['tag_1', 'tag_2'],
      retries_enabled: true,
      enabled: false,
      apply_to_sub_accounts: true,
    });
    expect(await list(account.apiKey)).toEqual([
      expect.objectContaining({
        id: '1',
        name: 'CRM sync',
        subscribed_to: ['Task Created'],
        subscribed_to_tags: ['tag_1', 'tag_2'],
        retries_enabled: true,
        enabled: false,
        apply_to_sub_accounts: true,
      }),
    ]);
  });

  test('rule 1: plain http, localhost and private-network URLs give 400', async () => {
    for (const url of ['http://example.com/hook', 'https://10.0.0.5/hook', 'https://192.168.1.1/hook', 'https://169.254.169.254/latest', 'ftp://example.com', 'not a url']) {
      const response = await service.request('POST', '/webhooks', { apiKey: a.apiKey, body: { url, subscribed_to: ['Replies'] } });
      expect(response.status, url).toBe(400);
      expect(response.body, url).toEqual({ success: false, error: expect.stringMatching(/url/), error_code: 400 });
    }
    const httpResponse = await service.request('POST', '/webhooks', { apiKey: a.apiKey, body: { url: 'http://example.com/hook', subscribed_to: ['Replies'] } });
    expect(httpResponse.body.error).toBe('url must use https://');
    const privateResponse = await service.request('POST', '/webhooks', { apiKey: a.apiKey, body: { url: 'https://10.0.0.5/hook', subscribed_to: ['Replies'] } });
    expect(privateResponse.body.error).toMatch(/private/);
    // localhost and 127.0.0.1 are exempt in this test service (WEBHOOK_ALLOW_HOSTS); other loopback addresses are not.
    for (const url of ['https://127.0.0.2/hook', 'https://[::1]/hook']) {
      const loopback = await service.request('POST', '/webhooks', { apiKey: a.apiKey, body: { url, subscribed_to: ['Replies'] } });
      expect(loopback.status, url).toBe(400);
      expect(loopback.body.error, url).toMatch(/loopback/);
    }
    expect(await list(a.apiKey)).toEqual([]);
  });

  test('rule 2: an empty or invalid subscribed_to, or missing fields, give 400', async () => {
    const account = await freshAccount();
    const cases: Array<[Record<string, unknown>, string | RegExp]> = [
      [{ url: RECEIVER, subscribed_to: [] }, 'subscribed_to must name at least one event'],
      [{ url: RECEIVER, subscribed_to: ['Contact Created', 'Contact Exploded'] }, /"Contact Exploded" is not an event name/],
      [{ url: RECEIVER, subscribed_to: 'Replies' }, /subscribed_to/],
      [{ url: RECEIVER }, 'subscribed_to is required'],
      [{ subscribed_to: ['Replies'] }, 'url is required'],
    ];
    for (const [body, error] of cases) {
      const response = await service.request('POST', '/webhooks', { apiKey: account.apiKey, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body, JSON.stringify(body)).toEqual({ success: false, error: expect.stringMatching(error), error_code: 400 });
    }
    expect(await list(account.apiKey)).toEqual([]);
  });

  test('a name already used on the account is 409', async () => {
    const account = await freshAccount();
    await create(account.apiKey, { name: 'Only once' });
    const response = await service.request('POST', '/webhooks', { apiKey: account.apiKey, body: { url: RECEIVER, subscribed_to: ['Replies'], name: 'Only once' } });
    expect(response.status).toBe(409);
    expect(response.body).toEqual({ success: false, error: 'A webhook with that name already exists', error_code: 409 });
  });
});

describe('GET /webhooks', () => {
  test('switched-off subscriptions are included, with a concrete enabled; ids are positional; the secret is never part of it', async () => {
    const account = await freshAccount();
    const created = await create(account.apiKey, { name: 'first', generate_signing_secret: true });
    await create(account.apiKey, { name: 'second', enabled: false });
    const response = await service.request('GET', '/webhooks', { apiKey: account.apiKey });
    expect(response.status).toBe(200);
    expect(response.body.webhooks.map((webhook: { id: string; name: string; enabled: boolean }) => [webhook.id, webhook.name, webhook.enabled])).toEqual([
      ['1', 'first', true],
      ['2', 'second', false],
    ]);
    expect(response.body.webhooks[0]).toMatchObject({ signing_enabled: true, signing_secret_created_at: expect.stringMatching(/^\d{4}-/) });
    expect(response.text).not.toContain(created.signing_secret);
    expect(JSON.stringify(Object.keys(response.body.webhooks[0]))).not.toMatch(/"signing_secret"/);
  });

  test('another account sees only its own subscriptions, and its ids are 404 to others', async () => {
    const mine = await freshAccount();
    const theirs = await freshAccount();
    await create(mine.apiKey, { name: 'mine' });
    expect(await list(theirs.apiKey)).toEqual([]);
    for (const id of ['1', 'mine']) {
      const response = await service.request('GET', `/webhooks/${id}/health`, { apiKey: theirs.apiKey });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ success: false, error: 'Webhook not found', error_code: 404 });
    }
  });
});

describe('{webhookId} is the subscription id or its name (URL-encoded)', () => {
  test('the positional id shifts after another subscription is deleted', async () => {
    const account = await freshAccount();
    await create(account.apiKey, { name: 'alpha' });
    await create(account.apiKey, { name: 'beta' });
    await create(account.apiKey, { name: 'gamma' });
    const deleted = await service.request('DELETE', '/webhooks/1', { apiKey: account.apiKey });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true });
    expect((await list(account.apiKey)).map((webhook) => [webhook.id, webhook.name])).toEqual([
      ['1', 'beta'],
      ['2', 'gamma'],
    ]);
    const health = await service.request('GET', '/webhooks/2/health', { apiKey: account.apiKey });
    expect(health.body).toMatchObject({ success: true, webhook_id: '2', url: RECEIVER });
    const gone = await service.request('PUT', '/webhooks/3', { apiKey: account.apiKey, body: { name: 'x' } });
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ success: false, error: 'Webhook not found', error_code: 404 });
  });

  test('a URL-encoded name addresses the subscription; a numeric name is a name when no such position exists', async () => {
    const account = await freshAccount();
    await create(account.apiKey, { name: 'first one' });
    await create(account.apiKey, { name: 'Orders / EU & UK' });
    await create(account.apiKey, { name: '42' });
    const byName = await service.request('PUT', `/webhooks/${encodeURIComponent('Orders / EU & UK')}`, { apiKey: account.apiKey, body: { retries_enabled: true } });
    expect(byName.status).toBe(200);
    expect(byName.body).toMatchObject({ success: true, webhook_id: '2', webhook: { id: '2', name: 'Orders / EU & UK', retries_enabled: true } });
    const numericName = await service.request('GET', '/webhooks/42/health', { apiKey: account.apiKey });
    expect(numericName.body).toMatchObject({ success: true, webhook_id: '3' });
    const position = await service.request('GET', '/webhooks/1/health', { apiKey: account.apiKey });
    expect(position.body).toMatchObject({ success: true, webhook_id: '1' });
    const unknown = await service.request('DELETE', `/webhooks/${encodeURIComponent('no such name')}`, { apiKey: account.apiKey });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ success: false, error: 'Webhook not found', error_code: 404 });
  });
});

describe('PUT /webhooks/{webhookId}', () => {
  test('omitted fields keep their values; subscribed_to and subscribed_to_tags are replaced; the signing secret is untouched', async () => {
    const account = await freshAccount();
    const created = await create(account.apiKey, {
      name: 'keep',
      subscribed_to: ['Replies', 'Reads'],
      subscribed_to_tags: ['tag_a'],
      retries_enabled: true,
      apply_to_sub_accounts: true,
      generate_signing_secret: true,
    });
    const before = (await list(account.apiKey))[0]!;
    const response = await service.request('PUT', '/webhooks/1', {
      apiKey: account.apiKey,
      body: { subscribed_to: ['Deliveries'], subscribed_to_tags: ['tag_b', 'tag_c'] },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      success: true,
      webhook_id: '1',
      webhook: { ...before, subscribed_to: ['Deliveries'], subscribed_to_tags: ['tag_b', 'tag_c'] },
    });
    const secret = await service.request('GET', '/webhooks/1/signing-secret', { apiKey: account.apiKey });
    expect(secret.body.signing_secret).toBe(created.signing_secret);

    const renamed = await service.request('PUT', '/webhooks/keep', { apiKey: account.apiKey, body: { name: 'kept', url: 'https://127.0.0.1:9/other' } });
    expect(renamed.body.webhook).toEqual({ ...before, name: 'kept', url: 'https://127.0.0.1:9/other', subscribed_to: ['Deliveries'], subscribed_to_tags: ['tag_b', 'tag_c'] });
  });

  test('"at least one of" the fields: an empty body gives 400 "No fields to update"', async () => {
    const account = await freshAccount();
    await create(account.apiKey, {});
    const response = await service.request('PUT', '/webhooks/1', { apiKey: account.apiKey, body: {} });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ success: false, error: 'No fields to update', error_code: 400 });
  });

  test('the same 400 rules as create: http url, private address, empty or unknown subscribed_to', async () => {
    const account = await freshAccount();
    await create(account.apiKey, {});
    for (const body of [{ url: 'http://example.com/x' }, { url: 'https://172.16.0.1/x' }, { subscribed_to: [] }, { subscribed_to: ['Nope'] }]) {
      const response = await service.request('PUT', '/webhooks/1', { apiKey: account.apiKey, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.success).toBe(false);
      expect(response.body.error_code).toBe(400);
    }
    expect((await list(account.apiKey))[0]).toMatchObject({ url: RECEIVER, subscribed_to: ['Contact Created'] });
  });

  test('enabled:false switches the subscription off and enabled:true back on; URL, events and secret are kept', async () => {
    const account = await freshAccount();
    const created = await create(account.apiKey, { generate_signing_secret: true });
    const off = await service.request('PUT', '/webhooks/1', { apiKey: account.apiKey, body: { enabled: false } });
    expect(off.body.webhook).toMatchObject({ enabled: false, url: RECEIVER, subscribed_to: ['Contact Created'], signing_enabled: true });
    expect((await list(account.apiKey))[0]).toMatchObject({ enabled: false });
    const secret = await service.request('GET', '/webhooks/1/signing-secret', { apiKey: account.apiKey });
    expect(secret.body.signing_secret).toBe(created.signing_secret);
    const on = await service.request('PUT', '/webhooks/1', { apiKey: account.apiKey, body: { enabled: true } });
    expect(on.body.webhook).toMatchObject({ enabled: true });
  });

  test('"PUT changing url": an auto-disabled URL is re-enabled for the new URL', async () => {
    const account = await freshAccount();
    await create(account.apiKey, { name: 'moving' });
    await insertDisabledHealth(await subscriptionRowId(account.userId, 'moving'), account.userId);
    const before = await service.request('GET', '/webhooks/moving/health', { apiKey: account.apiKey });
    expect(before.body.health).toMatchObject({ is_disabled: true });
    // The same URL again is no change of URL.
    await service.request('PUT', '/webhooks/moving', { apiKey: account.apiKey, body: { url: RECEIVER } });
    expect((await service.request('GET', '/webhooks/moving/health', { apiKey: account.apiKey })).body.health).toMatchObject({ is_disabled: true });
    const moved = await service.request('PUT', '/webhooks/moving', { apiKey: account.apiKey, body: { url: 'https://127.0.0.1:9/new' } });
    expect(moved.status).toBe(200);
    const after = await service.request('GET', '/webhooks/moving/health', { apiKey: account.apiKey });
    expect(after.body).toEqual({ success: true, webhook_id: '1', url: 'https://127.0.0.1:9/new', health: null });
  });
});

describe('GET /webhooks/{webhookId}/health and POST /webhooks/{webhookId}/reenable', () => {
  test('"The whole record is null when no delivery was ever attempted"', async () => {
    const account = await freshAccount();
    await create(account.apiKey, {});
    const response = await service.request('GET', '/webhooks/1/health', { apiKey: account.apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, webhook_id: '1', url: RECEIVER, health: null });
  });

  test('the record has the spec fields; reenable resets the paused flag and failure counters and delivers nothing', async () => {
    const account = await freshAccount();
    await create(account.apiKey, { name: 'paused' });
    const rowId = await subscriptionRowId(account.userId, 'paused');
    await insertDisabledHealth(rowId, account.userId);
    const health = await service.request('GET', '/webhooks/paused/health', { apiKey: account.apiKey });
    expect(health.body).toEqual({
      success: true,
      webhook_id: '1',
      url: RECEIVER,
      health: {
        consecutive_failures: 5,
        total_failures: 7,
        total_successes: 3,
        is_disabled: true,
        disabled_at: expect.stringMatching(/^\d{4}-/),
        disabled_reason: 'Disabled after 5 consecutive failed deliveries',
        last_failure: { type: 'temporary', status_code: 500 },
        last_success_at: expect.stringMatching(/^\d{4}-/),
        created_at: expect.stringMatching(/^\d{4}-/),
        updated_at: expect.stringMatching(/^\d{4}-/),
      },
    });
    const reenabled = await service.request('POST', '/webhooks/paused/reenable', { apiKey: account.apiKey });
    expect(reenabled.status).toBe(200);
    expect(reenabled.body).toEqual({ success: true, webhook_id: '1' });
    const after = await service.request('GET', '/webhooks/1/health', { apiKey: account.apiKey });
    expect(after.body.health).toMatchObject({ is_disabled: false, disabled_at: null, disabled_reason: null, consecutive_failures: 0, total_failures: 0 });
    const { rows } = await service.services.pool.query('select count(*)::int as n from webhook_deliveries where subscription_id = $1', [rowId]);
    expect(rows[0].n).toBe(0);
  });

  test('DELETE: "Delivery-health counters reset" (the health rows go with the subscription)', async () => {
    const account = await freshAccount();
    await create(account.apiKey, { name: 'doomed' });
    await insertDisabledHealth(await subscriptionRowId(account.userId, 'doomed'), account.userId);
    expect(await healthRows('doomed')).toHaveLength(1);
    const response = await service.request('DELETE', '/webhooks/doomed', { apiKey: account.apiKey });
    expect(response.body).toEqual({ success: true });
    expect((await healthRows('doomed')).filter((row) => row.account_id === account.userId)).toHaveLength(0);
    await create(account.apiKey, { name: 'doomed' });
    const fresh = await service.request('GET', '/webhooks/doomed/health', { apiKey: account.apiKey });
    expect(fresh.body.health).toBeNull();
  });
});

describe('Agency inheritance rule 4: inherited subscriptions do not appear in a client\'s own list and the client cannot switch them off', () => {
  test('an agency subscription with apply_to_sub_accounts is neither listed nor addressable in the client account', async () => {
    const agency = await service.createAccount({ agency: true });
    const client = await service.request('POST', '/sub-accounts', {
      apiKey: agency.apiKey,
      body: { email: `client-${Date.now()}@example.com`, first_name: 'C', last_name: 'Lient', usage_limits: { monthly_credits: 10 } },
    });
    expect(client.status, client.text).toBe(201);
    const clientId = client.body.data.id as string;
    await create(agency.apiKey, { name: 'agency-wide', apply_to_sub_accounts: true });

    const clientList = await service.request('GET', '/webhooks', { apiKey: agency.apiKey, query: { userId: clientId } });
    expect(clientList.body).toEqual({ success: true, webhooks: [] });
    for (const id of ['1', 'agency-wide']) {
      const off = await service.request('PUT', `/webhooks/${id}`, { apiKey: agency.apiKey, query: { userId: clientId }, body: { enabled: false } });
      expect(off.status).toBe(404);
      expect(off.body).toEqual({ success: false, error: 'Webhook not found', error_code: 404 });
    }
    expect((await list(agency.apiKey))[0]).toMatchObject({ name: 'agency-wide', enabled: true, apply_to_sub_accounts: true });
  });
});

describe('scoped keys', () => {
  test('a read-only key with the Webhooks section lists but cannot create (key_read_only)', async () => {
    const key = await service.createScopedKey(a.userId, { tags: ['Webhooks'] });
    const listed = await service.request('GET', '/webhooks', { apiKey: key });
    expect(listed.status).toBe(200);
    const refused = await service.request('POST', '/webhooks', { apiKey: key, body: { url: RECEIVER, subscribed_to: ['Replies'] } });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ success: false, error: 'This API key is read-only', error_code: 'key_read_only' });
    const otherSection = await service.createScopedKey(b.userId, { tags: ['Contacts'] });
    const denied = await service.request('GET', '/webhooks', { apiKey: otherSection });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ success: false, error_code: 'key_scope_denied' });
  });
});
