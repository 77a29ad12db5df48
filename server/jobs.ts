// Background jobs are added with SQL on the caller's transaction, so a job
// exists only if the change that asked for it commits.
import type { EntityManager } from '@mikro-orm/postgresql';

export type JobOptions = {
  runAt?: Date;
  maxAttempts?: number;
  /** Replaces a pending job with the same key instead of adding a second one. */
  jobKey?: string;
  queueName?: string;
};

export async function enqueueJob(em: EntityManager, task: string, payload: unknown, options: JobOptions = {}): Promise<void> {
  await em.execute(
    `select graphile_worker.add_job(?, ?::json, queue_name => ?, run_at => ?::timestamptz, max_attempts => ?, job_key => ?)`,
    [
      task,
      JSON.stringify(payload ?? {}),
      options.queueName ?? null,
      options.runAt?.toISOString() ?? null,
      options.maxAttempts ?? null,
      options.jobKey ?? null,
    ],
  );
}
