// The route label of a request: the pattern it matched (`/v1/contacts/{contactId}`,
// `/trpc/contacts.get`), never the raw URL, so ids in paths do not make one series per
// resource. The HTTP layer knows its routes; the metrics module takes this as a function.
import type { FastifyRequest } from 'fastify';
import type { OperationTable } from './operations.ts';

const REST_PREFIX = '/v1';
const TRPC_PREFIX = '/trpc/';
const PROCEDURE_PATH = /^[A-Za-z0-9_.]+$/;
const procedureNames = new WeakMap<OperationTable, Set<string>>();

function knownProcedures(operations: OperationTable): Set<string> {
  let names = procedureNames.get(operations);
  if (!names) procedureNames.set(operations, (names = new Set(operations.all.map((operation) => operation.procedurePath))));
  return names;
}

export function routeLabel(request: FastifyRequest, operations: OperationTable): string {
  const pattern = request.routeOptions.url;
  if (pattern === undefined) return 'unmatched';
  const pathname = request.url.split('?')[0];
  if (pattern === `${REST_PREFIX}/*`) {
    const operation = operations.matchRequest(request, pathname.slice(REST_PREFIX.length)).operation;
    return operation ? `${REST_PREFIX}${operation.path}` : 'unmatched';
  }
  if (pathname.startsWith(TRPC_PREFIX)) {
    // Known procedure names only (a batch joins several with commas).
    const procedure = pathname.slice(TRPC_PREFIX.length);
    return PROCEDURE_PATH.test(procedure) && knownProcedures(operations).has(procedure) ? `${TRPC_PREFIX}${procedure}` : `${TRPC_PREFIX}*`;
  }
  return pattern;
}
