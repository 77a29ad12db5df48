// The dispatch job's follow-up: while a dispatch job runs, a commit writing events adds the
// job again due a moment later rather than at once (the dispatch trigger's function,
// Migration20261129120000), so later commits find it waiting and add nothing. The running
// job makes it due at once when its pass ends, so an event committed after that pass's last
// look is dispatched then, not at the worker's next poll.
import type pg from 'pg';
import { prepared, runSql, sql } from '../../db/sql.ts';
import { addJobSql } from '../../jobs.ts';

export const DISPATCH_WEBHOOK_EVENTS_TASK = 'dispatch-webhook-events';

/** The trigger's job key and attempts: `add_job` with the key makes a waiting job due now (its `replace` mode). */
const dispatchJob = addJobSql({ task: DISPATCH_WEBHOOK_EVENTS_TASK, jobKey: DISPATCH_WEBHOOK_EVENTS_TASK, maxAttempts: 5 });

/** Makes a waiting follow-up due now; adds nothing when there is none. */
export async function followUpNow(pool: pg.Pool): Promise<void> {
  await runSql(
    pool,
    prepared(
      'dispatch-follow-up-now',
      sql`select ${dispatchJob} where exists (
  select 1 from graphile_worker._private_jobs j
  where j.key = ${DISPATCH_WEBHOOK_EVENTS_TASK} and j.locked_at is null and j.run_at > now()
)`,
    ),
  );
}
