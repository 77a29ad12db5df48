// The router's REST operations as a table: method, path pattern and meta for
// every procedure. The REST host uses it to find an endpoint's meta (error
// shapes, success status) even for requests that never reach tRPC.
import type { AnyRouter } from '@trpc/server';
import type { ProcedureMeta } from '../trpc.ts';

export type Operation = {
  /** The tRPC procedure path, `contacts.create`. */
  procedurePath: string;
  method: string;
  path: string;
  pattern: RegExp;
  /** The same, with the trailing path parameter allowed empty or absent. */
  loosePattern: RegExp | null;
  /** How many of the path's segments are fixed text rather than parameters. */
  fixedSegments: number;
  /**
   * Operations of the same method whose path, missing its trailing parameter, this path also
   * matches, and which name more of it: GET /contacts/messages is GET /contacts/messages/{contactId}
   * without its id, not GET /contacts/{contactId} for a contact called "messages".
   */
  shadowedBy: Operation[];
  /**
   * Paths of other operations that this one's pattern also matches but that name more of
   * their segments (`/api-keys/current` for `/api-keys/{id}`); filled in with the table.
   */
  morePrecise: Operation[];
  meta: ProcedureMeta;
  type: 'query' | 'mutation' | 'subscription';
  /** The fields of the procedure's object input, to read query strings by. */
  inputShape: Record<string, unknown> | undefined;
  /** The names of the path's parameters (`contactId` of `/contacts/{contactId}`). */
  pathParameterNames: string[];
};

export type OperationTable = {
  all: Operation[];
  /** The operation for a request, or whether the path exists under another method. */
  match(method: string, pathname: string): { operation?: Operation; pathExists: boolean };
  /** The methods the documented path a request names serves (empty when no operation path matches). */
  methodsAt(pathname: string): string[];
  /**
   * The same for one request (its path under /v1), matched once: the REST handler, the error
   * renderer and the request metrics all ask, and the match scans the table.
   */
  matchRequest(request: object & { method: string }, pathname: string): { operation?: Operation; pathExists: boolean };
};

function segmentPattern(segment: string, optional: boolean): string {
  const parameter = /^\{(\w+)\}$/.exec(segment);
  if (!parameter) return '/' + segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return optional ? `(?:/(?<${parameter[1]}>[^/]*))?` : `/(?<${parameter[1]}>[^/]+)`;
}

/**
 * `loose` lets a trailing parameter be empty or missing (`/contacts/tags/`), so the
 * procedure's own validation answers "missing contact id" in the endpoint's shape.
 */
function toPattern(path: string, loose: boolean): RegExp | null {
  const segments = path.split('/').filter(Boolean);
  const last = segments[segments.length - 1] ?? '';
  if (loose && !/^\{\w+\}$/.test(last)) return null;
  const source = segments.map((segment, index) => segmentPattern(segment, loose && index === segments.length - 1)).join('');
  return new RegExp(`^${source}/?$`, 'i');
}

/** A path's first segment, lowercased (patterns ignore case): `/contacts/ct_1` -> `contacts`. */
function firstSegmentOf(path: string): string {
  const end = path.indexOf('/', 1);
  return (end === -1 ? path.slice(1) : path.slice(1, end)).toLowerCase();
}

/** Path parameters of a matched path, percent-decoded (a malformed escape is kept as sent). */
export function pathParameters(operation: Operation, pathname: string): Record<string, string> {
  const groups = (operation.pattern.exec(pathname) ?? operation.loosePattern?.exec(pathname))?.groups ?? {};
  const decoded: Record<string, string> = {};
  for (const [name, value] of Object.entries(groups)) {
    // A trailing parameter left out reads as empty, like `/contacts/tags/`.
    if (value === undefined) {
      decoded[name] = '';
      continue;
    }
    try {
      decoded[name] = decodeURIComponent(value);
    } catch {
      decoded[name] = value;
    }
  }
  return decoded;
}

/**
 * Whether `path` is `than` with some of its parameters fixed (`/api-keys/current` than
 * `/api-keys/{id}`): every URL of `path` is also one of `than`, and names it more precisely.
 */
function namesMorePrecisely(path: string, than: string): boolean {
  const segments = path.split('/');
  const twin = than.split('/');
  if (segments.length !== twin.length) return false;
  let fixedMore = false;
  for (const [index, segment] of segments.entries()) {
    const other = twin[index]!;
    const parameter = /^\{\w+\}$/;
    if (parameter.test(other)) fixedMore ||= !parameter.test(segment);
    else if (parameter.test(segment) || segment.toLowerCase() !== other.toLowerCase()) return false;
  }
  return fixedMore;
}

export function buildOperationTable(router: AnyRouter): OperationTable {
  const all: Operation[] = [];
  const procedures = router._def.procedures as Record<
    string,
    { _def: { meta?: ProcedureMeta; type: Operation['type']; inputs: { shape?: Record<string, unknown> }[] } }
  >;
  for (const [procedurePath, procedure] of Object.entries(procedures)) {
    const meta = procedure._def.meta;
    if (!meta?.openapi) continue;
    all.push({
      procedurePath,
      method: meta.openapi.method,
      path: meta.openapi.path,
      pattern: toPattern(meta.openapi.path, false)!,
      loosePattern: toPattern(meta.openapi.path, true),
      fixedSegments: meta.openapi.path.split('/').filter((segment) => segment && !/^\{\w+\}$/.test(segment)).length,
      shadowedBy: [],
      morePrecise: [],
      meta,
      type: procedure._def.type,
      inputShape: procedure._def.inputs[0]?.shape,
      pathParameterNames: [...meta.openapi.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!),
    });
  }
  // Found once here, so a request whose path has no such twin tests no more patterns.
  const segmentsOf = (operation: Operation) => operation.path.split('/').filter(Boolean).length;
  for (const operation of all) {
    operation.shadowedBy = all.filter(
      (other) =>
        other.method === operation.method &&
        other.loosePattern !== null &&
        segmentsOf(other) === segmentsOf(operation) + 1 &&
        other.fixedSegments > operation.fixedSegments &&
        firstSegmentOf(other.path) === firstSegmentOf(operation.path),
    );
  }
  for (const operation of all) operation.morePrecise = all.filter((other) => namesMorePrecisely(other.path, operation.path));
  // Like trpc-to-openapi, the first matching operation in router order wins, so a
  // static path (`/api-keys/current`) is declared before its parameter twin.
  const byMethod = new Map<string, Operation[]>();
  for (const operation of all) byMethod.set(operation.method, [...(byMethod.get(operation.method) ?? []), operation]);
  // Candidates by method and first path segment, still in router order, so a request is
  // tested against a few patterns rather than all of its method's (every path starts with a
  // fixed segment; were one to start with a parameter, every request would scan them all).
  const bySegment = all.some((operation) => operation.path.startsWith('/{')) ? null : new Map<string, Operation[]>();
  for (const operation of bySegment ? all : []) {
    const key = `${operation.method} ${firstSegmentOf(operation.path)}`;
    bySegment!.set(key, [...(bySegment!.get(key) ?? []), operation]);
  }
  const match: OperationTable['match'] = (method, pathname) => {
    // Complete paths first, in router order; then paths missing their trailing parameter.
    const sameMethod = (bySegment ? bySegment.get(`${method} ${firstSegmentOf(pathname)}`) : byMethod.get(method)) ?? [];
    const operation = sameMethod.find((candidate) => candidate.pattern.test(pathname));
    if (operation) {
      // As OpenAPI matches paths, a fixed path wins over its parameter twin whatever the
      // method: PATCH /api-keys/current names /api-keys/current, which serves no PATCH
      // (405), not /api-keys/{id} with the id "current".
      const named = operation.morePrecise.length ? operation.morePrecise.filter((candidate) => candidate.pattern.test(pathname)) : [];
      if (named.length) {
        const precision = Math.max(...named.map((candidate) => candidate.fixedSegments));
        const own = named.find((candidate) => candidate.method === method && candidate.fixedSegments === precision);
        return own ? { operation: own, pathExists: true } : { pathExists: true };
      }
      const specific = operation.shadowedBy.find((candidate) => candidate.loosePattern!.test(pathname));
      return { operation: specific ?? operation, pathExists: true };
    }
    const loose = sameMethod.find((candidate) => candidate.loosePattern?.test(pathname));
    const samePath = all.filter((candidate) => candidate.pattern.test(pathname));
    // A path that is another method's complete path (DELETE /lists beside GET /lists) is that
    // path, answered 405, not this method's path missing its parameter (DELETE /lists/{id}).
    // The looser match still wins with a trailing slash (DELETE /lists/: an empty id) or on a
    // more specific path (GET /contacts/tags is /contacts/tags/{contactId} without its id,
    // not PUT /contacts/{contactId}).
    if (loose && (pathname.endsWith('/') || !samePath.some((candidate) => candidate.fixedSegments >= loose.fixedSegments))) {
      return { operation: loose, pathExists: true };
    }
    return { pathExists: samePath.length > 0 };
  };
  const methodsAt: OperationTable['methodsAt'] = (pathname) => {
    const named = all.filter((candidate) => candidate.pattern.test(pathname));
    const precision = Math.max(...named.map((candidate) => candidate.fixedSegments));
    return [...new Set(named.filter((candidate) => candidate.fixedSegments === precision).map((candidate) => candidate.method))];
  };
  const matched = new WeakMap<object, ReturnType<OperationTable['match']>>();
  return {
    all,
    match,
    methodsAt,
    matchRequest(request, pathname) {
      let result = matched.get(request);
      if (!result) matched.set(request, (result = match(request.method, pathname)));
      return result;
    },
  };
}
