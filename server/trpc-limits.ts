// The documented limits of /trpc's long-lived and batched channels (docs/api.md "Resource limits"):
// calls per batch (HTTP and WebSocket), subscriptions per WebSocket, WebSockets and SSE
// subscriptions per credential.
import type { Credential } from './auth/scopes.ts';
import { ApiError } from './errors.ts';
import type { Services } from './process-services.ts';

/** Calls one /trpc batch may carry, over HTTP (`?batch=1`) or in one WebSocket frame. */
export const MAX_BATCH_CALLS = 50;

/** Subscriptions open at once on one /trpc WebSocket. */
export const MAX_SUBSCRIPTIONS_PER_SOCKET = 20;

/**
 * Long-lived /trpc channels (WebSockets, and subscriptions over SSE) open at once with one
 * credential, per API process: each process counts its own, so N processes behind a load
 * balancer allow up to N times this many.
 */
export const MAX_CHANNELS_PER_CREDENTIAL = 50;

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

export type ChannelCounter = {
  /** Counts a channel of `owner`, refused with 429 at the limit; returns the release (once is enough). */
  open(owner: string): () => void;
};

function createChannelCounter(): ChannelCounter {
  const open = new Map<string, number>();
  return {
    open(owner) {
      const count = open.get(owner) ?? 0;
      if (count >= MAX_CHANNELS_PER_CREDENTIAL) {
        throw new ApiError(429, `At most ${MAX_CHANNELS_PER_CREDENTIAL} WebSockets and SSE subscriptions may be open at once with one credential`, {
          reason: 'too_many_channels',
        });
      }
      open.set(owner, count + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (open.get(owner) ?? 1) - 1;
        if (left === 0) open.delete(owner);
        else open.set(owner, left);
      };
    },
  };
}

const counters = new WeakMap<Services, ChannelCounter>();

/** The process's count of open channels by credential (one per running service). */
export function channelCounterFor(services: Services): ChannelCounter {
  let counter = counters.get(services);
  if (!counter) counters.set(services, (counter = createChannelCounter()));
  return counter;
}

/**
 * Whose channel it is: the credential once accepted (a key by its id, a session by its
 * subject), so only a credential that exists has places; a socket waits for that in the
 * count of unauthenticated sockets (server/http/unauthenticated-sockets.ts).
 */
export function channelOwner(credential: Credential): string {
  return credential.type === 'session' ? `session:${credential.id}` : `key:${credential.id}`;
}
