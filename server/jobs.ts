// Background jobs are added with SQL on the caller's transaction, so a job
// exists only if the change that asked for it commits.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { TaskList } from 'graphile-worker';
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

/** The SQL call adding a job by task name, JSON payload (jobPayloadJson) and job key, for statements that write the change too. */
export function addJobSql(task: string, payload: string, jobKey: string): string {
  return `graphile_worker.add_job(${task}, ${payload}::json, job_key => ${jobKey})`;
}

export async function enqueueJob(em: EntityManager, task: string, payload: unknown, options: JobOptions = {}): Promise<void> {
  await em.execute(
    `select graphile_worker.add_job(?, ?::json, queue_name => ?, run_at => ?::timestamptz, max_attempts => ?, job_key => ?)`,
    [
      task,
      jobPayloadJson(payload),
      options.queueName ?? null,
      options.runAt?.toISOString() ?? null,
      options.maxAttempts ?? null,
      options.jobKey ?? null,
    ],
  );
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
