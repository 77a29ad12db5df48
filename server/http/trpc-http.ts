// `/trpc` over HTTP for internal TypeScript apps. A single query (GET) or mutation (POST)
// with JSON input, what `httpLink` sends, is answered here: the procedure is called through
// the pipeline the REST surface uses (procedure-pipeline.ts), and the answer is tRPC's own
// wire format (result envelope, error shape from the router's errorFormatter, status,
// `vary`). tRPC's fetch adapter would build a WHATWG Request, Headers and Response per
// call, which cost a third of the request's CPU (bench/results). Everything else (batches,
// streams, subscriptions over SSE, unknown paths, methods a procedure does not accept,
// input that is not JSON) goes to tRPC's own handler, so its behaviour there is unchanged.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AnyRouter } from '@trpc/server';
import { fastifyRequestHandler } from '@trpc/server/adapters/fastify';
import type { TRPCError } from '@trpc/server';
import type { Services } from '../process-services.ts';
import type { Context } from '../trpc.ts';
import {
  answerProcedureCall,
  createCallContext,
  getErrorShape,
  getTRPCErrorFromUnknown,
  requestInfo,
  type CallableProcedure,
  type ProcedureSurface,
} from './procedure-pipeline.ts';
import { MAX_BATCH_CALLS } from '../trpc-limits.ts';

export const TRPC_PREFIX = '/trpc';

export type TrpcHttpOptions = {
  router: AnyRouter;
  services: Services;
  /** What the calls of a batch or an SSE subscription share (each call makes its own context from it). */
  createChannelContext(request: FastifyRequest): Context;
  onError(error: TRPCError): void;
};

const PROCEDURE_PATH = /^[A-Za-z0-9_.]+$/;
const ACCEPTED_METHOD = { query: 'GET', mutation: 'POST' } as const;
const NOT_PARSED = Symbol('not parsed');
/** What a single mutation calls, in its Idempotency-Key's fingerprint: `POST /trpc/<path>`. */
const CALL_PREFIX = `${TRPC_PREFIX}/`;

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

  // tRPC's wire format: the result envelope, and the error shape from the router's errorFormatter.
  const surface: ProcedureSurface = {
    resultType: 'application/json',
    fixedHeaders: { vary: 'trpc-accept, accept' },
    resultStatus: () => 200,
    resultBody: (data) => JSON.stringify({ result: { data } }),
    renderFailure: (cause, procedure, path, ctx, input) => {
      const error = getTRPCErrorFromUnknown(cause);
      options.onError(error);
      const shape = getErrorShape({ config, error, type: procedure._def.type, path, input, ctx }) as { data?: { httpStatus?: unknown } };
      const status = typeof shape.data?.httpStatus === 'number' ? shape.data.httpStatus : 500;
      return { status, contentType: 'application/json', body: JSON.stringify({ error: shape }), headers: {} };
    },
  };

  // Not async: the pipeline's promise (or tRPC's handler's) is the answer, with no hop of its own here.
  const handler = (request: FastifyRequest, reply: FastifyReply) => {
    const path = (request.params as { path: string }).path;
    const procedure = PROCEDURE_PATH.test(path) && Object.hasOwn(procedures, path) ? procedures[path] : undefined;
    // The request is read once: its query string serves both the input and the context.
    const info = procedure && ACCEPTED_METHOD[procedure._def.type as 'query' | 'mutation'] === request.method ? requestInfo(request) : undefined;
    const input = info ? singleCallInput(request, info.query) : NOT_PARSED;
    if (!procedure || !info || input === NOT_PARSED) {
      return fastifyRequestHandler({ ...fallbackOptions, req: request, res: reply, path } as never);
    }
    // Idempotency-Key is honoured on single mutations only (batches above go to tRPC's handler): server/idempotency.
    const ctx = createCallContext(options.services, info, procedure._def.type === 'mutation' ? CALL_PREFIX : undefined, path);
    return answerProcedureCall(reply, surface, procedure, path, ctx, input);
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
