// A /trpc WebSocket as a test drives it: raw frames of tRPC's wire protocol (so a test can send
// a batch or a burst in one frame and see every answer), and a wsLink client for typed calls.
import { createTRPCClient, createWSClient, wsLink, type TRPCClient } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import WebSocket from 'ws';

/** One answer frame: `{ id, result }` or `{ id, error }` (id null for socket-level errors). */
export type Frame = {
  id: number | string | null;
  result?: { type: 'started' | 'data' | 'stopped'; data?: any };
  error?: { code: number; message: string; data: { code: string; httpStatus: number; error_code?: unknown } };
};

export type RawTrpcSocket = {
  frames: Frame[];
  send(message: unknown): void;
  /** The first frame (after `from`) that matches, within `withinMs`; rejects after that. */
  waitFor(predicate: (frame: Frame) => boolean, withinMs?: number, from?: number): Promise<Frame>;
  /** Resolves with the close code when the socket closes. */
  closed: Promise<number>;
  close(): Promise<void>;
};

function socketUrl(origin: string, query: Record<string, string>): string {
  return `${origin.replace('https', 'wss')}/trpc?${new URLSearchParams(query)}`;
}

export function openRawTrpcSocket(origin: string, query: Record<string, string>): Promise<RawTrpcSocket> {
  const ws = new WebSocket(socketUrl(origin, query), { rejectUnauthorized: false });
  const frames: Frame[] = [];
  const waiters = new Set<() => void>();
  ws.on('message', (data) => {
    const text = data.toString();
    if (text === 'PING') return ws.send('PONG');
    if (text === 'PONG') return;
    frames.push(JSON.parse(text) as Frame);
    for (const waiter of [...waiters]) waiter();
  });
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  closed.then(() => {
    for (const waiter of [...waiters]) waiter();
  });
  let isClosed = false;
  void closed.then(() => (isClosed = true));
  const socket: RawTrpcSocket = {
    frames,
    send: (message) => ws.send(JSON.stringify(message)),
    waitFor(predicate, withinMs = 15_000, from = 0) {
      return new Promise((resolve, reject) => {
        const look = () => {
          const found = frames.slice(from).find(predicate);
          if (found) {
            done();
            resolve(found);
          } else if (isClosed) {
            done();
            reject(new Error(`socket closed without the frame; frames: ${JSON.stringify(frames)}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no such frame within ${withinMs} ms; frames: ${JSON.stringify(frames)}`));
        }, withinMs);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(look);
        };
        waiters.add(look);
        look();
      });
    },
    closed,
    async close() {
      ws.close();
      await closed;
    },
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(socket));
    ws.once('error', reject);
  });
}

/** A typed client whose every call (queries and mutations too) goes over one /trpc WebSocket. */
export function socketClient<R extends AnyRouter>(
  origin: string,
  query: Record<string, string>,
  connectionParams?: Record<string, string>,
): { client: TRPCClient<R>; close(): Promise<void> } {
  const ws = createWSClient({
    url: socketUrl(origin, query),
    ...(connectionParams ? { connectionParams } : {}),
    WebSocket: class extends WebSocket {
      constructor(url: string | URL, protocols?: string | string[]) {
        super(url, protocols, { rejectUnauthorized: false });
      }
    } as never,
  });
  const client = createTRPCClient<R>({ links: [wsLink({ client: ws } as Parameters<typeof wsLink<R>>[0])] });
  return { client, close: () => ws.close() };
}
