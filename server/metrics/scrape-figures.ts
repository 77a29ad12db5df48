// Figures read at scrape time rather than counted as they happen: they belong to the
// deployment, not to one process. The job queue and the webhook delivery log are in the
// database, so any API process reports them, including the work of ROLE=worker processes
// (which have no HTTP port): the webhook figures from the attempts' tallies, a few rows per
// 10 seconds however many attempts were made (server/webhooks/attempt-tallies.ts). Pool and
// socket figures are this process's own.
import type pg from 'pg';
import { Gauge } from 'prom-client';
import { queryRows, sql } from '../db/sql.ts';
import { durationQuantile } from '../webhooks/attempt-tallies.ts';
import { recentTally } from '../webhooks/sql/attempt-tallies.ts';
import { registry } from './registry.ts';

/** Webhook attempts are counted over this trailing window (in the tallies' 10-second slices that overlap it). */
export const WEBHOOK_WINDOW_MINUTES = 5;

export type ScrapeSources = {
  pool: pg.Pool;
  /** Chat-widget sockets connected to this process. */
  connectedSockets(): number;
};

const jobQueueDepth = new Gauge({
  name: 'job_queue_depth',
  help: 'Jobs in the queue (all processes), by task and state: due (waiting for a worker), scheduled (run_at in the future), running (locked by a worker). Permanently failed jobs are not counted.',
  labelNames: ['task', 'state'] as const,
  registers: [registry],
});
const jobQueueOldestAge = new Gauge({
  name: 'job_queue_oldest_due_age_seconds',
  help: 'How long the longest-waiting due job, not yet taken by a worker, has been due (0 when none waits).',
  registers: [registry],
});
const webhookAttempts = new Gauge({
  name: 'webhook_attempts_recent',
  help: `Webhook delivery attempts made by any worker in the last ${WEBHOOK_WINDOW_MINUTES} minutes, by outcome (delivered: a 2xx answer; failed: anything else).`,
  labelNames: ['outcome'] as const,
  registers: [registry],
});
const webhookLatency = new Gauge({
  name: 'webhook_attempt_duration_seconds_recent',
  help: `Duration of the webhook delivery attempts of the last ${WEBHOOK_WINDOW_MINUTES} minutes, at the given quantile (estimated within duration buckets, as a histogram's).`,
  labelNames: ['quantile'] as const,
  registers: [registry],
});
const poolConnections = new Gauge({
  name: 'db_pool_connections',
  help: "This process's database pool: connections by state (total, idle), and callers waiting for one (waiting).",
  labelNames: ['state'] as const,
  registers: [registry],
});
const widgetSockets = new Gauge({
  name: 'widget_sockets_connected',
  help: 'Chat-widget sockets connected to this process.',
  registers: [registry],
});

const JOBS_SQL = sql`
select t.identifier as task,
       case when j.locked_at is not null then 'running' when j.run_at <= now() then 'due' else 'scheduled' end as state,
       count(*)::int as count,
       coalesce(extract(epoch from now() - min(j.run_at) filter (where j.locked_at is null and j.run_at <= now())), 0)::float8 as oldest
from graphile_worker._private_jobs j
join graphile_worker._private_tasks t on t.id = j.task_id
where j.attempts < j.max_attempts
group by 1, 2`;

const QUANTILES = [0.5, 0.95, 0.99];

/** Reads the figures into the registry's gauges; called just before the registry is serialized. */
export async function readScrapeFigures(sources: ScrapeSources): Promise<void> {
  const { pool } = sources;
  poolConnections.set({ state: 'total' }, pool.totalCount);
  poolConnections.set({ state: 'idle' }, pool.idleCount);
  poolConnections.set({ state: 'waiting' }, pool.waitingCount);
  widgetSockets.set(sources.connectedSockets());

  const [jobs, webhooks] = await Promise.all([
    queryRows<{ task: string; state: string; count: number; oldest: number }>(pool, JOBS_SQL),
    recentTally(pool, WEBHOOK_WINDOW_MINUTES),
  ]);
  // Reset first: a task whose jobs are all done has no series rather than a stale one.
  jobQueueDepth.reset();
  let oldest = 0;
  for (const row of jobs) {
    jobQueueDepth.set({ task: row.task, state: row.state }, row.count);
    oldest = Math.max(oldest, row.oldest);
  }
  jobQueueOldestAge.set(oldest);

  webhookAttempts.set({ outcome: 'delivered' }, webhooks.delivered);
  webhookAttempts.set({ outcome: 'failed' }, webhooks.failed);
  webhookLatency.reset();
  for (const quantile of QUANTILES) {
    const ms = durationQuantile(webhooks.durations, quantile);
    if (ms !== null) webhookLatency.set({ quantile: String(quantile) }, ms / 1000);
  }
}
