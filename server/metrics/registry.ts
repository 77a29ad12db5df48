// The process's one metrics registry. Figures counted as they happen (requests,
// rate-limit refusals) live here for the process's lifetime; figures that belong to
// the whole deployment (job queue, webhook deliveries) are read from the database at
// scrape time (scrape-figures.ts), so any API process reports them.
import { readdir } from 'node:fs/promises';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

/**
 * Node's default figures whose collection walks every handle or open file of the process on
 * the event loop (process._getActiveHandles(), process.getActiveResourcesInfo(), a synchronous
 * readdir of /proc/self/fd): with 10,000 chat-widget sockets one scrape held it about 100 ms,
 * so every request waiting then waited that long. The sockets are counted by
 * widget_sockets_connected; open files are still reported, read off the event loop.
 */
const WALKING_DEFAULT_METRICS = [
  'nodejs_active_handles',
  'nodejs_active_handles_total',
  'nodejs_active_resources',
  'nodejs_active_resources_total',
  'process_open_fds',
];
for (const name of WALKING_DEFAULT_METRICS) registry.removeSingleMetric(name);

if (process.platform === 'linux') {
  new Gauge({
    name: 'process_open_fds',
    help: 'Number of open file descriptors.',
    registers: [registry],
    async collect() {
      try {
        // Less the descriptor the listing itself holds open.
        this.set((await readdir('/proc/self/fd')).length - 1);
      } catch {
        // Not readable here: the figure keeps its last value.
      }
    },
  });
}

export const httpRequests = new Counter({
  name: 'http_requests_total',
  help: 'HTTP requests answered, by method, route pattern and status.',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});

export const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time from request received to response sent, by method, route pattern and status.',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

export const rateLimitRefusals = new Counter({
  name: 'rate_limit_refusals_total',
  help: 'Requests refused with 429 by a rate limiter (api_key: a credential or account budget; widget_visitor: a chat-widget visitor).',
  labelNames: ['limiter'] as const,
  registers: [registry],
});

export const rateWindowSweeps = new Counter({
  name: 'rate_window_sweeps_total',
  help: 'Deletions of ended rate-limit windows this process ran, by outcome (done, failed: the rows wait for the next one).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** Counts one 429 from a rate limiter. */
export function countRateLimitRefusal(limiter: 'api_key' | 'widget_visitor'): void {
  rateLimitRefusals.inc({ limiter });
}

/** Counts one sweep of ended rate-limit windows. */
export function countRateWindowSweep(outcome: 'done' | 'failed'): void {
  rateWindowSweeps.inc({ outcome });
}
