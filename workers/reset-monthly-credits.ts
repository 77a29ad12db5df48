// Cron task: on the first of every month (UTC), give every account its
// monthly credits again. The domain function is idempotent within a month, so
// a backfilled or repeated run is harmless.
import type { Task } from 'graphile-worker';
import { resetMonthlyCredits } from '../server/credits/reset-monthly-credits.ts';
import type { Services } from '../server/process-services.ts';

export const RESET_MONTHLY_CREDITS_TASK = 'reset-monthly-credits';

/** Midnight UTC on the 1st; `fill=3d` runs a tick missed while no worker was up in the following three days. */
export const resetMonthlyCreditsCrontab = `0 0 1 * * ${RESET_MONTHLY_CREDITS_TASK} ?fill=3d`;

export function resetMonthlyCreditsTask(services: Services): Task {
  return async (_payload, helpers) => {
    const reset = await resetMonthlyCredits(services.orm.em.fork(), new Date());
    helpers.logger.info(`monthly credits reset for ${reset} account(s)`);
  };
}
