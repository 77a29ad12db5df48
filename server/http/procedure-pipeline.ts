// One procedure call over HTTP, as `/v1` (rest.ts) and single `/trpc` calls (trpc-http.ts)
// both answer it, in the order of the call:
//   1. createCallContext    the call's context, with its Idempotency-Key when the surface honours one
//   2. answerProcedureCall  calls the procedure through its chain of middlewares (callProcedure:
//                           requestBoundary, authenticateAndCount, idempotencyClaim, the procedure;
//                           server/trpc.ts), then sends the result, the failure, or the response
//                           the key replays, storing what the key keeps (server/idempotency)
// Each surface renders the answer in its own format. Also the one module that reaches into
// tRPC's internals (`unstable-core-do-not-import`); the rest of the server imports what it
// needs from here.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { TRPCError } from '@trpc/server';
import { getErrorShape, getParseFn, getTRPCErrorFromUnknown } from '@trpc/server/unstable-core-do-not-import';
import { finishIdempotentCall, idempotentCallFor, replayedHeaders, type StoredResponse } from '../idempotency/idempotent-call.ts';
import type { Services } from '../process-services.ts';
import { createPipelineContext, extendContext, type Context, type ProcedureMeta, type RequestInfo } from '../trpc.ts';

export { getErrorShape, getTRPCErrorFromUnknown };

/** What one step of a procedure's middleware chain answers (tRPC's MiddlewareResult). */
type StepResult = { ok: true; data: unknown } | { ok: false; error: TRPCError };
type StepOptions = { path: string; type: string; ctx: Context; input?: unknown; getRawInput: () => Promise<unknown>; signal: undefined; batchIndex: number };
type NextOptions = { ctx?: Record<string, unknown>; input?: unknown; getRawInput?: () => Promise<unknown> };
type Step = ((opts: StepOptions & { meta: unknown; next(nextOptions?: NextOptions): Promise<StepResult> }) => Promise<StepResult>) & { _type?: string };
type ProcedureDef = { type: 'query' | 'mutation' | 'subscription'; meta?: ProcedureMeta; middlewares: Step[]; output?: unknown };

/** A procedure of the router as the HTTP surfaces call it: its type, meta and middleware chain. */
export type CallableProcedure = { _def: ProcedureDef };

/** The request as the procedures see it (the context's `request`). */
export function requestInfo(request: FastifyRequest): RequestInfo {
  const url = request.raw.url ?? '/';
  const q = url.indexOf('?');
  return {
    method: request.method,
    query: new URLSearchParams(q === -1 ? '' : url.slice(q + 1)),
    headers: request.headers,
    host: request.host || undefined,
    ip: request.ip,
  };
}

/**
 * A call's context. `idempotentPrefix` is given on the calls that honour Idempotency-Key
 * (POST /v1 operations, single /trpc mutations): with `path`, it names what the call does
 * in the key's fingerprint.
 */
export function createCallContext(services: Services, request: RequestInfo, idempotentPrefix: string | undefined, path: string): Context {
  return createPipelineContext(services, request, idempotentPrefix === undefined ? undefined : idempotentCallFor(request.headers, idempotentPrefix, path));
}

/** How a surface answers a call: each keeps its own format. */
export type ProcedureSurface = {
  /** Content type of a result. */
  resultType: string;
  /** Headers every answer carries ahead of the call's own (tRPC's `vary`). */
  fixedHeaders?: Record<string, string>;
  resultStatus(procedure: CallableProcedure): number;
  resultBody(data: unknown): string;
  /** A failure as the surface answers it (logged as the surface logs failures); its headers are stored with it for replays. */
  renderFailure(error: unknown, procedure: CallableProcedure, path: string, ctx: Context, input: unknown): StoredResponse;
};

/**
 * Calls the procedure and sends its answer: the result, the failure, or the response stored
 * for the call's Idempotency-Key, which is stored once rendered (or given back on a 5xx).
 */
export async function answerProcedureCall(
  reply: FastifyReply,
  surface: ProcedureSurface,
  procedure: CallableProcedure,
  path: string,
  ctx: Context,
  input: unknown,
): Promise<FastifyReply> {
  try {
    const data = await callProcedure(procedure, { path, ctx, input });
    const status = surface.resultStatus(procedure);
    const body = surface.resultBody(data);
    if (ctx.idempotency) await finishIdempotentCall(ctx.services, ctx.idempotency, { status, contentType: surface.resultType, body, headers: {} });
    return send(reply, surface, ctx, status, surface.resultType, body, undefined);
  } catch (error) {
    const replay = ctx.idempotency?.replay;
    if (replay) return send(reply, surface, ctx, replay.status, replay.contentType, replay.body, replayedHeaders(replay));
    const rendered = surface.renderFailure(error, procedure, path, ctx, input);
    if (ctx.idempotency) await finishIdempotentCall(ctx.services, ctx.idempotency, rendered);
    return send(reply, surface, ctx, rendered.status, rendered.contentType, rendered.body, rendered.headers);
  }
}

function send(
  reply: FastifyReply,
  surface: ProcedureSurface,
  ctx: Context,
  status: number,
  contentType: string,
  body: string,
  headers: Record<string, string> | undefined,
): FastifyReply {
  reply.code(status);
  if (surface.fixedHeaders) reply.headers(surface.fixedHeaders);
  reply.headers(ctx.responseHeaders);
  if (headers) reply.headers(headers);
  return reply.type(contentType).send(body);
}

/** The error when a chain ends without a result (a middleware that did not return `next()`). */
const NO_RESULT = 'No result from middlewares - did you forget to `return next()`?';

const chains = new WeakMap<ProcedureDef, Step[]>();

/**
 * A procedure's steps as callProcedure runs them: its own, except that the output check
 * is this module's copy of tRPC's (same parse, same error), which copies the result with
 * a native spread instead of the down-levelled one.
 */
function stepsOf(def: ProcedureDef): Step[] {
  let steps = chains.get(def);
  if (!steps) {
    const outputSteps = def.middlewares.filter((step) => step._type === 'output').length;
    const parseOutput = outputSteps === 1 && def.output !== undefined ? getParseFn(def.output as Parameters<typeof getParseFn>[0]) : undefined;
    steps = def.middlewares.map((step) => (parseOutput && step._type === 'output' ? outputStep(parseOutput) : step));
    chains.set(def, steps);
  }
  return steps;
}

function outputStep(parse: (value: unknown) => unknown): Step {
  return async ({ next }) => {
    const result = await next();
    if (!result.ok) return result;
    try {
      return { ...result, data: await parse(result.data) };
    } catch (cause) {
      throw new TRPCError({ message: 'Output validation failed', code: 'INTERNAL_SERVER_ERROR', cause });
    }
  };
}

/**
 * Calls a procedure the way tRPC's own procedure caller does: each middleware in turn
 * (`.use()` steps, then input parsing, output parsing and the resolver), `next()` moving
 * on with any ctx, input or raw input it passes, a thrown error ending the chain as a
 * failed result. tRPC's published build down-levels its object spreads per step to a
 * helper; these are native, and a `next()` without options passes the step's options on
 * as they are. That pays for the copy: bench/procedure-runner.ts measures 2.8 µs of CPU a
 * call here against 19 µs through tRPC's own procedure call (its header has the run).
 *
 * It knows no step of its own. A ctx passed to `next()` extends the step's context as tRPC's
 * does, except that a call's context is extended by a copy (extendContext in server/trpc.ts):
 * every property reads the same, and the call's `em` is not forked by the copy. Extending by
 * inheritance instead (Object.create) made each request's context a prototype, which V8
 * handles on a slow path: the lookup cost about 25 µs more of CPU (bench/results/history.md).
 */
export async function callProcedure(procedure: CallableProcedure, call: { path: string; ctx: Context; input: unknown }): Promise<unknown> {
  const def = procedure._def;
  const steps = stepsOf(def);
  const input = call.input;
  const start: StepOptions = { path: call.path, type: def.type, ctx: call.ctx, input: undefined, getRawInput: async () => input, signal: undefined, batchIndex: 0 };
  const runStep = async (index: number, opts: StepOptions): Promise<StepResult> => {
    try {
      return await steps[index]!({
        ...opts,
        meta: def.meta,
        next: (nextOptions) => {
          const nextOpts = nextOptions
            ? {
                ...opts,
                ctx: nextOptions.ctx ? extendContext(opts.ctx, nextOptions.ctx) : opts.ctx,
                input: 'input' in nextOptions ? nextOptions.input : opts.input,
                getRawInput: nextOptions.getRawInput ?? opts.getRawInput,
              }
            : opts;
          return runStep(index + 1, nextOpts);
        },
      });
    } catch (cause) {
      return { ok: false, error: getTRPCErrorFromUnknown(cause) };
    }
  };
  const result = await runStep(0, start);
  if (!result) throw new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: NO_RESULT });
  if (!result.ok) throw result.error;
  return result.data;
}
