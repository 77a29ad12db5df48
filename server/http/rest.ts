// The `/v1` REST surface. Each request is matched to its procedure by the meta's
// method and path, its input is assembled (JSON body, query string, decoded path
// parameters), and the procedure is called through the HTTP procedure pipeline
// (procedure-pipeline.ts); every failure is rendered by the one error renderer in the
// endpoint's declared shape.
//
// trpc-to-openapi generates the OpenAPI document from the same meta, but its
// request handler is not used: it coerces every boolean and number leaf of the
// input schemas in place (so `"false"` would parse as `true`, on /trpc too) and
// builds a WHATWG Request per call.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AnyRouter } from '@trpc/server';
import { ApiError, InvalidInputError, outsideFailure, renderError, toApiError, type ErrorShapes, type RenderedError } from '../errors.ts';
import type { Services } from '../process-services.ts';
import { unservedMethodError, type AllowedMethods } from './client-errors.ts';
import { pathParameters, type Operation, type OperationTable } from './operations.ts';
import { answerProcedureCall, createCallContext, requestInfo, type CallableProcedure, type ProcedureSurface } from './procedure-pipeline.ts';

export const REST_PREFIX = '/v1';
/** Credentials and account selection travel in the query string of every method; they are not input. */
const NON_INPUT_QUERY = new Set(['apiKey', 'userId']);

type ZodLike = { _zod?: { def?: { type?: string; innerType?: ZodLike; shape?: Record<string, ZodLike>; in?: ZodLike } }; shape?: Record<string, ZodLike> };

/** The leaf type of a schema under optional/nullable/default wrappers. */
function leafType(schema: ZodLike | undefined): string | undefined {
  let current = schema;
  for (let depth = 0; current && depth < 10; depth += 1) {
    const def = current._zod?.def;
    if (!def) return undefined;
    if ((def.type === 'optional' || def.type === 'nullable' || def.type === 'default' || def.type === 'prefault') && def.innerType) {
      current = def.innerType;
      continue;
    }
    return def.type;
  }
  return undefined;
}

/**
 * Query strings carry only text: booleans and numbers declared by the input
 * schema are converted when the text is exactly one of them, anything else is
 * left for the schema to refuse with a clear message.
 *
 * Where the query string is the whole input (GET, DELETE), a parameter the operation does
 * not take is refused, as its OpenAPI document lists every parameter it takes; a path
 * parameter is not one. Body methods read body fields from the query string too.
 */
function queryInput(operation: Operation, query: URLSearchParams, wholeInput: boolean): Record<string, unknown> {
  const shape = (operation.inputShape ?? {}) as Record<string, ZodLike>;
  const input: Record<string, unknown> = {};
  for (const [key, value] of query) {
    if (NON_INPUT_QUERY.has(key)) continue;
    if (wholeInput && (!Object.hasOwn(shape, key) || operation.pathParameterNames.includes(key))) {
      throw new InvalidInputError(`Unknown query parameter ${JSON.stringify(key)}`);
    }
    const type = leafType(shape[key]);
    if (type === 'boolean' && (value === 'true' || value === 'false')) input[key] = value === 'true';
    else if (type === 'number' && /^-?\d+(\.\d+)?$/.test(value)) input[key] = Number(value);
    else input[key] = value;
  }
  return input;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sendRendered(reply: FastifyReply, error: unknown, shapes: ErrorShapes | undefined, extraHeaders: Record<string, string>, log: Services['log']) {
  return sendError(reply, renderFailure(error, shapes, log), extraHeaders);
}

function renderFailure(error: unknown, shapes: ErrorShapes | undefined, log: Services['log']): RenderedError {
  const rendered = renderError(error, shapes);
  if (rendered.status >= 500) {
    const failure = toApiError(error);
    const outside = outsideFailure(failure);
    // An outside service failing is expected now and then; a stack would point at no bug.
    if (outside !== undefined) log.warn({ status: rendered.status, reason: failure.reason, failure: outside }, 'request failed: an outside service failed');
    else log.error({ err: error instanceof ApiError && error.cause ? error.cause : error }, 'request failed');
  }
  return rendered;
}

function sendError(reply: FastifyReply, rendered: RenderedError, extraHeaders: Record<string, string>) {
  return reply
    .code(rendered.status)
    .headers({ ...extraHeaders, ...rendered.headers })
    .type(rendered.contentType)
    .send(rendered.body);
}

export function registerRestSurface(
  app: FastifyInstance,
  services: Services,
  router: AnyRouter,
  operations: OperationTable,
  allowedMethods: AllowedMethods,
): void {
  // Each operation's procedure, called as tRPC's server-side caller calls it; the caller
  // itself would build a recursive proxy per request and look the path up again.
  const procedures = router._def.procedures as Record<string, CallableProcedure>;
  // Results as the spec's bodies; failures in the endpoint's declared shapes.
  const surface: ProcedureSurface = {
    resultType: 'application/json; charset=utf-8',
    resultStatus: (procedure) => procedure._def.meta?.successStatus ?? 200,
    resultBody: (data) => JSON.stringify(data),
    renderFailure: (error, procedure) => renderFailure(error, procedure._def.meta?.errorShapes, services.log),
  };

  // Not async: the pipeline's promise is the answer, with no hop of its own here.
  const restHandler = (request: FastifyRequest, reply: FastifyReply) => {
    const info = requestInfo(request);
    const pathname = (request.raw.url ?? '/').slice(REST_PREFIX.length).split('?')[0] || '/';
    const { operation } = operations.matchRequest(request, pathname);
    if (!operation) {
      const samePath = operations.all.filter((candidate) => candidate.pattern.test(pathname));
      // A path whose operation declares its own 405 body (the incoming widget message) answers in it.
      const declared = samePath.find((candidate) => candidate.meta.errorShapes?.['405'])?.meta.errorShapes?.['405'];
      // The plain routes under /v1 (health, readiness, scripts) count too: POST /v1/health is 405.
      const error = unservedMethodError(request.method, REST_PREFIX + pathname, allowedMethods(REST_PREFIX + pathname));
      return sendRendered(reply, error, declared ? { '405': declared } : undefined, {}, services.log);
    }

    let input: unknown;
    if (operation.method === 'GET' || operation.method === 'DELETE') {
      try {
        input = queryInput(operation, info.query, true);
      } catch (error) {
        return sendRendered(reply, error, operation.meta.errorShapes, {}, services.log);
      }
    } else {
      // Query parameters are input on every method; the JSON body wins where both carry a field.
      const fromQuery = queryInput(operation, info.query, false);
      const body = request.body;
      input = body === undefined || body === null ? fromQuery : isPlainObject(body) ? { ...fromQuery, ...body } : body;
    }
    if (isPlainObject(input)) Object.assign(input, pathParameters(operation, pathname));

    // Idempotency-Key is honoured on POSTs (server/idempotency).
    const ctx = createCallContext(services, info, operation.method === 'POST' ? REST_PREFIX : undefined, pathname);
    return answerProcedureCall(reply, surface, procedures[operation.procedurePath]!, operation.procedurePath, ctx, input);
  };

  app.route({ method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], url: `${REST_PREFIX}/*`, handler: restHandler });
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
    ? operations.matchRequest(request, pathname.slice(REST_PREFIX.length)).operation?.meta.errorShapes
    : undefined;
  return sendRendered(reply, error, shapes, {}, services.log);
}
