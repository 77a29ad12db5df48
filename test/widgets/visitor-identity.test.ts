// Owner-verified visitor identity over real HTTPS and Socket.IO: the identity secret is
// shown once and replaced by the next; with `required` every public endpoint and the socket
// refuse a visitor without a valid X-Visitor-Identity token (401 {error}, connect_error);
// a token that does not verify is refused even with `optional`; a verified site user is one
// contact (with the token's email and name) and one conversation on every device.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CLOCK_TOLERANCE_SECONDS } from '../../server/widgets/visitor-identity.ts';
import { connectVisitor, createWidgetWithSecret, isMessage, signVisitorToken as sign, type WidgetWithSecret as Widget } from '../realtime/widget-fixtures.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

const newWidget = (identityVerification: 'off' | 'optional' | 'required') => createWidgetWithSecret(service, identityVerification);

const HOUR = 3600;

function visitor(): string {
  return `v_${randomUUID().replaceAll('-', '')}`;
}

function identity(token: string | undefined): Record<string, string> {
  return token ? { 'x-visitor-identity': token } : {};
}

function send(widget: Widget, fromId: string, body: string, token?: string) {
  return service.request('POST', '/incoming-chat-widget-message', {
    query: { userId: widget.userId },
    body: { customData: { body, fromId, toId: widget.id }, messageType: 'text' },
    headers: identity(token),
  });
}
const poll = (widget: Widget, fromId: string, token?: string) =>
  service.request('GET', '/chat-widget-messages', { query: { fromId, toId: widget.id }, headers: identity(token) });
const markRead = (widget: Widget, fromId: string, token?: string) =>
  service.request('POST', '/update-message-read-status', { body: { fromId, toId: widget.id }, headers: identity(token) });
const config = (widget: Widget, token?: string) => service.request('GET', '/chat-widget-config', { query: { configId: widget.id }, headers: identity(token) });

/** Every public endpoint and the socket, for one widget, with one token (or none). */
async function everyPublicCall(widget: Widget, fromId: string, token: string | undefined) {
  const socket = connectVisitor(service.origin, { configId: widget.id, visitorId: fromId, ...(token ? { identityToken: token } : {}) }).then(
    (connected) => {
      connected.close();
      return 'connected';
    },
    (error: Error & { data?: { status?: number } }) => ({ refused: error.message, status: error.data?.status }),
  );
  return {
    config: await config(widget, token),
    message: await send(widget, fromId, 'hello', token),
    poll: await poll(widget, fromId, token),
    read: await markRead(widget, fromId, token),
    socket: await socket,
  };
}

describe('POST /chat-widgets/{configId}/identity-secret', () => {
  test('answers a wis_ secret once; a new call replaces it, and tokens signed with the old one stop verifying', async () => {
    const widget = await newWidget('optional');
    expect(widget.secret).toMatch(/^wis_[A-Za-z0-9_-]{43}$/);
    const shown = await service.request('GET', `/chat-widgets/${widget.id}`, { apiKey: widget.apiKey });
    expect(shown.text).not.toContain(widget.secret);
    const fromId = visitor();
    const oldToken = await sign(widget.secret, { sub: 'user-1' });
    expect((await send(widget, fromId, 'before', oldToken)).status).toBe(200);

    const replaced = await service.request('POST', `/chat-widgets/${widget.id}/identity-secret`, { apiKey: widget.apiKey });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual({ success: true, data: { identity_secret: expect.stringMatching(/^wis_/) } });
    expect(replaced.body.data.identity_secret).not.toBe(widget.secret);
    const refused = await send(widget, fromId, 'after', oldToken);
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ error: 'Invalid visitor identity token' });
    expect((await send(widget, fromId, 'after', await sign(replaced.body.data.identity_secret, { sub: 'user-1' }))).status).toBe(200);
  });

  test("404 for another account's widget", async () => {
    const widget = await newWidget('off');
    const { apiKey } = await service.createAccount();
    const response = await service.request('POST', `/chat-widgets/${widget.id}/identity-secret`, { apiKey });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ success: false, error: 'Chat widget not found', error_code: 404 });
  });
});

describe('identityVerification: required', () => {
  test('without a token every public endpoint answers 401 {error} and the socket is refused', async () => {
    const widget = await newWidget('required');
    const calls = await everyPublicCall(widget, visitor(), undefined);
    const refusal = { error: 'This chat widget requires a visitor identity token (X-Visitor-Identity)' };
    for (const name of ['config', 'message', 'poll', 'read'] as const) {
      expect(calls[name].status, name).toBe(401);
      expect(calls[name].body, name).toEqual(refusal);
    }
    expect(calls.socket).toEqual({ refused: refusal.error, status: 401 });
    const { rows } = await service.services.pool.query('select 1 from contacts where chat_widget_id = $1', [widget.id]);
    expect(rows).toEqual([]);
  });

  test('with a valid token every public endpoint and the socket answer', async () => {
    const widget = await newWidget('required');
    const calls = await everyPublicCall(widget, visitor(), await sign(widget.secret, { sub: 'user-ok' }));
    expect([calls.config.status, calls.message.status, calls.poll.status, calls.read.status]).toEqual([200, 200, 200, 200]);
    expect(calls.socket).toBe('connected');
    // The socket may carry the token as the header instead (clients that can set one).
    const token = await sign(widget.secret, { sub: 'user-ok' });
    const byHeader = await connectVisitor(service.origin, { configId: widget.id }, { extraHeaders: { 'x-visitor-identity': token } });
    byHeader.close();
  });
});

describe("a verified visitor's socket lasts as long as the token is accepted", () => {
  test('it closes at the token\'s exp (plus the clock tolerance), and the token then no longer connects', async () => {
    const widget = await newWidget('required');
    // Accepted for a few seconds more: its exp is that much short of the tolerance for clocks
    // that differ. A token that expired before its socket connected is signed again, living longer.
    let lifeSeconds = 4;
    let auth: { configId: string; visitorId: string; identityToken: string };
    let listening: Awaited<ReturnType<typeof connectVisitor>>;
    for (;;) {
      auth = { configId: widget.id, visitorId: visitor(), identityToken: await sign(widget.secret, { sub: 'user-expiring' }, lifeSeconds - CLOCK_TOLERANCE_SECONDS) };
      const connected = await connectVisitor(service.origin, auth).catch((error: unknown) => {
        if (lifeSeconds >= 16 || (error as Error).message !== 'Invalid visitor identity token: expired') throw error;
        return null;
      });
      if (connected) {
        listening = connected;
        break;
      }
      lifeSeconds *= 2;
    }
    try {
      const closed = await new Promise<string>((resolve, reject) => {
        listening.socket.once('disconnect', resolve);
        setTimeout(() => reject(new Error('the socket outlived its token')), (lifeSeconds + 20) * 1000).unref();
      });
      // The server closed it (a dropped connection would say 'transport close' and reconnect).
      expect(closed).toBe('io server disconnect');
      await expect(connectVisitor(service.origin, auth)).rejects.toMatchObject({
        message: 'Invalid visitor identity token: expired',
        data: { status: 401 },
      });
    } finally {
      listening.close();
    }
  });
});

describe('tokens that do not verify are 401, with optional too', () => {
  test('expired, signed with another secret, another widget\'s, without exp, or exp more than 24 hours ahead', async () => {
    const widget = await newWidget('optional');
    const other = await newWidget('optional');
    const cases: [string, string][] = [
      ['expired', await sign(widget.secret, { sub: 'u' }, -10 * 60)],
      ['wrong secret', await sign(`wis_${'x'.repeat(43)}`, { sub: 'u' })],
      ["another widget's", await sign(other.secret, { sub: 'u' })],
      ['no exp', await sign(widget.secret, { sub: 'u' }, null)],
      ['exp 25 hours ahead', await sign(widget.secret, { sub: 'u' }, 25 * HOUR)],
      ['no sub', await sign(widget.secret, {})],
      ['not a JWT', 'not-a-token'],
    ];
    for (const [name, token] of cases) {
      const calls = await everyPublicCall(widget, visitor(), token);
      for (const call of ['config', 'message', 'poll', 'read'] as const) {
        expect(calls[call].status, `${name}: ${call}`).toBe(401);
        expect(calls[call].body.error, `${name}: ${call}`).toMatch(/^Invalid visitor identity token/);
      }
      expect(calls.socket, name).toMatchObject({ status: 401 });
    }
    // Nearly 24 hours is fine.
    expect((await send(widget, visitor(), 'hi', await sign(widget.secret, { sub: 'u' }, 24 * HOUR - 60))).status).toBe(200);
  });

  test('with identityVerification off the header is ignored', async () => {
    const widget = await newWidget('off');
    expect((await send(widget, visitor(), 'hi', 'not-a-token')).status).toBe(200);
  });
});

describe('token claims pass the same input rules as any field', () => {
  test('a NUL or a lone surrogate in sub, email or name makes the token invalid: 401 on every public endpoint and on the socket, never a 5xx', async () => {
    const widget = await newWidget('required');
    const nul = 'a NUL character (\\u0000)';
    const lone = 'a lone UTF-16 surrogate (\\ud800 to \\udfff without its pair)';
    const cases: [Record<string, string>, string][] = [
      [{ sub: 'user\u0000' }, `sub must not contain ${nul}`],
      [{ sub: 'user\ud800' }, `sub must not contain ${lone}`],
      [{ sub: 'user-1', email: 'ada\u0000@example.com' }, `email must not contain ${nul}`],
      [{ sub: 'user-1', email: 'ada\udc00@example.com' }, `email must not contain ${lone}`],
      [{ sub: 'user-1', name: 'Ada\u0000Lovelace' }, `name must not contain ${nul}`],
      [{ sub: 'user-1', name: 'Ada \ud83d' }, `name must not contain ${lone}`],
    ];
    for (const [claims, problem] of cases) {
      const label = JSON.stringify(claims);
      const calls = await everyPublicCall(widget, visitor(), await sign(widget.secret, claims));
      for (const call of ['config', 'message', 'poll', 'read'] as const) {
        expect(calls[call].status, `${label}: ${call}`).toBe(401);
        expect(calls[call].body, `${label}: ${call}`).toEqual({ error: `Invalid visitor identity token: ${problem}` });
      }
      expect(calls.socket, label).toEqual({ refused: `Invalid visitor identity token: ${problem}`, status: 401 });
    }
    const { rows } = await service.services.pool.query('select 1 from contacts where chat_widget_id = $1', [widget.id]);
    expect(rows).toEqual([]);
  });

  test('an email or name longer than the contact keeps is cut between characters, never through an emoji (a surrogate pair)', async () => {
    const widget = await newWidget('required');
    // The contact keeps 320 characters of email and 200 of name: here the cut falls inside the emoji.
    const token = await sign(widget.secret, { sub: 'user-long', email: `${'a'.repeat(319)}\u{1F600}`, name: `Ada ${'b'.repeat(195)}\u{1F600} Lovelace` });
    const sent = await send(widget, visitor(), 'hello', token);
    expect(sent.status, sent.text).toBe(200);
    const { rows } = await service.services.pool.query('select email, first_name, last_name from contacts where chat_widget_id = $1', [widget.id]);
    expect(rows).toEqual([{ email: 'a'.repeat(319), first_name: 'Ada', last_name: 'b'.repeat(195) }]);
  });
});

describe('a verified site user is one contact and one conversation on every device', () => {
  test('two devices with different fromIds post into one conversation, see it whole, and share one contact with the token\'s email and name', async () => {
    const widget = await newWidget('optional');
    const phone = visitor();
    const laptop = visitor();
    const token = await sign(widget.secret, { sub: 'site-user-42', email: 'ada@example.com', name: 'Ada Lovelace' });
    expect((await send(widget, phone, 'from my phone', token)).status).toBe(200);
    expect((await send(widget, laptop, 'from my laptop', token)).status).toBe(200);

    const fromPhone = await poll(widget, phone, token);
    const fromLaptop = await poll(widget, laptop, token);
    expect(fromPhone.status).toBe(200);
    const inbound = (body: any) => body.messages.filter((message: any) => message.direction === 'inbound').map((message: any) => message.body);
    expect(inbound(fromPhone.body)).toEqual(['from my phone', 'from my laptop']);
    expect(inbound(fromLaptop.body)).toEqual(['from my phone', 'from my laptop']);

    const { rows } = await service.services.pool.query(
      'select email, first_name, last_name, widget_visitor_id from contacts where chat_widget_id = $1',
      [widget.id],
    );
    expect(rows).toEqual([{ email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', widget_visitor_id: 'sub:site-user-42' }]);
    // Without the token, a device's fromId is an anonymous visitor of its own, who has said nothing.
    expect((await poll(widget, phone)).status).toBe(404);
  });

  test("a verified socket hears the messages the same user sends from another device", async () => {
    const widget = await newWidget('required');
    const token = await sign(widget.secret, { sub: 'site-user-7' });
    const listening = await connectVisitor(service.origin, { configId: widget.id, visitorId: visitor(), identityToken: token });
    try {
      expect((await send(widget, visitor(), 'sent elsewhere', token)).status).toBe(200);
      expect((await listening.waitFor(isMessage('sent elsewhere'))).at(-1)?.name).toBe('message');
    } finally {
      listening.close();
    }
  });

  test('a later token with a new email updates the contact', async () => {
    const widget = await newWidget('optional');
    expect((await send(widget, visitor(), 'one', await sign(widget.secret, { sub: 'u9', email: 'old@example.com' }))).status).toBe(200);
    expect((await send(widget, visitor(), 'two', await sign(widget.secret, { sub: 'u9', email: 'new@example.com' }))).status).toBe(200);
    const { rows } = await service.services.pool.query('select email from contacts where chat_widget_id = $1', [widget.id]);
    expect(rows).toEqual([{ email: 'new@example.com' }]);
  });
});

test('identityVerification must be off, optional or required', async () => {
  const { apiKey } = await service.createAccount();
  const response = await service.request('POST', '/chat-widgets', { apiKey, body: { name: 'Site', settings: { identityVerification: 'sometimes' } } });
  expect(response.status).toBe(400);
  expect(response.text).toContain('must be off, optional or required');
});
