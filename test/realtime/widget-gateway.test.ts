// The widget's Socket.IO gateway: a visitor's socket hears its own conversation and no
// other, whichever transport it uses, across reconnections; a handshake naming an unknown
// widget, a malformed visitor id or a foreign origin is refused.
import { fetch } from 'undici';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { insecureAgent, startTestService, type TestService } from '../helpers/service.ts';
import { connectVisitor, heardUntilNow, insertWidget, isMessage, messageEvent, publish, type Target } from './widget-fixtures.ts';

let service: TestService;
let accountId: string;
let widgetId: string;

beforeAll(async () => {
  service = await startTestService();
  ({ userId: accountId } = await service.createAccount());
  widgetId = await insertWidget(service, accountId);
});
afterAll(async () => {
  await service?.stop();
});

const visitor = (visitorId: string): Target => ({ accountId, widgetId, visitorId, contactId: `ct_${visitorId}` });

test('a visitor hears events published for its conversation, and not those of another visitor of the same widget', async () => {
  const a = await connectVisitor(service.origin, { configId: widgetId, visitorId: 'visitor-aaaa' });
  const b = await connectVisitor(service.origin, { configId: widgetId, visitorId: 'visitor-bbbb' });
  try {
    await publish(service, messageEvent(visitor('visitor-bbbb'), 'for B'));
    await publish(service, { ...visitor('visitor-aaaa'), kind: 'typing', isBotTyping: true });
    await publish(service, { ...visitor('visitor-aaaa'), kind: 'read', messageSids: ['msg_1'] });
    const forA = messageEvent(visitor('visitor-aaaa'), 'for A');
    await publish(service, forA);
    // One socket hears its events in publication order: B's would have come first.
    expect(await a.waitFor(isMessage('for A'))).toEqual([
      { name: 'typing', payload: { isBotTyping: true } },
      { name: 'read', payload: { messageSids: ['msg_1'] } },
      { name: 'message', payload: forA.message },
    ]);
    expect((await b.waitFor(isMessage('for B'))).map((heard) => heard.name)).toEqual(['message']);
    // What was published for A went out before a message published for B now.
    expect(await heardUntilNow(service, visitor('visitor-bbbb'), b)).toHaveLength(1);
  } finally {
    a.close();
    b.close();
  }
});

test('a client cannot join another conversation: the room is fixed at handshake', async () => {
  const a = await connectVisitor(service.origin, { configId: widgetId, visitorId: 'visitor-cccc' });
  try {
    a.socket.emit('join', `conversation:${widgetId}:visitor-dddd`);
    a.socket.emit('subscribe', { configId: widgetId, visitorId: 'visitor-dddd' });
    await publish(service, messageEvent(visitor('visitor-dddd'), 'for D'));
    await publish(service, messageEvent(visitor('visitor-cccc'), 'for C'));
    expect((await a.waitFor(isMessage('for C'))).map((heard) => heard.payload)).toMatchObject([{ body: 'for C' }]);
  } finally {
    a.close();
  }
});

test('an unknown widget, a malformed visitor id or a missing one is refused at handshake', async () => {
  await expect(connectVisitor(service.origin, { configId: 'cw_unknown', visitorId: 'visitor-eeee' })).rejects.toThrow('unknown chat widget');
  for (const visitorId of ['short', 'has spaces in it', 'x'.repeat(129), 'semi;colon-id', 12345678, undefined]) {
    await expect(connectVisitor(service.origin, { configId: widgetId, visitorId })).rejects.toThrow(/visitorId/);
  }
  await expect(connectVisitor(service.origin, { visitorId: 'visitor-eeee' })).rejects.toThrow(/configId/);
  // Text PostgreSQL cannot store never reaches the widget lookup: ids are plain ASCII or refused.
  for (const configId of ['cw_\ud800', 'cw_\u0000']) {
    await expect(connectVisitor(service.origin, { configId, visitorId: 'visitor-eeee' })).rejects.toThrow(/configId/);
  }
  await expect(connectVisitor(service.origin, { configId: widgetId, visitorId: 'visitor-\udfff-ee' })).rejects.toThrow(/visitorId/);
});

test('long-polling works too (the transport a browser falls back to)', async () => {
  const a = await connectVisitor(service.origin, { configId: widgetId, visitorId: 'visitor-poll' }, { transports: ['polling'] });
  try {
    expect(a.socket.io.engine.transport.name).toBe('polling');
    await publish(service, messageEvent(visitor('visitor-poll'), 'polled'));
    expect((await a.waitFor(isMessage('polled'))).map((heard) => heard.name)).toEqual(['message']);
  } finally {
    a.close();
  }
});

test('a cross-origin handshake is refused unless the widget lists the origin in allowedOrigins', async () => {
  const listing = await insertWidget(service, accountId, { allowedOrigins: ['https://shop.example.com'] });
  const open = await insertWidget(service, accountId, {});
  const connect = (configId: string, origin: string, transports: ('websocket' | 'polling')[]) =>
    connectVisitor(service.origin, { configId, visitorId: 'visitor-origin' }, { transports, extraHeaders: { origin } });
  for (const transports of [['websocket'], ['polling']] as const) {
    await expect(connect(listing, 'https://evil.example.net', [...transports])).rejects.toThrow('origin not allowed');
    (await connect(listing, 'https://shop.example.com', [...transports])).close();
    (await connect(listing, service.origin, [...transports])).close();
    (await connect(open, 'https://anywhere.example.org', [...transports])).close();
  }
});

test('X-Forwarded-Host names this service only when it comes from a TRUST_PROXY address', async () => {
  // A page on a foreign site claims, through X-Forwarded-Host, that the service is that site.
  const forged = { origin: 'https://evil.example.net', 'x-forwarded-host': 'evil.example.net' };
  const elsewhere = await startTestService({ databaseUrl: service.databaseUrl, env: { TRUST_PROXY: '10.9.8.7' } });
  const here = await startTestService({ databaseUrl: service.databaseUrl, env: { TRUST_PROXY: '127.0.0.1' } });
  try {
    const listing = await insertWidget(service, accountId, { allowedOrigins: ['https://shop.example.com'] });
    for (const transports of [['websocket'], ['polling']] as const) {
      const connect = (on: TestService) =>
        connectVisitor(on.origin, { configId: listing, visitorId: 'visitor-proxy' }, { transports: [...transports], extraHeaders: forged });
      // From 127.0.0.1, which is not the trusted proxy: the header is the client's own claim.
      await expect(connect(elsewhere)).rejects.toThrow('origin not allowed');
      // From the trusted proxy, it names the host the browser addressed.
      (await connect(here)).close();
    }
  } finally {
    await elsewhere.stop();
    await here.stop();
  }
});

test('after the connection is dropped the client reconnects to its conversation and hears later events', async () => {
  const a = await connectVisitor(service.origin, { configId: widgetId, visitorId: 'visitor-recon' });
  try {
    const firstId = a.socket.id;
    const dropped = new Promise((resolve) => a.socket.once('disconnect', resolve));
    // The TCP connection breaks under the socket, as when the network or a process goes away.
    (a.socket.io.engine.transport as unknown as { ws: { _socket: { destroy(): void } } }).ws._socket.destroy();
    expect(await dropped).toBe('transport close');
    // Connected again only after the server ran the handshake checks and joined the room.
    await new Promise((resolve) => a.socket.once('connect', () => resolve(undefined)));
    expect(a.socket.id).not.toBe(firstId);
    await publish(service, messageEvent(visitor('visitor-recon'), 'after the drop'));
    expect((await a.waitFor(isMessage('after the drop'))).map((heard) => heard.name)).toEqual(['message']);
  } finally {
    a.close();
  }
});

test('the widget page can load the Socket.IO client from /socket.io/socket.io.min.js', async () => {
  const response = await fetch(`${service.origin}/socket.io/socket.io.min.js`, { dispatcher: insecureAgent });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/javascript/);
  expect(await response.text()).toContain('io');
});

test('a visitor that leaves its room (a DISCONNECT packet) loses its connection too, so no connection outlives the caps', async () => {
  const a = await connectVisitor(service.origin, { configId: widgetId, visitorId: 'visitor-leaves' });
  const engine = a.socket.io.engine;
  const engineClosed = new Promise<string>((resolve) => engine.once('close', (reason: string) => resolve(reason)));
  try {
    // Socket.IO's DISCONNECT for the main namespace, sent as a hostile client would: the
    // engine connection itself is kept open (the client library would close it).
    engine.write('1');
    expect(await engineClosed).toBe('transport close');
  } finally {
    a.close();
  }
});
