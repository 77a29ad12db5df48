// Every answer a test receives from /v1 is checked against the OpenAPI document
// the service serves: the status must be listed for the operation, the content
// type must be one it lists, the body must match that schema, and required
// headers (429's Retry-After) must be there. A service that answers something its
// document does not say fails the test that saw it.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

type Json = Record<string, any>;
type DocumentedOperation = { path: string; pattern: RegExp; loosePattern: RegExp | null; operation: Json; pointer: string };

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

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

export function createConformanceChecker(document: Json, basePath = '/v1'): ConformanceChecker {
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema(document, 'openapi.json');
  const validators = new Map<string, ValidateFunction>();
  const byMethod = new Map<string, DocumentedOperation[]>();
  for (const [path, item] of Object.entries(document.paths as Record<string, Json>)) {
    for (const [method, operation] of Object.entries(item)) {
      const entry = { path, pattern: pathPattern(path, false)!, loosePattern: pathPattern(path, true), operation, pointer: `#/paths/${escapePointer(path)}/${method}` };
      byMethod.set(method.toUpperCase(), [...(byMethod.get(method.toUpperCase()) ?? []), entry]);
    }
  }
  // Static paths before parameter twins (`/api-keys/current` before `/api-keys/{id}`), as the router does.
  for (const list of byMethod.values()) list.sort((a, b) => (a.path.match(/\{/g)?.length ?? 0) - (b.path.match(/\{/g)?.length ?? 0));

  function validatorFor(pointer: string): ValidateFunction {
    let validate = validators.get(pointer);
    if (!validate) {
      validate = ajv.compile({ $ref: `openapi.json${pointer}` });
      validators.set(pointer, validate);
    }
    return validate;
  }

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
