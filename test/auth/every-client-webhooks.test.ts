// "Setting apply_to_sub_accounts: true on a webhook (create or update), or changing the URL
// or events of one that has it, acts on every client: a scoped key needs sub_account_ids
// ["*"], else 403 key_scope_denied." Over real HTTPS and over a /trpc WebSocket, with keys
// of the Webhooks section limited to no client, to one listed client, and to every client.
// What narrows or leaves alone what clients' events reach (switching inheritance off,
// disabling, deleting, the other fields) stays open to a key limited to no client.
import { beforeAll, describe, expect, test } from 'vitest';
import { serviceForFile } from '../helpers/service-for-file.ts';
import type { TestService } from '../helpers/service.ts';
import { openRawTrpcSocket } from '../helpers/trpc-socket.ts';

let service: TestService;
let agency: { userId: string; apiKey: string };

// Deliverable in tests only: WEBHOOK_ALLOW_HOSTS exempts localhost from the public-address rule.
const RECEIVER = 'https://localhost:9/hook';
const ELSEWHERE = 'https://127.0.0.1:9/elsewhere';

serviceForFile(
  { start: { env: { WEBHOOK_ALLOW_HOSTS: 'localhost,127.0.0.1' } }, accounts: [{ agency: true }] },
  (started) => ({ service, accounts: [agency] } = started),
);

const DENIED = {
  success: false,
  error: 'This API key is not allowed to act on every client account; that needs sub_account_ids ["*"]',
  error_code: 'key_scope_denied',
};

/** Writable Webhooks keys of the agency, by their sub_account_ids. */
let keys: { none: string; listedClient: string; everyClient: string };
const limited = () => [
  ['[]', keys.none],
  ['[<its client>]', keys.listedClient],
] as const;

beforeAll(async () => {
  const client = await service.request('POST', '/sub-accounts', {
    apiKey: agency.apiKey,
    body: { email: `every-client-${Date.now()}@example.com`, first_name: 'Cli', last_name: 'Ent', usage_limits: { monthly_credits: 10 } },
  });
  expect(client.status, client.text).toBe(201);
  const key = (subAccountIds: string[]) => service.createScopedKey(agency.userId, { tags: ['Webhooks'], read_only: false, sub_account_ids: subAccountIds });
  keys = { none: await key([]), listedClient: await key([client.body.data.id]), everyClient: await key(['*']) };
});

let nameCounter = 0;
function newName(): string {
  nameCounter += 1;
  return `hook ${nameCounter}`;
}

/** Created with the agency's main key. */
async function webhook(fields: Record<string, unknown> = {}): Promise<string> {
  const name = newName();
  const created = await service.request('POST', '/webhooks', {
    apiKey: agency.apiKey,
    body: { url: RECEIVER, subscribed_to: ['Contact Created', 'Replies'], name, ...fields },
  });
  expect(created.status, created.text).toBe(200);
  return name;
}

async function stored(name: string): Promise<Record<string, unknown> | undefined> {
  const listed = await service.request('GET', '/webhooks', { apiKey: agency.apiKey });
  expect(listed.status).toBe(200);
  return (listed.body.webhooks as Array<Record<string, unknown>>).find((candidate) => candidate.name === name);
}

function put(apiKey: string, name: string, body: Record<string, unknown>) {
  return service.request('PUT', `/webhooks/${encodeURIComponent(name)}`, { apiKey, body });
}

describe('POST /webhooks with apply_to_sub_accounts: true', () => {
  test('a key limited to no client, or to a listed client, gets 403 key_scope_denied and nothing is created; a key with sub_account_ids ["*"] creates it', async () => {
    for (const [grant, apiKey] of limited()) {
      const name = newName();
      const response = await service.request('POST', '/webhooks', {
        apiKey,
        body: { url: RECEIVER, subscribed_to: ['Contact Created'], name, apply_to_sub_accounts: true },
      });
      expect(response.status, grant).toBe(403);
      expect(response.body, grant).toEqual(DENIED);
      expect(await stored(name), grant).toBeUndefined();
    }
    const name = newName();
    const allowed = await service.request('POST', '/webhooks', {
      apiKey: keys.everyClient,
      body: { url: RECEIVER, subscribed_to: ['Contact Created'], name, apply_to_sub_accounts: true },
    });
    expect(allowed.status, allowed.text).toBe(200);
    expect(await stored(name)).toMatchObject({ url: RECEIVER, apply_to_sub_accounts: true });
  });

  test('the refusal is the flag\'s: without it, or with it false, a key limited to no client creates its own-account webhook', async () => {
    for (const flag of [{}, { apply_to_sub_accounts: false }]) {
      const name = newName();
      const response = await service.request('POST', '/webhooks', { apiKey: keys.none, body: { url: RECEIVER, subscribed_to: ['Contact Created'], name, ...flag } });
      expect(response.status, response.text).toBe(200);
      expect(await stored(name)).toMatchObject({ apply_to_sub_accounts: false });
    }
    const refused = await service.request('POST', '/webhooks', {
      apiKey: keys.none,
      body: { url: RECEIVER, subscribed_to: ['Contact Created'], name: newName(), apply_to_sub_accounts: true },
    });
    expect(refused.body).toEqual(DENIED);
  });
});

describe('PUT /webhooks/{webhookId}', () => {
  test('switching inheritance on: a limited key gets 403 key_scope_denied and nothing changes; a ["*"] key may', async () => {
    const name = await webhook();
    const before = await stored(name);
    for (const [grant, apiKey] of limited()) {
      const response = await put(apiKey, name, { apply_to_sub_accounts: true });
      expect(response.status, grant).toBe(403);
      expect(response.body, grant).toEqual(DENIED);
      // Also when the same request changes nothing else the key could change alone.
      const withName = await put(apiKey, name, { apply_to_sub_accounts: true, name: `${name} renamed` });
      expect(withName.body, grant).toEqual(DENIED);
    }
    expect(await stored(name)).toEqual(before);
    const allowed = await put(keys.everyClient, name, { apply_to_sub_accounts: true });
    expect(allowed.status, allowed.text).toBe(200);
    expect(allowed.body.webhook.apply_to_sub_accounts).toBe(true);
  });

  test('a new url or event list on a webhook that applies to sub-accounts: a limited key gets 403 key_scope_denied and nothing changes; a ["*"] key may', async () => {
    const name = await webhook({ apply_to_sub_accounts: true });
    const before = await stored(name);
    for (const [grant, apiKey] of limited()) {
      for (const change of [{ url: ELSEWHERE }, { subscribed_to: ['Contact Created', 'Replies', 'Reads'] }, { subscribed_to: ['Replies'] }, { url: ELSEWHERE, name: 'renamed' }]) {
        const response = await put(apiKey, name, change);
        expect(response.status, `${grant} ${JSON.stringify(change)}`).toBe(403);
        expect(response.body, `${grant} ${JSON.stringify(change)}`).toEqual(DENIED);
      }
    }
    expect(await stored(name)).toEqual(before);
    const allowed = await put(keys.everyClient, name, { url: ELSEWHERE, subscribed_to: ['Reads'] });
    expect(allowed.status, allowed.text).toBe(200);
    expect(allowed.body.webhook).toMatchObject({ url: ELSEWHERE, subscribed_to: ['Reads'], apply_to_sub_accounts: true });
  });

  test('on a webhook that applies to sub-accounts, a key limited to no client is refused a new url yet may narrow or leave alone what clients receive, and delete it', async () => {
    const name = await webhook({ apply_to_sub_accounts: true });
    expect((await put(keys.none, name, { url: ELSEWHERE })).body).toEqual(DENIED);
    const changes = [
      { name: `${name} renamed` },
      { retries_enabled: true },
      { subscribed_to_tags: ['tag_1'] },
      { enabled: false },
      // The same URL and the same events (in another order) change nothing.
      { url: RECEIVER, subscribed_to: ['Replies', 'Contact Created'] },
    ];
    let current = name;
    for (const change of changes) {
      const response = await put(keys.none, current, change);
      expect(response.status, `${JSON.stringify(change)}: ${response.text}`).toBe(200);
      current = response.body.webhook.name;
    }
    expect(await stored(current)).toMatchObject({ url: RECEIVER, apply_to_sub_accounts: true, enabled: false });
    // Switching inheritance off in the same request as a new URL: no client's events go there.
    const off = await put(keys.none, current, { apply_to_sub_accounts: false, url: ELSEWHERE });
    expect(off.status, off.text).toBe(200);
    expect(off.body.webhook).toMatchObject({ url: ELSEWHERE, apply_to_sub_accounts: false, enabled: false, retries_enabled: true });

    const other = await webhook({ apply_to_sub_accounts: true });
    expect((await put(keys.none, other, { subscribed_to: ['Reads'] })).body).toEqual(DENIED);
    const deleted = await service.request('DELETE', `/webhooks/${encodeURIComponent(other)}`, { apiKey: keys.none });
    expect(deleted.status).toBe(200);
    expect(await stored(other)).toBeUndefined();
  });
});

describe('over a /trpc WebSocket', () => {
  async function callOverSocket(apiKey: string, path: string, input: Record<string, unknown>) {
    const socket = await openRawTrpcSocket(service.origin, { apiKey });
    try {
      socket.send({ id: 1, method: 'mutation', params: { path, input } });
      return await socket.waitFor((frame) => frame.id === 1);
    } finally {
      await socket.close();
    }
  }

  test('create with apply_to_sub_accounts and a new url on an inheriting webhook: FORBIDDEN key_scope_denied for limited keys; a ["*"] key may', async () => {
    const inheriting = await webhook({ apply_to_sub_accounts: true });
    const before = await stored(inheriting);
    for (const [grant, apiKey] of limited()) {
      const name = newName();
      const created = await callOverSocket(apiKey, 'webhooks.create', { url: RECEIVER, subscribed_to: ['Contact Created'], name, apply_to_sub_accounts: true });
      expect(created.error?.data, grant).toMatchObject({ httpStatus: 403, error_code: 'key_scope_denied' });
      expect(created.error?.message, grant).toBe(DENIED.error);
      expect(await stored(name), grant).toBeUndefined();
      const moved = await callOverSocket(apiKey, 'webhooks.update', { webhookId: inheriting, url: ELSEWHERE });
      expect(moved.error?.data, grant).toMatchObject({ httpStatus: 403, error_code: 'key_scope_denied' });
      const switchedOn = await callOverSocket(apiKey, 'webhooks.update', { webhookId: await webhook(), apply_to_sub_accounts: true });
      expect(switchedOn.error?.data, grant).toMatchObject({ httpStatus: 403, error_code: 'key_scope_denied' });
    }
    expect(await stored(inheriting)).toEqual(before);

    const name = newName();
    const created = await callOverSocket(keys.everyClient, 'webhooks.create', { url: RECEIVER, subscribed_to: ['Contact Created'], name, apply_to_sub_accounts: true });
    expect(created.error).toBeUndefined();
    const moved = await callOverSocket(keys.everyClient, 'webhooks.update', { webhookId: name, url: ELSEWHERE });
    expect(moved.error).toBeUndefined();
    expect(await stored(name)).toMatchObject({ url: ELSEWHERE, apply_to_sub_accounts: true });
  });
});
