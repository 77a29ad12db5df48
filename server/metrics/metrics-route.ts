// GET /metrics at the root (not under /v1): the process registry in the Prometheus text
// format, for a scraper holding METRICS_TOKEN. Unset, the route does not exist (404).
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.ts';
import { sameSecretText } from '../secrets.ts';
import { registry } from './registry.ts';
import { readScrapeFigures, type ScrapeSources } from './scrape-figures.ts';

export const METRICS_PATH = '/metrics';

export function registerMetrics(app: FastifyInstance, token: string | undefined, sources: ScrapeSources): void {
  if (!token) return;
  app.get(METRICS_PATH, async (request, reply) => {
    const match = /^Bearer (.+)$/.exec(request.headers.authorization ?? '');
    if (!match || !sameSecretText(match[1], token)) {
      throw new ApiError(401, 'A valid metrics token is required', { reason: 'invalid_token', headers: { 'WWW-Authenticate': 'Bearer' } });
    }
    await readScrapeFigures(sources);
    return reply.header('cache-control', 'no-store').type(registry.contentType).send(await registry.metrics());
  });
}
