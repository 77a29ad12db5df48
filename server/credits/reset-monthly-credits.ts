// The monthly credit reset: every account not yet reset this (UTC) month gets
// its allowance again — on top of the balance when it rolls over, in place of
// it otherwise. Running it twice in a month changes nothing the second time.
import type { EntityManager } from '@mikro-orm/postgresql';
import { inBatches } from '../db/in-batches.ts';
import { queryRows, runSql, sql } from '../db/sql.ts';
import { insertEventsSql, newEventRow } from '../events/sql/insert-events.ts';
import { creditsRecharged, startOfUtcMonth } from './credit-arithmetic.ts';

/** Accounts reset per transaction, so a large run neither holds many row locks nor one long transaction. */
const BATCH_SIZE = 500;

/** Resets every due account; returns how many were reset. */
export async function resetMonthlyCredits(em: EntityManager, now: Date): Promise<number> {
  const monthStart = startOfUtcMonth(now).toISOString();
  return inBatches(BATCH_SIZE, () =>
    em.fork().transactional(async (tx) => {
      // A row locked by a concurrent spend is waited for, not skipped: a skipped
      // account would miss the month. After the wait the row is re-checked, so
      // two overlapping runs never reset an account twice.
      const rows = await queryRows<{ id: string; previous: number; credits: number }>(
        tx,
        sql`with due as (
           select id, credits from accounts
            where last_reset_date < ${monthStart}::timestamptz
            order by id
            limit ${BATCH_SIZE}
              for update
         )
         update accounts a
            set monthly_credits_used = 0,
                credits = case when a.roll_over_to_next_month then a.credits + a.monthly_credits else a.monthly_credits end,
                last_reset_date = ${now.toISOString()}::timestamptz,
                updated_at = now()
           from due
          where a.id = due.id
         returning a.id, due.credits as previous, a.credits`,
      );
      // One statement for the batch's events, not one per account.
      const events = rows.map((row) => {
        return { ...newEventRow('Credits Recharged', creditsRecharged(Number(row.previous), Number(row.credits), 'monthly_reset')), accountId: row.id };
      });
      if (events.length > 0) await runSql(tx, insertEventsSql(events));
      return rows.length;
    }),
  );
}
