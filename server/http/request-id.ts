// Request ids: every HTTP response carries `X-Request-Id`, the caller's own when it is
// well formed (so a client or proxy can follow its request through our logs), otherwise
// one generated here. fastify's `request.id` is that id, and the request context is
// entered with it, so log lines, queued jobs and webhook deliveries carry it too.
import type { IncomingMessage } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { currentRequestId, runInRequest } from '../request-context.ts';

export const REQUEST_ID_HEADER = 'X-Request-Id';
/** Short enough for a log field and a header, and no character that needs escaping anywhere. */
const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/;

export function newRequestId(): string {
  return `req_${randomUUID()}`;
}

/** fastify's `genReqId`: the caller's id when well formed, a new one otherwise. */
export function requestIdFor(raw: IncomingMessage): string {
  const given = raw.headers['x-request-id'];
  return typeof given === 'string' && WELL_FORMED.test(given) ? given : newRequestId();
}

/** Sets the header on a reply that no hook saw (fastify's routing failures). */
export function setRequestIdHeader(request: FastifyRequest, reply: FastifyReply): void {
  reply.header(REQUEST_ID_HEADER, request.id);
}

/**
 * Registered before every other hook: the header goes on every answer, hooks' refusals
 * included, and the rest of the request runs in its context. The context is entered
 * again before the handler when a body read from the socket resumed the request
 * outside it.
 */
export function registerRequestIds(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    runInRequest({ requestId: request.id }, done);
  });
  app.addHook('preHandler', (request, _reply, done) => {
    if (currentRequestId() === request.id) return done();
    runInRequest({ requestId: request.id }, done);
  });
}
