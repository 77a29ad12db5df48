// Jobs that wake the sender, added on the caller's transaction (they exist only if it
// commits). Graphile Worker's insert notification makes a due job start at once; a
// future one is found by its poll, so retries and round limits each get a job at
// their time. Job keys bucket them per second: a thousand retries due in the same
// second make one job.
import type pg from 'pg';
import { prepared, runSql, sql } from '../../db/sql.ts';
import { addJobSql } from '../../jobs.ts';
import { DUE_DELIVERY } from './claim-due-deliveries.ts';

export const SEND_WEBHOOK_DELIVERIES_TASK = 'send-webhook-deliveries';
const MAX_ATTEMPTS = 5;

/**
 * Deliveries are due now. No job key: `add_job` with a key silently adds nothing when the
 * keyed job is being locked by a worker at that very moment, and that job's claim may run
 * before this transaction commits, so the wake-up would be lost. A job per dispatch batch
 * is cheap; a run that finds nothing due ends at once.
 */
export async function wakeSenderNow(client: pg.PoolClient): Promise<void> {
  await runSql(client, prepared('wake-sender-now', sql`select ${addJobSql({ task: SEND_WEBHOOK_DELIVERIES_TASK, maxAttempts: MAX_ATTEMPTS })}`));
}

/** The second bucket (Unix seconds) whose job wakes the sender for a moment (epoch milliseconds). */
export function wakeUpBucket(momentMs: number): number {
  return Math.ceil(momentMs / 1000);
}

/** The job waking the sender at second `s` (the statement's column of Unix seconds). */
const wakeUpJob = addJobSql({
  task: SEND_WEBHOOK_DELIVERIES_TASK,
  runAt: sql`to_timestamp(s)`,
  jobKey: sql`${SEND_WEBHOOK_DELIVERIES_TASK} || '@' || s::text`,
  jobKeyMode: 'preserve_run_at',
  maxAttempts: MAX_ATTEMPTS,
});

/** Deliveries become due at these moments (epoch milliseconds); one job per second bucket. */
export async function wakeSenderAt(client: pg.PoolClient, momentsMs: number[]): Promise<void> {
  // Sorted: concurrent callers lock the job rows in one order and cannot deadlock.
  const seconds = [...new Set(momentsMs.map(wakeUpBucket))].sort((a, b) => a - b);
  if (seconds.length === 0) return;
  await runSql(client, prepared('wake-sender-at', sql`select ${wakeUpJob} from unnest(${seconds}::bigint[]) as s`));
}

/**
 * A wake-up at the moment (epoch milliseconds), only when some delivery is due now (what a
 * claim may take: one probe of the due index); returns whether it was added. For a
 * round about to claim: a round that finds nothing to send leaves no wake-up behind, so an
 * idle sender does not wake itself again and again.
 */
export async function wakeSenderAtIfDue(client: pg.PoolClient, momentMs: number): Promise<boolean> {
  const result = await runSql(
    client,
    prepared(
      'wake-sender-at-if-due',
      sql`select ${wakeUpJob} from (select ${wakeUpBucket(momentMs)}::bigint as s) moment
  where exists (select 1 from webhook_deliveries d where ${DUE_DELIVERY})`,
    ),
  );
  return result.rowCount === 1;
}
