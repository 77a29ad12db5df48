// A fake messaging provider (WhatsApp Cloud API shape) on real loopback HTTPS for tests:
// template sends and paged template listings. Its certificate comes from the run's test
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
  /** Script answers to sends; return undefined for the default success ({messages:[{id:'wamid.fake.<n>'}]}). */
  answerSendsWith(script: ((request: FakeProviderRequest, index: number) => FakeProviderAnswer | undefined) | null): void;
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
  let sendScript: ((request: FakeProviderRequest, index: number) => FakeProviderAnswer | undefined) | null = null;
  let sendCount = 0;
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let base = '';

  const isSend = (request: FakeProviderRequest) => request.method === 'POST' && /\/messages$/.test(request.path.split('?')[0]!);

  function answer(request: FakeProviderRequest): FakeProviderAnswer {
    const url = new URL(request.path, 'https://fake.invalid');
    if (!url.pathname.startsWith(`${API_VERSION_PATH}/`)) return cloudError(404, 'Unknown path', 100);
    if (!request.authorization?.startsWith('Bearer ') || request.authorization.length <= 'Bearer '.length) {
      return cloudError(401, 'Invalid OAuth access token', 190);
    }
    const segments = url.pathname.slice(API_VERSION_PATH.length + 1).split('/');
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
    answerSendsWith(script) {
      sendScript = script;
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
function cloudError(status: number, message: string, code: number): FakeProviderAnswer {
  return { status, body: { error: { message, type: 'OAuthException', code, fbtrace_id: 'fake' } } };
}
