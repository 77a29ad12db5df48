// Request counts and latencies by operation. The route label is the pattern a request
// matched (`/v1/contacts/{contactId}`, `/trpc/contacts.get`), never the raw URL: ids in
// paths would make one series per resource and grow without bound.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OperationTable } from '../http/operations.ts';
import { httpRequestDuration, httpRequests } from './registry.ts';

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

export function observeRequest(request: FastifyRequest, reply: FastifyReply, operations: OperationTable): void {
  const labels = { method: request.method, route: routeLabel(request, operations), status: String(reply.statusCode) };
  httpRequests.inc(labels);
  httpRequestDuration.observe(labels, reply.elapsedTime / 1000);
}
