// Every answer a test receives from /v1 is checked against the OpenAPI document
// the service serves: the status must be listed for the operation, the content
// type must be one it lists, the body must match that schema, and required
// headers (429's Retry-After) must be there. A service that answers something its
// document does not say fails the test that saw it.
//
// The request judge says whether the document allows a request (its parameters and body
// match their schemas, with the rules the document states in words: well-formed Unicode,
// 8 levels of nesting), so a test can hold the service to it: allowed, never 400 for a
// rule the document could have stated; forbidden, refused (4xx).
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

type Json = Record<string, any>;
type DocumentedOperation = { path: string; pattern: RegExp; loosePattern: RegExp | null; operation: Json; pointer: string };

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

/** An ajv that reads the document as validators do (formats checked; `password` only hints at a secret). */
function documentAjv(document: Json): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
  addFormats(ajv);
  ajv.addFormat('password', true);
  ajv.addSchema(document, 'openapi.json');
  return ajv;
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

function pathPattern(path: string, loose: boolean): RegExp | null {
  const segments = path.split('/').filter(Boolean);
  const last = segments[segments.length - 1] ?? '';
  if (loose && !/^\{\w+\}$/.test(last)) return null;
  const source = segments
    .map((segment, index) => {
      if (!/^\{\w+\}$/.test(segment)) return '/' + segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      return loose && index === segments.length - 1 ? '(?:/[^/]*)?' : '/[^/]+';
    })
    .join('');
  return new RegExp(`^${source}/?$`, 'i');
}

const segmentCount = (path: string) => path.split('/').filter(Boolean).length;
const fixedSegments = (path: string) => path.split('/').filter((segment) => segment && !/^\{\w+\}$/.test(segment)).length;

export type ConformanceChecker = {
  /** Throws when the answer is not one the document lists for the operation. */
  check(answer: { method: string; pathname: string; status: number; contentType: string; text: string; headers: Headers }): void;
};

function operationsByMethod(document: Json): Map<string, DocumentedOperation[]> {
  const byMethod = new Map<string, DocumentedOperation[]>();
  for (const [path, item] of Object.entries(document.paths as Record<string, Json>)) {
    for (const [method, operation] of Object.entries(item)) {
      const entry = { path, pattern: pathPattern(path, false)!, loosePattern: pathPattern(path, true), operation, pointer: `#/paths/${escapePointer(path)}/${method}` };
      byMethod.set(method.toUpperCase(), [...(byMethod.get(method.toUpperCase()) ?? []), entry]);
    }
  }
  // Static paths before parameter twins (`/api-keys/current` before `/api-keys/{id}`), as the router does.
  for (const list of byMethod.values()) list.sort((a, b) => (a.path.match(/\{/g)?.length ?? 0) - (b.path.match(/\{/g)?.length ?? 0));
  return byMethod;
}

function compiler(ajv: Ajv2020): (pointer: string) => ValidateFunction {
  const validators = new Map<string, ValidateFunction>();
  return (pointer) => {
    let validate = validators.get(pointer);
    if (!validate) {
      validate = ajv.compile({ $ref: `openapi.json${pointer}` });
      validators.set(pointer, validate);
    }
    return validate;
  };
}

export function createConformanceChecker(document: Json, basePath = '/v1'): ConformanceChecker {
  const ajv = documentAjv(document);
  const byMethod = operationsByMethod(document);
  const validatorFor = compiler(ajv);

  return {
    check({ method, pathname, status, contentType, text, headers }) {
      if (!pathname.startsWith(basePath + '/')) return;
      const relative = pathname.slice(basePath.length);
      const candidates = byMethod.get(method.toUpperCase()) ?? [];
      const complete = candidates.find((candidate) => candidate.pattern.test(relative));
      // As the router decides: a path missing its trailing parameter names the operation with more fixed
      // segments (GET /contacts/tags is /contacts/tags/{contactId} without its id, not /contacts/{contactId}).
      const loose = candidates.find((candidate) => candidate.loosePattern?.test(relative) && (!complete || fixedSegments(candidate.path) > fixedSegments(complete.path)));
      const found = (complete && loose && segmentCount(loose.path) === segmentCount(complete.path) + 1 ? loose : complete) ?? loose;
      // No operation for this method and path: the 404/405 of an unknown route, not an operation's answer.
      if (!found) return;
      const where = `${method} ${relative} (documented as ${method} ${found.path}) answered ${status}`;
      const responses = found.operation.responses as Record<string, Json>;
      const response = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
      if (!response) {
        throw new Error(`Undocumented status: ${where}; the document lists ${Object.keys(responses).join(', ')}. Body: ${text.slice(0, 300)}`);
      }
      const statusKey = responses[String(status)] ? String(status) : responses[`${String(status)[0]}XX`] ? `${String(status)[0]}XX` : 'default';
      for (const [name, header] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
        if (header.required && !headers.get(name)) throw new Error(`Missing documented header ${name}: ${where}`);
      }
      const content = response.content as Record<string, Json> | undefined;
      if (!content) {
        if (text.length) throw new Error(`Undocumented body: ${where} has a body but the document lists none: ${text.slice(0, 300)}`);
        return;
      }
      const mediaType = contentType.split(';')[0].trim().toLowerCase();
      if (!content[mediaType]) {
        throw new Error(`Undocumented content type ${mediaType || '(none)'}: ${where}; the document lists ${Object.keys(content).join(', ')}. Body: ${text.slice(0, 300)}`);
      }
      let body: unknown = text;
      if (mediaType.endsWith('json')) {
        try {
          body = JSON.parse(text);
        } catch {
          throw new Error(`Body is not JSON: ${where}: ${text.slice(0, 300)}`);
        }
      }
      const validate = validatorFor(`${found.pointer}/responses/${statusKey}/content/${escapePointer(mediaType)}/schema`);
      if (!validate(body)) {
        throw new Error(`Body does not match the document: ${where}: ${ajv.errorsText(validate.errors)}. Body: ${text.slice(0, 500)}`);
      }
    },
  };
}

/** Nesting the document allows, counted from the request body (JsonValue's description). */
const MAX_DEPTH = 32;

/**
 * Whether the document allows a request: `true`, `false` with why, or `undefined` when the
 * document does not decide (a body it does not describe, a query parameter a body method
 * does not list, a path the router reads otherwise).
 */
export type RequestVerdict = { allowed: true } | { allowed: false; why: string } | { allowed: undefined; why: string };

export type JudgedRequest = {
  method: string;
  /** The path as sent, percent-encoded, with the base path. */
  pathname: string;
  query: [string, string][];
  body: { kind: 'none' } | { kind: 'json'; value: unknown } | { kind: 'other' };
};

/** The first string (or object key) in a value that is not well-formed Unicode, and the deepest nesting. */
function textAndDepth(value: unknown): { malformed?: string; depth: number } {
  let depth = 0;
  let malformed: string | undefined;
  const pending: { value: unknown; level: number }[] = [{ value, level: 1 }];
  while (pending.length) {
    const { value: current, level } = pending.pop()!;
    if (typeof current === 'string') {
      if (!current.isWellFormed()) malformed ??= current;
      continue;
    }
    if (!current || typeof current !== 'object') continue;
    depth = Math.max(depth, level);
    for (const [key, member] of Object.entries(current)) {
      if (!key.isWellFormed()) malformed ??= key;
      pending.push({ value: member, level: level + 1 });
    }
  }
  return { malformed, depth };
}

/** The values a query or path text stands for: itself, and the number or boolean it spells. */
function textValues(text: string): unknown[] {
  const values: unknown[] = [text];
  if (/^-?\d+(\.\d+)?$/.test(text)) values.push(Number(text));
  if (text === 'true' || text === 'false') values.push(text === 'true');
  return values;
}

export function createRequestJudge(document: Json, basePath = '/v1'): (request: JudgedRequest) => RequestVerdict {
  const ajv = documentAjv(document);
  const byMethod = operationsByMethod(document);
  const validatorFor = compiler(ajv);

  return ({ method, pathname, query, body }) => {
    if (!pathname.startsWith(basePath + '/')) return { allowed: undefined, why: 'not under the base path' };
    const relative = pathname.slice(basePath.length);
    const found = (byMethod.get(method.toUpperCase()) ?? []).find((candidate) => candidate.pattern.test(relative));
    if (!found) return { allowed: undefined, why: 'no operation' };
    // A path with fewer parameters that matches too is the one the request names (OpenAPI's matching).
    const precision = (path: string) => -(path.match(/\{/g)?.length ?? 0);
    const named = Object.keys(document.paths).find((path) => precision(path) > precision(found.path) && pathPattern(path, false)!.test(relative));
    if (named) return { allowed: false, why: `the path is ${named}, which has no ${method}` };
    const operation = found.operation;
    const parameters = (operation.parameters ?? []) as Json[];

    // Path parameters by position in the template.
    const template = found.path.split('/');
    const segments = relative.split('/');
    const texts: { name: string; in: string; text: string }[] = [];
    for (const [index, segment] of template.entries()) {
      const name = /^\{(\w+)\}$/.exec(segment)?.[1];
      if (!name) continue;
      try {
        texts.push({ name, in: 'path', text: decodeURIComponent(segments[index]!) });
      } catch {
        return { allowed: undefined, why: `path segment ${segments[index]} is not percent-encoded text` };
      }
    }
    for (const [name, text] of query) {
      const documented = parameters.some((parameter) => parameter.in === 'query' && parameter.name === name);
      if (!documented) {
        // Where the query string is the input (a GET or DELETE taking query parameters), it lists them all.
        const takesQuery = parameters.some((parameter) => parameter.in === 'query');
        if ((method === 'GET' || method === 'DELETE') && takesQuery) return { allowed: false, why: `query parameter ${JSON.stringify(name)} is not one of the operation's` };
        return { allowed: undefined, why: `query parameter ${JSON.stringify(name)} is not documented` };
      }
      if (query.filter(([other]) => other === name).length > 1) return { allowed: undefined, why: `query parameter ${name} repeated` };
      texts.push({ name, in: 'query', text });
    }
    for (const { name, text } of texts) {
      if (!text.isWellFormed()) return { allowed: false, why: `${name} is not well-formed Unicode` };
    }
    for (const [index, parameter] of parameters.entries()) {
      if (parameter.in !== 'path' && parameter.in !== 'query') continue;
      const sent = texts.find((text) => text.in === parameter.in && text.name === parameter.name);
      if (!sent) {
        if (parameter.required) return { allowed: false, why: `required parameter ${parameter.name} missing` };
        continue;
      }
      const validate = validatorFor(`${found.pointer}/parameters/${index}/schema`);
      if (!textValues(sent.text).some((value) => validate(value))) {
        return { allowed: false, why: `${parameter.in} parameter ${parameter.name}=${JSON.stringify(sent.text).slice(0, 80)}: ${ajv.errorsText(validate.errors)}` };
      }
    }

    const content = operation.requestBody?.content as Json | undefined;
    if (body.kind === 'other') return { allowed: undefined, why: 'a body that is not JSON' };
    if (body.kind === 'none') {
      if (operation.requestBody?.required) return { allowed: false, why: 'required body missing' };
      return { allowed: true };
    }
    if (!content?.['application/json']) return { allowed: undefined, why: 'a body the operation does not describe' };
    const { malformed, depth } = textAndDepth(body.value);
    if (malformed !== undefined) return { allowed: false, why: `body text ${JSON.stringify(malformed).slice(0, 40)} is not well-formed Unicode` };
    if (depth > MAX_DEPTH) return { allowed: false, why: `body nests ${depth} levels` };
    const validate = validatorFor(`${found.pointer}/requestBody/content/application~1json/schema`);
    if (!validate(body.value)) return { allowed: false, why: `body: ${ajv.errorsText(validate.errors)}` };
    return { allowed: true };
  };
}
