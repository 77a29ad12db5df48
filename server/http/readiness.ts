// GET /v1/ready: whether this process can do its work now, for load balancers and
// orchestrators. /v1/health only says the process is up (the spec fixes its answer).
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import type { PlainRoute } from './openapi.ts';
import { REST_PREFIX } from './rest.ts';

/** What a probe is told; the details (the driver's error) go to the log, not to an unauthenticated caller. */
export const NOT_READY_REASONS = ['database unavailable', 'worker not running'] as const;

export type Readiness = { ready: true } | { ready: false; reason: (typeof NOT_READY_REASONS)[number] };

export type ReadinessSources = {
  databaseUrl: string;
  /** Null for ROLE=api, which runs no worker; otherwise whether the worker still runs. */
  workerRunning: (() => boolean) | null;
};

/** A probe must answer promptly even when the database does not. */
const DATABASE_TIMEOUT_MS = 2000;

/** Whether this process can work now; `cause` is the failure behind a database refusal, for the log. */
export async function checkReadiness(sources: ReadinessSources): Promise<Readiness & { cause?: unknown }> {
  // Its own connection, not the ORM pool: the question is whether the database accepts a new
  // session now, and a probe must not wait behind busy requests for a pooled one.
  const client = new pg.Client({
    connectionString: sources.databaseUrl,
    connectionTimeoutMillis: DATABASE_TIMEOUT_MS,
    query_timeout: DATABASE_TIMEOUT_MS,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
  } catch (error) {
    return { ready: false, reason: 'database unavailable', cause: error };
  } finally {
    await client.end().catch(() => {});
  }
  if (sources.workerRunning && !sources.workerRunning()) return { ready: false, reason: 'worker not running' };
  return { ready: true };
}

const readinessSchema = {
  ready: {
    type: 'object',
    required: ['ready'],
    properties: { ready: { type: 'boolean', const: true } },
  },
  notReady: {
    type: 'object',
    required: ['ready', 'reason'],
    properties: { ready: { type: 'boolean', const: false }, reason: { type: 'string', enum: [...NOT_READY_REASONS] } },
  },
};

/** Listed in the OpenAPI document as a plain route, with its 200 and 503 bodies. */
export const READY_ROUTE = {
  method: 'get' as const,
  path: '/ready',
  summary: 'Readiness: the database answers and (ROLE=worker or all) the job worker runs. No credentials.',
  contentType: 'application/json',
  responses: {
    '200': { description: 'Ready', content: { 'application/json': { schema: readinessSchema.ready } } },
    '503': { description: 'Not ready, with the reason', content: { 'application/json': { schema: readinessSchema.notReady } } },
  },
} satisfies Omit<PlainRoute, 'responses'> & { responses: Record<string, unknown> };

export function registerReadiness(app: FastifyInstance, sources: ReadinessSources): void {
  app.get(`${REST_PREFIX}${READY_ROUTE.path}`, async (request, reply) => {
    const { cause, ...readiness } = await checkReadiness(sources);
    if (!readiness.ready) request.log.warn({ err: cause, reason: readiness.reason }, 'not ready');
    return reply
      .code(readiness.ready ? 200 : 503)
      .header('cache-control', 'no-store')
      .type('application/json; charset=utf-8')
      .send(JSON.stringify(readiness));
  });
}
