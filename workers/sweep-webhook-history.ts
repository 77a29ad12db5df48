// Cron task: every hour, delete the webhook history older than WEBHOOK_HISTORY_DAYS (events,
// their deliveries and attempts), in batches so no statement holds many locks, and the
// attempts' tallies older than an hour (the metrics read their last minutes).
import type { Task } from 'graphile-worker';
import { inBatches } from '../server/db/in-batches.ts';
import type { Services } from '../server/process-services.ts';
import { deleteOldTallies } from '../server/webhooks/sql/attempt-tallies.ts';
import { deleteOldEvents } from '../server/webhooks/sql/delete-old-events.ts';

export const SWEEP_WEBHOOK_HISTORY_TASK = 'sweep-webhook-history';

/** No backfill: one run deletes everything that is due. */
export const sweepWebhookHistoryCrontab = `41 * * * * ${SWEEP_WEBHOOK_HISTORY_TASK}`;

const BATCH = 1000;
/** Tallies kept: the metrics' window is minutes long. */
const TALLIES_KEPT_HOURS = 1;

/** Deletes every event past the history kept, a batch at a time; returns how many. */
export function sweepWebhookHistory(services: Services, batch = BATCH): Promise<number> {
  return inBatches(batch, () => deleteOldEvents(services.pool, services.config.WEBHOOK_HISTORY_DAYS, batch));
}

export function sweepWebhookHistoryTask(services: Services): Task {
  return async (_payload, helpers) => {
    await deleteOldTallies(services.pool, TALLIES_KEPT_HOURS);
    const deleted = await sweepWebhookHistory(services);
    if (deleted > 0) helpers.logger.info(`deleted ${deleted} event(s) older than ${services.config.WEBHOOK_HISTORY_DAYS} days with their webhook deliveries`);
  };
}
