// The OpenAPI document for `/v1`: generated from the procedures, then corrected
// from their meta so it tells the truth about success statuses, error bodies,
// account selection and the plain (non-JSON) routes beside the procedures.
import type { AnyRouter } from '@trpc/server';
import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi';
import type { ErrorShape } from '../errors.ts';
import type { OperationTable } from './operations.ts';
import { REST_PREFIX } from './rest.ts';

type Json = Record<string, unknown>;

const ERROR_SCHEMAS: Record<ErrorShape, Json> = {
  envelope: {
    type: 'object',
    required: ['success', 'error', 'error_code'],
    properties: {
      success: { type: 'boolean', const: false },
      error: { type: 'string' },
      error_code: { oneOf: [{ type: 'integer' }, { type: 'string' }] },
    },
  },
  successError: {
    type: 'object',
    required: ['success', 'error'],
    properties: { success: { type: 'boolean', const: false }, error: { type: 'string' } },
  },
  message: {
    type: 'object',
    required: ['success', 'message'],
    properties: { success: { type: 'boolean', const: false }, message: { type: 'string' } },
  },
  text: { type: 'string' },
  error: { type: 'object', required: ['error'], properties: { error: { type: 'string' } } },
  errorDetails: {
    type: 'object',
    required: ['error'],
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
  409: 'Already exists',
  413: 'Request body too large',
  429: 'Rate limit exceeded',
  500: 'Server error',
};

function errorResponse(status: number, shapes: ErrorShape[]): Json {
  const unique = [...new Set(shapes)];
  const content: Json = {};
  const json = unique.filter((shape) => shape !== 'text').map((shape) => ERROR_SCHEMAS[shape]);
  if (json.length) content['application/json'] = { schema: json.length === 1 ? json[0] : { oneOf: json } };
  if (unique.includes('text')) content['text/plain'] = { schema: { type: 'string' } };
  return { description: STATUS_TEXT[status] ?? 'Error', content };
}

export const SECURITY_SCHEMES = {
  apiKeyQuery: { type: 'apiKey', in: 'query', name: 'apiKey', description: 'API key as the `apiKey` query parameter (highest precedence).' },
  apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'API key in the X-API-Key header.' },
  bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key, or an identity-provider ID token for first-party sessions.' },
} as const;

const USER_ID_PARAMETER = {
  name: 'userId',
  in: 'query',
  required: false,
  description: 'The account to act on: your own (default) or a client account your agency manages.',
  schema: { type: 'string' },
};

export type PlainRoute = { method: 'get' | 'post'; path: string; summary: string; contentType: string; tags?: string[]; parameters?: Json[] };

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
    description: 'Contacts, lists, tags, conversations and summaries, chat widget, templates, API keys and webhooks.',
    securitySchemes: SECURITY_SCHEMES as never,
  }) as OpenAPIObject & { paths: Record<string, Record<string, Json>> };

  for (const operation of operations.all) {
    const pathItem = document.paths[operation.path];
    const entry = pathItem?.[operation.method.toLowerCase()] as Json | undefined;
    if (!entry) continue;
    const responses = (entry.responses ?? {}) as Record<string, Json>;
    const success = responses['200'];
    for (const key of Object.keys(responses)) if (key !== '200') delete responses[key];
    if (operation.meta.successStatus && success) {
      delete responses['200'];
      responses[String(operation.meta.successStatus)] = success;
    }
    const shapes = operation.meta.errorShapes ?? {};
    const byStatus = new Map<number, ErrorShape[]>();
    const base = operation.meta.openapi?.protect === false ? [400, 500] : [400, 401, 403, 429, 500];
    for (const status of base) byStatus.set(status, []);
    for (const [key, shape] of Object.entries(shapes)) {
      if (key === 'default' || !shape) continue;
      const status = Number(key.split(':')[0]);
      byStatus.set(status, [...(byStatus.get(status) ?? []), shape]);
    }
    for (const [status, found] of [...byStatus].sort(([a], [b]) => a - b)) {
      const shapeList = found.length ? found : [shapes.default ?? 'envelope'];
      // Plan, scope and rate-limit refusals always use the envelope.
      if (status === 403 || status === 429) shapeList.push('envelope');
      responses[String(status)] = errorResponse(status, shapeList);
    }
    entry.responses = responses;
    // The tag is the section scoped keys name, so the document says what each key may call.
    entry.tags = [operation.meta.section];
    const queryFields = operation.meta.queryFields ?? [];
    if (queryFields.length) {
      const body = (entry.requestBody as { content?: Record<string, { schema?: { properties?: Record<string, Json> } }> } | undefined)
        ?.content?.['application/json']?.schema?.properties ?? {};
      const parameters = (entry.parameters ?? []) as Json[];
      for (const name of queryFields) {
        parameters.push({ name, in: 'query', required: false, description: 'May be sent in the query string or the JSON body.', schema: body[name] ?? { type: 'string' } });
      }
      entry.parameters = parameters;
    }
    if (operation.meta.openapi?.protect !== false) {
      const parameters = (entry.parameters ?? []) as Json[];
      if (!parameters.some((parameter) => parameter.name === 'userId')) parameters.push(USER_ID_PARAMETER);
      entry.parameters = parameters;
    }
  }

  for (const route of plainRoutes) {
    const pathItem = (document.paths[route.path] ??= {});
    pathItem[route.method] = {
      operationId: `${route.method}${route.path.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      summary: route.summary,
      tags: route.tags ?? ['System'],
      parameters: (route.parameters ?? []) as never,
      security: [],
      responses: { '200': { description: 'OK', content: { [route.contentType]: { schema: { type: 'string' } } } } },
    };
  }
  return document;
}
