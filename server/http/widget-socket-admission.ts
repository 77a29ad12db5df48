// The widget gateway's Engine.IO connections in the count of unauthenticated sockets
// (server/http/unauthenticated-sockets.ts): a new Engine.IO session, over a WebSocket
// upgrade or a long-polling handshake, counts against its address from its first request
// until Socket.IO's CONNECT is accepted; one refused, or still waiting at the deadline, is
// closed (1008 on a WebSocket).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Server, Socket } from 'socket.io';
import type { WebSocket } from 'ws';
import { requestAddress, type TrustedProxy } from './trusted-proxy.ts';
import { POLICY_VIOLATION, refuseUpgrade, type Admission, type UnauthenticatedSockets } from './unauthenticated-sockets.ts';

type EngineConnection = Socket['conn'];

export type WidgetSocketAdmission = {
  /** Counts a long-polling request that opens a session; false when refused (answer 429). */
  admitPolling(request: IncomingMessage, response: ServerResponse): boolean;
  /** Counts an upgrade that opens a session; false when refused (429 already written). */
  admitUpgrade(request: IncomingMessage, socket: Duplex): boolean;
  /** The connection's CONNECT was accepted: it no longer counts as unauthenticated. */
  authenticated(conn: EngineConnection): void;
  /** The connection's CONNECT was refused: closed once the refusal has gone out. */
  refused(conn: EngineConnection): void;
};

/** A request that opens an Engine.IO session (its handshake); later requests name their session. */
function opensSession(request: IncomingMessage, enginePath: string): boolean {
  const url = new URL(request.url ?? '/', 'https://socket.io');
  return request.method === 'GET' && url.pathname === enginePath && !url.searchParams.get('sid');
}

/**
 * Closes a connection for policy: a WebSocket with 1008 after what is queued on it (a refusal
 * packet) has been handed to the socket; long-polling has no close code, so it just closes.
 */
function closeForPolicy(conn: EngineConnection, reason: string): void {
  const transport = conn.transport as unknown as { name: string; socket?: WebSocket };
  if (transport.name !== 'websocket' || !transport.socket) return void conn.close();
  const ws = transport.socket;
  if ((conn as unknown as { writeBuffer: unknown[] }).writeBuffer.length) conn.once('drain', () => ws.close(POLICY_VIOLATION, reason));
  else ws.close(POLICY_VIOLATION, reason);
}

export function createWidgetSocketAdmission(io: Server, sockets: UnauthenticatedSockets, trust: TrustedProxy, enginePath: string): WidgetSocketAdmission {
  type Pending = { admission: Admission; conn: EngineConnection | null };
  const byRequest = new WeakMap<IncomingMessage, Pending>();
  const byConnection = new WeakMap<EngineConnection, Admission>();

  // Engine.IO names the handshake's request on the connection it opened.
  io.engine.on('connection', (conn: EngineConnection) => {
    const pending = byRequest.get(conn.request);
    if (!pending) return;
    byRequest.delete(conn.request);
    pending.conn = conn;
    byConnection.set(conn, pending.admission);
    conn.once('close', pending.admission.closed);
  });

  const admit = (request: IncomingMessage, abandon: () => void): Pending | null => {
    let pending: Pending | undefined;
    const admission = sockets.admit(requestAddress(request, trust), () =>
      pending?.conn ? closeForPolicy(pending.conn, 'not authenticated in time') : abandon(),
    );
    if (!admission) return null;
    pending = { admission, conn: null };
    byRequest.set(request, pending);
    return pending;
  };

  return {
    admitPolling(request, response) {
      if (!opensSession(request, enginePath)) return true;
      const pending = admit(request, () => response.destroy());
      if (!pending) return false;
      // A handshake that opened no connection gives its place back when its answer is done.
      response.once('close', () => {
        if (!pending.conn) pending.admission.closed();
      });
      return true;
    },
    admitUpgrade(request, socket) {
      if (!opensSession(request, enginePath)) return true;
      const pending = admit(request, () => socket.destroy());
      if (!pending) {
        refuseUpgrade(request, socket);
        return false;
      }
      // A WebSocket session lives on this connection: counted until it is gone.
      socket.once('close', pending.admission.closed);
      return true;
    },
    authenticated(conn) {
      byConnection.get(conn)?.authenticated();
    },
    refused(conn) {
      // Socket.IO sends the refusal (CONNECT_ERROR) on a later tick; close after it.
      setImmediate(() => closeForPolicy(conn, 'handshake refused'));
    },
  };
}
