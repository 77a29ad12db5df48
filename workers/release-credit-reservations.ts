// Cron task: every five minutes, give back the credits of reservations whose process died
// between reserving them and settling or releasing them (server/credits/spend-credits.ts).
import type { Task } from 'graphile-worker';
import { releaseStaleReservations } from '../server/credits/spend-credits.ts';
import type { Services } from '../server/process-services.ts';

export const RELEASE_CREDIT_RESERVATIONS_TASK = 'release-credit-reservations';

/** No backfill: one run releases everything that is due. */
export const releaseCreditReservationsCrontab = `*/5 * * * * ${RELEASE_CREDIT_RESERVATIONS_TASK}`;

export function releaseCreditReservationsTask(services: Services): Task {
  return async (_payload, helpers) => {
    const released = await releaseStaleReservations(services.pool);
    if (released > 0) helpers.logger.warn(`gave back the credits of ${released} reservation(s) left unsettled`);
  };
}
