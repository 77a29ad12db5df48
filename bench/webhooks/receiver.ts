// The benchmark's HTTPS webhook receiver: answers 200 at once and records, per
// delivery id, when its first attempt arrived and which event it carried. It checks
// every delivery is signed and verifies the spec signature of a sample of them.
import { createHmac } from 'node:crypto';
import { createServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

export type Arrival = { eventId: string; atMs: number };

export type BenchReceiver = {
  origin: string;
  /** First arrival per delivery id (X-Webhook-Delivery). */
  arrivals: Map<string, Arrival>;
  /** Requests seen, repeats included. */
  readonly requests: number;
  readonly unsigned: number;
  readonly badSignatures: number;
  waitForDeliveries(count: number, timeoutMs: number): Promise<void>;
  reset(): void;
  close(): Promise<void>;
};

/** Epoch milliseconds with sub-millisecond resolution, one clock for the whole bench process. */
export const nowMs = (): number => performance.timeOrigin + performance.now();

const VERIFY_EVERY = 25;

export async function startBenchReceiver(tls: { key: string; cert: string }, secret: string): Promise<BenchReceiver> {
  const arrivals = new Map<string, Arrival>();
  let requests = 0;
  let unsigned = 0;
  let badSignatures = 0;
  const sockets = new Set<Socket>();
  const server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const atMs = nowMs();
      res.writeHead(200, { 'content-length': '0' });
      res.end();
      requests += 1;
      const body = Buffer.concat(chunks).toString('utf8');
      const deliveryId = String(req.headers['x-webhook-delivery'] ?? '');
      const signature = req.headers['x-webhook-signature'];
      const timestamp = req.headers['x-webhook-timestamp'];
      if (typeof signature !== 'string' || typeof timestamp !== 'string') unsigned += 1;
      else if (requests % VERIFY_EVERY === 0) {
        const expected = `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
        if (expected !== signature) badSignatures += 1;
      }
      if (!arrivals.has(deliveryId)) {
        const eventId = String((JSON.parse(body) as { event_id?: unknown }).event_id ?? '');
        arrivals.set(deliveryId, { eventId, atMs });
      }
    });
  });
  server.on('secureConnection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `https://localhost:${port}`,
    arrivals,
    get requests() {
      return requests;
    },
    get unsigned() {
      return unsigned;
    },
    get badSignatures() {
      return badSignatures;
    },
    async waitForDeliveries(count, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (arrivals.size < count) {
        if (Date.now() > deadline) throw new Error(`receiver: ${arrivals.size} of ${count} deliveries arrived within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    reset() {
      arrivals.clear();
      requests = 0;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
