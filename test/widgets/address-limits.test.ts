// The chat widget's abuse limits per client address, over real HTTPS and Socket.IO: every
// public endpoint, the widget page and the socket gateway answer 429 {error} with Retry-After
// (connect_error on sockets) once one address is over its budget, while another address still
// passes; new visitor ids per address and widget are capped, so one client cannot create
// contacts without end; polls and read receipts are capped per visitor; open sockets per
// visitor and per address. Addresses come from X-Forwarded-For only when TRUST_PROXY trusts
// the connection. Messages are capped per visitor and per widget, hand-offs per visitor.
// Limits are set low through the environment.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connectVisitor, type Visitor } from '../realtime/widget-fixtures.ts';
import { inOneWindow } from '../rate-limit/fresh-window.ts';
import { startTestService, type ApiResponse, type TestService } from '../helpers/service.ts';

const LIMITS = {
  WIDGET_REQUESTS_PER_IP_PER_MINUTE: '8',
  WIDGET_NEW_VISITORS_PER_IP_PER_MINUTE: '3',
  WIDGET_MESSAGES_PER_IP_PER_MINUTE: '5',
  WIDGET_POLLS_PER_VISITOR_PER_MINUTE: '4',
  WIDGET_READS_PER_VISITOR_PER_MINUTE: '3',
  WIDGET_MESSAGES_PER_VISITOR_PER_MINUTE: '4',
  WIDGET_MESSAGES_PER_WIDGET_PER_MINUTE: '6',
  WIDGET_HANDOFFS_PER_VISITOR_PER_MINUTE: '2',
  WIDGET_SOCKETS_PER_VISITOR: '2',
  WIDGET_SOCKETS_PER_IP: '3',
};

let service: TestService;
beforeAll(async () => {
  // The test client connects from loopback, which is the trusted proxy here: X-Forwarded-For picks the address.
  service = await startTestService({ env: { ...LIMITS, TRUST_PROXY: '127.0.0.1' } });
});
afterAll(async () => {
  await service?.stop();
});

let addresses = 0;
/** A client address of its own for each use, so budgets never carry over between tests. */
function address(): string {
  addresses += 1;
  return `203.0.113.${addresses}`;
}
const from = (ip: string) => ({ 'x-forwarded-for': ip });

type Widget = { id: string; userId: string };
async function newWidget(): Promise<Widget> {
  const { apiKey, userId } = await service.createAccount();
  const created = await service.request('POST', '/chat-widgets', { apiKey, body: { name: 'Site' } });
  expect(created.status).toBe(201);
  return { id: created.body.data.id, userId };
}
const visitor = () => `v_${randomUUID().replaceAll('-', '')}`;

const send = (widget: Widget, fromId: string, ip: string) =>
  service.request('POST', '/incoming-chat-widget-message', {
    query: { userId: widget.userId },
    body: { customData: { body: 'hello', fromId, toId: widget.id }, messageType: 'text' },
    headers: from(ip),
  });
const config = (widget: Widget, ip: string) => service.request('GET', '/chat-widget-config', { query: { configId: widget.id }, headers: from(ip) });
const page = (widget: Widget, ip: string) => service.request('GET', `/v1/chat-widget/${widget.id}`, { headers: from(ip) });
const poll = (widget: Widget, fromId: string, ip: string) => service.request('GET', '/chat-widget-messages', { query: { fromId, toId: widget.id }, headers: from(ip) });
const markRead = (widget: Widget, fromId: string, ip: string) =>
  service.request('POST', '/update-message-read-status', { body: { fromId, toId: widget.id }, headers: from(ip) });
const handOff = (widget: Widget, fromId: string, ip: string) =>
  service.request('POST', '/chat-widget-handoff', { body: { fromId, toId: widget.id }, headers: from(ip) });

function expectRateLimited(response: ApiResponse, what: string) {
  expect(response.status, what).toBe(429);
  expect(response.body, what).toEqual({ success: false, error: 'Rate limit exceeded, please try again later', error_code: 429 });
  expect(Number(response.headers.get('retry-after')), what).toBeGreaterThanOrEqual(1);
}

/** Sends `count` requests, each expected to pass (any status but 429). */
async function spend(count: number, call: () => Promise<ApiResponse>, what: string) {
  for (let i = 0; i < count; i += 1) expect((await call()).status, `${what} #${i + 1}`).not.toBe(429);
}

describe('every public endpoint is limited per client address (WIDGET_REQUESTS_PER_IP_PER_MINUTE)', () => {
  const endpoints: [string, (widget: Widget, ip: string) => Promise<ApiResponse>][] = [
    ['GET /chat-widget-config', (widget, ip) => config(widget, ip)],
    ['GET /chat-widget/{configId}', (widget, ip) => page(widget, ip)],
    // A new visitor id each time: the per-visitor limits do not come into it.
    ['GET /chat-widget-messages', (widget, ip) => poll(widget, visitor(), ip)],
    ['POST /update-message-read-status', (widget, ip) => markRead(widget, visitor(), ip)],
  ];
  for (const [name, call] of endpoints) {
    test(`${name}: 429 after 8 requests a minute from one address; another address passes`, async () => {
      await inOneWindow(service.services.pool, async () => {
        const widget = await newWidget();
        const ip = address();
        await spend(8, () => call(widget, ip), name);
        expectRateLimited(await call(widget, ip), name);
        expect((await call(widget, address())).status).not.toBe(429);
      });
    });
  }

  test('POST /incoming-chat-widget-message: the address budget counts messages too', async () => {
    await inOneWindow(service.services.pool, async () => {
      const ip = address();
      // Spent on other endpoints and other widgets: the budget is the address's, not a widget's.
      await spend(7, async () => config(await newWidget(), ip), 'config');
      const widget = await newWidget();
      expect((await send(widget, visitor(), ip)).status).toBe(200);
      expectRateLimited(await send(widget, visitor(), ip), 'message');
    });
  });
});

test('requests refused for an identity token that does not verify count against the address too', async () => {
  await inOneWindow(service.services.pool, async () => {
    const { apiKey, userId } = await service.createAccount();
    const created = await service.request('POST', '/chat-widgets', { apiKey, body: { name: 'Site', settings: { identityVerification: 'optional' } } });
    const widget = { id: created.body.data.id, userId };
    const ip = address();
    const forged = { ...from(ip), 'x-visitor-identity': 'not-a-token' };
    const attempts = [
      () => service.request('POST', '/incoming-chat-widget-message', { query: { userId }, body: { customData: { body: 'hi', fromId: visitor(), toId: widget.id } }, headers: forged }),
      () => service.request('GET', '/chat-widget-messages', { query: { fromId: visitor(), toId: widget.id }, headers: forged }),
      () => service.request('POST', '/update-message-read-status', { body: { fromId: visitor(), toId: widget.id }, headers: forged }),
    ];
    for (let i = 0; i < 8; i += 1) expect((await attempts[i % 3]!()).status, `attempt ${i + 1}`).toBe(401);
    for (const attempt of attempts) expectRateLimited(await attempt(), 'a refused token past the budget');
  });
});

describe('POST /incoming-chat-widget-message per address and widget', () => {
  test('WIDGET_NEW_VISITORS_PER_IP_PER_MINUTE new visitor ids, then 429 and no contact; known visitors and other addresses still pass', async () => {
    await inOneWindow(service.services.pool, async () => {
      const widget = await newWidget();
      const ip = address();
      const known = [visitor(), visitor(), visitor()];
      for (const fromId of known) expect((await send(widget, fromId, ip)).status).toBe(200);
      expectRateLimited(await send(widget, visitor(), ip), 'a fourth new visitor id');
      const { rows } = await service.services.pool.query<{ n: number }>('select count(*)::int as n from contacts where chat_widget_id = $1', [widget.id]);
      expect(rows[0]!.n).toBe(3);
      expect((await send(widget, known[0]!, ip)).status).toBe(200);
      expect((await send(widget, visitor(), address())).status).toBe(200);
      // The cap is per widget: the same address may start a conversation with another one.
      expect((await send(await newWidget(), visitor(), ip)).status).toBe(200);
    });
  });

  test('WIDGET_MESSAGES_PER_IP_PER_MINUTE messages whatever visitor ids they use', async () => {
    await inOneWindow(service.services.pool, async () => {
      const widget = await newWidget();
      const ip = address();
      const [a, b] = [visitor(), visitor()];
      for (const fromId of [a, b, a, b, a]) expect((await send(widget, fromId, ip)).status).toBe(200);
      expectRateLimited(await send(widget, b, ip), 'a sixth message from the address');
      expect((await send(widget, b, address())).status).toBe(200);
    });
  });
});

describe('per visitor', () => {
  test('GET /chat-widget-messages: WIDGET_POLLS_PER_VISITOR_PER_MINUTE polls, then 429; another visitor passes', async () => {
    await inOneWindow(service.services.pool, async () => {
      const widget = await newWidget();
      const ip = address();
      const fromId = visitor();
      expect((await send(widget, fromId, ip)).status).toBe(200);
      await spend(4, () => poll(widget, fromId, address()), 'poll');
      expectRateLimited(await poll(widget, fromId, address()), 'a fifth poll');
      expect((await poll(widget, visitor(), ip)).status).toBe(404);
    });
  });

  test('POST /update-message-read-status: WIDGET_READS_PER_VISITOR_PER_MINUTE receipts, then 429', async () => {
    await inOneWindow(service.services.pool, async () => {
      const widget = await newWidget();
      const fromId = visitor();
      expect((await send(widget, fromId, address())).status).toBe(200);
      await spend(3, () => markRead(widget, fromId, address()), 'read receipt');
      expectRateLimited(await markRead(widget, fromId, address()), 'a fourth read receipt');
    });
  });

  test('POST /incoming-chat-widget-message: WIDGET_MESSAGES_PER_VISITOR_PER_MINUTE messages from any address, then 429; another visitor passes', async () => {
    await inOneWindow(service.services.pool, async () => {
      const widget = await newWidget();
      const fromId = visitor();
      for (let i = 0; i < 4; i += 1) expect((await send(widget, fromId, address())).status, `message ${i + 1}`).toBe(200);
      expectRateLimited(await send(widget, fromId, address()), 'a fifth message from the visitor');
      expect((await send(widget, visitor(), address())).status).toBe(200);
    });
  });

  test('POST /incoming-chat-widget-message: WIDGET_MESSAGES_PER_WIDGET_PER_MINUTE messages to one widget from every visitor, then 429; another widget passes', async () => {
    await inOneWindow(service.services.pool, async () => {
      const widget = await newWidget();
      for (let i = 0; i < 6; i += 1) expect((await send(widget, visitor(), address())).status, `message ${i + 1}`).toBe(200);
      expectRateLimited(await send(widget, visitor(), address()), 'a seventh message to the widget');
      expect((await send(await newWidget(), visitor(), address())).status).toBe(200);
    });
  });

  test('POST /chat-widget-handoff: WIDGET_HANDOFFS_PER_VISITOR_PER_MINUTE requests, then 429', async () => {
    await inOneWindow(service.services.pool, async () => {
      const widget = await newWidget();
      const fromId = visitor();
      expect((await send(widget, fromId, address())).status).toBe(200);
      for (let i = 0; i < 2; i += 1) expect((await handOff(widget, fromId, address())).status, `hand-off ${i + 1}`).toBe(200);
      expectRateLimited(await handOff(widget, fromId, address()), 'a third hand-off');
    });
  });
});

describe('the socket gateway', () => {
  type Refusal = Error & { data?: { status?: number } };
  const open = (widget: Widget, visitorId: string, ip: string) => connectVisitor(service.origin, { configId: widget.id, visitorId }, { extraHeaders: from(ip) });
  async function refusal(attempt: Promise<Visitor>): Promise<{ message: string; status?: number }> {
    try {
      (await attempt).close();
    } catch (error) {
      return { message: (error as Refusal).message, status: (error as Refusal).data?.status };
    }
    throw new Error('the handshake was accepted');
  }

  test('handshakes count against the address: connect_error with status 429 past the budget; another address connects', async () => {
    await inOneWindow(service.services.pool, async () => {
      const widget = await newWidget();
      const ip = address();
      for (let i = 0; i < 8; i += 1) (await open(widget, visitor(), ip)).close();
      expect(await refusal(open(widget, visitor(), ip))).toEqual({ message: 'Rate limit exceeded, please try again later', status: 429 });
      (await open(widget, visitor(), address())).close();
    });
  });

  test('WIDGET_SOCKETS_PER_VISITOR open sockets per visitor; a closed one frees its place', async () => {
    const widget = await newWidget();
    const fromId = visitor();
    const first = await open(widget, fromId, address());
    const second = await open(widget, fromId, address());
    try {
      expect(await refusal(open(widget, fromId, address()))).toEqual({ message: 'too many open chat sockets', status: 429 });
      first.close();
      // The server learns of the close asynchronously: retry until the place is free, within a deadline.
      const deadline = Date.now() + 10_000;
      for (;;) {
        try {
          (await open(widget, fromId, address())).close();
          break;
        } catch (error) {
          if (Date.now() > deadline) throw error;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    } finally {
      first.close();
      second.close();
    }
  });

  test('WIDGET_SOCKETS_PER_IP open sockets per address, whatever visitor ids they use', async () => {
    const widget = await newWidget();
    const ip = address();
    const sockets = [await open(widget, visitor(), ip), await open(widget, visitor(), ip), await open(widget, visitor(), ip)];
    try {
      expect(await refusal(open(widget, visitor(), ip))).toEqual({ message: 'too many open chat sockets', status: 429 });
      const elsewhere = await open(widget, visitor(), address());
      elsewhere.close();
    } finally {
      for (const socket of sockets) socket.close();
    }
  });
});

test('X-Forwarded-For is believed only from a TRUST_PROXY address: without it, one client is one address whatever it claims', async () => {
  const untrusting = await startTestService({ databaseUrl: service.databaseUrl, env: LIMITS });
  try {
    await inOneWindow(service.services.pool, async () => {
      // Every request of this test counts against loopback: a run cut by a window boundary
      // left some counts in this window, so each run starts from none.
      await service.services.pool.query(`delete from rate_counters where bucket = 'widget-address:127.0.0.1'`);
      const widget = await newWidget();
      const call = () => untrusting.request('GET', '/chat-widget-config', { query: { configId: widget.id }, headers: from(address()) });
      await spend(8, call, 'config');
      expectRateLimited(await call(), 'a ninth request claiming yet another address');
      // They were counted in the bucket this test clears.
      const { rows } = await service.services.pool.query(`select count from rate_counters where bucket = 'widget-address:127.0.0.1'`);
      expect(rows.map((row) => row.count)).toContain(8);
    });
  } finally {
    await untrusting.stop();
  }
});
