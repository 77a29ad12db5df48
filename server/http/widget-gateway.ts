// The chat widget's live channel: Socket.IO at /socket.io on the service's one port. A
// visitor's socket joins exactly one room, derived from what its handshake proved (the widget,
// and the visitor id or the verified user), with no join event, so it can never hear another
// conversation. Every API process hears every conversation event (LISTEN/NOTIFY), so it does
// not matter which process a visitor is connected to. When the widget changes, its open
// sockets face the handshake's rule again (widget-socket-review.ts).
import { createServer, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { Server, type Socket } from 'socket.io';
import type { Config } from '../config.ts';
import { ApiError } from '../errors.ts';
import { requestAddress, requestHost, trustedProxy, type TrustedProxy } from './trusted-proxy.ts';
import type { Services } from '../process-services.ts';
import type { ConversationEvent } from '../realtime/conversation-event.ts';
import { countAndReadWidget } from '../widgets/read-public-widget-config.ts';
import { readWidgetIdentity } from '../widgets/read-widget-identity.ts';
import {
  identityTokenOf,
  resolveWidgetVisitor,
  VISITOR_IDENTITY_HEADER,
  VisitorIdentityError,
  type WidgetIdentity,
  type WidgetVisitor,
} from '../widgets/visitor-identity.ts';
import { couldBeWidgetId } from '../widgets/widget-record.ts';
import { createVisitorTyping, type VisitorTyping } from '../realtime/visitor-typing.ts';
import { TOO_MANY_UNAUTHENTICATED_SOCKETS, type UnauthenticatedSockets } from './unauthenticated-sockets.ts';
import { createWidgetSocketAdmission } from './widget-socket-admission.ts';
import { createSocketReview } from './widget-socket-review.ts';

export const SOCKET_IO_PATH = '/socket.io';

const VISITOR_ID = /^[A-Za-z0-9_-]{8,128}$/;

export type WidgetGateway = {
  /** Registers the HTTP side (long-polling and the client script) on the host. */
  register(app: FastifyInstance): void;
  /** Claims WebSocket upgrades for /socket.io; anything else is left to the next handler. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Visitor sockets connected to this process now (a gauge). */
  connectedSockets(): number;
  close(): Promise<void>;
};

/** The one room a visitor's socket is in. */
export function conversationRoom(widgetId: string, visitorId: string): string {
  return `conversation:${widgetId}:${visitorId}`;
}

/** A refusal the client hears as connect_error: the message, and `data` saying the status an HTTP call would get. */
export class HandshakeRefusedError extends Error {
  override name = 'HandshakeRefusedError';
  readonly data: { status: number; retryAfter?: number };
  constructor(message: string, data: { status: number; retryAfter?: number } = { status: 400 }) {
    super(message);
    this.data = data;
  }
}

export function createWidgetGateway(services: Services, unauthenticated: UnauthenticatedSockets): WidgetGateway {
  const log = services.log.child({ component: 'widget-gateway' });
  // Socket.IO attaches to an http.Server by listening to its 'request' and 'upgrade' events.
  // This one never listens: the host hands it the requests for /socket.io, so fastify's hooks
  // (HTTPS check, shutdown) still apply and /trpc keeps its own upgrade path.
  const bridge = createServer();
  const io = new Server(bridge, {
    path: SOCKET_IO_PATH,
    serveClient: true,
    // Cross-origin polling must be readable by the page for the handshake to reach the origin
    // check below, which knows the widget's allowed origins.
    cors: { origin: true, credentials: false },
    maxHttpBufferSize: 64 * 1024,
  });

  const trust = trustedProxy(services.config.TRUST_PROXY);
  const open = createSocketCaps(services.config);
  // Until its CONNECT is accepted, a connection counts as unauthenticated against its address.
  const admission = createWidgetSocketAdmission(io, unauthenticated, trust, `${SOCKET_IO_PATH}/`);
  const review = createSocketReview<Presented>({
    changes: services.widgetChanges,
    readWidget: (widgetId) => readWidgetIdentity(services.pool, widgetId),
    admits: async (widget, presented) => {
      try {
        await admitVisitor(services, widget, presented);
        return true;
      } catch (error) {
        if (error instanceof HandshakeRefusedError) return false;
        throw error;
      }
    },
    log,
  });
  io.use((socket, next) => {
    const heardBefore = review.heard();
    authorizeHandshake(services, trust, socket).then(
      ({ accountId, widgetId, visitorId, address, expiresAt, presented }) => {
        const release = open.take(`${widgetId}:${visitorId}`, address);
        if (!release) {
          admission.refused(socket.conn);
          return next(new HandshakeRefusedError('too many open chat sockets', { status: 429 }));
        }
        admission.authenticated(socket.conn);
        // A verified visitor's socket lasts as long as their token is accepted, so reconnecting with it then fails; the page reconnects with a fresh one.
        const expiry = expiresAt === null ? null : setTimeout(() => socket.disconnect(true), Math.max(0, expiresAt * 1000 - Date.now()));
        expiry?.unref();
        // The visitor's typing goes to the account (never back to the visitor's own room). Its
        // pacer is made on the first report: most sockets never report, and each idle one counts.
        let typing: VisitorTyping | null = null;
        socket.on('typing', (payload: unknown) => {
          typing ??= createVisitorTyping(services.pool, log, { accountId, widgetId, visitorId });
          typing.report(typeof payload === 'object' && payload !== null && (payload as { typing?: unknown }).typing === true);
        });
        void socket.join(conversationRoom(widgetId, visitorId));
        const unwatch = review.watch(socket, widgetId, presented, heardBefore);
        const closed = () => {
          if (expiry) clearTimeout(expiry);
          release();
          unwatch();
          typing?.end();
        };
        // A socket whose connection closes during the handshake never hears 'disconnect'; its connection does close.
        // A visitor has one socket per connection: a connection whose socket left would be held
        // open by heartbeats and counted by no cap, so it is closed with it.
        socket.once('disconnect', () => {
          closed();
          socket.conn.close();
        });
        socket.conn.once('close', closed);
        next();
      },
      (error: unknown) => {
        if (error instanceof HandshakeRefusedError) {
          admission.refused(socket.conn);
          return next(error);
        }
        log.error({ err: error }, 'widget socket handshake failed');
        next(new Error('handshake failed'));
      },
    );
  });
  const unsubscribe = services.conversationEvents.subscribe((event) => {
    review.deliver(event.widgetId, () => emitToRoom(io.to(conversationRoom(event.widgetId, event.visitorId)), event));
  });

  return {
    register(app) {
      app.route({
        method: ['GET', 'POST', 'OPTIONS'],
        url: `${SOCKET_IO_PATH}/*`,
        // Engine.IO reads long-polling bodies itself, so the request leaves fastify before any
        // body parsing; the host's own onRequest hooks have run by then.
        onRequest: (request, reply) => {
          if (!admission.admitPolling(request.raw, reply.raw)) {
            const refused = TOO_MANY_UNAUTHENTICATED_SOCKETS;
            return void reply.code(refused.status).headers(refused.headers).type(refused.contentType).send(refused.body);
          }
          reply.hijack();
          bridge.emit('request', request.raw, reply.raw);
        },
        handler: async () => undefined,
      });
    },
    handleUpgrade(request, socket, head) {
      const pathname = (request.url ?? '/').split('?')[0];
      if (pathname !== SOCKET_IO_PATH && !pathname.startsWith(`${SOCKET_IO_PATH}/`)) return false;
      if (admission.admitUpgrade(request, socket)) bridge.emit('upgrade', request, socket, head);
      return true;
    },
    connectedSockets() {
      return io.of('/').sockets.size;
    },
    async close() {
      unsubscribe();
      review.stop();
      // The bridge never listened; its close reports that, which is not a failure here.
      await new Promise<void>((resolve) => io.close(() => resolve()));
    },
  };
}

function emitToRoom(room: ReturnType<Server['to']>, event: ConversationEvent) {
  if (event.kind === 'message') room.emit('message', event.message);
  else if (event.kind === 'typing') room.emit('typing', { isBotTyping: event.isBotTyping });
  else if (event.kind === 'read') room.emit('read', { messageSids: event.messageSids });
}

type Handshake = { accountId: string; widgetId: string; visitorId: string; address: string; expiresAt: number | null; presented: Presented };

/** What a handshake presented, kept with its socket so that the widget's rules can be applied to it again. */
type Presented = {
  origin: string | undefined;
  /** This service's host as the client addressed it (for the origin check). */
  host: string | undefined;
  /** The visitor id the client chose, when it is one. */
  visitorId: string | null;
  token: string | undefined;
};

async function authorizeHandshake(services: Services, trust: TrustedProxy, socket: Socket): Promise<Handshake> {
  const auth = (socket.handshake.auth ?? {}) as Record<string, unknown>;
  const { configId } = auth;
  if (!couldBeWidgetId(configId)) {
    throw new HandshakeRefusedError('configId must be a chat widget id');
  }
  const address = requestAddress(socket.request, trust);
  let widget;
  try {
    // Handshakes count against the client address like every public widget request.
    widget = await countAndReadWidget(services.pool, services.config, configId, address);
  } catch (error) {
    if (error instanceof ApiError) throw new HandshakeRefusedError(error.message, { status: error.status, retryAfter: Number(error.headers?.['Retry-After']) });
    throw error;
  }
  if (!widget) throw new HandshakeRefusedError('unknown chat widget');
  const origin = socket.handshake.headers.origin;
  const presented: Presented = {
    origin,
    host: origin ? requestHost(socket.request, trust) : undefined,
    visitorId: typeof auth.visitorId === 'string' && VISITOR_ID.test(auth.visitorId) ? auth.visitorId : null,
    token: typeof auth.identityToken === 'string' ? identityTokenOf(auth.identityToken) : identityTokenOf(socket.handshake.headers[VISITOR_IDENTITY_HEADER]),
  };
  const visitor = await admitVisitor(services, widget, presented);
  return { accountId: widget.account_id, widgetId: configId, visitorId: visitor.key, address, expiresAt: visitor.verified?.acceptedUntil ?? null, presented };
}

/** The handshake's rule for what was presented, under the widget as it is: whom the socket speaks for, or a refusal. */
async function admitVisitor(services: Services, widget: WidgetIdentity, presented: Presented): Promise<WidgetVisitor> {
  if (presented.origin && !originAllowed(presented.origin, presented.host, widget.settings as Record<string, unknown> | null)) {
    throw new HandshakeRefusedError('origin not allowed for this chat widget');
  }
  let visitor;
  try {
    visitor = await resolveWidgetVisitor(services.secrets, widget, presented.visitorId, presented.token);
  } catch (error) {
    if (error instanceof VisitorIdentityError) throw new HandshakeRefusedError(error.message, { status: 401 });
    throw error;
  }
  if (!visitor) throw new HandshakeRefusedError('visitorId must be 8 to 128 letters, digits, "-" or "_"');
  return visitor;
}

/**
 * Open sockets per visitor and per client address, counted in this process: a socket lives
 * in one process, so its count does too (WIDGET_SOCKETS_PER_VISITOR, WIDGET_SOCKETS_PER_IP).
 * `take` reserves a place in both, or none; its release gives them back, once.
 */
function createSocketCaps(limits: Pick<Config, 'WIDGET_SOCKETS_PER_VISITOR' | 'WIDGET_SOCKETS_PER_IP'>) {
  const byVisitor = new Map<string, number>();
  const byAddress = new Map<string, number>();
  const give = (counts: Map<string, number>, key: string) => {
    const left = (counts.get(key) ?? 1) - 1;
    if (left > 0) counts.set(key, left);
    else counts.delete(key);
  };
  return {
    take(visitor: string, address: string): (() => void) | null {
      if ((byVisitor.get(visitor) ?? 0) >= limits.WIDGET_SOCKETS_PER_VISITOR) return null;
      if ((byAddress.get(address) ?? 0) >= limits.WIDGET_SOCKETS_PER_IP) return null;
      byVisitor.set(visitor, (byVisitor.get(visitor) ?? 0) + 1);
      byAddress.set(address, (byAddress.get(address) ?? 0) + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        give(byVisitor, visitor);
        give(byAddress, address);
      };
    },
  };
}

/**
 * The widget page is served from this origin (`host`, as the client addressed it); another
 * origin may connect only when the widget's `settings.allowedOrigins` lists it (absent: any origin).
 */
function originAllowed(origin: string, host: string | undefined, settings: Record<string, unknown> | null): boolean {
  let originHost: string;
  try {
    originHost = new URL(origin).host;
  } catch {
    return false;
  }
  if (host && originHost === host.toLowerCase()) return true;
  const allowed = settings?.allowedOrigins;
  if (!Array.isArray(allowed)) return true;
  return allowed.some((entry) => typeof entry === 'string' && normalizeOrigin(entry) === normalizeOrigin(origin));
}

function normalizeOrigin(value: string): string | null {
  try {
    return new URL(value).origin;
  } catch {
    return null;
  }
}
