// Cron task: every hour, delete the Idempotency-Key rows older than 24 hours (their
// responses are no longer replayed), in batches so no statement holds many locks.
import type { Task } from 'graphile-worker';
import { inBatches } from '../server/db/in-batches.ts';
import { deleteExpiredKeys } from '../server/idempotency/sql/idempotency-keys.ts';
import type { Services } from '../server/process-services.ts';

export const SWEEP_IDEMPOTENCY_KEYS_TASK = 'sweep-idempotency-keys';

/** No backfill: one run deletes everything that is due. */
export const sweepIdempotencyKeysCrontab = `17 * * * * ${SWEEP_IDEMPOTENCY_KEYS_TASK}`;

const BATCH = 1000;

/** Deletes every expired row, a batch at a time; returns how many. */
export function sweepIdempotencyKeys(services: Services): Promise<number> {
  return inBatches(BATCH, () => deleteExpiredKeys(services.pool, BATCH));
}

export function sweepIdempotencyKeysTask(services: Services): Task {
  return async (_payload, helpers) => {
    const deleted = await sweepIdempotencyKeys(services);
    if (deleted > 0) helpers.logger.info(`deleted ${deleted} expired idempotency key(s)`);
  };
}
