// A fake messaging provider (WhatsApp Cloud API shape) on real loopback HTTPS for tests:
// template sends, paged template listings, reading a phone number and a business account's
// numbers. Like the real one it answers only tokens it was told of, and only for the objects
// they were granted: an unknown token is a 401 (OAuthException 190), an object the token
// cannot reach a 400 (GraphMethodException 100). Its certificate comes from the run's test
// CA (test/global-setup.ts), like the webhook receiver's, so the service reaches it with
// ordinary certificate checks through its one outbound client.
import { createServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { inject } from 'vitest';

export type FakeProviderRequest = { method: string; path: string; authorization: string | undefined; body: any };
export type FakeProviderAnswer = {
  status: number;
  body: unknown;
  delayMs?: number;
  /** Answer only once this settles: a gate the test opens (never a duration). */
  heldUntil?: Promise<unknown>;
};
export type FakeMessagingProvider = {
  /** Base URL to put in MESSAGING_API_URL. */
  url: string;
  /** Every request, in order. */
  requests: FakeProviderRequest[];
  /** Only POST .../messages. */
  sends(): FakeProviderRequest[];
  /** Script answers to every request, before any other check (an outage, say); undefined answers as usual. */
  answerRequestsWith(script: ((request: FakeProviderRequest) => FakeProviderAnswer | undefined) | null): void;
  /** Script answers to sends; return undefined for the default success ({messages:[{id:'wamid.fake.<n>'}]}). */
  answerSendsWith(script: ((request: FakeProviderRequest, index: number) => FakeProviderAnswer | undefined) | null): void;
  /**
   * The token reaches this phone number and/or business account; given both, the business
   * account holds the number (GET /{business_account_id}/phone_numbers lists it).
   */
  grant(token: string, access: { phoneNumberId?: string; businessAccountId?: string }): void;
  /** Tokens the first test accepts reach every object the second accepts (for tokens a test cannot know beforehand). */
  grantMatching(token: (token: string) => boolean, objectId: (id: string) => boolean): void;
  /** Served with paging, two per page, so callers' paging is exercised. */
  setTemplates(businessAccountId: string, templates: Array<Record<string, unknown>>): void;
  waitForSends(count: number, timeoutMs?: number): Promise<FakeProviderRequest[]>;
  close(): Promise<void>;
};

const PAGE_SIZE = 2;
const API_VERSION_PATH = '/v21.0';

export async function startFakeMessagingProvider(): Promise<FakeMessagingProvider> {
  const tls = inject('webhookReceiverTls');
  const requests: FakeProviderRequest[] = [];
  const templates = new Map<string, Array<Record<string, unknown>>>();
  /** Token → the object ids it reaches. */
  const grants = new Map<string, Set<string>>();
  const grantRules: Array<{ token: (token: string) => boolean; objectId: (id: string) => boolean }> = [];
  /** Business account → the phone numbers it holds, in grant order. */
  const numbersOf = new Map<string, string[]>();
  let sendScript: ((request: FakeProviderRequest, index: number) => FakeProviderAnswer | undefined) | null = null;
  let requestScript: ((request: FakeProviderRequest) => FakeProviderAnswer | undefined) | null = null;
  let sendCount = 0;
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let base = '';

  const isSend = (request: FakeProviderRequest) => request.method === 'POST' && /\/messages$/.test(request.path.split('?')[0]!);

  function answer(request: FakeProviderRequest): FakeProviderAnswer {
    const scripted = requestScript?.(request);
    if (scripted) return scripted;
    const url = new URL(request.path, 'https://fake.invalid');
    if (!url.pathname.startsWith(`${API_VERSION_PATH}/`)) return cloudError(404, 'Unknown path', 100);
    const token = request.authorization?.startsWith('Bearer ') ? request.authorization.slice('Bearer '.length) : '';
    const knownToken = grants.has(token) || grantRules.some((rule) => rule.token(token));
    if (!token || !knownToken) return invalidToken();
    const segments = url.pathname.slice(API_VERSION_PATH.length + 1).split('/');
    const objectId = decodeURIComponent(segments[0] ?? '');
    const reaches = grants.get(token)?.has(objectId) || grantRules.some((rule) => rule.token(token) && rule.objectId(objectId));
    if (!reaches) return unreachableObject(request.method, objectId);
    if (request.method === 'GET' && segments.length === 1) {
      return { status: 200, body: { verified_name: 'Fake Business', display_phone_number: `+1 555 ${objectId.slice(-7)}`, quality_rating: 'GREEN', id: objectId } };
    }
    if (request.method === 'GET' && segments.length === 2 && segments[1] === 'phone_numbers') {
      const held = numbersOf.get(objectId) ?? [];
      return { status: 200, body: { data: held.map((id) => ({ verified_name: 'Fake Business', display_phone_number: `+1 555 ${id.slice(-7)}`, id })) } };
    }
    if (isSend(request) && segments.length === 2) {
      const index = sendCount++;
      const scripted = sendScript?.(request, index);
      return scripted ?? { status: 200, body: { messaging_product: 'whatsapp', contacts: [{ input: request.body?.to, wa_id: request.body?.to }], messages: [{ id: `wamid.fake.${index + 1}` }] } };
    }
    if (request.method === 'GET' && segments.length === 2 && segments[1] === 'message_templates') {
      const all = templates.get(decodeURIComponent(segments[0]!)) ?? [];
      const start = Number(url.searchParams.get('after') ?? '0') || 0;
      const page = all.slice(start, start + PAGE_SIZE);
      const after = String(start + page.length);
      const more = start + PAGE_SIZE < all.length;
      return {
        status: 200,
        body: {
          data: page,
          paging: {
            cursors: { before: String(start), after },
            ...(more ? { next: `${base}/${segments[0]}/message_templates?limit=${PAGE_SIZE}&after=${after}` } : {}),
          },
        },
      };
    }
    return cloudError(400, 'Unsupported request', 100);
  }

  const server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text || null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        // Kept as text: a test can still see what arrived.
      }
      const request: FakeProviderRequest = { method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization, body };
      requests.push(request);
      let reply: FakeProviderAnswer;
      try {
        reply = answer(request);
      } catch (error) {
        reply = cloudError(500, String(error), 1);
      }
      const respond = () => {
        if (res.destroyed) return;
        const payload = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
        res.writeHead(reply.status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) });
        res.end(payload);
      };
      if (reply.heldUntil) return void reply.heldUntil.then(respond, respond);
      if (!reply.delayMs) return respond();
      const timer = setTimeout(() => {
        timers.delete(timer);
        respond();
      }, reply.delayMs);
      timers.add(timer);
    });
  });
  server.on('secureConnection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  base = `https://localhost:${(server.address() as AddressInfo).port}${API_VERSION_PATH}`;

  return {
    url: base,
    requests,
    sends: () => requests.filter(isSend),
    answerRequestsWith(script) {
      requestScript = script;
    },
    answerSendsWith(script) {
      sendScript = script;
    },
    grant(token, access) {
      const reached = grants.get(token) ?? new Set<string>();
      grants.set(token, reached);
      if (access.phoneNumberId) reached.add(access.phoneNumberId);
      if (access.businessAccountId) reached.add(access.businessAccountId);
      if (access.phoneNumberId && access.businessAccountId) {
        const held = numbersOf.get(access.businessAccountId) ?? [];
        if (!held.includes(access.phoneNumberId)) held.push(access.phoneNumberId);
        numbersOf.set(access.businessAccountId, held);
      }
    },
    grantMatching(token, objectId) {
      grantRules.push({ token, objectId });
    },
    setTemplates(businessAccountId, list) {
      templates.set(businessAccountId, list);
    },
    async waitForSends(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (requests.filter(isSend).length < count) {
        if (Date.now() > deadline) {
          const seen = requests.map((request) => `${request.method} ${request.path} ${JSON.stringify(request.body)?.slice(0, 200)}`);
          throw new Error(`fake messaging provider: ${count} send(s) not seen within ${timeoutMs} ms; ${requests.length} request(s):\n${seen.join('\n')}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return requests.filter(isSend);
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/** The Cloud API's error body. */
function cloudError(status: number, message: string, code: number, type = 'OAuthException', extra: Record<string, unknown> = {}): FakeProviderAnswer {
  return { status, body: { error: { message, type, code, ...extra, fbtrace_id: 'fake' } } };
}

/** What the Graph API answers a token it cannot parse, or one that expired or was revoked. */
function invalidToken(): FakeProviderAnswer {
  return cloudError(401, 'Invalid OAuth access token - Cannot parse access token', 190);
}

/** What the Graph API answers for an object the token cannot see (or that does not exist). */
function unreachableObject(method: string, id: string): FakeProviderAnswer {
  return cloudError(
    400,
    `Unsupported ${method.toLowerCase()} request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api`,
    100,
    'GraphMethodException',
    { error_subcode: 33 },
  );
}
