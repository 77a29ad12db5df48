// `/trpc` over HTTP for internal TypeScript apps. A single query (GET) or mutation (POST)
// with JSON input, what `httpLink` sends, is answered here: the procedure is called as the
// REST surface calls it, and the answer is tRPC's own wire format (result envelope, error
// shape from the router's errorFormatter, status, `vary`). tRPC's fetch adapter would build
// a WHATWG Request, Headers and Response per call, which cost a third of the request's CPU
// (bench/results). Everything else (batches, streams, subscriptions over SSE, unknown
// paths, methods a procedure does not accept, input that is not JSON) goes to tRPC's own
// handler, so its behaviour there is unchanged.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AnyRouter } from '@trpc/server';
import { fastifyRequestHandler } from '@trpc/server/adapters/fastify';
import { getErrorShape, getTRPCErrorFromUnknown, type TRPCError } from '@trpc/server/unstable-core-do-not-import';
import { finishIdempotentCall, idempotentCallFor, replayedHeaders } from '../idempotency/idempotent-call.ts';
import { callProcedure, type CallableProcedure, type Context } from '../trpc.ts';
import { MAX_BATCH_CALLS } from './trpc-limits.ts';

export const TRPC_PREFIX = '/trpc';

export type TrpcHttpOptions = {
  router: AnyRouter;
  /** A single call's context. */
  createContext(request: FastifyRequest): Context;
  /** What the calls of a batch or an SSE subscription share (each call makes its own context from it). */
  createChannelContext(request: FastifyRequest): Context;
  onError(error: TRPCError): void;
};

const PROCEDURE_PATH = /^[A-Za-z0-9_.]+$/;
const ACCEPTED_METHOD = { query: 'GET', mutation: 'POST' } as const;
const NOT_PARSED = Symbol('not parsed');

/** The call's JSON input, or NOT_PARSED when tRPC's own handler should read it. */
function singleCallInput(request: FastifyRequest, query: URLSearchParams): unknown {
  if (query.has('batch') || request.headers['trpc-accept'] !== undefined) return NOT_PARSED;
  const text = request.method === 'GET' ? query.get('input') : request.body;
  if (text === null || text === undefined || text === '') return undefined;
  if (typeof text !== 'string') return NOT_PARSED;
  try {
    return JSON.parse(text);
  } catch {
    return NOT_PARSED;
  }
}

export async function registerTrpcHttp(app: FastifyInstance, options: TrpcHttpOptions): Promise<void> {
  const procedures = options.router._def.procedures as Record<string, CallableProcedure>;
  const config = options.router._def._config;
  const fallbackOptions = {
    router: options.router,
    createContext: ({ req }: { req: FastifyRequest }) => options.createChannelContext(req),
    maxBatchSize: MAX_BATCH_CALLS,
    // Rate-limit headers set while the procedure ran go out on /trpc too.
    responseMeta: ({ ctx }: { ctx?: Context }) => ({ headers: ctx?.responseHeaders ?? {} }),
    onError: ({ error }: { error: TRPCError }) => options.onError(error),
  };

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const path = (request.params as { path: string }).path;
    const procedure = PROCEDURE_PATH.test(path) && Object.hasOwn(procedures, path) ? procedures[path] : undefined;
    const url = request.raw.url ?? '/';
    const q = url.indexOf('?');
    const input =
      procedure && ACCEPTED_METHOD[procedure._def.type as 'query' | 'mutation'] === request.method
        ? singleCallInput(request, new URLSearchParams(q === -1 ? '' : url.slice(q + 1)))
        : NOT_PARSED;
    if (!procedure || input === NOT_PARSED) {
      return fastifyRequestHandler({ ...fallbackOptions, req: request, res: reply, path } as never);
    }

    const ctx = options.createContext(request);
    // Idempotency-Key is honoured on single mutations only (batches above go to tRPC's handler): server/idempotency.
    if (procedure._def.type === 'mutation') ctx.idempotency = idempotentCallFor(request.headers, `POST ${TRPC_PREFIX}/${path}`);
    let status = 200;
    let body: string;
    try {
      const data = await callProcedure(procedure, { path, ctx, input });
      body = JSON.stringify({ result: { data } });
    } catch (cause) {
      const replay = ctx.idempotency?.replay;
      if (replay) {
        return reply
          .code(replay.status)
          .headers({ vary: 'trpc-accept, accept', ...ctx.responseHeaders, ...replayedHeaders(replay) })
          .type(replay.contentType)
          .send(replay.body);
      }
      const error = getTRPCErrorFromUnknown(cause);
      options.onError(error);
      const shape = getErrorShape({ config, error, type: procedure._def.type, path, input, ctx }) as { data?: { httpStatus?: unknown } };
      status = typeof shape.data?.httpStatus === 'number' ? shape.data.httpStatus : 500;
      body = JSON.stringify({ error: shape });
    }
    if (ctx.idempotency) await finishIdempotentCall(ctx.services, ctx.idempotency, { status, contentType: 'application/json', body, headers: {} });
    return reply
      .code(status)
      .headers({ vary: 'trpc-accept, accept', ...ctx.responseHeaders })
      .type('application/json')
      .send(body);
  };

  await app.register(
    async (scope) => {
      // As tRPC's own plugin does: bodies reach the handler as text, parsed once.
      scope.removeContentTypeParser('application/json');
      scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, text, done) => done(null, text));
      scope.removeContentTypeParser('multipart/form-data');
      scope.addContentTypeParser('multipart/form-data', {}, (_request, _payload, done) => done(null, undefined));
      scope.all('/:path', handler);
    },
    { prefix: TRPC_PREFIX },
  );
}
