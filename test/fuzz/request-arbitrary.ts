// Requests for every operation of an OpenAPI 3.1 document, as fast-check
// arbitraries: *valid* ones built from the parameter and body schemas, and
// *invalid* ones that break one thing (a type, a range, a required field, the
// JSON itself, the credentials). Values the caller knows (real ids of the
// account that will send the request) are placeholders resolved at send time.
import fc from 'fast-check';
import { anyJson, arbitraryFromSchema, itemsSchema, jsonType, propertySchema, requiredNames, schemaTypes, type Schema } from './schema-arbitrary.ts';

type Json = Record<string, any>;

/** Kinds of real values a sending account knows. */
export type KnownKind = 'id' | 'account' | 'phone' | 'email' | 'tag';

/** A real value of the sending account, chosen when the request is sent. */
export class Known {
  readonly kind: KnownKind;
  readonly pick: number;
  constructor(kind: KnownKind, pick: number) {
    this.kind = kind;
    this.pick = pick;
  }
  [fc.toStringMethod](): string {
    return `Known(${this.kind}#${this.pick})`;
  }
}

/** A long string, kept short in printed counterexamples. */
export class Huge {
  readonly length: number;
  readonly unit: string;
  constructor(length: number, unit = 'x') {
    this.length = length;
    this.unit = unit;
  }
  text(): string {
    return this.unit.repeat(Math.ceil(this.length / this.unit.length)).slice(0, this.length);
  }
  [fc.toStringMethod](): string {
    return `Huge(${this.length}, ${JSON.stringify(this.unit)})`;
  }
}

/** JSON nested `depth` levels deep, kept short in printed counterexamples. */
export class Deep {
  readonly depth: number;
  readonly shape: 'array' | 'object';
  constructor(depth: number, shape: 'array' | 'object') {
    this.depth = depth;
    this.shape = shape;
  }
  value(): unknown {
    let value: unknown = 1;
    for (let level = 0; level < this.depth; level++) value = this.shape === 'array' ? [value] : { a: value };
    return value;
  }
  [fc.toStringMethod](): string {
    return `Deep(${this.depth}, ${this.shape})`;
  }
}

/** A path segment sent without percent-encoding. */
export class RawSegment {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  [fc.toStringMethod](): string {
    return `RawSegment(${JSON.stringify(this.text)})`;
  }
}

export type Credentials = { in: 'query' | 'header' | 'bearer' | 'none'; wrongKey?: string };

export type FuzzBody = { kind: 'none' } | { kind: 'json'; value: unknown } | { kind: 'raw'; text: string | Huge; contentType?: string };

export type FuzzRequest = {
  /** `METHOD /path` as the document names the operation. */
  operation: string;
  mutation: string;
  pathParams: Record<string, unknown>;
  query: Record<string, unknown>;
  credentials: Credentials;
  body: FuzzBody;
};

export type Operation = {
  method: string;
  path: string;
  /** Whether a security requirement applies (the request carries a key). */
  secured: boolean;
  pathParams: { name: string; schema: Schema }[];
  queryParams: { name: string; schema: Schema; required: boolean }[];
  body: { schema: Schema; required: boolean } | null;
};

/** The operations of the document; query parameters that carry the API key are left to `credentials`. */
export function documentOperations(document: Json): Operation[] {
  const keyParams = new Set(
    Object.values((document.components?.securitySchemes ?? {}) as Record<string, Json>)
      .filter((scheme) => scheme.type === 'apiKey' && scheme.in === 'query')
      .map((scheme) => scheme.name as string),
  );
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths as Record<string, Json>)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!['get', 'put', 'post', 'delete', 'patch'].includes(method)) continue;
      const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])] as Json[];
      const security = (operation.security ?? document.security ?? []) as Json[];
      operations.push({
        method: method.toUpperCase(),
        path,
        secured: security.some((requirement) => Object.keys(requirement).length > 0),
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => ({ name: p.name, schema: p.schema ?? {} })),
        queryParams: parameters
          .filter((p) => p.in === 'query' && !keyParams.has(p.name))
          .map((p) => ({ name: p.name, schema: p.schema ?? {}, required: Boolean(p.required) })),
        body: operation.requestBody?.content?.['application/json']
          ? { schema: operation.requestBody.content['application/json'].schema ?? {}, required: Boolean(operation.requestBody.required) }
          : null,
      });
    }
  }
  return operations;
}

/** Real values mixed into strings by the name of their property or parameter. */
function knownKindFor(name: string): KnownKind | null {
  if (name === 'userId') return 'account';
  // A provider's phone-number id is an id, not a phone number.
  if (/phone/i.test(name) && !/(_id|Id)$/.test(name)) return 'phone';
  if (/email/i.test(name)) return 'email';
  if (/^(tag|tags|name)$/i.test(name)) return 'tag';
  if (/(^id|Id|Ids)$/.test(name)) return 'id';
  return null;
}

/** What the real values of each kind look like. */
const KNOWN_SAMPLES: Record<KnownKind, string> = { id: 'ct_01abc', account: 'usr_01abc', phone: '+14155550100', email: 'ada@example.com', tag: 'Tag1' };

function withKnownValues(name: string, generated: fc.Arbitrary<unknown>, schema: Record<string, any>): fc.Arbitrary<unknown> {
  const kind = knownKindFor(name);
  if (!kind) return generated;
  // A field whose pattern such values do not fit (API section names) gets none.
  if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(KNOWN_SAMPLES[kind])) return generated;
  return fc.oneof({ weight: 1, arbitrary: generated }, { weight: 3, arbitrary: fc.nat(1000).map((pick) => new Known(kind, pick)) });
}

// --- valid requests ---------------------------------------------------------

function validRequest(operation: Operation, document: Json): fc.Arbitrary<FuzzRequest> {
  const options = { root: document, hint: withKnownValues, concrete: (value: unknown) => resolvePlaceholders(value, (known) => KNOWN_SAMPLES[known.kind]) };
  const pathParams = fc.record(Object.fromEntries(operation.pathParams.map((p) => [p.name, arbitraryFromSchema(p.schema, options, p.name)])));
  const requiredKeys = operation.queryParams.filter((p) => p.required).map((p) => p.name);
  let query: fc.Arbitrary<Record<string, unknown>> = fc.record(Object.fromEntries(operation.queryParams.map((p) => [p.name, arbitraryFromSchema(p.schema, options, p.name)])), { requiredKeys });
  // Without optional parameters a third of the time, so the plain call is common too.
  if (!requiredKeys.length) query = fc.oneof({ weight: 2, arbitrary: query }, { weight: 1, arbitrary: fc.constant({}) });
  let body: fc.Arbitrary<FuzzBody> = fc.constant({ kind: 'none' });
  if (operation.body) {
    const json = arbitraryFromSchema(operation.body.schema, options).map((value): FuzzBody => ({ kind: 'json', value }));
    body = operation.body.required ? json : fc.oneof(json, body);
  }
  const credentials: fc.Arbitrary<Credentials> = operation.secured
    ? fc.constantFrom<Credentials>({ in: 'query' }, { in: 'query' }, { in: 'header' }, { in: 'bearer' })
    : fc.constant({ in: 'none' });
  return fc.record({ operation: fc.constant(`${operation.method} ${operation.path}`), mutation: fc.constant('none'), pathParams, query, credentials, body });
}

// --- where a body mutation lands ----------------------------------------------

type Location = { path: (string | number)[]; schema: Schema | undefined; value: unknown };

function locations(value: unknown, schema: Schema | undefined, root: Json, path: (string | number)[] = []): Location[] {
  const here: Location = { path, schema, value };
  if (Array.isArray(value)) {
    const items = schema === undefined ? undefined : itemsSchema(schema, root);
    return [here, ...value.flatMap((item, index) => locations(item, items, root, [...path, index]))];
  }
  if (value && typeof value === 'object' && !(value instanceof Known)) {
    return [
      here,
      ...Object.entries(value).flatMap(([key, item]) => locations(item, schema === undefined ? undefined : propertySchema(schema, key, root), root, [...path, key])),
    ];
  }
  return [here];
}

function replaceAt(value: unknown, path: (string | number)[], replace: (old: unknown) => unknown): unknown {
  if (!path.length) return replace(value);
  const [head, ...rest] = path;
  if (Array.isArray(value)) return value.map((item, index) => (index === head ? replaceAt(item, rest, replace) : item));
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  copy[head as string] = replaceAt(copy[head as string], rest, replace);
  return copy;
}

function pick<T>(items: T[], index: number): T | undefined {
  return items.length ? items[index % items.length] : undefined;
}

function bodyValue(request: FuzzRequest): unknown {
  return request.body.kind === 'json' ? request.body.value : {};
}

function isObject(value: unknown): value is Record<string, unknown> {
  return Boolean(value) && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Known);
}

// --- invalid requests ---------------------------------------------------------

const WRONG_KEYS = ['', 'garbage', 'key_0000000000000000000000000000', 'sk_live_' + 'a'.repeat(40), 'null', 'undefined', ' ', '%00'];
const BAD_QUERY_VALUES = [
  '', ' ', 'abc', '-1', '0', '1.5', '1e3', '0x10', '99999999999999999999', '2147483648', '-2147483649', 'NaN', 'Infinity', 'null', 'true', '[]', '{}', '[object Object]', '\u0000', 'a\u0000b', '..', '%', '\u202e\u{1f600}', "' or 1=1 --",
  // Values a pattern or format of the document decides: phone numbers, blanks, cursors, dates.
  '+0', '+1 123', '+999 123456', ' +14155552671 ', '0014155552671', '\u3000', '\t', 'AAA.BBB', 'a.b', '2020-02-30', '0000-01-01T00:00:00Z',
];
/** Strings a field's pattern, format or enum may refuse (the request judge decides whether the document does). */
const PATTERN_PROBES = [
  '', ' ', '\u3000', '\u00a0x', 'x', '0', '+0', '+1 123', '+999 123456', '14155552671', '+1 415 555 2671 x2', 'not-an-e-mail', 'a@b', 'https://', 'http://example.com',
  'AAA.BBB', '0000-01-01T00:00:00Z', '2020-02-30T00:00:00Z', '2020-01-01', 'Contact Created', 'contact created', ' analytics ', 'API Keys', '#fff', 'red',
];
const BAD_PATH_SEGMENTS: unknown[] = [
  '', ' ', '0', '-1', '99999999999999999999', 'null', 'undefined', '__proto__', 'constructor', '\u0000', 'a\u0000b', '..', '.', 'a/b', '%', '\u{1f600}', "' or 1=1 --",
  new RawSegment('%zz'), new RawSegment('%E0%A4%A'), new RawSegment('%00'), new RawSegment('%2e%2e'), new RawSegment('%C0%AF'), new Huge(300), new Huge(5000),
];
const MALFORMED_JSON = ['{', '}', '{"a":}', "{'a':1}", '{"a":1,}', '[1,2', 'nul', 'NaN', 'undefined', '\uFEFF{}', '{"a":"\\u00"}', '{"a":"\\ud800"}', '"unterminated', '{} {}', '{"a":1}garbage', '\u0000', '[[[[[[[[[[[[[[[[[[[[', '{"__proto__":{"polluted":1}}'];
const OUT_OF_RANGE = [2 ** 31, -(2 ** 31) - 1, 2 ** 53 + 2, -(2 ** 53) - 2, 1e308, -1e308, 5e-324, 0.5, -1, 0, 1e21];
const CONTENT_TYPES = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/json; charset=latin1', 'application/merge-patch+json', 'application/octet-stream'];
const HUGE_LENGTHS = [5_000, 70_000, 1_100_000];
const DEEP = [100, 1_000, 10_000];

type Mutation = (request: FuzzRequest, operation: Operation, document: Json) => fc.Arbitrary<FuzzRequest>;

const withBody = (request: FuzzRequest, body: FuzzBody, mutation: string): FuzzRequest => ({ ...request, body, mutation });
const atLocation = (request: FuzzRequest, operation: Operation, document: Json, accept: (location: Location) => boolean) =>
  locations(bodyValue(request), operation.body?.schema, document).filter(accept);

const bodyMutations: Record<string, Mutation> = {
  'body-wrong-root-type': (request) =>
    fc.oneof(fc.array(anyJson, { maxLength: 3 }), fc.string(), fc.integer(), fc.constant(null), fc.boolean()).map((value) => withBody(request, { kind: 'json', value }, 'body-wrong-root-type')),

  'missing-required': (request, operation, document) =>
    fc.nat().map((index) => {
      const candidates = atLocation(request, operation, document, (l) => isObject(l.value) && l.schema !== undefined && requiredNames(l.schema, document).some((name) => name in (l.value as object)));
      const location = pick(candidates, index);
      if (!location) return withBody(request, { kind: 'json', value: {} }, 'missing-required');
      const names = requiredNames(location.schema!, document).filter((name) => name in (location.value as object));
      const missing = names[index % names.length];
      const value = replaceAt(bodyValue(request), location.path, (old) => Object.fromEntries(Object.entries(old as object).filter(([key]) => key !== missing)));
      return withBody(request, { kind: 'json', value }, 'missing-required');
    }),

  'wrong-type': (request, operation, document) =>
    fc.tuple(fc.nat(), anyJson).map(([index, replacement]) => {
      const candidates = atLocation(request, operation, document, (l) => l.path.length > 0);
      const location = pick(candidates, index) ?? { path: [], schema: operation.body?.schema, value: undefined };
      const types = location.schema === undefined ? new Set<string>() : schemaTypes(location.schema, document);
      const wrong = types.has(jsonType(replacement)) || (types.has('number') && jsonType(replacement) === 'integer') ? [replacement] : replacement;
      return withBody(request, { kind: 'json', value: replaceAt(bodyValue(request), location.path, () => wrong) }, 'wrong-type');
    }),

  'out-of-range': (request, operation, document) =>
    fc.tuple(fc.nat(), fc.constantFrom(...OUT_OF_RANGE), fc.constantFrom('below', 'above', 'fixed')).map(([index, fixed, where]) => {
      const numeric = atLocation(request, operation, document, (l) => typeof l.value === 'number');
      const location = pick(numeric, index);
      if (!location) return withBody(request, { kind: 'json', value: { ...asObject(bodyValue(request)), unknownNumber: fixed } }, 'out-of-range');
      const schema = location.schema as Json | undefined;
      const value = where === 'below' && typeof schema?.minimum === 'number' ? schema.minimum - 1 : where === 'above' && typeof schema?.maximum === 'number' ? schema.maximum + 1 : fixed;
      return withBody(request, { kind: 'json', value: replaceAt(bodyValue(request), location.path, () => value) }, 'out-of-range');
    }),

  'huge-string': (request, operation, document) =>
    fc.tuple(fc.nat(), fc.constantFrom(...HUGE_LENGTHS), fc.constantFrom('x', 'é', '\u{1f600}')).map(([index, length, unit]) => {
      const strings = atLocation(request, operation, document, (l) => typeof l.value === 'string');
      const location = pick(strings, index);
      const huge = new Huge(length, unit);
      if (!location) return withBody(request, { kind: 'json', value: { ...asObject(bodyValue(request)), unknownString: huge } }, 'huge-string');
      return withBody(request, { kind: 'json', value: replaceAt(bodyValue(request), location.path, () => huge) }, 'huge-string');
    }),

  'nul-byte': (request, operation, document) =>
    fc.tuple(fc.nat(), fc.nat()).map(([index, at]) => {
      const strings = atLocation(request, operation, document, (l) => typeof l.value === 'string' || l.value instanceof Known);
      const location = pick(strings, index);
      if (!location) return withBody(request, { kind: 'json', value: { ...asObject(bodyValue(request)), unknown: 'a\u0000b' } }, 'nul-byte');
      const value = replaceAt(bodyValue(request), location.path, (old) => {
        const text = typeof old === 'string' ? old : 'x';
        const position = at % (text.length + 1);
        return text.slice(0, position) + '\u0000' + text.slice(position);
      });
      return withBody(request, { kind: 'json', value }, 'nul-byte');
    }),

  'lone-surrogate': (request, operation, document) =>
    fc.tuple(fc.nat(), fc.nat(), fc.constantFrom('\ud800', '\udfff', 'a\udc00')).map(([index, at, half]) => {
      const strings = atLocation(request, operation, document, (l) => typeof l.value === 'string' || l.value instanceof Known);
      const location = pick(strings, index);
      if (!location) return withBody(request, { kind: 'json', value: { ...asObject(bodyValue(request)), [`key${half}`]: 'x' } }, 'lone-surrogate');
      const value = replaceAt(bodyValue(request), location.path, (old) => {
        const text = typeof old === 'string' ? old : 'x';
        const position = at % (text.length + 1);
        return text.slice(0, position) + half + text.slice(position);
      });
      return withBody(request, { kind: 'json', value }, 'lone-surrogate');
    }),

  'unstorable-key': (request, operation, document) =>
    fc.tuple(fc.nat(), fc.constantFrom('a\u0000b', '\u0000', 'k\ud800')).map(([index, key]) => {
      const objects = atLocation(request, operation, document, (l) => isObject(l.value));
      const location = pick(objects, index);
      if (!location) return withBody(request, { kind: 'json', value: { [key]: 1 } }, 'unstorable-key');
      return withBody(request, { kind: 'json', value: replaceAt(bodyValue(request), location.path, (old) => ({ ...(old as object), [key]: 1 })) }, 'unstorable-key');
    }),

  'pattern-probe': (request, operation, document) =>
    fc.tuple(fc.nat(), fc.constantFrom(...PATTERN_PROBES)).map(([index, probe]) => {
      const strings = atLocation(request, operation, document, (l) => typeof l.value === 'string' || l.value instanceof Known);
      const location = pick(strings, index);
      if (!location) return withBody(request, { kind: 'json', value: bodyValue(request) }, 'pattern-probe');
      return withBody(request, { kind: 'json', value: replaceAt(bodyValue(request), location.path, () => probe) }, 'pattern-probe');
    }),

  'deep-json': (request, operation, document) =>
    fc.tuple(fc.nat(), fc.constantFrom(...DEEP), fc.constantFrom<'array' | 'object'>('array', 'object')).map(([index, depth, shape]) => {
      const location = pick(atLocation(request, operation, document, () => true), index)!;
      return withBody(request, { kind: 'json', value: replaceAt(bodyValue(request), location.path, () => new Deep(depth, shape)) }, 'deep-json');
    }),

  'malformed-json': (request) =>
    fc
      .oneof(
        fc.constantFrom(...MALFORMED_JSON),
        fc.nat().map((at) => {
          const text = jsonText(bodyValue(request), () => 'x');
          return text.slice(0, at % Math.max(text.length, 1));
        }),
      )
      .map((text) => withBody(request, { kind: 'raw', text, contentType: 'application/json' }, 'malformed-json')),

  'unknown-fields': (request, operation, document) =>
    fc.tuple(fc.nat(), fc.dictionary(fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'id', 'account_id', '$where')), anyJson, { minKeys: 1, maxKeys: 4, noNullPrototype: true })).map(([index, extra]) => {
      const objects = atLocation(request, operation, document, (l) => isObject(l.value));
      const location = pick(objects, index);
      if (!location) return withBody(request, { kind: 'json', value: extra }, 'unknown-fields');
      return withBody(request, { kind: 'json', value: replaceAt(bodyValue(request), location.path, (old) => ({ ...(old as object), ...extra })) }, 'unknown-fields');
    }),

  'empty-body': (request) =>
    fc
      .constantFrom<FuzzBody>({ kind: 'raw', text: '', contentType: 'application/json' }, { kind: 'none' }, { kind: 'raw', text: 'null', contentType: 'application/json' }, { kind: 'raw', text: '   ', contentType: 'application/json' }, { kind: 'json', value: {} })
      .map((body) => withBody(request, body, 'empty-body')),

  'wrong-content-type': (request) =>
    fc.constantFrom(...CONTENT_TYPES).map((contentType) =>
      withBody(request, { kind: 'raw', text: jsonText(bodyValue(request), () => 'x'), contentType }, 'wrong-content-type'),
    ),

  'huge-body': (request) =>
    fc.constantFrom(...HUGE_LENGTHS).map((length) => withBody(request, { kind: 'raw', text: new Huge(length, '['), contentType: 'application/json' }, 'huge-body')),
};

function asObject(value: unknown): Record<string, unknown> {
  return isObject(value) ? value : {};
}

const parameterMutations: Record<string, Mutation> = {
  'query-bad-value': (request, operation) =>
    fc
      .tuple(
        fc.oneof(fc.constantFrom(...operation.queryParams.map((p) => p.name), 'unknownParam'), fc.string({ minLength: 1, maxLength: 10 })),
        fc.oneof(fc.constantFrom<unknown>(...BAD_QUERY_VALUES), fc.constantFrom(...[1_000, 6_000, 20_000]).map((length) => new Huge(length)), fc.string({ unit: 'binary', maxLength: 20 })),
      )
      .map(([name, value]) => ({ ...request, query: { ...request.query, [name]: value }, mutation: 'query-bad-value' })),

  'path-bad-value': (request, operation) =>
    fc
      .tuple(
        fc.constantFrom(...operation.pathParams.map((p) => p.name)),
        fc.oneof(fc.constantFrom(...BAD_PATH_SEGMENTS), fc.constantFrom(...PATTERN_PROBES.filter(Boolean)), fc.string({ unit: 'binary', maxLength: 20 })),
      )
      .map(([name, value]) => ({ ...request, pathParams: { ...request.pathParams, [name]: value }, mutation: 'path-bad-value' })),

  credentials: (request) =>
    fc
      .oneof(
        fc.constant<Credentials>({ in: 'none' }),
        fc.tuple(fc.constantFrom<Credentials['in']>('query', 'header', 'bearer'), fc.oneof(fc.constantFrom(...WRONG_KEYS), fc.string({ maxLength: 60 }))).map(([where, wrongKey]): Credentials => ({ in: where, wrongKey })),
        fc.constantFrom(...['\u0000', 'a\u0000b', '\u{1f600}']).map((wrongKey): Credentials => ({ in: 'query', wrongKey })),
        fc.constant<Credentials>({ in: 'query', wrongKey: new Huge(6_000).text() }),
      )
      .map((credentials) => ({ ...request, credentials, mutation: 'credentials' })),
};

function mutationsFor(operation: Operation): Mutation[] {
  const chosen: Mutation[] = [];
  if (operation.method !== 'GET') chosen.push(...Object.values(bodyMutations));
  chosen.push(parameterMutations['query-bad-value']);
  if (operation.pathParams.length) chosen.push(parameterMutations['path-bad-value']);
  if (operation.secured) chosen.push(parameterMutations.credentials);
  return chosen;
}

function invalidRequest(operation: Operation, document: Json): fc.Arbitrary<FuzzRequest> {
  const mutations = mutationsFor(operation);
  return fc.tuple(validRequest(operation, document), fc.nat(mutations.length - 1)).chain(([request, index]) => mutations[index](request, operation, document));
}

/** Valid and invalid requests for every operation, half and half. */
export function requestArbitrary(document: Json, operations = documentOperations(document)): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(...operations.flatMap((operation) => [validRequest(operation, document), invalidRequest(operation, document)]));
}

// --- sending ---------------------------------------------------------------

/** Replaces placeholders with real values: `known` answers a Known. */
export function resolvePlaceholders(value: unknown, known: (placeholder: Known) => string): unknown {
  if (value instanceof Known) return known(value);
  if (value instanceof Huge) return value.text();
  if (value instanceof Deep) return value.value();
  if (value instanceof RawSegment) return value.text;
  if (Array.isArray(value)) return value.map((item) => resolvePlaceholders(item, known));
  if (value && typeof value === 'object') {
    const copy: Record<string, unknown> = {};
    // Defining (not assigning) keeps an own `__proto__` key a plain field.
    for (const [key, item] of Object.entries(value)) Object.defineProperty(copy, key, { value: resolvePlaceholders(item, known), enumerable: true, writable: true, configurable: true });
    return copy;
  }
  return value;
}

/** JSON text of a generated body; Deep and Huge are written directly, so 10,000 levels never recurse. */
export function jsonText(value: unknown, known: (placeholder: Known) => string): string {
  if (value instanceof Known) return JSON.stringify(known(value));
  if (value instanceof Huge) return JSON.stringify(value.text());
  if (value instanceof Deep) return value.shape === 'array' ? '['.repeat(value.depth) + '1' + ']'.repeat(value.depth) : '{"a":'.repeat(value.depth) + '1' + '}'.repeat(value.depth);
  if (value instanceof RawSegment) return JSON.stringify(value.text);
  if (Array.isArray(value)) return `[${value.map((item) => jsonText(item, known)).join(',')}]`;
  if (value && typeof value === 'object') return `{${Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}:${jsonText(item, known)}`).join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/** The concrete path of a request, `/v1` included. */
export function requestPath(request: FuzzRequest, known: (placeholder: Known) => string, basePath = '/v1'): string {
  const path = request.operation.slice(request.operation.indexOf(' ') + 1);
  return (
    basePath +
    path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = request.pathParams[name];
      if (value instanceof RawSegment) return value.text;
      const resolved = resolvePlaceholders(value, known);
      return encodeURIComponent(typeof resolved === 'string' ? resolved : JSON.stringify(resolved) ?? '');
    })
  );
}

/** A query parameter's value as a string. */
export function queryValue(value: unknown, known: (placeholder: Known) => string): string {
  const resolved = resolvePlaceholders(value, known);
  return typeof resolved === 'string' ? resolved : JSON.stringify(resolved);
}
