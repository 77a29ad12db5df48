// The one job that runs a broadcast, keyed by the broadcast id so a broadcast has at most
// one waiting run. Re-adding the key while a run holds it queues a fresh run for later
// (Graphile Worker never re-runs the held one): that later run is the resume point when
// the process running the broadcast dies, since its own job stays locked for hours.
import type { EntityManager } from '@mikro-orm/postgresql';
import { enqueueJob } from '../jobs.ts';

export const RUN_BROADCAST_TASK = 'run-broadcast';

/** A run cut short by an error is retried this many times (each resumes where it stopped). */
const RUN_ATTEMPTS = 10;

export async function enqueueBroadcastRun(em: EntityManager, accountId: string, broadcastId: string, runAt?: Date): Promise<void> {
  await enqueueJob(em, RUN_BROADCAST_TASK, { accountId, broadcastId }, { jobKey: broadcastId, maxAttempts: RUN_ATTEMPTS, runAt });
}
