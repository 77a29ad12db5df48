// The `/v1` REST surface: trpc-to-openapi resolves the procedure and its input;
// this adapter feeds it from fastify and writes the response, rendering every
// failure through the one error renderer in the endpoint's declared shape.
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AnyRouter } from '@trpc/server';
import { createOpenApiNodeHttpHandler } from 'trpc-to-openapi';
import { NotFoundError, ApiError, renderError, type ErrorShapes } from '../errors.ts';
import type { Services } from '../services.ts';
import { createContext, type Context, type RequestInfo } from '../trpc.ts';
import type { OperationTable } from './operations.ts';

export const REST_PREFIX = '/v1';
/** Credentials and account selection travel in the query string of every method. */
const NON_INPUT_QUERY = new Set(['apiKey', 'userId']);

type Outcome = {
  statusCode: number;
  headers: Record<string, string>;
  body: string | undefined;
  error?: unknown;
  procedurePath?: string;
  ctx?: Context;
};

type AdaptedRequest = IncomingMessage & { body?: unknown; query?: unknown; outcome: Outcome; info: RequestInfo };

/** What trpc-to-openapi writes its response into; we render it ourselves. */
function captureResponse(outcome: Outcome) {
  return {
    get statusCode() {
      return outcome.statusCode;
    },
    set statusCode(value: number) {
      outcome.statusCode = value;
    },
    writableEnded: false,
    setHeader(name: string, value: string) {
      outcome.headers[name.toLowerCase()] = value;
    },
    end(body?: string) {
      outcome.body = body;
      this.writableEnded = true;
    },
    once() {},
    on() {},
    off() {},
  };
}

function sendRendered(reply: FastifyReply, error: unknown, shapes: ErrorShapes | undefined, extraHeaders: Record<string, string>, log: Services['log']) {
  const rendered = renderError(error, shapes);
  if (rendered.status >= 500) log.error({ err: error instanceof ApiError && error.cause ? error.cause : error }, 'request failed');
  return reply
    .code(rendered.status)
    .headers({ ...extraHeaders, ...rendered.headers })
    .type(rendered.contentType)
    .send(rendered.body);
}

export function requestInfo(request: FastifyRequest): RequestInfo {
  const url = request.raw.url ?? '/';
  const q = url.indexOf('?');
  return {
    method: request.method,
    query: new URLSearchParams(q === -1 ? '' : url.slice(q + 1)),
    headers: request.headers,
    ip: request.ip,
  };
}

export function registerRestSurface(
  app: FastifyInstance,
  services: Services,
  router: AnyRouter,
  operations: OperationTable,
): void {
  const handle = createOpenApiNodeHttpHandler({
    router,
    createContext: ({ req }: { req: IncomingMessage }) => {
      const adapted = req as AdaptedRequest;
      adapted.outcome.ctx = createContext(services, adapted.info);
      return adapted.outcome.ctx;
    },
    onError: ({ error, req, path }: { error: unknown; req: IncomingMessage; path?: string }) => {
      const outcome = (req as AdaptedRequest).outcome;
      outcome.error = error;
      outcome.procedurePath = path;
    },
  } as Parameters<typeof createOpenApiNodeHttpHandler>[0]);

  const restHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const info = requestInfo(request);
    const fullUrl = request.raw.url ?? '/';
    const pathname = fullUrl.slice(REST_PREFIX.length).split('?')[0] || '/';
    const { operation, pathExists } = operations.match(request.method, pathname);
    if (!operation) {
      const error = pathExists
        ? new ApiError(405, `Method ${request.method} is not allowed on this path`)
        : new NotFoundError(`No endpoint ${request.method} ${REST_PREFIX}${pathname}`, { reason: 'no_route' });
      return sendRendered(reply, error, undefined, {}, services.log);
    }

    const outcome: Outcome = { statusCode: 200, headers: {}, body: undefined };
    const raw = request.raw as AdaptedRequest;
    raw.outcome = outcome;
    raw.info = info;
    raw.url = fullUrl.slice(REST_PREFIX.length) || '/';
    if (request.method !== 'GET' && request.method !== 'DELETE') {
      // Query parameters (other than credentials) are input on every method;
      // the JSON body wins where both carry the same field.
      const fromQuery: Record<string, string> = {};
      for (const [key, value] of info.query) if (!NON_INPUT_QUERY.has(key)) fromQuery[key] = value;
      const body = request.body;
      raw.body = body === undefined || body === null ? fromQuery : isPlainObject(body) ? { ...fromQuery, ...body } : body;
      raw.headers['content-type'] = 'application/json';
    }

    await handle(raw, captureResponse(outcome) as never);

    const extraHeaders = outcome.ctx?.responseHeaders ?? {};
    if (outcome.error !== undefined) {
      return sendRendered(reply, outcome.error, operation.meta.errorShapes, extraHeaders, services.log);
    }
    return reply
      .code(operation.meta.successStatus ?? outcome.statusCode)
      .headers(extraHeaders)
      .type('application/json; charset=utf-8')
      .send(outcome.body);
  };

  app.route({ method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], url: `${REST_PREFIX}/*`, handler: restHandler });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Renders failures that happen before a procedure runs (body too large, bad JSON) in the endpoint's shape. */
export function renderHostError(
  error: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
  operations: OperationTable,
  services: Services,
) {
  const pathname = (request.raw.url ?? '/').split('?')[0];
  const shapes = pathname.startsWith(REST_PREFIX + '/')
    ? operations.match(request.method, pathname.slice(REST_PREFIX.length)).operation?.meta.errorShapes
    : undefined;
  return sendRendered(reply, error, shapes, {}, services.log);
}
