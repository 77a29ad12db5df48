// A live subscription is authorized for as long as it runs: within seconds of its key being
// revoked, rotated, expiring or losing the section, or its account losing api_access, it ends
// with the UNAUTHORIZED or FORBIDDEN a new call would get, over the /trpc WebSocket and over
// SSE alike, whichever API process made the change (checked with two API processes that are
// separate OS processes, sharing nothing but the database).
import { fetch } from 'undici';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { updateAccount } from '../../server/accounts/update-account.ts';
import { createScopedKey } from '../../server/api-keys/create-scoped-key.ts';
import { updateScopedKey } from '../../server/api-keys/update-scoped-key.ts';
import { LISTENER_APPLICATION_NAME } from '../../server/realtime/conversation-event-feed.ts';
import { insecureAgent, startTestService, type TestService } from '../helpers/service.ts';
import { serviceProcesses } from '../helpers/service-processes.ts';
import { openRawTrpcSocket, type Frame, type RawTrpcSocket } from '../helpers/trpc-socket.ts';
import { call, waitFor } from '../reliability/fixtures.ts';
import { insertWidget, messageEvent, publish, type Target } from './widget-fixtures.ts';

/** How long a test waits for a subscription to end: "within seconds" of the change. */
const ENDS_WITHIN_MS = 10_000;

let service: TestService;
const processes = serviceProcesses();
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await processes.stopAll();
  await service?.stop();
});

type Subject = { userId: string; mainKey: string; target: Target };

async function newSubject(): Promise<Subject> {
  const { userId, apiKey } = await service.createAccount();
  const widgetId = await insertWidget(service, userId);
  return { userId, mainKey: apiKey, target: { accountId: userId, widgetId, visitorId: 'visitor-auth', contactId: 'ct_auth' } };
}

async function scopedKey(subject: Subject, options: { tags?: string[]; expires_at?: string } = {}): Promise<{ id: string; apiKey: string }> {
  const created = await createScopedKey(service.services.orm.em.fork(), service.services.secrets, subject.userId, {
    scopes: { tags: options.tags ?? ['Chat Widget'], read_only: true },
    expires_at: options.expires_at,
  });
  return { id: created.key.id, apiKey: created.apiKey };
}

const SUBSCRIPTION_ID = 1;

/** Subscribes on a new socket (to this service unless `origin` names another) and returns once an event published after the start was heard. */
async function liveSubscription(subject: Subject, apiKey: string, origin = service.origin): Promise<RawTrpcSocket> {
  const socket = await openRawTrpcSocket(origin, { apiKey });
  socket.send({ id: SUBSCRIPTION_ID, method: 'subscription', params: { path: 'chatWidgets.onConversationEvent', input: {} } });
  await socket.waitFor((frame) => frame.id === SUBSCRIPTION_ID && frame.result?.type === 'started');
  const deadline = Date.now() + 15_000;
  for (let probe = 1; ; probe += 1) {
    await publish(service, { ...subject.target, kind: 'typing', isBotTyping: probe % 2 === 0 });
    const heard = await socket.waitFor((frame) => frame.id === SUBSCRIPTION_ID && frame.result?.type === 'data', 200).catch(() => null);
    if (heard) return socket;
    if (Date.now() > deadline) throw new Error(`the subscription heard nothing: ${JSON.stringify(socket.frames)}`);
  }
}

/** The error frame that ends the subscription. */
async function endingError(socket: RawTrpcSocket): Promise<Frame['error']> {
  const frame = await socket.waitFor((candidate) => candidate.id === SUBSCRIPTION_ID && candidate.error !== undefined, ENDS_WITHIN_MS);
  return frame.error;
}

test('DELETE /v1/api-keys/{id} ends the scoped key\'s live subscription with UNAUTHORIZED', async () => {
  const subject = await newSubject();
  const key = await scopedKey(subject);
  const socket = await liveSubscription(subject, key.apiKey);
  try {
    expect((await service.request('DELETE', `/api-keys/${key.id}`, { apiKey: subject.mainKey })).status).toBe(200);
    expect(await endingError(socket)).toMatchObject({ data: { code: 'UNAUTHORIZED', httpStatus: 401 } });
    // A visitor's next message no longer reaches it: the subscription is stopped.
    await socket.waitFor((frame) => frame.id === SUBSCRIPTION_ID && frame.result?.type === 'stopped');
  } finally {
    await socket.close();
  }
});

test('rotating the main key ends the main key\'s live subscription with UNAUTHORIZED', async () => {
  const subject = await newSubject();
  const socket = await liveSubscription(subject, subject.mainKey);
  try {
    expect((await service.request('POST', '/api-keys/rotate', { apiKey: subject.mainKey })).status).toBe(200);
    expect(await endingError(socket)).toMatchObject({ data: { code: 'UNAUTHORIZED', httpStatus: 401 } });
  } finally {
    await socket.close();
  }
});

test('PATCH /v1/api-keys/{id} removing the Chat Widget section ends the subscription with FORBIDDEN key_scope_denied', async () => {
  const subject = await newSubject();
  const key = await scopedKey(subject, { tags: ['Chat Widget', 'Contacts'] });
  const socket = await liveSubscription(subject, key.apiKey);
  try {
    const patched = await service.request('PATCH', `/api-keys/${key.id}`, { apiKey: subject.mainKey, body: { scopes: { tags: ['Contacts'] } } });
    expect(patched.status, patched.text).toBe(200);
    expect(await endingError(socket)).toMatchObject({ data: { code: 'FORBIDDEN', httpStatus: 403, error_code: 'key_scope_denied' } });
  } finally {
    await socket.close();
  }
});

test('account:update --plan free (no api_access) ends the account\'s subscriptions with FORBIDDEN', async () => {
  const subject = await newSubject();
  const key = await scopedKey(subject);
  const withMainKey = await liveSubscription(subject, subject.mainKey);
  const withScopedKey = await liveSubscription(subject, key.apiKey);
  try {
    await updateAccount(service.services.orm.em.fork(), { userId: subject.userId, plan: 'free' });
    expect(await endingError(withMainKey)).toMatchObject({ data: { code: 'FORBIDDEN', httpStatus: 403 } });
    expect(await endingError(withScopedKey)).toMatchObject({ data: { code: 'FORBIDDEN', httpStatus: 403 } });
  } finally {
    await withMainKey.close();
    await withScopedKey.close();
  }
});

test('a scoped key\'s subscription ends with UNAUTHORIZED when the key expires', async () => {
  const subject = await newSubject();
  const key = await scopedKey(subject);
  const socket = await liveSubscription(subject, key.apiKey);
  try {
    // The expiry is set once the subscription is live, so however long that took, the key
    // expires while it runs (checked before the first await: never in the past).
    await updateScopedKey(service.services.orm.em.fork(), subject.userId, key.id, { expires_at: new Date(Date.now() + 2000).toISOString() });
    expect(await endingError(socket)).toMatchObject({ data: { code: 'UNAUTHORIZED', httpStatus: 401 } });
    expect((await service.request('GET', '/chat-widgets', { apiKey: key.apiKey, unchecked: true })).status).toBe(401);
  } finally {
    await socket.close();
  }
});

test('a key revoked through another API process ends the subscription held by this one', async () => {
  // Two OS processes sharing nothing but the database: the change can reach the subscription
  // only through what crosses processes, as between deployed API processes.
  const [holder, other] = await Promise.all([
    processes.spawn({ role: 'api', databaseUrl: service.databaseUrl }),
    processes.spawn({ role: 'api', databaseUrl: service.databaseUrl }),
  ]);
  const subject = await newSubject();
  const key = await scopedKey(subject);
  const socket = await liveSubscription(subject, key.apiKey, holder.origin);
  try {
    const revoked = await call(other.origin, 'DELETE', `/v1/api-keys/${key.id}`, { apiKey: subject.mainKey });
    expect(revoked.status, revoked.text).toBe(200);
    expect(await endingError(socket)).toMatchObject({ data: { code: 'UNAUTHORIZED', httpStatus: 401 } });
  } finally {
    await socket.close();
    // A later test counts this database's listening sessions: only this service's may be left.
    await processes.stopAll();
    await waitFor(async () => ((await listeningSessions()) === 1 ? true : undefined), 'the stopped processes\' sessions to end');
  }
});

async function listeningSessions(): Promise<number> {
  const { rows } = await service.services.pool.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity where application_name = $1 and datname = current_database()`,
    [LISTENER_APPLICATION_NAME],
  );
  return rows[0]!.n;
}

type SseEvent = { event: string; data: string };

/** The subscription over SSE (tRPC's httpSubscriptionLink wire format), its events as they arrive. */
async function sseSubscription(apiKey: string) {
  const controller = new AbortController();
  const url = `${service.origin}/trpc/chatWidgets.onConversationEvent?apiKey=${encodeURIComponent(apiKey)}&input=${encodeURIComponent('{}')}`;
  const response = await fetch(url, { dispatcher: insecureAgent, signal: controller.signal, headers: { accept: 'text/event-stream' } });
  expect(response.headers.get('content-type')).toContain('text/event-stream');
  const events: SseEvent[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  const reading = (async () => {
    for await (const chunk of response.body!) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = { event: 'message', data: '' };
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) event.event = line.slice(6).trim();
          else if (line.startsWith('data:')) event.data += line.slice(5).trim();
        }
        events.push(event);
      }
    }
  })().catch(() => {});
  const waitFor = async (predicate: (event: SseEvent) => boolean, withinMs: number) => {
    const deadline = Date.now() + withinMs;
    while (Date.now() < deadline) {
      const found = events.find(predicate);
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`no such SSE event within ${withinMs} ms: ${JSON.stringify(events)}`);
  };
  return { events, waitFor, reading, close: () => controller.abort() };
}

test('over SSE too: DELETE /v1/api-keys/{id} ends the live subscription with an UNAUTHORIZED error event', async () => {
  const subject = await newSubject();
  const key = await scopedKey(subject);
  const sse = await sseSubscription(key.apiKey);
  try {
    const deadline = Date.now() + 15_000;
    let probe = 0;
    while (!sse.events.some((event) => event.event === 'message' && event.data.includes(subject.target.contactId))) {
      if (Date.now() > deadline) throw new Error(`the SSE subscription heard nothing: ${JSON.stringify(sse.events)}`);
      probe += 1;
      await publish(service, { ...subject.target, kind: 'typing', isBotTyping: probe % 2 === 0 });
      await sse.waitFor((event) => event.event === 'message', 200).catch(() => null);
    }
    expect((await service.request('DELETE', `/api-keys/${key.id}`, { apiKey: subject.mainKey })).status).toBe(200);
    const ended = await sse.waitFor((event) => event.event === 'serialized-error', ENDS_WITHIN_MS);
    expect(JSON.parse(ended.data)).toMatchObject({ data: { code: 'UNAUTHORIZED', httpStatus: 401 } });
    // Nothing published afterwards reaches it.
    await publish(service, messageEvent(subject.target, 'after the revocation'));
    await sse.reading;
    expect(sse.events.some((event) => event.data.includes('after the revocation'))).toBe(false);
  } finally {
    sse.close();
  }
});

test('a change this process could not hear (its LISTEN connection was down) still ends the subscription once it listens again', async () => {
  const subject = await newSubject();
  const key = await scopedKey(subject);
  const socket = await liveSubscription(subject, key.apiKey);
  try {
    // Revoked behind the service's back: no announcement at all, as if it had been lost.
    await service.services.pool.query('update api_keys set revoked_at = now() where id = $1', [key.id]);
    const { rows } = await service.services.pool.query<{ terminated: boolean }>(
      `select pg_terminate_backend(pid) as terminated from pg_stat_activity where application_name = $1 and datname = current_database()`,
      [LISTENER_APPLICATION_NAME],
    );
    expect(rows.map((row) => row.terminated)).toEqual([true]);
    expect(await endingError(socket)).toMatchObject({ data: { code: 'UNAUTHORIZED', httpStatus: 401 } });
  } finally {
    await socket.close();
  }
});
