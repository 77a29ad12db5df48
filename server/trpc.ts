// The tRPC core every router builds on: context, procedure meta, and the
// procedure builders that authenticate and authorize from that meta.
import type { IncomingHttpHeaders } from 'node:http';
import { initTRPC, TRPCError } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { EntityManager } from '@mikro-orm/postgresql';
import { authenticate, credentialExpiry, type Authenticated } from './auth/authenticate.ts';
import { whileAuthorized } from './auth/authorized-stream.ts';
import { channelCounterFor, channelOwner, takeSubscriptionSlot, type SocketState } from './trpc-limits.ts';
import type { ApiSection, Access, SectionWhenSet, TargetAccount } from './auth/scopes.ts';
import { ZodError } from 'zod';
import { ApiError, describeZodError, INTERNAL_ERROR_MESSAGE, InvalidInputError, trpcCodeFor, type ErrorShapes } from './errors.ts';
import { checkRequestInput } from './input-rules.ts';
import type { IdempotentCall } from './idempotency/idempotent-call.ts';
import type { Services } from './process-services.ts';

export type ProcedureMeta = OpenApiMeta<{
  /** The API section scoped keys name (`tags`). */
  section: ApiSection;
  /** Whether the procedure only reads; writes are refused to read-only keys. */
  access: Access;
  /** The spec's failure body shapes for this endpoint; the envelope when unset. */
  errorShapes?: ErrorShapes;
  /** The success status when it is not 200. */
  successStatus?: 201 | 202;
  /** `owner`: only the main key or an owner session (key management). */
  requires?: 'owner';
  /** Agency-only endpoints refuse `userId`. */
  agencyOnly?: boolean;
  /**
   * Key management refuses `userId`: an account's keys are its own people's business,
   * so an agency can neither read nor mint a client's keys.
   */
  ownAccountOnly?: boolean;
  /**
   * JSON Schema keywords for the request body that the domain enforces beyond each
   * field's schema (`minProperties: 1` for updates, exactly one identifier), so the
   * OpenAPI document states them.
   */
  bodyConstraints?: Record<string, unknown>;
  /**
   * Another account the operation touches besides the `userId` one: a raw input
   * field holding a client's id, `'everyClient'` (creating or listing clients), or
   * every client when an input flag is true (a webhook that applies to sub-accounts).
   * A scoped key is held to its `sub_account_ids` for it (403 key_scope_denied).
   */
  targetAccount?: TargetAccount;
  /** A boolean input field that, when true, also needs another section (403 key_scope_denied). */
  sectionWhenSet?: SectionWhenSet;
  /**
   * Body fields the specification sends in the query string of this POST/PUT: the
   * OpenAPI document gives them as query parameters (any body method also reads body
   * fields from the query string, and these from the body).
   */
  queryFields?: string[];
  /**
   * Fields the domain requires though the input schema leaves them optional (so that their
   * absence is refused in the spec's words and shape); the OpenAPI document marks them required.
   */
  requiredFields?: string[];
  /** `apart`: reads the rate-limit budget without spending it, counted in a bucket of its own at the same limit (the usage endpoint). */
  rateLimit?: 'apart';
}>;

export type RequestInfo = {
  method: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** The host the client addressed: X-Forwarded-Host from a TRUST_PROXY address, else Host. */
  host: string | undefined;
  /** The client's address: X-Forwarded-For as far as TRUST_PROXY addresses vouch for it. */
  ip: string;
};

export type Context = {
  services: Services;
  request: RequestInfo;
  /** Headers a procedure or middleware adds to the response (rate-limit headers). */
  responseHeaders: Record<string, string>;
  /** Set on a POST / single mutation carrying Idempotency-Key (server/http/procedure-pipeline.ts). */
  idempotency?: IdempotentCall;
};

/**
 * A request's context. Authentication fills in the caller (AuthedContext); `em`, the
 * request's EntityManager, is forked on first use, so a procedure that reads only through
 * hot-path SQL never forks one. A class, so that every context has the same shape and
 * `em` is one getter on the prototype rather than a property defined per request. So a
 * middleware adds to the context by assigning to it, never by passing `ctx` to `next()`:
 * tRPC spreads that into a plain object, which has no `em`.
 */
class CallContext implements Context {
  services: Services;
  request: RequestInfo;
  responseHeaders: Record<string, string>;
  idempotency?: IdempotentCall;
  credential?: Authenticated['credential'];
  account?: Authenticated['account'];
  rateLimit?: Authenticated['rateLimit'];
  #em: EntityManager | undefined = undefined;

  constructor(services: Services, request: RequestInfo, responseHeaders: Record<string, string> = {}) {
    this.services = services;
    this.request = request;
    this.responseHeaders = responseHeaders;
  }

  get em(): EntityManager {
    return (this.#em ??= this.services.orm.em.fork());
  }
}

export function createContext(services: Services, request: RequestInfo): Context {
  return new CallContext(services, request);
}

/**
 * What the calls of one long-lived channel share: a /trpc WebSocket, or one request to
 * tRPC's own HTTP handler (a batch, an SSE subscription). Only the request: the first step
 * of every procedure makes each call its own CallContext (its own authentication,
 * rate-limit count and EntityManager), so calls on one socket neither see each other's
 * caller nor share an identity map that would outlive the call.
 */
class ChannelContext implements Context {
  services: Services;
  request: RequestInfo;
  /** Shared with the calls, so a batch's answer carries the rate-limit headers. */
  responseHeaders: Record<string, string> = {};
  /** The socket's own state when the channel is a WebSocket. */
  socket: SocketState | undefined;

  constructor(services: Services, request: RequestInfo, socket?: SocketState) {
    this.services = services;
    this.request = request;
    this.socket = socket;
  }
}

export function createChannelContext(services: Services, request: RequestInfo, socket?: SocketState): Context {
  return new ChannelContext(services, request, socket);
}

/** The call's own context: the one given when it already is one (REST, single /trpc calls, createCaller). */
function callContext(ctx: Context): CallContext {
  if (ctx instanceof ChannelContext) return new CallContext(ctx.services, ctx.request, ctx.responseHeaders);
  return ctx as CallContext;
}

/**
 * Goes on with the call's context. A context of its own is passed to next(), which tRPC
 * spreads into a plain object: `em` is copied into it then (forked now, as a getter would not
 * survive the spread).
 */
function proceed<R>(shared: Context, call: CallContext, next: (options?: { ctx: Record<string, unknown> }) => R): R {
  if (call === shared) return next();
  return next({ ctx: { ...call, em: call.em } });
}

const t = initTRPC
  .context<Context>()
  .meta<ProcedureMeta>()
  .create({
    isDev: false,
    errorFormatter({ shape, error }) {
      const apiError = error.cause instanceof ApiError ? error.cause : null;
      return {
        ...shape,
        // A failure that is not a domain error says nothing of its cause (a driver's or the
        // database's message), as on /v1; it is logged instead. 4xx messages stay: they say
        // what was wrong with the request.
        message: !apiError && shape.data.httpStatus >= 500 ? INTERNAL_ERROR_MESSAGE : shape.message,
        data: {
          ...shape.data,
          stack: undefined,
          ...(apiError ? { httpStatus: apiError.status, error_code: apiError.code ?? apiError.status } : {}),
        },
      };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/** A domain error as the TRPCError tRPC reports, with the matching code and the ApiError as cause. */
export function toTrpcError(error: ApiError): TRPCError {
  return new TRPCError({ code: trpcCodeFor(error.status), message: error.message, cause: error });
}

/**
 * What every procedure does around its own work, in the first step of its chain (tRPC
 * copies a step's options at each step, so there is one): the input rules of
 * server/input-rules.ts run before `work` (which authenticates, sending `userId` and the
 * key to SQL); then domain errors from the rest of the chain become TRPCErrors with the
 * matching code, and zod's input errors say what the endpoints say.
 */
async function atRequestBoundary<R extends { ok: boolean; error?: TRPCError }>(
  ctx: Context,
  getRawInput: () => Promise<unknown>,
  work: () => Promise<R>,
): Promise<R> {
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
  let result: R;
  try {
    checkRequestInput(rawInput, ctx.request.query);
    result = await work();
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
}

export const publicProcedure = t.procedure.use(({ ctx, getRawInput, next }) => {
  const call = callContext(ctx);
  return atRequestBoundary(call, getRawInput, () => proceed(ctx, call, next));
});

export type AuthedContext = Context & Authenticated & { em: EntityManager };

/**
 * Authenticates, counts the request against its rate limits, applies the key's
 * scopes to this procedure's meta, and selects the account (and checks any
 * target account the meta names in the raw input). It runs in the first step, so
 * authorization is decided before `.input()` parses anything; on every call, also each
 * call on a socket; and for a subscription, again whenever its credential may have changed.
 */
export const accountProcedure = t.procedure.use(({ ctx, meta, next, getRawInput, type, signal }) => {
  type Authed = ReturnType<typeof next<Authenticated & { em: EntityManager }>>;
  const call = callContext(ctx);
  return atRequestBoundary(call, getRawInput, async (): Authed => {
    const auth = await authenticate(call.services, call.request, meta, {
      counting: meta?.rateLimit === 'apart' ? 'apart' : 'budget',
      responseHeaders: call.responseHeaders,
      readInput: getRawInput,
    });
    extendContext(call, auth);
    if (type === 'subscription') return subscribeWhileAuthorized(ctx, call, auth, { meta, getRawInput, signal }, next as () => Authed);
    // The same context object goes on when it is the call's own: a ctx passed to next() is spread.
    // Over HTTP, the call's Idempotency-Key is claimed as it goes on (server/http/procedure-pipeline.ts).
    return proceed(ctx, call, next) as Authed;
  });
});

/**
 * Starts a subscription (taking one of its socket's slots) whose stream ends with the refusal a
 * new call would get once its credential no longer allows it (server/auth/authorized-stream.ts).
 */
async function subscribeWhileAuthorized<R extends { ok: boolean; data?: unknown }>(
  shared: Context,
  call: CallContext,
  auth: Authenticated,
  procedure: { meta: ProcedureMeta | undefined; getRawInput: () => Promise<unknown>; signal: AbortSignal | undefined },
  next: () => Promise<R>,
): Promise<R> {
  const { services } = call;
  const release = !(shared instanceof ChannelContext)
    ? () => {}
    : shared.socket
      ? takeSubscriptionSlot(shared.socket, procedure.signal)
      : openStreamChannel(services, auth, procedure.signal);
  let result: R;
  try {
    result = await proceed(shared, call, next as never);
    if (!result.ok || !isAsyncIterable(result.data)) {
      release();
      return result;
    }
    const stream = whileAuthorized(result.data, {
      changes: services.credentialChanges,
      accountIds: [auth.credential.accountId, auth.account.id],
      log: services.log,
      isRefusal: (error) => error instanceof TRPCError,
      check: async () => {
        try {
          const again = await authenticate(services, call.request, procedure.meta, { counting: 'none', readInput: procedure.getRawInput });
          return await credentialExpiry(services, again.credential);
        } catch (error) {
          throw error instanceof ApiError ? toTrpcError(error) : error;
        }
      },
    });
    return { ...result, data: releasing(stream, release) };
  } catch (error) {
    release();
    throw error;
  }
}

/** A subscription over SSE is a long-lived channel of its own, counted like a socket. */
function openStreamChannel(services: Services, auth: Authenticated, signal: AbortSignal | undefined): () => void {
  const close = channelCounterFor(services).open(channelOwner(auth.credential));
  const release = () => {
    close();
    signal?.removeEventListener('abort', release);
  };
  signal?.addEventListener('abort', release, { once: true });
  return release;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return value !== null && typeof value === 'object' && Symbol.asyncIterator in value;
}

/** The stream, giving its socket slot back when it ends (or its signal aborts first). */
async function* releasing<T>(stream: AsyncGenerator<T, void, undefined>, release: () => void): AsyncGenerator<T, void, undefined> {
  try {
    yield* stream;
  } finally {
    release();
  }
}

/** The request's context with the caller filled in (CallContext declares the fields). */
function extendContext(ctx: Context, auth: Authenticated): void {
  Object.assign(ctx, auth);
}
