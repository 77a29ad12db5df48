// The HTTP host: one fastify instance on one port serving the `/v1` REST
// surface, `/trpc` (HTTP and WebSocket), the OpenAPI document and docs, and the
// plain routes (health, and later HTML and scripts) beside them.
import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Server as HttpServer, IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyRequest, type FastifyServerFactory } from 'fastify';
import type { AnyRouter } from '@trpc/server';
import { applyWSSHandler } from '@trpc/server/adapters/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import { ApiError, INTERNAL_ERROR_MESSAGE, InvalidInputError } from '../errors.ts';
import type { Services } from '../process-services.ts';
import { pickCarrier, resolveCredential } from '../auth/authenticate.ts';
import { createChannelContext, toTrpcError } from '../trpc.ts';
import { createClientErrorHandler, unservedMethodError, writeRawResponse } from './client-errors.ts';
import { createOnePortServer, HTTPS_REQUIRED } from './one-port.ts';
import { buildOpenApiDocument, type PlainRoute } from './openapi.ts';
import { buildOperationTable } from './operations.ts';
import { requestInfo } from './procedure-pipeline.ts';
import { registerRestSurface, renderHostError, REST_PREFIX } from './rest.ts';
import { registerRequestIds, requestIdFor, setRequestIdHeader } from './request-id.ts';
import { observeRequest } from '../metrics/http-metrics.ts';
import { routeLabel } from './route-label.ts';
import type { TlsMaterial } from './tls.ts';
import { channelCounterFor, channelOwner, MAX_BATCH_CALLS } from '../trpc-limits.ts';
import { registerTrpcHttp } from './trpc-http.ts';
import { requestAddress, requestHost, requestProtocol, trustedProxy } from './trusted-proxy.ts';
import { closeReason, POLICY_VIOLATION, refuseUpgrade, type Admission, type UnauthenticatedSockets } from './unauthenticated-sockets.ts';
import { answerEveryRequestWithNosniff } from './nosniff.ts';
import { pageHeaders, pathForLog } from './widget-pages.ts';

/** Request bodies larger than this get 413 (documented in docs/api.md). */
export const BODY_LIMIT_BYTES = 1024 * 1024;

export type UpgradeHandler = (request: IncomingMessage, socket: Duplex, head: Buffer) => boolean;

export type HostOptions = {
  services: Services;
  router: AnyRouter;
  tls: TlsMaterial | null;
  /** Extra plain routes (widget pages, scripts) registered by their own modules. */
  plugins?: ((app: FastifyInstance) => void | Promise<void>)[];
  plainRoutes?: PlainRoute[];
};

function hostErrorToApiError(error: FastifyError): ApiError {
  if (error instanceof ApiError) return error;
  if (error.statusCode === 413) return new ApiError(413, `Request body is larger than ${BODY_LIMIT_BYTES} bytes`);
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new ApiError(415, 'Unsupported content type');
  if (error.statusCode && error.statusCode < 500) return new InvalidInputError(error.message, { reason: 'malformed_request' });
  return new ApiError(500, INTERNAL_ERROR_MESSAGE, { reason: 'internal', cause: error });
}

/** Failures fastify meets while routing, before any hook (its `frameworkErrors`). */
function frameworkErrorToApiError(error: FastifyError): ApiError {
  if (error.code === 'FST_ERR_BAD_URL') {
    return new InvalidInputError('The URL path is not validly percent-encoded', { reason: 'malformed_url' });
  }
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return new ApiError(414, 'A path parameter of the URL is too long', { reason: 'uri_too_long' });
  return hostErrorToApiError(error);
}

/** The methods the host routes itself; any other method is refused before the body is read. */
const ROUTED_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export async function buildHttpHost(options: HostOptions): Promise<FastifyInstance> {
  const { services, router, tls } = options;
  const { config } = services;
  const serverFactory: FastifyServerFactory = (handler) => createOnePortServer(tls!, handler) as unknown as HttpServer;
  const operations = buildOperationTable(router);
  let app: FastifyInstance;

  /** The methods a path answers to; none when the path does not exist (404 rather than 405). */
  const allowedMethods = (pathname: string): string[] => {
    if (pathname.startsWith(REST_PREFIX + '/')) {
      const operationPath = pathname.slice(REST_PREFIX.length);
      const methods = new Set(operations.methodsAt(operationPath));
      // Plain routes under /v1 (health, the OpenAPI document) beside the procedures' wildcard.
      for (const method of ROUTED_METHODS) {
        const route = app.findRoute({ method, url: pathname });
        if (route && route.params['*'] === undefined) methods.add(method);
      }
      return [...methods];
    }
    return ROUTED_METHODS.filter((method) => app.findRoute({ method, url: pathname }) !== null);
  };
  app = Fastify({
    loggerInstance: services.log,
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    // request.log is the process logger itself: its mixin already names the request (server/log.ts),
    // so fastify's child logger per request would only repeat `requestId`, at a cost on every request.
    childLoggerFactory: (logger) => logger,
    bodyLimit: BODY_LIMIT_BYTES,
    // The same check the raw upgrade and Socket.IO requests use (server/http/trusted-proxy.ts).
    trustProxy: config.TRUST_PROXY?.length ? trustedProxy(config.TRUST_PROXY) : false,
    // The caller's X-Request-Id when well formed, else a new one (server/http/request-id.ts).
    requestIdHeader: false,
    genReqId: requestIdFor,
    // Requests arriving while the host closes get 503 below, through the error renderer.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    ...(tls ? { serverFactory } : {}),
    // What fastify and Node would answer on their own goes through the error renderer too.
    frameworkErrors: (error, request, reply) => {
      setRequestIdHeader(request, reply);
      return renderHostError(frameworkErrorToApiError(error), request, reply, operations, services);
    },
    clientErrorHandler: createClientErrorHandler(allowedMethods),
  }) as unknown as FastifyInstance;

  // First of all hooks, so every answer (hooks' refusals too) carries the request id.
  registerRequestIds(app);
  answerEveryRequestWithNosniff(app.server);

  // Access log: path without the query string, so credentials (`apiKey`) never reach the log.
  const accessLog = services.log.child({ component: 'http' });
  const routeOf = (request: FastifyRequest) => routeLabel(request, operations);
  // Hooks on every request take a callback rather than returning a promise: one less
  // promise and microtask hop per hook per request.
  app.addHook('onResponse', (request, reply, done) => {
    if (accessLog.isLevelEnabled('info')) {
      accessLog.info(
        { requestId: request.id, method: request.method, path: pathForLog(request.url.split('?')[0]), status: reply.statusCode, ms: Math.round(reply.elapsedTime), ip: request.ip },
        'request',
      );
    }
    observeRequest(request, reply, routeOf);
    done();
  });

  // Requests still arriving on open connections while the host closes (a pipelined
  // request behind one in flight) are refused, so the load balancer retries elsewhere.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
    // The close waits for every connection: one whose request finishes from now on is closed
    // at once rather than kept idle for a next request for KEEP_ALIVE_TIMEOUT_MS (0 would mean never).
    app.server.keepAliveTimeout = 1;
  });
  app.addHook('onRequest', (request, reply, done) => {
    if (!closing) return done();
    const error = new ApiError(503, 'The service is shutting down; retry the request', { reason: 'closing', headers: { Connection: 'close' } });
    renderHostError(error, request, reply, operations, services);
  });

  // Without TLS on our port, a trusted proxy terminates it and must say so.
  if (!tls) {
    app.addHook('onRequest', async (request, reply) => {
      if (request.protocol !== 'https') {
        return reply.code(HTTPS_REQUIRED.status).type(HTTPS_REQUIRED.contentType).send(HTTPS_REQUIRED.body);
      }
    });
  }

  // A method nothing is routed for (TRACE, QUERY, ...) is 405 on an existing path and 404
  // elsewhere, decided before fastify reads a body it would otherwise try to parse.
  app.addHook('onRequest', (request, reply, done) => {
    if (!request.is404 || (ROUTED_METHODS as readonly string[]).includes(request.method)) return done();
    const pathname = request.url.split('?')[0];
    renderHostError(unservedMethodError(request.method, pathname, allowedMethods(pathname)), request, reply, operations, services);
  });

  // The API speaks JSON whatever the declared content type; an empty body is no body.
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    // tRPC parses its own bodies; given a parsed object, its adapter would stringify it
    // again, recursively, so deeply nested input would overflow the stack before any rule ran.
    if (request.url.startsWith('/trpc/')) return done(null, text);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new InvalidInputError('Request body is not valid JSON', { reason: 'malformed_json' }), undefined);
    }
  });

  app.setErrorHandler((error: FastifyError, request, reply) =>
    renderHostError(hostErrorToApiError(error), request, reply, operations, services),
  );
  app.setNotFoundHandler((request, reply) =>
    renderHostError(new ApiError(404, `No endpoint ${request.method} ${request.url.split('?')[0]}`, { reason: 'no_route' }), request, reply, operations, services),
  );

  const plainRoutes: PlainRoute[] = [
    { method: 'get', path: '/health', summary: 'Liveness: a plain-text line saying the server is running.', contentType: 'text/plain' },
    ...(options.plainRoutes ?? []),
  ];

  app.get(`${REST_PREFIX}/health`, async (_request, reply) =>
    reply.type('text/plain; charset=utf-8').send('Server is running'),
  );

  const document = buildOpenApiDocument(router, operations, plainRoutes);
  const documentJson = JSON.stringify(document);
  app.get(`${REST_PREFIX}/openapi.json`, async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(documentJson),
  );
  await registerDocsPage(app);

  for (const plugin of options.plugins ?? []) await plugin(app);

  registerRestSurface(app, services, router, operations, allowedMethods);

  await registerTrpcHttp(app, {
    router,
    services,
    createChannelContext: (request) => createChannelContext(services, requestInfo(request)),
    onError: (error) => {
      if (error.code === 'INTERNAL_SERVER_ERROR' && !(error.cause instanceof ApiError)) {
        services.log.error({ err: error.cause ?? error }, 'tRPC request failed');
      }
    },
  });

  return app;
}

/** Swagger UI from the swagger-ui-dist package, served from this host (no CDN). */
async function registerDocsPage(app: FastifyInstance) {
  const require = createRequire(import.meta.url);
  const distDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  const assets: Record<string, string> = {
    'swagger-ui.css': 'text/css; charset=utf-8',
    'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  };
  const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Messaging Automation Service API</title>
<link rel="stylesheet" href="${REST_PREFIX}/docs/swagger-ui.css"></head>
<body><div id="docs"></div>
<script src="${REST_PREFIX}/docs/swagger-ui-bundle.js"></script>
<script src="${REST_PREFIX}/docs/init.js"></script>
</body></html>`;
  // No validator badge: it would load an image from the validator's site.
  const init = `window.ui = SwaggerUIBundle({ url: '${REST_PREFIX}/openapi.json', dom_id: '#docs', validatorUrl: null });`;
  // What Swagger UI needs, all from this host: its script and init.js, its stylesheet, the
  // document (and "Try it out" calls) on this origin, and the icons its stylesheet inlines.
  const policy = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
  ];
  app.get(`${REST_PREFIX}/docs`, async (_request, reply) => pageHeaders(reply, policy).send(page));
  app.get(`${REST_PREFIX}/docs/init.js`, async (_request, reply) => reply.type('application/javascript; charset=utf-8').send(init));
  for (const [file, type] of Object.entries(assets)) {
    const content = await readFile(path.join(distDir, file));
    app.get(`${REST_PREFIX}/docs/${file}`, async (_request, reply) =>
      reply.type(type).header('cache-control', 'public, max-age=86400').send(content),
    );
  }
}

/**
 * WebSocket upgrades on the one port: `/trpc` for tRPC subscriptions; other
 * handlers (Socket.IO) claim their own paths first. A `/trpc` socket counts against its
 * address as unauthenticated from the upgrade until its credential is accepted.
 */
export function attachUpgrades(app: FastifyInstance, services: Services, router: AnyRouter, unauthenticated: UnauthenticatedSockets, others: UpgradeHandler[] = []) {
  const wss = new WebSocketServer({ noServer: true, maxPayload: BODY_LIMIT_BYTES });
  const channels = channelCounterFor(services);
  const trust = trustedProxy(services.config.TRUST_PROXY);
  const admissions = new WeakMap<IncomingMessage, Admission>();
  const trpcWs = applyWSSHandler({
    wss,
    router,
    // Once per socket (tRPC's adapter has no per-message context): the socket's request and
    // state only. Each call makes its own context from it, authenticated and counted (server/trpc.ts).
    createContext: async ({ req, res, info }) => {
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const query = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
      const headers = { ...req.headers };
      // A client sending connectionParams (`?connectionParams=1`) may carry the key there, or
      // an ID token (a browser cannot set a WebSocket's Authorization header).
      const fromParams = info.connectionParams?.apiKey;
      const tokenFromParams = info.connectionParams?.idToken;
      if (typeof fromParams === 'string' && !pickCarrier(query, headers)) headers['x-api-key'] = fromParams;
      else if (typeof tokenFromParams === 'string' && !pickCarrier(query, headers)) headers.authorization = `Bearer ${tokenFromParams}`;
      const request = { method: 'GET', query, headers, host: requestHost(req, trust), ip: requestAddress(req, trust) };
      let release: () => void;
      try {
        // The socket's credential is checked once here, spending nothing: it must exist before
        // the socket takes one of its places. Each call is still authenticated and counted.
        const { credential } = await resolveCredential(services, request, { counting: 'none' });
        release = channels.open(channelOwner(credential));
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        // tRPC answers with this error (id null) and then closes the socket; closing it first
        // here, after that frame, says why in the close code.
        setImmediate(() => res.close(POLICY_VIOLATION, closeReason(error.message)));
        throw toTrpcError(error);
      }
      admissions.get(req)?.authenticated();
      // With connectionParams the context is made on the first frame, possibly after a close.
      if (res.readyState === res.OPEN) res.once('close', release);
      else release();
      return createChannelContext(services, request, { openSubscriptions: 0 });
    },
    maxBatchSize: MAX_BATCH_CALLS,
    onError: ({ error }) => {
      if (error.code !== 'INTERNAL_SERVER_ERROR' || error.cause instanceof ApiError) return;
      const code = (error.cause as { code?: unknown } | undefined)?.code;
      if (typeof code === 'string' && code.startsWith('WS_ERR_')) {
        // The client broke the WebSocket protocol (a frame over maxPayload, bad UTF-8): ws closes
        // the socket with the matching code. The client's fault, not the service's.
        services.log.warn({ code, reason: error.cause!.message }, 'tRPC WebSocket closed: the client broke the protocol');
        return;
      }
      services.log.error({ err: error.cause ?? error }, 'tRPC WebSocket call failed');
    },
    keepAlive: { enabled: true, pingMs: 30_000, pongWaitMs: 5_000 },
  });
  const behindProxy = services.config.TLS === 'off';
  app.server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Upgrades never reach fastify's hooks: without TLS on our port, the trusted proxy must
    // say it terminated TLS here too (the onRequest check in buildHttpHost).
    if (behindProxy && requestProtocol(request, trust) !== 'https') return writeRawResponse(socket, HTTPS_REQUIRED);
    for (const handler of others) if (handler(request, socket, head)) return;
    const pathname = (request.url ?? '/').split('?')[0];
    if (pathname === '/trpc' || pathname.startsWith('/trpc/')) {
      let ws: WebSocket | undefined;
      const admission = unauthenticated.admit(requestAddress(request, trust), () =>
        ws ? ws.close(POLICY_VIOLATION, 'not authenticated in time') : socket.destroy(),
      );
      if (!admission) return refuseUpgrade(request, socket);
      // Counted until the connection is gone, whether or not the upgrade completes.
      socket.once('close', admission.closed);
      admissions.set(request, admission);
      wss.handleUpgrade(request, socket, head, (opened) => {
        ws = opened;
        wss.emit('connection', opened, request);
      });
      return;
    }
    socket.destroy();
  });
  return {
    async close() {
      trpcWs.broadcastReconnectNotification();
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
