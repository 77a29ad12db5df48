// "A `/trpc` WebSocket or Socket.IO connection counts against its client address from the
// upgrade on; one that has not authenticated within 10 s, or whose credential is refused, is
// closed (close code 1008). At most 20 unauthenticated sockets are open per address; beyond
// that the upgrade answers 429." Over real sockets: `ws` clients on /trpc and raw Engine.IO
// sessions (WebSocket and long-polling) that never send CONNECT. Each test speaks from an
// address of its own (X-Forwarded-For, believed from loopback through TRUST_PROXY).
import { fetch } from 'undici';
import WebSocket from 'ws';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { BODY_LIMIT_BYTES } from '../../server/http/host.ts';
import { MAX_UNAUTHENTICATED_SOCKETS_PER_ADDRESS } from '../../server/http/unauthenticated-sockets.ts';
import { insecureAgent, startTestService, type TestService } from '../helpers/service.ts';
import { connectVisitor, insertWidget, isMessage, messageEvent, publish, type Visitor } from './widget-fixtures.ts';

const ENGINE_WEBSOCKET = '/socket.io/?EIO=4&transport=websocket';
const WAITING_TRPC = '/trpc?connectionParams=1';

/**
 * A deadline no test here reaches, so a close it sees comes from a refusal and the sockets a
 * test holds stay counted while it runs; its log lines are kept.
 */
let service: TestService;
const logLines: string[] = [];
/** A second process on the same database whose deadline is short, for the tests that wait it out. */
let hasty: TestService;
let apiKey: string;
let accountId: string;
let widgetId: string;

beforeAll(async () => {
  service = await startTestService({ env: { TRUST_PROXY: '127.0.0.1' }, definition: { unauthenticatedSocketDeadlineMs: 600_000 }, logLines });
  hasty = await startTestService({
    databaseUrl: service.databaseUrl,
    env: { TRUST_PROXY: '127.0.0.1' },
    definition: { unauthenticatedSocketDeadlineMs: 300 },
  });
  ({ apiKey, userId: accountId } = await service.createAccount());
  widgetId = await insertWidget(service, accountId);
});
afterAll(async () => {
  await hasty?.stop();
  await service?.stop();
});

let addresses = 0;
function address(): string {
  addresses += 1;
  return `198.51.100.${addresses}`;
}
let visitors = 0;
const visitorId = () => `visitor-unauth-${(visitors += 1)}`;

type Opened = { ws: WebSocket; frames: string[]; closed: Promise<number> };
type Refused = { status: number; body: string };

/** A WebSocket upgrade from `ip`: the open socket (its frames and close code), or the HTTP answer that refused it. */
function upgrade(on: TestService, pathAndQuery: string, ip: string): Promise<Opened | Refused> {
  const ws = new WebSocket(on.origin.replace('https', 'wss') + pathAndQuery, { rejectUnauthorized: false, headers: { 'x-forwarded-for': ip } });
  const frames: string[] = [];
  ws.on('message', (data) => frames.push(data.toString()));
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, frames, closed }));
    ws.once('unexpected-response', (request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => {
        request.destroy();
        resolve({ status: response.statusCode!, body });
      });
    });
    ws.once('error', reject);
  });
}

function opened(outcome: Opened | Refused): Opened {
  if (!('ws' in outcome)) throw new Error(`upgrade refused: ${outcome.status} ${outcome.body}`);
  return outcome;
}

/** Resolves once `predicate` holds for a received frame; rejects if the socket closes first. */
async function frameMatching(socket: Opened, predicate: (frame: string) => boolean): Promise<string> {
  const closed = socket.closed.then((code) => Promise.reject(new Error(`socket closed (${code}); frames: ${socket.frames.join(' | ')}`)));
  closed.catch(() => {});
  for (;;) {
    const found = socket.frames.find(predicate);
    if (found) return found;
    await Promise.race([new Promise<void>((resolve) => socket.ws.once('message', () => resolve())), closed]);
  }
}

/** A /trpc socket opened with the account's key that has answered a call, so it is authenticated. */
async function authenticatedTrpcSocket(on: TestService, ip: string): Promise<Opened> {
  const socket = opened(await upgrade(on, `/trpc?apiKey=${apiKey}`, ip));
  socket.ws.send(JSON.stringify({ id: 1, method: 'query', params: { path: 'tags.list', input: {} } }));
  expect(JSON.parse(await frameMatching(socket, (frame) => frame.includes('"id":1')))).toMatchObject({ id: 1, result: { type: 'data' } });
  return socket;
}

/** Opens an Engine.IO session over long-polling (its handshake) from `ip`. */
async function pollingHandshake(on: TestService, ip: string): Promise<{ status: number; sid: string | undefined }> {
  const response = await fetch(`${on.origin}/socket.io/?EIO=4&transport=polling`, { headers: { 'x-forwarded-for': ip }, dispatcher: insecureAgent });
  const text = await response.text();
  return { status: response.status, sid: response.status === 200 ? (JSON.parse(text.slice(1)) as { sid: string }).sid : undefined };
}

/** Long-polls a session until it is closed: its close packet, or the session is unknown. */
async function pollUntilClosed(on: TestService, ip: string, sid: string): Promise<void> {
  for (;;) {
    const response = await fetch(`${on.origin}/socket.io/?EIO=4&transport=polling&sid=${sid}`, { headers: { 'x-forwarded-for': ip }, dispatcher: insecureAgent });
    const packets = (await response.text()).split('\x1e');
    if (response.status === 400 || packets.includes('1')) return;
  }
}

const connectFrom = (ip: string): Promise<Visitor> =>
  connectVisitor(service.origin, { configId: widgetId, visitorId: visitorId() }, { extraHeaders: { 'x-forwarded-for': ip } });

test(`the ${MAX_UNAUTHENTICATED_SOCKETS_PER_ADDRESS + 1}st unauthenticated socket of one address is answered 429, /trpc and Socket.IO counted together`, async () => {
  const ip = address();
  const held: Opened[] = [];
  try {
    // 8 /trpc sockets waiting for their connectionParams, 6 Engine.IO WebSockets and 6
    // long-polling sessions that never send CONNECT: 20.
    for (let index = 0; index < 8; index += 1) held.push(opened(await upgrade(service, WAITING_TRPC, ip)));
    for (let index = 0; index < 6; index += 1) held.push(opened(await upgrade(service, ENGINE_WEBSOCKET, ip)));
    for (let index = 0; index < 6; index += 1) expect((await pollingHandshake(service, ip)).status).toBe(200);

    // The next one is refused at the upgrade, whatever it would present after it.
    for (const pathAndQuery of [WAITING_TRPC, `/trpc?apiKey=${apiKey}`, ENGINE_WEBSOCKET]) {
      const refused = (await upgrade(service, pathAndQuery, ip)) as Refused;
      expect(refused.status, pathAndQuery).toBe(429);
      expect(JSON.parse(refused.body)).toEqual({
        success: false,
        error: `At most ${MAX_UNAUTHENTICATED_SOCKETS_PER_ADDRESS} sockets may wait for authentication at once from one address`,
        error_code: 429,
      });
    }
    expect((await pollingHandshake(service, ip)).status).toBe(429);
    await expect(connectFrom(ip)).rejects.toThrow();

    // Another address is not affected.
    held.push(opened(await upgrade(service, WAITING_TRPC, address())));
  } finally {
    for (const socket of held) socket.ws.terminate();
  }
});

test(`an authenticated socket no longer counts: with ${MAX_UNAUTHENTICATED_SOCKETS_PER_ADDRESS} authenticated sockets open, an address may still open ${MAX_UNAUTHENTICATED_SOCKETS_PER_ADDRESS} unauthenticated ones`, async () => {
  const ip = address();
  const held: Opened[] = [];
  const visitors: Visitor[] = [];
  try {
    for (let index = 0; index < 10; index += 1) held.push(await authenticatedTrpcSocket(service, ip));
    for (let index = 0; index < 10; index += 1) visitors.push(await connectFrom(ip));
    for (let index = 0; index < MAX_UNAUTHENTICATED_SOCKETS_PER_ADDRESS; index += 1) held.push(opened(await upgrade(service, WAITING_TRPC, ip)));
    expect(((await upgrade(service, WAITING_TRPC, ip)) as Refused).status).toBe(429);
  } finally {
    for (const socket of held) socket.ws.terminate();
    for (const visitor of visitors) visitor.close();
  }
});

test('a socket that has not authenticated by the deadline is closed with 1008: /trpc without its connectionParams, Socket.IO without CONNECT', async () => {
  const ip = address();
  const trpc = opened(await upgrade(hasty, WAITING_TRPC, ip));
  const engine = opened(await upgrade(hasty, ENGINE_WEBSOCKET, ip));
  expect(await trpc.closed).toBe(1008);
  expect(await engine.closed).toBe(1008);
  // It was an Engine.IO session: it heard the open packet, and nothing after it.
  expect(engine.frames).toHaveLength(1);
  expect(engine.frames[0]).toMatch(/^0\{"sid":/);

  // Long-polling has no close code: the session's pending poll is answered with its close.
  const { sid } = await pollingHandshake(hasty, ip);
  await pollUntilClosed(hasty, ip, sid!);
});

test('an authenticated socket outlives the deadline', async () => {
  const ip = address();
  const trpc = await authenticatedTrpcSocket(hasty, ip);
  const visitorOfHasty = visitorId();
  const visitor = await connectVisitor(hasty.origin, { configId: widgetId, visitorId: visitorOfHasty }, { extraHeaders: { 'x-forwarded-for': ip } });
  try {
    // A socket opened after them reaches its deadline after theirs has passed.
    const later = opened(await upgrade(hasty, WAITING_TRPC, ip));
    expect(await later.closed).toBe(1008);
    trpc.ws.send(JSON.stringify({ id: 2, method: 'query', params: { path: 'tags.list', input: {} } }));
    expect(JSON.parse(await frameMatching(trpc, (frame) => frame.includes('"id":2')))).toMatchObject({ id: 2, result: { type: 'data' } });
    await publish(hasty, messageEvent({ accountId, widgetId, visitorId: visitorOfHasty, contactId: 'ct_later' }, 'still here'));
    await visitor.waitFor(isMessage('still here'));
  } finally {
    trpc.ws.terminate();
    visitor.close();
  }
});

test('a socket whose credential is refused is closed with 1008 after the refusal, each of many invalid keys alike', async () => {
  const ip = address();
  const invalidKeys = Array.from({ length: 3 }, (_, index) => `mk_${String(index).repeat(43)}`);
  const sockets = [
    ...(await Promise.all(invalidKeys.map(async (key) => opened(await upgrade(service, `/trpc?apiKey=${key}`, ip))))),
    // No credential at all.
    opened(await upgrade(service, '/trpc', ip)),
  ];
  const byParams = opened(await upgrade(service, WAITING_TRPC, ip));
  byParams.ws.send(JSON.stringify({ method: 'connectionParams', data: { apiKey: invalidKeys[0] } }));
  for (const socket of [...sockets, byParams]) {
    expect(await socket.closed).toBe(1008);
    expect(socket.frames.map((frame) => JSON.parse(frame))).toMatchObject([{ id: null, error: { data: { code: 'UNAUTHORIZED', httpStatus: 401 } } }]);
  }

  // A Socket.IO CONNECT the gateway refuses: CONNECT_ERROR, then the close.
  const engine = opened(await upgrade(service, ENGINE_WEBSOCKET, ip));
  await frameMatching(engine, (frame) => frame.startsWith('0'));
  engine.ws.send(`40${JSON.stringify({ configId: 'cw_unknown', visitorId: visitorId() })}`);
  expect(await engine.closed).toBe(1008);
  expect(engine.frames[1]).toBe('44{"message":"unknown chat widget","data":{"status":400}}');
});

test('a frame over 1 MiB from an unauthenticated client is logged as a warning without a stack', async () => {
  const socket = opened(await upgrade(service, WAITING_TRPC, address()));
  socket.ws.send('x'.repeat(BODY_LIMIT_BYTES + 1));
  expect(await socket.closed).toBe(1009);
  const logged = () => logLines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => String(line.msg).includes('WebSocket'));
  while (!logged().some((line) => line.level === 40)) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(logged()).toEqual([expect.objectContaining({ level: 40, code: 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH', msg: 'tRPC WebSocket closed: the client broke the protocol' })]);
  expect(JSON.stringify(logged())).not.toContain('stack');
});
