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
  meta: ProcedureMeta;
  type: 'query' | 'mutation' | 'subscription';
  /** The fields of the procedure's object input, to read query strings by. */
  inputShape: Record<string, unknown> | undefined;
};

export type OperationTable = {
  all: Operation[];
  byProcedure: Map<string, Operation>;
  /** The operation for a request, or whether the path exists under another method. */
  match(method: string, pathname: string): { operation?: Operation; pathExists: boolean };
};

function toPattern(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) => {
      const parameter = /^\{(\w+)\}$/.exec(segment);
      return parameter ? `(?<${parameter[1]}>[^/]+)` : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return new RegExp(`^${source}/?$`, 'i');
}

/** Path parameters of a matched path, percent-decoded (a malformed escape is kept as sent). */
export function pathParameters(operation: Operation, pathname: string): Record<string, string> {
  const groups = operation.pattern.exec(pathname)?.groups ?? {};
  const decoded: Record<string, string> = {};
  for (const [name, value] of Object.entries(groups)) {
    try {
      decoded[name] = decodeURIComponent(value);
    } catch {
      decoded[name] = value;
    }
  }
  return decoded;
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
      pattern: toPattern(meta.openapi.path),
      meta,
      type: procedure._def.type,
      inputShape: procedure._def.inputs[0]?.shape,
    });
  }
  // Like trpc-to-openapi, the first matching operation in router order wins, so a
  // static path (`/api-keys/current`) is declared before its parameter twin.
  const byProcedure = new Map(all.map((operation) => [operation.procedurePath, operation]));
  return {
    all,
    byProcedure,
    match(method, pathname) {
      let pathExists = false;
      for (const operation of all) {
        if (!operation.pattern.test(pathname)) continue;
        if (operation.method === method) return { operation, pathExists: true };
        pathExists = true;
      }
      return { pathExists };
    },
  };
}
