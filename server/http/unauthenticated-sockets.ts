// Sockets that have not authenticated yet, counted per client address in this process: a
// `/trpc` WebSocket or a Socket.IO (Engine.IO) connection counts from its upgrade until it
// authenticates or closes. Past the limit a new one is answered 429; one still waiting at
// the deadline is closed with 1008 (contract, "Trust on every channel, second round").
// Authenticated sockets are counted by their own caps instead (server/trpc-limits.ts, the
// widget gateway's per-visitor and per-address caps).
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, renderError } from '../errors.ts';
import { writeRawResponse } from './client-errors.ts';
import { REQUEST_ID_HEADER, requestIdFor } from './request-id.ts';

/** How long a new socket has to authenticate before it is closed. */
export const UNAUTHENTICATED_SOCKET_DEADLINE_MS = 10_000;

/** Unauthenticated sockets one client address may hold open at once, per API process. */
export const MAX_UNAUTHENTICATED_SOCKETS_PER_ADDRESS = 20;

/** The WebSocket close code of a socket that did not authenticate or was refused (RFC 6455 "policy violation"). */
export const POLICY_VIOLATION = 1008;

/** The answer to a socket past that limit. */
export const TOO_MANY_UNAUTHENTICATED_SOCKETS = renderError(
  new ApiError(429, `At most ${MAX_UNAUTHENTICATED_SOCKETS_PER_ADDRESS} sockets may wait for authentication at once from one address`, {
    reason: 'too_many_unauthenticated_sockets',
  }),
);

/** Writes that answer on the raw socket of an upgrade (no fastify reply exists for it). */
export function refuseUpgrade(request: IncomingMessage, socket: Duplex): void {
  const rendered = TOO_MANY_UNAUTHENTICATED_SOCKETS;
  writeRawResponse(socket, { ...rendered, headers: { ...rendered.headers, [REQUEST_ID_HEADER]: requestIdFor(request) } });
}

/** A WebSocket close reason fits in 123 bytes. */
export function closeReason(text: string): string {
  return Buffer.byteLength(text) <= 123 ? text : 'policy violation';
}

export type Admission = {
  /** The socket authenticated: it no longer counts here and is not closed at the deadline. */
  authenticated(): void;
  /** The socket closed (or never opened): its place is given back. */
  closed(): void;
};

export type UnauthenticatedSockets = {
  /** A place for a new socket from `address`, or null at the limit; `close` runs if it is still unauthenticated at the deadline. */
  admit(address: string, close: () => void): Admission | null;
};

export function createUnauthenticatedSockets(options: { deadlineMs?: number } = {}): UnauthenticatedSockets {
  const deadlineMs = options.deadlineMs ?? UNAUTHENTICATED_SOCKET_DEADLINE_MS;
  const byAddress = new Map<string, number>();
  return {
    admit(address, close) {
      const count = byAddress.get(address) ?? 0;
      if (count >= MAX_UNAUTHENTICATED_SOCKETS_PER_ADDRESS) return null;
      byAddress.set(address, count + 1);
      // The deadline only closes it: it counts until it has closed, so a client that does not
      // answer the close keeps its place meanwhile.
      const deadline = setTimeout(close, deadlineMs);
      deadline.unref();
      let settled = false;
      const settle = () => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        const left = (byAddress.get(address) ?? 1) - 1;
        if (left > 0) byAddress.set(address, left);
        else byAddress.delete(address);
      };
      return { authenticated: settle, closed: settle };
    },
  };
}
