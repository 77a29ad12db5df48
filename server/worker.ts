// The Graphile Worker runner: same database as the API, its own schema,
// migrations and pool, started in-process (ROLE=all) or alone (ROLE=worker).
import { EventEmitter } from 'node:events';
import { Logger as WorkerLogger, parseCrontab, run, type Runner, type RunnerOptions, type TaskList, type WorkerEvents } from 'graphile-worker';
import pg from 'pg';
import { outsideFailure } from './errors.ts';
import { continuingRequests } from './jobs.ts';
import type { Services } from './process-services.ts';
import { createWorkerLiveness } from './worker-liveness.ts';

export type WorkerDefinition = {
  taskList: TaskList;
  /** Graphile Worker crontab lines. */
  crontab: string;
  /** Releases what the tasks hold (outbound connections) once the runner has stopped. */
  close?: () => Promise<void>;
};

/**
 * Graphile Worker logs the whole job with each task's outcome; a payload can name a person
 * (a visitor, a phone number), so the log keeps what identifies the job and not what it carries.
 */
export function withoutJobPayload(meta: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const job = meta?.job as Record<string, unknown> | undefined;
  if (!job || typeof job !== 'object') return meta;
  const { id, task_identifier, attempts, max_attempts, key, run_at } = job;
  return { ...meta, job: { id, task_identifier, attempts, max_attempts, key, run_at } };
}

const CONCURRENCY = 4;

/**
 * Jobs taken and settled in batches rather than a database round trip (and transaction)
 * each. The pool fetches and locks up to CONCURRENCY + 1 due jobs at once and hands them to
 * its workers, so a burst of `jobs:insert` notifications costs one fetch, not one per idle
 * worker per notification; completions and failures that come within a few milliseconds of
 * each other are written in one statement. A crash between a task's end and that statement
 * runs the job again (as a crash during the task always could), once liveness unlocks it.
 */
/** A failed runner is started again after 1 s, then 2, 4, ... at most 30 s apart. */
const RESTART_FIRST_DELAY_MS = 1000;
const RESTART_MAX_DELAY_MS = 30_000;

const JOB_BATCHING = {
  localQueue: { size: CONCURRENCY + 1 },
  completeJobBatchDelay: 5,
  failJobBatchDelay: 5,
};

/**
 * The worker gets its own small pool: the ORM's pool parses timestamps as text,
 * which Graphile Worker's cron bookkeeping does not expect.
 */
export async function startWorker(services: Services, definition: WorkerDefinition): Promise<{ runner: Runner; running(): boolean; stop(): Promise<void> }> {
  const pool = new pg.Pool({ connectionString: services.databaseUrl, max: 6 });
  const log = services.log.child({ component: 'worker' });
  pool.on('error', (error) => log.error({ err: error }, 'idle worker database connection failed'));
  pool.on('connect', (client) => client.on('error', (error) => log.error({ err: error }, 'worker database connection failed')));
  // pool.end() resolves before its connections have closed; the database stops right after
  // the worker, and would otherwise end those connections itself, each an error.
  let connections = 0;
  const allClosed: (() => void)[] = [];
  pool.on('connect', () => (connections += 1));
  pool.on('remove', () => {
    connections -= 1;
    if (connections === 0) for (const resolve of allClosed.splice(0)) resolve();
  });
  const logger = new WorkerLogger((scope) => (level, message, meta) => {
    // A job that failed because an outside service did (the provider unreachable) is retried
    // with backoff: a warning without the stack Graphile Worker's message carries.
    const outside = level === 'error' && meta?.failure ? outsideFailure(meta.error) : undefined;
    if (outside !== undefined) {
      const job = meta?.job as { id?: string; task_identifier?: string; attempts?: number; max_attempts?: number } | undefined;
      log.warn(
        { ...scope, jobId: job?.id, task: job?.task_identifier, attempt: job?.attempts, maxAttempts: job?.max_attempts, failure: outside },
        'job failed: an outside service failed',
      );
      return;
    }
    const method = level === 'warning' ? 'warn' : level === 'error' ? 'error' : level === 'debug' ? 'debug' : 'info';
    log[method]({ ...scope, ...withoutJobPayload(meta) }, message);
  });
  // Jobs of worker processes that died (SIGKILL, a lost machine) are handed on in seconds.
  const liveness = createWorkerLiveness({ databaseUrl: services.databaseUrl, pool, log });
  const events: WorkerEvents = new EventEmitter();
  // Graphile Worker locks the jobs it fetches in the name of the pool (its `locked_by`), not
  // of the worker that runs them: the pool's id is the one that must stay visibly alive.
  events.on('pool:create', ({ workerPool }) => liveness.add(workerPool.id));
  events.on('pool:release', ({ workerPool }) => liveness.remove(workerPool.id));
  events.on('worker:create', ({ worker }) => liveness.add(worker.workerId));
  events.on('worker:stop', ({ worker }) => liveness.remove(worker.workerId));
  const options: RunnerOptions = {
    events,
    pgPool: pool,
    taskList: continuingRequests(definition.taskList),
    // Parsed here so an empty crontab never falls back to reading a crontab file.
    parsedCronItems: parseCrontab(definition.crontab),
    concurrency: CONCURRENCY,
    pollInterval: 1000,
    noHandleSignals: true,
    logger,
    preset: { worker: JOB_BATCHING },
  };
  let runner: Runner;
  try {
    await liveness.start();
    runner = await run(options);
  } catch (error) {
    await liveness.stop();
    await pool.end();
    throw error;
  }
  // The runner's promise settles when it stops, whether asked to or because it failed (its
  // database connection lost, say). A failed runner is started again, sooner the first times,
  // so that a process that lives on never goes on without its worker; until then /ready says so.
  let running = true;
  let stopping = false;
  let restartTimer: NodeJS.Timeout | null = null;
  let failures = 0;
  const watch = (current: Runner) => {
    const startedAt = Date.now();
    current.promise.then(
      () => (running = false),
      (error: unknown) => {
        running = false;
        if (stopping) return;
        // A runner that ran a while before failing starts the backoff over.
        failures = Date.now() - startedAt > RESTART_MAX_DELAY_MS * 2 ? 1 : failures + 1;
        const delayMs = Math.min(RESTART_MAX_DELAY_MS, RESTART_FIRST_DELAY_MS * 2 ** (failures - 1));
        log.error({ err: error, restartInMs: delayMs }, 'worker stopped; starting it again');
        restartTimer = setTimeout(restart, delayMs);
      },
    );
  };
  const restart = () => {
    restartTimer = null;
    if (stopping) return;
    run(options).then(
      (started) => {
        if (stopping) return void started.stop().catch(() => undefined);
        runner = started;
        running = true;
        log.info({ failures }, 'worker started again');
        watch(started);
      },
      (error: unknown) => {
        failures += 1;
        const delayMs = Math.min(RESTART_MAX_DELAY_MS, RESTART_FIRST_DELAY_MS * 2 ** (failures - 1));
        log.error({ err: error, restartInMs: delayMs }, 'worker could not start again; trying later');
        if (!stopping) restartTimer = setTimeout(restart, delayMs);
      },
    );
  };
  watch(runner);
  return {
    get runner() {
      return runner;
    },
    running: () => running,
    async stop() {
      stopping = true;
      if (restartTimer) clearTimeout(restartTimer);
      if (running) await runner.stop();
      await liveness.stop();
      await definition.close?.();
      const closed = connections === 0 ? Promise.resolve() : new Promise<void>((resolve) => allClosed.push(resolve));
      await pool.end();
      await closed;
    },
  };
}
