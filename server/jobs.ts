// Background jobs are added with SQL on the caller's transaction, so a job
// exists only if the change that asked for it commits. addJobSql is the one call of
// `add_job` in the code. The other is the row trigger on `events` that queues webhook
// dispatch (Migration20261123224500): it stays a trigger because it must follow every event
// row, whoever inserts it, look up the account's subscriptions on the spot, and queue at
// most one dispatch per transaction (a transaction-local setting), which a writer could only
// do with a further round trip per change.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TaskList } from 'graphile-worker';
import { joinSql, runSql, sql, type Sql } from './db/sql.ts';
import { currentRequestId, runInRequest } from './request-context.ts';

export type JobOptions = {
  runAt?: Date;
  maxAttempts?: number;
  /** Replaces a pending job with the same key instead of adding a second one. */
  jobKey?: string;
  queueName?: string;
};

/** Payload field naming the HTTP request that queued the job, for following it through the logs. */
export const REQUEST_ID_FIELD = 'requestId';

/**
 * A job's payload as JSON text, naming the request being served (if any). Object payloads
 * only: a task given an array or a scalar gets exactly what it was sent.
 */
export function jobPayloadJson(payload: unknown): string {
  const requestId = currentRequestId();
  const isObject = typeof payload === 'object' && payload !== null && !Array.isArray(payload);
  if (requestId && (payload === undefined || payload === null || isObject)) payload = { ...(payload as object | null), [REQUEST_ID_FIELD]: requestId };
  return JSON.stringify(payload ?? {});
}

/**
 * A job to add. Each member is a value, or a SQL fragment computing it per row (a statement
 * adding a job for each row of a set).
 */
export type JobSpec = {
  task: string | Sql;
  /** Sent through jobPayloadJson (so it names the request being served). */
  payload?: unknown;
} & { [K in keyof JobOptions]?: JobOptions[K] | Sql } & { jobKeyMode?: 'replace' | 'preserve_run_at' | 'unsafe_dedupe' };

/**
 * The select-list call adding the job: run it as `select ${addJobSql(job)}`, or compose it
 * into the statement that writes the change it belongs to.
 */
export function addJobSql(job: JobSpec): Sql {
  const args = [sql`(${job.task})::text`, sql`${jobPayloadJson(job.payload)}::json`];
  if (job.queueName != null) args.push(sql`queue_name => (${job.queueName})::text`);
  if (job.runAt != null) args.push(sql`run_at => (${job.runAt instanceof Date ? job.runAt.toISOString() : job.runAt})::timestamptz`);
  if (job.maxAttempts != null) args.push(sql`max_attempts => (${job.maxAttempts})::int`);
  if (job.jobKey != null) args.push(sql`job_key => (${job.jobKey})::text`);
  if (job.jobKeyMode != null) args.push(sql`job_key_mode => ${job.jobKeyMode}::text`);
  return sql`graphile_worker.add_job(${joinSql(args)})`;
}

export async function enqueueJob(em: EntityManager, task: string, payload: unknown, options: JobOptions = {}): Promise<void> {
  await runSql(em, sql`select ${addJobSql({ ...options, task, payload })}`);
}

/**
 * Runs each job queued by a request in that request's context, so what the job logs and
 * the events it raises (and so their webhook deliveries) carry the request's id too.
 */
export function continuingRequests(taskList: TaskList): TaskList {
  const wrapped: TaskList = {};
  for (const [name, task] of Object.entries(taskList)) {
    if (!task) continue;
    wrapped[name] = (payload, helpers) => {
      const requestId = (payload as Record<string, unknown> | null)?.[REQUEST_ID_FIELD];
      return typeof requestId === 'string' ? runInRequest({ requestId }, () => task(payload, helpers)) : task(payload, helpers);
    };
  }
  return wrapped;
}
