// The documented limits of /trpc's long-lived and batched channels (README "Resource limits"):
// calls per batch (HTTP and WebSocket), subscriptions per WebSocket, WebSockets per credential.
import { ApiError } from '../errors.ts';

/** Calls one /trpc batch may carry, over HTTP (`?batch=1`) or in one WebSocket frame. */
export const MAX_BATCH_CALLS = 50;

/** Subscriptions open at once on one /trpc WebSocket. */
export const MAX_SUBSCRIPTIONS_PER_SOCKET = 20;

/**
 * /trpc WebSockets open at once with one credential, per API process (each process counts its
 * own sockets; N processes behind a load balancer allow up to N times this many).
 */
export const MAX_SOCKETS_PER_CREDENTIAL = 50;

/** What one /trpc WebSocket keeps about itself. */
export type SocketState = { openSubscriptions: number };

/**
 * Takes one of the socket's subscription slots, refused with 429 when all are taken; the
 * slot is given back once, by whichever comes first of the returned release and `signal`.
 */
export function takeSubscriptionSlot(socket: SocketState, signal: AbortSignal | undefined): () => void {
  if (socket.openSubscriptions >= MAX_SUBSCRIPTIONS_PER_SOCKET) {
    throw new ApiError(429, `At most ${MAX_SUBSCRIPTIONS_PER_SOCKET} subscriptions may be open on one WebSocket; stop one or open another socket`, {
      reason: 'too_many_subscriptions',
    });
  }
  socket.openSubscriptions += 1;
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    socket.openSubscriptions -= 1;
    signal?.removeEventListener('abort', release);
  };
  signal?.addEventListener('abort', release, { once: true });
  return release;
}

/** Counts the open sockets of each credential in this process. */
export function createSocketCounter() {
  const open = new Map<string, number>();
  return {
    /** Counts a socket of `credential`, refused with 429 at the limit; returns the release. */
    open(credential: string): () => void {
      const count = open.get(credential) ?? 0;
      if (count >= MAX_SOCKETS_PER_CREDENTIAL) {
        throw new ApiError(429, `At most ${MAX_SOCKETS_PER_CREDENTIAL} WebSockets may be open at once with one credential`, {
          reason: 'too_many_sockets',
        });
      }
      open.set(credential, count + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (open.get(credential) ?? 1) - 1;
        if (left === 0) open.delete(credential);
        else open.set(credential, left);
      };
    },
  };
}
