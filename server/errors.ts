// Domain errors and the one renderer that turns any failure into the exact
// status and body shape the endpoint has in the API specification.
import { TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import { ZodError } from 'zod';

/**
 * Body shapes the specification uses for failures:
 * - envelope: `{success:false, error, error_code}` (the default)
 * - successError: `{success:false, error}`
 * - message: `{success:false, message}`
 * - text: a `text/plain` string
 * - error: `{error}`
 * - errorDetails: `{error, details}`
 */
export type ErrorShape = 'envelope' | 'successError' | 'message' | 'text' | 'error' | 'errorDetails';

/**
 * Which shape an endpoint uses, by `status:reason`, then `status`, then `default`.
 * For example GET /contacts: `{ '400': 'text', '400:invalid_phone': 'error', ... }`.
 */
export type ErrorShapes = Partial<Record<`${number}` | `${number}:${string}` | 'default', ErrorShape>>;

type ApiErrorOptions = {
  /** A machine-readable reason that selects a shape (`missing_parameters`, `invalid_phone`). */
  reason?: string;
  /** A named `error_code` string (`key_read_only`); named codes always use the envelope. */
  code?: string;
  details?: unknown;
  headers?: Record<string, string>;
  cause?: unknown;
  /**
   * A 5xx that is an outside service's failure (the messaging provider did not answer), not a
   * fault of the service: what failed, in words for the log, which records it as a warning
   * without a stack.
   */
  outside?: string;
};

export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;
  readonly reason: string | undefined;
  readonly code: string | undefined;
  readonly details: unknown;
  readonly headers: Record<string, string> | undefined;
  readonly outside: string | undefined;

  constructor(status: number, message: string, options: ApiErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.status = status;
    this.reason = options.reason;
    this.code = options.code;
    this.details = options.details;
    this.headers = options.headers;
    this.outside = options.outside;
  }
}

export class InvalidInputError extends ApiError {
  override name = 'InvalidInputError';
  constructor(message: string, options: ApiErrorOptions = {}) {
    super(400, message, { reason: 'invalid_input', ...options });
  }
}

export class MissingParametersError extends ApiError {
  override name = 'MissingParametersError';
  constructor(message = 'Missing required parameters') {
    super(400, message, { reason: 'missing_parameters' });
  }
}

export class UnauthorizedError extends ApiError {
  override name = 'UnauthorizedError';
  constructor(message = 'Invalid API key') {
    super(401, message, { reason: 'invalid_key' });
  }
}

export class PaymentRequiredError extends ApiError {
  override name = 'PaymentRequiredError';
  constructor(message = 'Insufficient credits') {
    super(402, message, { reason: 'insufficient_credits' });
  }
}

export class ForbiddenError extends ApiError {
  override name = 'ForbiddenError';
  constructor(message: string, options: ApiErrorOptions = {}) {
    super(403, message, { reason: 'forbidden', ...options });
  }
}

export class NotFoundError extends ApiError {
  override name = 'NotFoundError';
  constructor(message: string, options: ApiErrorOptions = {}) {
    super(404, message, { reason: 'not_found', ...options });
  }
}

export class ConflictError extends ApiError {
  override name = 'ConflictError';
  constructor(message: string, options: ApiErrorOptions = {}) {
    super(409, message, { reason: 'conflict', ...options });
  }
}

export class RateLimitedError extends ApiError {
  override name = 'RateLimitedError';
  constructor(headers: Record<string, string>) {
    super(429, 'Rate limit exceeded, please try again later', { reason: 'rate_limited', headers });
  }
}

/**
 * What an outside service's failure (an ApiError or ProviderRequestError with `outside`) says
 * for the log, or undefined when the error is not one: then it is a fault, logged with its stack.
 */
export function outsideFailure(error: unknown): string | undefined {
  const outside = error instanceof Error ? (error as { outside?: unknown }).outside : undefined;
  return typeof outside === 'string' ? outside : undefined;
}

/** What a client hears of a failure that is not a domain error (the cause is logged, never sent). */
export const INTERNAL_ERROR_MESSAGE = 'Internal server error';

/** Errors whose shape the specification fixes for every endpoint. */
const ENVELOPE_ALWAYS = new Set([413, 429, 431, 503]);
const API_ACCESS_REASON = 'feature_disabled';

export function featureDisabledError(feature: string): ForbiddenError {
  return new ForbiddenError(`The ${feature} feature is not enabled for this account`, {
    reason: API_ACCESS_REASON,
  });
}

export type RenderedError = {
  status: number;
  contentType: 'application/json; charset=utf-8' | 'text/plain; charset=utf-8';
  body: string;
  headers: Record<string, string>;
};

const STATUS_BY_TRPC_CODE: Partial<Record<TRPC_ERROR_CODE_KEY, number>> = {
  PARSE_ERROR: 400,
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  PAYMENT_REQUIRED: 402,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_SUPPORTED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNPROCESSABLE_CONTENT: 422,
  UNSUPPORTED_MEDIA_TYPE: 415,
  TOO_MANY_REQUESTS: 429,
};

const TRPC_CODE_BY_STATUS: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  402: 'PAYMENT_REQUIRED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_SUPPORTED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  422: 'UNPROCESSABLE_CONTENT',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'TOO_MANY_REQUESTS',
};

export function trpcCodeFor(status: number): TRPC_ERROR_CODE_KEY {
  return TRPC_CODE_BY_STATUS[status] ?? 'INTERNAL_SERVER_ERROR';
}

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/**
 * Names the first failing field and what was wrong with it. With the input at
 * hand, a type error on an absent field reads "is required" (zod 4 keeps the
 * input out of its issues).
 */
export function describeZodError(error: ZodError, input?: unknown): string {
  const issue = error.issues[0];
  if (!issue) return 'Invalid request';
  const field = issue.path.length ? issue.path.join('.') : 'body';
  if (issue.code === 'invalid_type') {
    const absent = input === undefined ? /received undefined/.test(issue.message) : valueAt(input, issue.path) === undefined;
    if (absent) return `${field} is required`;
  }
  if (issue.message.startsWith(field)) return issue.message;
  return `${field}: ${issue.message}`;
}

/**
 * PostgreSQL errors (SQLSTATE) that mean the database cannot serve now rather than that the
 * request was wrong: class 08 (connection exception), 57P01-57P03 (shut down, crashed,
 * still starting) and 53300 (too many connections).
 */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123]|53300)$/;
/** Socket errors on the way to the database (only when node-postgres raised them; see below). */
const UNAVAILABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);
const FROM_NODE_POSTGRES = /[\\/]node_modules[\\/](pg|pg-pool|pg-protocol)[\\/]/;
/** What node-postgres says when a session ends under it or the pool cannot get one in time. */
const UNAVAILABLE_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|Connection terminated unexpectedly)/;

/**
 * Whether the failure (or any cause it wraps: the ORM's exceptions, tRPC's) is the database
 * being unreachable: a 503 the client may retry, not a 500.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 8; current = current.cause, depth++) {
    if (current instanceof ApiError) return false;
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && UNAVAILABLE_SQLSTATE.test(code)) return true;
    // The same codes from an outbound HTTP call (a provider, a webhook) are not the database.
    if (typeof code === 'string' && UNAVAILABLE_SOCKET_CODES.has(code) && FROM_NODE_POSTGRES.test(current.stack ?? '')) return true;
    if (UNAVAILABLE_MESSAGES.test(current.message)) return true;
  }
  return false;
}

/** Whatever was thrown, as an ApiError (unknown failures become a 500 that reveals nothing). */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (isDatabaseUnavailable(error)) {
    return new ApiError(503, 'The database is unavailable; retry the request', {
      reason: 'database_unavailable',
      headers: { 'Retry-After': '1' },
      cause: error,
    });
  }
  if (error instanceof ZodError) return new InvalidInputError(describeZodError(error));
  if (error instanceof TRPCError) {
    if (error.cause instanceof ApiError) return error.cause;
    if (error.cause instanceof ZodError) return new InvalidInputError(describeZodError(error.cause));
    if (error.code === 'PARSE_ERROR') return new InvalidInputError('Request body is not valid JSON', { reason: 'malformed_json' });
    if (error.code === 'PAYLOAD_TOO_LARGE') return new ApiError(413, 'Request body is too large');
    if (error.code === 'NOT_FOUND') return new NotFoundError('Not found', { reason: 'no_route' });
    const status = STATUS_BY_TRPC_CODE[error.code];
    if (status) return new ApiError(status, error.message);
  }
  return new ApiError(500, INTERNAL_ERROR_MESSAGE, { reason: 'internal', cause: error });
}

function shapeFor(error: ApiError, shapes: ErrorShapes | undefined): ErrorShape {
  if (error.code || ENVELOPE_ALWAYS.has(error.status) || error.reason === API_ACCESS_REASON) {
    return 'envelope';
  }
  if (!shapes) return 'envelope';
  return (
    shapes[`${error.status}:${error.reason}` as `${number}:${string}`] ??
    shapes[`${error.status}` as `${number}`] ??
    shapes.default ??
    'envelope'
  );
}

/** The REST response for a failure, in the endpoint's declared shape. */
export function renderError(thrown: unknown, shapes?: ErrorShapes): RenderedError {
  const error = toApiError(thrown);
  const shape = shapeFor(error, shapes);
  const json = 'application/json; charset=utf-8' as const;
  const headers = error.headers ?? {};
  switch (shape) {
    case 'text':
      return { status: error.status, contentType: 'text/plain; charset=utf-8', body: error.message, headers };
    case 'message':
      return { status: error.status, contentType: json, body: JSON.stringify({ success: false, message: error.message }), headers };
    case 'successError':
      return { status: error.status, contentType: json, body: JSON.stringify({ success: false, error: error.message }), headers };
    case 'error':
      return { status: error.status, contentType: json, body: JSON.stringify({ error: error.message }), headers };
    case 'errorDetails': {
      const body: { error: string; details?: unknown } = { error: error.message };
      if (error.details !== undefined) body.details = error.details;
      return { status: error.status, contentType: json, body: JSON.stringify(body), headers };
    }
    case 'envelope':
      return {
        status: error.status,
        contentType: json,
        body: JSON.stringify({ success: false, error: error.message, error_code: error.code ?? error.status }),
        headers,
      };
  }
}
