// The procedures every router builds on: the call's context, and the chains of named
// middlewares an account's procedure passes through before its own code:
//   requestBoundary        (here: the call's own context, input rules, errors as the API says them)
//   authenticateAndCount   (server/auth: credential, rate-limit decision, scopes, account)
//   idempotencyClaim       (server/idempotency: the Idempotency-Key, when the surface set one)
import type { EntityManager } from '@mikro-orm/postgresql';
import { TRPCError } from '@trpc/server';
import { ZodError } from 'zod';
import { authenticateAndCount } from './auth/authenticate-middleware.ts';
import { ApiError, describeZodError, InvalidInputError } from './errors.ts';
import type { IdempotentCall } from './idempotency/idempotent-call.ts';
import { idempotencyClaim } from './idempotency/idempotency-middleware.ts';
import { checkRequestInput } from './input-rules.ts';
import type { Services } from './process-services.ts';
import { middleware, t, toTrpcError, type Context, type RequestInfo } from './trpc-core.ts';
import type { SocketState } from './trpc-limits.ts';

export { createCallerFactory, router, toTrpcError, type Context, type ProcedureMeta, type RequestInfo } from './trpc-core.ts';
export type { AuthedContext } from './auth/authenticate-middleware.ts';

/**
 * A call's context: its request (with its Idempotency-Key, where honoured), and its own
 * EntityManager, forked on first use by a getter of the class, so that making a context costs
 * no closure or accessor of its own. A getter is not copied by a spread, so where tRPC's own
 * runner extends the context (a channel's call, an in-process caller), requestBoundary forks
 * `em` first and the copy carries it; the HTTP pipeline's runner extends it by extendContext, which
 * keeps the getter and shares the fork's holder (`extendedLazily`), so there `em` stays lazy.
 */
class CallContext implements Context {
  services: Services;
  request: RequestInfo;
  responseHeaders: Record<string, string> = {};
  idempotency: IdempotentCall | undefined;
  extendedLazily: boolean;
  /** Holds the fork, shared by every extension of this context. */
  readonly entities: { em: EntityManager | undefined } = { em: undefined };

  constructor(services: Services, request: RequestInfo, idempotency: IdempotentCall | undefined, extendedLazily: boolean) {
    this.services = services;
    this.request = request;
    this.idempotency = idempotency;
    this.extendedLazily = extendedLazily;
  }

  get em(): EntityManager {
    return (this.entities.em ??= this.services.orm.em.fork());
  }
}

/**
 * A context extended by a step's `next({ ctx })` in the HTTP pipeline's runner. A call's
 * context is copied: a new one of its class with its fields (the fork's holder among them, so
 * `em` stays lazy and one per call) and the extension's, made the same way on every call so
 * the code reading a context sees few shapes of it. Any other context (a channel's) is
 * extended by inheritance.
 */
export function extendContext(ctx: Context, extension: Record<string, unknown>): Context {
  if (ctx instanceof CallContext) return Object.assign(Object.create(CallContext.prototype) as CallContext, ctx, extension);
  return Object.assign(Object.create(ctx) as Context, extension);
}

/** A context for an in-process caller (createCaller): tRPC's runner runs its call. */
export function createContext(services: Services, request: RequestInfo): Context {
  return new CallContext(services, request, undefined, false);
}

/** A context for the HTTP pipeline's runner (server/http/procedure-pipeline.ts). */
export function createPipelineContext(services: Services, request: RequestInfo, idempotency: IdempotentCall | undefined): Context {
  return new CallContext(services, request, idempotency, true);
}

/**
 * What the calls of one long-lived channel share: a /trpc WebSocket, or one request to tRPC's
 * own HTTP handler (a batch, an SSE subscription). Only the request: requestBoundary gives each
 * call its own context (its own authentication, rate-limit count and EntityManager), so calls
 * on one socket neither see each other's caller nor share an identity map that would outlive
 * the call. The response headers are shared, so a batch's answer carries the rate-limit headers.
 */
export function createChannelContext(services: Services, request: RequestInfo, socket?: SocketState): Context {
  return { services, request, responseHeaders: {}, channel: { socket } } as Omit<Context, 'em'> as Context;
}

/**
 * The first step of every procedure (tRPC copies a step's options at each step, so there is
 * one): a channel's call gets its own context; the input rules of server/input-rules.ts run
 * before the rest of the chain; then domain errors from it become TRPCErrors with the
 * matching code, and zod's input errors say what the endpoints say.
 */
export const requestBoundary = middleware(async ({ ctx, getRawInput, next }) => {
  let rawInput: unknown;
  try {
    rawInput = await getRawInput();
  } catch (error) {
    // tRPC parses /trpc bodies itself; say what /v1 says about broken JSON.
    if (error instanceof TRPCError && error.cause instanceof SyntaxError) {
      throw toTrpcError(new InvalidInputError('Request body is not valid JSON', { reason: 'malformed_json' }));
    }
    throw error;
  }
  let result: Awaited<ReturnType<typeof next>>;
  try {
    checkRequestInput(rawInput, ctx.request.query);
    // A channel's call forks its own EntityManager (sharing the channel's request, response
    // headers and socket); a context tRPC's runner copies carries its em forked (CallContext).
    if (ctx.channel) result = await next({ ctx: { em: ctx.services.orm.em.fork() } });
    else if (!ctx.extendedLazily) result = await next({ ctx: { em: ctx.em } });
    else result = await next();
  } catch (error) {
    throw error instanceof ApiError ? toTrpcError(error) : error;
  }
  if (result.ok) return result;
  const cause = result.error?.cause;
  if (cause instanceof ApiError) throw toTrpcError(cause);
  if (cause instanceof ZodError && result.error?.code === 'BAD_REQUEST') {
    throw toTrpcError(new InvalidInputError(describeZodError(cause, rawInput)));
  }
  return result;
});

export const publicProcedure = t.procedure.use(requestBoundary);

/**
 * A procedure acting on an account: authenticated, counted against its rate limits and
 * authorized from its meta before `.input()` parses anything (on every call, also each call
 * on a socket; for a subscription, again whenever its credential may have changed), with the
 * Idempotency-Key claimed once the account acted on is known.
 */
export const accountProcedure = publicProcedure.use(authenticateAndCount).use(idempotencyClaim);
