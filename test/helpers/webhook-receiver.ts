// A real HTTPS webhook receiver on loopback for tests. Its certificate (localhost,
// 127.0.0.1, ::1) is signed by the run's test CA, which every test process trusts
// through NODE_EXTRA_CA_CERTS (test/global-setup.ts), so the service delivers to
// it with ordinary certificate checks.
import { createServer } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { inject } from 'vitest';

/**
 * A URL nothing listens on, for "connection refused": port 1 is privileged and outside the
 * ephemeral range, so no listener a test opens on port 0 (nor an outgoing connection) can
 * ever take it, as another process can take a port a closed receiver released.
 */
export const NOTHING_LISTENING_URL = 'https://localhost:1/hook';

export type ReceivedRequest = {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The body exactly as received (signatures are over these bytes). */
  body: string;
  receivedAt: Date;
  /** 0-based number of the TLS connection it arrived on. */
  connection: number;
};

export type ReceiverAnswer = {
  status: number;
  delayMs?: number;
  /** Hold the answer until this settles (a test releases a slow receiver when it chooses). */
  until?: Promise<unknown>;
  headers?: Record<string, string>;
  body?: string;
};
export type ReceiverScript = (request: ReceivedRequest, index: number) => ReceiverAnswer;

export type WebhookReceiver = {
  /** `https://localhost:PORT/hook` */
  url: string;
  origin: string;
  port: number;
  requests: ReceivedRequest[];
  /** TLS connections accepted so far. */
  readonly connectionCount: number;
  respondWith(script: ReceiverScript): void;
  /** Resolves with the requests once `count` arrived (or the predicate holds); throws with what arrived otherwise. */
  waitFor(condition: number | ((requests: ReceivedRequest[]) => boolean), timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
};

export async function startWebhookReceiver(options: { respondWith?: ReceiverScript; path?: string } = {}): Promise<WebhookReceiver> {
  const tls = inject('webhookReceiverTls');
  const requests: ReceivedRequest[] = [];
  let script: ReceiverScript = options.respondWith ?? (() => ({ status: 200 }));
  let connectionCount = 0;
  const connectionNumbers = new WeakMap<Socket, number>();
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: new Date(),
        connection: connectionNumbers.get(req.socket) ?? -1,
      };
      const index = requests.length;
      requests.push(received);
      let answer: ReceiverAnswer;
      try {
        answer = script(received, index);
      } catch (error) {
        answer = { status: 500, body: String(error) };
      }
      const respond = () => {
        if (res.destroyed) return;
        const body = answer.body ?? '';
        res.writeHead(answer.status, { 'content-type': 'text/plain', 'content-length': String(Buffer.byteLength(body)), ...answer.headers });
        res.end(body);
      };
      const delayed = () => {
        if (!answer.delayMs) return respond();
        const timer = setTimeout(() => {
          timers.delete(timer);
          respond();
        }, answer.delayMs);
        timers.add(timer);
      };
      if (answer.until) void answer.until.then(delayed, delayed);
      else delayed();
    });
  });
  server.on('secureConnection', (socket) => {
    connectionNumbers.set(socket, connectionCount++);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `https://localhost:${port}`;

  return {
    url: `${origin}${options.path ?? '/hook'}`,
    origin,
    port,
    requests,
    get connectionCount() {
      return connectionCount;
    },
    respondWith(next) {
      script = next;
    },
    async waitFor(condition, timeoutMs = 10_000) {
      const holds = typeof condition === 'number' ? (seen: ReceivedRequest[]) => seen.length >= condition : condition;
      const deadline = Date.now() + timeoutMs;
      while (!holds(requests)) {
        if (Date.now() > deadline) {
          const seen = requests.map((request) => `${request.method} ${request.path} ${request.headers['x-webhook-event'] ?? ''} ${request.body.slice(0, 200)}`);
          throw new Error(`webhook receiver: condition not met within ${timeoutMs} ms; ${requests.length} request(s) seen:\n${seen.join('\n')}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return requests;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
