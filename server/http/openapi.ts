// The OpenAPI document for `/v1`: generated from the procedures, then corrected
// from their meta so it tells the truth about success statuses, every error an
// operation can answer (with its body and headers), credentials, account
// selection, the constraints the service enforces beyond the zod shapes, and
// the plain (non-JSON) routes beside the procedures.
import type { AnyRouter } from '@trpc/server';
import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import type { ErrorShape } from '../errors.ts';
import { BLANK_TEXT_PATTERN, NON_BLANK_TEXT_PATTERN } from '../input-rules.ts';
import { JSON_VALUE_SCHEMAS, stateInputRules } from './openapi-input-rules.ts';
import type { ProcedureMeta } from '../trpc.ts';
import type { OperationTable } from './operations.ts';
import { REST_PREFIX } from './rest.ts';

type Json = Record<string, unknown>;

// Closed objects, so a body matches exactly the shapes it is (validators combine them with anyOf).
const ERROR_SCHEMAS: Record<ErrorShape, Json> = {
  envelope: {
    type: 'object',
    required: ['success', 'error', 'error_code'],
    additionalProperties: false,
    properties: {
      success: { type: 'boolean', const: false },
      error: { type: 'string' },
      error_code: {
        description: 'The HTTP status, or a named code (`key_read_only`, `key_scope_denied`, `invalid_scopes`).',
        oneOf: [{ type: 'integer' }, { type: 'string' }],
      },
    },
  },
  successError: {
    type: 'object',
    required: ['success', 'error'],
    additionalProperties: false,
    properties: { success: { type: 'boolean', const: false }, error: { type: 'string' } },
  },
  message: {
    type: 'object',
    required: ['success', 'message'],
    additionalProperties: false,
    properties: { success: { type: 'boolean', const: false }, message: { type: 'string' } },
  },
  text: { type: 'string' },
  error: { type: 'object', required: ['error'], additionalProperties: false, properties: { error: { type: 'string' } } },
  errorDetails: {
    type: 'object',
    required: ['error'],
    additionalProperties: false,
    properties: { error: { type: 'string' }, details: {} },
  },
};

const STATUS_TEXT: Record<number, string> = {
  400: 'Missing or invalid parameter',
  401: 'API key missing or invalid',
  402: 'Insufficient credits',
  403: 'Forbidden: plan lacks API access, or outside the key scopes',
  404: 'Not found',
  405: 'Method not allowed',
  409: 'Already exists, or conflicts with the current state (or the Idempotency-Key was used with a different request, or its request is still being processed: named in error_code)',
  413: 'Request body too large',
  431: 'Request head (URL and headers) too large',
  422: 'The response stored for this Idempotency-Key can no longer be read, or credentials the provider refused (named in error_code)',
  429: 'Rate limit exceeded',
  500: 'Server error',
  502: 'The messaging provider could not be reached; nothing was changed',
  503: 'Shutting down, or not ready',
};

/** The IETF RateLimit headers every counted request answers with (rate-limit/limits.ts). */
const RATE_LIMIT_HEADERS: Json = {
  RateLimit: {
    description: 'Remaining requests and seconds until the window resets, per budget (draft-ietf-httpapi-ratelimit-headers).',
    schema: { type: 'string' },
  },
  'RateLimit-Policy': { description: 'The budgets that count this request: quota and window per policy.', schema: { type: 'string' } },
};
export const RETRY_AFTER_HEADER: Json = {
  'Retry-After': { description: 'Seconds until the rate-limit window resets.', required: true, schema: { type: 'integer', minimum: 1 } },
};

export function errorResponse(status: number, shapes: ErrorShape[], headers?: Json): Json {
  const unique = [...new Set(shapes)];
  const content: Json = {};
  const json = unique.filter((shape) => shape !== 'text').map((shape) => ERROR_SCHEMAS[shape]);
  if (json.length) content['application/json'] = { schema: json.length === 1 ? json[0] : { anyOf: json } };
  if (unique.includes('text')) content['text/plain'] = { schema: { type: 'string' } };
  return { description: STATUS_TEXT[status] ?? 'Error', ...(headers ? { headers } : {}), content };
}

export const SECURITY_SCHEMES = {
  apiKeyQuery: { type: 'apiKey', in: 'query', name: 'apiKey', description: 'API key as the `apiKey` query parameter (highest precedence).' },
  apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'API key in the X-API-Key header.' },
  bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key, or an identity-provider ID token for first-party sessions.' },
} as const;

/** Also a plain parameter, so generated clients can send `?apiKey=` as the specification does. */
const API_KEY_PARAMETER = {
  name: 'apiKey',
  in: 'query',
  required: false,
  description: 'The API key (main or scoped). Alternatives: the X-API-Key header or a bearer token; the query parameter wins when several are sent.',
  // A secret: tools are not to fill it in from values the API answered with.
  schema: { type: 'string', format: 'password' },
};

/** Every public (chat widget) operation takes the visitor's identity token (server/widgets/visitor-identity.ts). */
const VISITOR_IDENTITY_PARAMETER = {
  name: 'X-Visitor-Identity',
  in: 'header',
  required: false,
  description:
    "An HS256 JWT the site's back end signed with the widget's identity secret (`sub`, optional `email` and `name`, `exp` at most 24 hours ahead). " +
    'Checked when the widget\'s `settings.identityVerification` is `optional` or `required`; the verified `sub` names the visitor instead of `fromId`.',
  schema: { type: 'string' },
};

/** Optional on every authenticated POST (server/idempotency/idempotent-call.ts). */
const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes the POST safe to retry: the first response to this key (status and body, errors included) is replayed for 24 hours ' +
    'to retries of the same request by the same credential (the same API key, or ID token subject), with `Idempotent-Replayed: true`. ' +
    'The same key with a different request, or from another credential, is 409 `idempotency_key_reused`; a retry while the first request is still running ' +
    'is 409 `idempotency_key_in_use`; a stored response that can no longer be read is 422. Keys are per account acted on. Stored responses are encrypted at rest. Refusals made ' +
    'before the request is the account\'s (401, 403 of plan or key scopes, 429) and 5xx answers are not stored.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
};
const REPLAYED_HEADER: Json = {
  'Idempotent-Replayed': { description: '`true` when this is the stored response to an earlier request with the same Idempotency-Key.', schema: { type: 'string', enum: ['true'] } },
};

const USER_ID_PARAMETER = {
  name: 'userId',
  in: 'query',
  required: false,
  description: 'The account to act on: your own (default; an empty value is the same as none) or a client account your agency manages.',
  schema: { type: 'string' },
};

/** Cursors are `<base64url payload>.<base64url signature>`; only a `next_cursor` received from the same listing is accepted. */
const CURSOR_SCHEMA = {
  type: 'string',
  minLength: 3,
  pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$',
  description:
    'Opaque and signed: pass back a `next_cursor` from the previous page of the same listing, for the same account, unchanged. ' +
    'Any other value, even one of this form, is 400 `Invalid cursor`.',
};
/** The 400 of a paged operation says that an invalid cursor is one of its causes. */
const PAGED_400_DESCRIPTION = 'Missing or invalid parameter, or a `cursor` that is not a `next_cursor` of this listing (`Invalid cursor`)';

/**
 * Statuses every operation can answer whatever its own rules: a body over the limit
 * (413, any method), a request head over Node's limit (431), and a request that
 * arrives while the process shuts down (503); authenticated ones add 401, 403, 429.
 */
const PUBLIC_STATUSES = [400, 413, 431, 500, 503];
const AUTHENTICATED_STATUSES = [...PUBLIC_STATUSES, 401, 403, 429];

export type PlainRoute = {
  method: 'get' | 'post';
  path: string;
  summary: string;
  contentType: string;
  tags?: string[];
  parameters?: Json[];
  /** The request body object, for a route that takes one. */
  requestBody?: Json;
  /** Responses other than the 200 of `contentType` (a readiness 503, say). */
  responses?: Record<string, Json>;
};

type OperationObject = Json & { parameters?: Json[]; responses?: Record<string, Json>; requestBody?: { content?: Record<string, { schema?: Json }> } };

function sectionsOf(operations: OperationTable): string {
  const sections = [...new Set(operations.all.map((operation) => operation.meta.section))].sort();
  return sections.join(', ');
}

export function buildOpenApiDocument(
  router: AnyRouter,
  operations: OperationTable,
  plainRoutes: PlainRoute[],
  baseUrl = REST_PREFIX,
): OpenAPIObject {
  const document = generateOpenApiDocument(router, {
    title: 'Messaging Automation Service API',
    version: '1.0.0',
    baseUrl,
    // Says only what this document contains: its sections are the operations' tags.
    description:
      `Messaging automation over HTTPS. Sections: ${sectionsOf(operations)}. Every failure has the status and body listed under its operation. ` +
      'Text in a request is well-formed Unicode, as I-JSON (RFC 7493) asks: a NUL character (which every string schema here excludes) ' +
      'or a lone UTF-16 surrogate escape (`\\ud800` to `\\udfff` without its pair) anywhere in the input is 400.',
    securitySchemes: SECURITY_SCHEMES as never,
  }) as OpenAPIObject & { paths: Record<string, Record<string, OperationObject>> };

  for (const operation of operations.all) {
    const entry = document.paths[operation.path]?.[operation.method.toLowerCase()];
    if (!entry) continue;
    const { meta } = operation;
    const isPublic = meta.openapi?.protect === false;
    const idempotent = !isPublic && operation.method === 'POST';
    const responses = entry.responses ?? {};
    const success = responses['200'];
    for (const key of Object.keys(responses)) delete responses[key];
    if (success) {
      if (!isPublic) success.headers = idempotent ? { ...RATE_LIMIT_HEADERS, ...REPLAYED_HEADER } : RATE_LIMIT_HEADERS;
      responses[String(meta.successStatus ?? 200)] = success;
    }

    const shapes = meta.errorShapes ?? {};
    const byStatus = new Map<number, ErrorShape[]>();
    for (const status of isPublic ? PUBLIC_STATUSES : AUTHENTICATED_STATUSES) byStatus.set(status, []);
    // errorShapes lists every status the operation answers besides the base ones (in the envelope when so declared).
    for (const [key, shape] of Object.entries(shapes)) {
      if (key === 'default' || !shape) continue;
      const status = Number(key.split(':')[0]);
      byStatus.set(status, [...(byStatus.get(status) ?? []), shape]);
    }
    // Idempotency-Key's own refusals: 409 (a different request, or still running) and 422 (stored response unreadable), always in the envelope.
    if (idempotent) for (const status of [409, 422]) byStatus.set(status, [...(byStatus.get(status) ?? []), 'envelope']);
    for (const [status, found] of [...byStatus].sort(([a], [b]) => a - b)) {
      const shapeList = found.length ? found : [shapes.default ?? 'envelope'];
      // Plan, scope, rate-limit, size and shutdown refusals always use the envelope (errors.ts, http/client-errors.ts).
      if ([403, 413, 429, 431, 503].includes(status)) shapeList.push('envelope');
      const headers = status === 429 ? { ...RETRY_AFTER_HEADER, ...RATE_LIMIT_HEADERS } : undefined;
      responses[String(status)] = errorResponse(status, shapeList, headers);
    }
    if (!isPublic) responses['403'] = { ...responses['403'], description: forbiddenDescription(meta) };
    entry.responses = responses;
    // The tag is the section scoped keys name, so the document says what each key may call.
    entry.tags = [meta.section];

    const parameters = entry.parameters ?? [];
    const bodySchema = entry.requestBody?.content?.['application/json']?.schema as
      | (Json & { properties?: Record<string, Json>; required?: string[] })
      | undefined;
    const requiredFields = new Set(meta.requiredFields);
    for (const name of meta.queryFields ?? []) {
      parameters.push({
        name,
        in: 'query',
        required: requiredFields.has(name) || Boolean(bodySchema?.required?.includes(name)),
        description: 'Also read from the JSON body, which wins where both carry it.',
        schema: bodySchema?.properties?.[name] ?? { type: 'string' },
      });
      // Stated in one place: a query parameter could not be required were the body to offer it too.
      if (bodySchema?.properties) delete bodySchema.properties[name];
      if (bodySchema?.required) bodySchema.required = bodySchema.required.filter((field) => field !== name);
      if (bodySchema?.required?.length === 0) delete bodySchema.required;
    }
    for (const name of requiredFields) {
      const parameter = parameters.find((candidate) => candidate.name === name && candidate.in !== 'header');
      if (parameter) parameter.required = true;
      else if (bodySchema?.properties?.[name]) bodySchema.required = [...new Set([...(bodySchema.required ?? []), name])];
    }
    for (const parameter of parameters) {
      if (parameter.name !== 'cursor' || parameter.in !== 'query') continue;
      parameter.schema = CURSOR_SCHEMA;
      responses['400'] = { ...responses['400'], description: PAGED_400_DESCRIPTION };
    }
    if (!isPublic) {
      parameters.push(API_KEY_PARAMETER);
      if (idempotent) parameters.push(IDEMPOTENCY_KEY_PARAMETER);
      // Agency-only and key-management endpoints refuse `userId`.
      if (!meta.agencyOnly && !meta.ownAccountOnly && !parameters.some((parameter) => parameter.name === 'userId')) parameters.push(USER_ID_PARAMETER);
    }
    entry.parameters = parameters;
    // Public operations (the chat widget's) say outright that they take no credentials.
    if (isPublic) {
      entry.security = [];
      parameters.push(VISITOR_IDENTITY_PARAMETER);
    }

    // Rules the domain enforces beyond each field's own schema (at least one field, exactly one identifier).
    if (meta.bodyConstraints && bodySchema) Object.assign(bodySchema, meta.bodyConstraints);
    const mergedMembers = meta.bodyConstraints && FIELD_RULES.get(meta.bodyConstraints);
    if (mergedMembers && bodySchema) Object.assign(bodySchema, namesAField(bodySchema, mergedMembers));
    // No body is the empty object (rest.ts): required only when the empty object is refused.
    if (entry.requestBody && bodySchema) {
      (entry.requestBody as Json).required = Boolean((bodySchema.required as string[] | undefined)?.length || bodySchema.minProperties || bodySchema.anyOf || bodySchema.oneOf);
    }
    stateInputRules(entry);
  }
  document.components = { ...document.components, schemas: { ...document.components?.schemas, ...JSON_VALUE_SCHEMAS } as never };

  for (const route of plainRoutes) {
    const pathItem = (document.paths[route.path] ??= {});
    const responses: Record<string, Json> = {
      '200': { description: 'OK', content: { [route.contentType]: { schema: { type: 'string' } } } },
      ...route.responses,
    };
    // What the host answers before any route runs, in the envelope: a URL that is not validly
    // percent-encoded (400), a path segment too long to route (404), a body or head over the
    // limit, shutdown. Beside the route's own.
    for (const status of [400, ...(route.path.includes('{') ? [404] : []), 413, 431, 503]) {
      const own = responses[String(status)] as { description?: string; content?: Record<string, { schema: Json }> } | undefined;
      if (!own) {
        responses[String(status)] = errorResponse(status, ['envelope']);
        continue;
      }
      const ownJson = own.content?.['application/json']?.schema;
      const json = ownJson ? { anyOf: [ownJson, ERROR_SCHEMAS.envelope] } : ERROR_SCHEMAS.envelope;
      responses[String(status)] = { ...own, content: { ...own.content, 'application/json': { schema: json } } };
    }
    pathItem[route.method] = {
      operationId: `${route.method}${route.path.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      summary: route.summary,
      tags: route.tags ?? ['System'],
      parameters: (route.parameters ?? []) as never,
      ...(route.requestBody ? { requestBody: route.requestBody as never } : {}),
      security: [],
      responses,
    };
  }
  addRequestIdHeader(document.paths);
  return document;
}

const REQUEST_ID_RESPONSE_HEADER = {
  description: "The request's id: the caller's `X-Request-Id` when it is 1-128 characters of `A-Z a-z 0-9 . _ : -`, otherwise a generated one. Quote it when reporting a problem.",
  schema: { type: 'string' },
};

/** Every answer carries X-Request-Id (server/http/request-id.ts). */
function addRequestIdHeader(paths: Record<string, Record<string, OperationObject>>): void {
  for (const pathItem of Object.values(paths)) {
    for (const operation of Object.values(pathItem)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        // A new object: responses may share their `headers` with other operations.
        operation.responses![status] = { ...response, headers: { ...(response.headers as Json | undefined), 'X-Request-Id': REQUEST_ID_RESPONSE_HEADER } };
      }
    }
  }
}

/** The 403 of an operation, with what an input flag asks of a scoped key beyond the operation's section (server/auth/authenticate.ts). */
function forbiddenDescription(meta: ProcedureMeta): string {
  const parts = [STATUS_TEXT[403]];
  const target = meta.targetAccount;
  if (target && typeof target === 'object' && 'everyClientWhenSet' in target) {
    parts.push(`\`${target.everyClientWhenSet}: true\` acts on every client account, so a scoped key needs \`sub_account_ids\` \`["*"]\` (\`key_scope_denied\`)`);
  }
  if (meta.sectionWhenSet) {
    const { field, section, access } = meta.sectionWhenSet;
    parts.push(`\`${field}: true\` also needs the ${section} section${access === 'write' ? ' with a writable key' : ''} (\`key_scope_denied\`)`);
  }
  return parts.join('; ');
}

/** The update constraints below, with the members whose own fields count as the update's (merged, not replaced). */
const FIELD_RULES = new WeakMap<object, string[]>();

/**
 * `bodyConstraints` of an update: a body that names none of its fields (members it does not
 * read are ignored) is 400 "No fields to update". `mergedMembers` are objects merged into what
 * is stored (`usage_limits`), so one of their own fields must be named.
 */
export function atLeastOneField(...mergedMembers: string[]): Record<string, unknown> {
  const constraints = { minProperties: 1 };
  FIELD_RULES.set(constraints, mergedMembers);
  return constraints;
}

export const AT_LEAST_ONE_FIELD = atLeastOneField();

/** `anyOf` the body names one of its fields (or one of a merged member's). */
function namesAField(schema: Json & { properties?: Record<string, Json> }, mergedMembers: string[]): Json {
  return {
    anyOf: Object.entries(schema.properties ?? {}).map(([name, member]) =>
      mergedMembers.includes(name) ? { required: [name], properties: { [name]: namesAField(member, []) } } : { required: [name] },
    ),
  };
}

/**
 * `bodyConstraints` of a body that names its subject by exactly one of these fields, a blank
 * one counting as absent (each field's own schema says what a non-blank value must be).
 */
export function exactlyOneOf(...fields: string[]): Record<string, unknown> {
  return {
    oneOf: fields.map((field) => ({
      required: [field],
      properties: Object.fromEntries(fields.map((other) => [other, { pattern: other === field ? NON_BLANK_TEXT_PATTERN : BLANK_TEXT_PATTERN }])),
    })),
  };
}
