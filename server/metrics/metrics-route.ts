// GET /metrics at the root (not under /v1): the process registry in the Prometheus text
// format, for a scraper holding METRICS_TOKEN. Unset, the route does not exist (404).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.ts';
import { registry } from './registry.ts';
import { readScrapeFigures, type ScrapeSources } from './scrape-figures.ts';

export const METRICS_PATH = '/metrics';

/** Compared as digests, so neither the token's length nor its bytes leak through timing. */
function sameToken(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

export function registerMetrics(app: FastifyInstance, token: string | undefined, sources: ScrapeSources): void {
  if (!token) return;
  app.get(METRICS_PATH, async (request, reply) => {
    const match = /^Bearer (.+)$/.exec(request.headers.authorization ?? '');
    if (!match || !sameToken(match[1], token)) {
      throw new ApiError(401, 'A valid metrics token is required', { reason: 'invalid_token', headers: { 'WWW-Authenticate': 'Bearer' } });
    }
    await readScrapeFigures(sources);
    return reply.header('cache-control', 'no-store').type(registry.contentType).send(await registry.metrics());
  });
}
