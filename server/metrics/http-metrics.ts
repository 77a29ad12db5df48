// Request counts and latencies by operation. `routeOf` gives the route label: the pattern
// a request matched, never the raw URL (ids in paths would make one series per resource
// and grow without bound); the HTTP host supplies it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { httpRequestDuration, httpRequests } from './registry.ts';

export function observeRequest(request: FastifyRequest, reply: FastifyReply, routeOf: (request: FastifyRequest) => string): void {
  const labels = { method: request.method, route: routeOf(request), status: String(reply.statusCode) };
  httpRequests.inc(labels);
  httpRequestDuration.observe(labels, reply.elapsedTime / 1000);
}
