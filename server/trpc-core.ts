// The tRPC core every procedure builds on: the context a call sees, the procedure meta, and
// `t` with the router's error formatter. Middlewares living with their mechanism
// (server/auth, server/idempotency) build on it; server/trpc.ts assembles the procedures.
import type { IncomingHttpHeaders } from 'node:http';
import { initTRPC, TRPCError } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiError, INTERNAL_ERROR_MESSAGE, trpcCodeFor, type ErrorShapes } from './errors.ts';
import type { ApiSection, Access, SectionWhenSet, TargetAccount } from './auth/scopes.ts';
import type { CallerRead } from './auth/caller-read.ts';
import type { IdempotentCall } from './idempotency/idempotent-call.ts';
import type { Services } from './process-services.ts';
import type { SocketState } from './trpc-limits.ts';

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
   * A query's one small read of the caller's own account, from its raw input (null when the
   * input does not name one the procedure would make): it rides in the statement that
   * confirms the credential (server/auth/caller-read.ts).
   */
  callerRead?: (rawInput: unknown) => CallerRead | null;
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

/**
 * What one call sees. Middlewares extend it by passing `ctx` to `next()`; `em`, the call's
 * EntityManager, is forked on first use where the runner allows (a procedure that reads only
 * through hot-path SQL never forks one): server/trpc.ts.
 */
export type Context = {
  services: Services;
  request: RequestInfo;
  /** Headers a procedure or middleware adds to the response (rate-limit headers). */
  responseHeaders: Record<string, string>;
  /** Set on a POST / single mutation carrying Idempotency-Key (server/http/procedure-pipeline.ts). */
  idempotency?: IdempotentCall;
  readonly em: EntityManager;
  /** Whether the runner extends this context keeping `em` lazy (extendContext: server/trpc.ts). */
  extendedLazily?: boolean;
  /**
   * Set on what the calls of one long-lived channel share (a /trpc WebSocket, one request to
   * tRPC's own HTTP handler): each call is given a context of its own from it.
   */
  channel?: { socket: SocketState | undefined };
};

export const t = initTRPC
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
export const middleware = t.middleware;
export const createCallerFactory = t.createCallerFactory;

/** A domain error as the TRPCError tRPC reports, with the matching code and the ApiError as cause. */
export function toTrpcError(error: ApiError): TRPCError {
  return new TRPCError({ code: trpcCodeFor(error.status), message: error.message, cause: error });
}
