// Every call on a /trpc WebSocket is authorized and counted at the moment it is made, like an
// HTTP call: an open socket does not keep what the account or key could do when it opened,
// nor spend outside the key's rate limit. Batches, subscriptions per socket and sockets per
// credential have documented limits with a clear error.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { AppRouter } from '../../routers/index.ts';
import { updateAccount } from '../../server/accounts/update-account.ts';
import { createScopedKey } from '../../server/api-keys/create-scoped-key.ts';
import { MAX_BATCH_CALLS, MAX_CHANNELS_PER_CREDENTIAL, MAX_SUBSCRIPTIONS_PER_SOCKET } from '../../server/trpc-limits.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { openRawTrpcSocket, socketClient, type RawTrpcSocket } from '../helpers/trpc-socket.ts';
import { inOneWindow } from '../rate-limit/fresh-window.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

async function scopedKey(userId: string, scopes: { tags?: string[]; read_only?: boolean; rate_limit_per_min?: number }) {
  const created = await createScopedKey(service.services.orm.em.fork(), service.services.secrets, userId, { scopes });
  return { id: created.key.id, apiKey: created.apiKey };
}

test('on an open socket, webhooks.list answers FORBIDDEN once the account\'s webhooks are switched off, and UNAUTHORIZED once its key is revoked', async () => {
  const { userId, apiKey: mainKey } = await service.createAccount({ webhooks: true });
  const key = await scopedKey(userId, { tags: ['Webhooks'], read_only: true });
  const { client, close } = socketClient<AppRouter>(service.origin, { apiKey: key.apiKey });
  try {
    expect(await client.webhooks.list.query({})).toMatchObject({ success: true, webhooks: [] });
    // What `account:update --webhooks off` runs.
    await updateAccount(service.services.orm.em.fork(), { userId, webhooks: false });
    expect((await service.request('GET', '/webhooks', { apiKey: key.apiKey })).status).toBe(403);
    await expect(client.webhooks.list.query({})).rejects.toMatchObject({ data: { code: 'FORBIDDEN', httpStatus: 403 } });

    await updateAccount(service.services.orm.em.fork(), { userId, webhooks: true });
    expect(await client.webhooks.list.query({})).toMatchObject({ success: true });
    expect((await service.request('DELETE', `/api-keys/${key.id}`, { apiKey: mainKey })).status).toBe(200);
    await expect(client.webhooks.list.query({})).rejects.toMatchObject({ data: { code: 'UNAUTHORIZED', httpStatus: 401 } });
  } finally {
    await close();
  }
});

test("a client may send the key in tRPC's connectionParams instead of the URL; each call is still authenticated with it", async () => {
  const { userId } = await service.createAccount();
  const key = await scopedKey(userId, { tags: ['Tags'] });
  const withParams = socketClient<AppRouter>(service.origin, {}, { apiKey: key.apiKey });
  try {
    expect(await withParams.client.tags.list.query({})).toEqual([]);
    await expect(withParams.client.lists.list.query({})).rejects.toMatchObject({ data: { code: 'FORBIDDEN', error_code: 'key_scope_denied' } });
  } finally {
    await withParams.close();
  }
  // A socket without a credential is refused as a call would be, and closed (policy violation).
  const withoutKey = await openRawTrpcSocket(service.origin, {});
  const refusal = await withoutKey.waitFor((frame) => frame.id === null);
  expect(refusal.error).toMatchObject({ data: { code: 'UNAUTHORIZED', httpStatus: 401 } });
  expect(await withoutKey.closed).toBe(1008);
});

test('calls on one socket count against the key\'s rate limit: with rate_limit_per_min 5, the 6th call gets TOO_MANY_REQUESTS', async () => {
  await inOneWindow(service.services.pool, async () => {
    const { userId } = await service.createAccount();
    const key = await scopedKey(userId, { tags: ['Tags'], rate_limit_per_min: 5 });
    const { client, close } = socketClient<AppRouter>(service.origin, { apiKey: key.apiKey });
    try {
      const outcomes: string[] = [];
      for (let call = 0; call < 10; call += 1) {
        outcomes.push(await client.tags.list.query({}).then(() => 'ok', (error: { data?: { code?: string } }) => error.data?.code ?? String(error)));
      }
      expect(outcomes).toEqual([...Array(5).fill('ok'), ...Array(5).fill('TOO_MANY_REQUESTS')]);
    } finally {
      await close();
    }
  });
});

test('a burst in one frame is counted call by call: 5 of 10 pass a limit of 5', async () => {
  await inOneWindow(service.services.pool, async () => {
    const { userId } = await service.createAccount();
    const key = await scopedKey(userId, { tags: ['Tags'], rate_limit_per_min: 5 });
    const socket = await openRawTrpcSocket(service.origin, { apiKey: key.apiKey });
    try {
      socket.send(Array.from({ length: 10 }, (_, index) => ({ id: index + 1, method: 'query', params: { path: 'tags.list', input: {} } })));
      const answers = await Promise.all(Array.from({ length: 10 }, (_, index) => socket.waitFor((frame) => frame.id === index + 1)));
      expect(answers.filter((frame) => frame.result).length).toBe(5);
      expect(answers.filter((frame) => frame.error).map((frame) => frame.error!.data.code)).toEqual(Array(5).fill('TOO_MANY_REQUESTS'));
    } finally {
      await socket.close();
    }
  });
});

test(`a batch of more than ${MAX_BATCH_CALLS} calls is refused over HTTP`, async () => {
  const { apiKey } = await service.createAccount();
  const batch = (size: number) => {
    const paths = Array(size).fill('tags.list').join(',');
    const input = JSON.stringify(Object.fromEntries(Array.from({ length: size }, (_, index) => [index, {}])));
    return service.request('GET', `/trpc/${paths}`, { apiKey, query: { batch: 1, input }, unchecked: true });
  };
  // So many procedure names exceed the path parameter's 100 characters before the batch limit is reached.
  const refused = await batch(MAX_BATCH_CALLS + 1);
  expect(refused.status).toBe(414);
  expect(refused.body).toMatchObject({ success: false, error: 'A path parameter of the URL is too long' });
  const allowed = await batch(2);
  expect(allowed.status).toBe(200);
  expect(allowed.body).toHaveLength(2);
});

test(`a WebSocket frame of more than ${MAX_BATCH_CALLS} calls is refused, every call answered BAD_REQUEST and none run`, async () => {
  await inOneWindow(service.services.pool, async () => {
    const { userId } = await service.createAccount();
    const key = await scopedKey(userId, { tags: ['Tags'], rate_limit_per_min: 5 });
    const socket = await openRawTrpcSocket(service.origin, { apiKey: key.apiKey });
    try {
      const size = MAX_BATCH_CALLS + 1;
      socket.send(Array.from({ length: size }, (_, index) => ({ id: index + 1, method: 'query', params: { path: 'tags.list', input: {} } })));
      const answers = await Promise.all(Array.from({ length: size }, (_, index) => socket.waitFor((frame) => frame.id === index + 1)));
      expect(new Set(answers.map((frame) => frame.error?.data.code))).toEqual(new Set(['BAD_REQUEST']));
      // None of them ran, so none was counted: the key's whole budget of 5 is left.
      for (let call = 0; call < 5; call += 1) {
        expect((await service.request('GET', '/tags', { apiKey: key.apiKey })).status).toBe(200);
      }
    } finally {
      await socket.close();
    }
  });
});

function subscribe(socket: RawTrpcSocket, id: number) {
  socket.send({ id, method: 'subscription', params: { path: 'chatWidgets.onConversationEvent', input: {} } });
  return socket.waitFor((frame) => frame.id === id && (frame.result?.type === 'started' || frame.error !== undefined));
}

test(`at most ${MAX_SUBSCRIPTIONS_PER_SOCKET} subscriptions are open on one socket; a stopped one frees its slot`, async () => {
  const { apiKey } = await service.createAccount();
  const socket = await openRawTrpcSocket(service.origin, { apiKey });
  try {
    const started = await Promise.all(Array.from({ length: MAX_SUBSCRIPTIONS_PER_SOCKET }, (_, index) => subscribe(socket, index + 1)));
    expect(started.every((frame) => frame.result?.type === 'started')).toBe(true);
    const refused = await subscribe(socket, 100);
    expect(refused.error).toMatchObject({ data: { code: 'TOO_MANY_REQUESTS', httpStatus: 429 } });
    expect(refused.error!.message).toContain(`At most ${MAX_SUBSCRIPTIONS_PER_SOCKET} subscriptions`);

    socket.send({ id: 1, method: 'subscription.stop' });
    await socket.waitFor((frame) => frame.id === 1 && frame.result?.type === 'stopped');
    expect((await subscribe(socket, 101)).result?.type).toBe('started');
  } finally {
    await socket.close();
  }
});

test(`at most ${MAX_CHANNELS_PER_CREDENTIAL} sockets and SSE subscriptions are open at once with one credential; a closed one frees its place`, async () => {
  const { apiKey } = await service.createAccount();
  const sockets: RawTrpcSocket[] = [];
  try {
    for (let index = 0; index < MAX_CHANNELS_PER_CREDENTIAL; index += 1) sockets.push(await openRawTrpcSocket(service.origin, { apiKey }));
    const sse = await service.request('GET', '/trpc/chatWidgets.onConversationEvent', { apiKey, query: { input: '{}' }, unchecked: true });
    // An SSE subscription is one more such channel: refused in its stream's first event.
    expect(sse.contentType).toContain('text/event-stream');
    expect(sse.text).toContain('"code":"TOO_MANY_REQUESTS","httpStatus":429');
    const refused = await openRawTrpcSocket(service.origin, { apiKey });
    const frame = await refused.waitFor((candidate) => candidate.id === null && candidate.error !== undefined);
    expect(frame.error).toMatchObject({ data: { code: 'TOO_MANY_REQUESTS', httpStatus: 429 } });
    await refused.closed;
    // Another credential is not affected.
    const other = await service.createAccount();
    const otherSocket = await openRawTrpcSocket(service.origin, { apiKey: other.apiKey });
    sockets.push(otherSocket);
    otherSocket.send({ id: 1, method: 'query', params: { path: 'tags.list', input: {} } });
    expect((await otherSocket.waitFor((candidate) => candidate.id === 1)).result).toBeDefined();

    await sockets.shift()!.close();
    // The server counts the close when it sees it; ask until a new socket is admitted.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const candidate = await openRawTrpcSocket(service.origin, { apiKey });
      sockets.push(candidate);
      candidate.send({ id: 1, method: 'query', params: { path: 'tags.list', input: {} } });
      const answer = await candidate.waitFor((received) => received.id === 1 || received.id === null).catch(() => null);
      if (answer?.id === 1) {
        expect(answer.result).toBeDefined();
        break;
      }
      if (Date.now() > deadline) throw new Error('no socket admitted after one was closed');
    }
  } finally {
    await Promise.all(sockets.map((socket) => socket.close()));
  }
});
