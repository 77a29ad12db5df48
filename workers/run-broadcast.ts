// Task `run-broadcast` (queued by POST /broadcasts, and again by each run as its resume
// point): sends a broadcast's template to its recipients. Safe to run again at any point.
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import { RUN_BROADCAST_TASK } from '../server/broadcasts/enqueue-broadcast-run.ts';
import { runBroadcast } from '../server/broadcasts/run-broadcast.ts';
import type { Services } from '../server/process-services.ts';

export { RUN_BROADCAST_TASK };

/** `accountId` is optional for runs queued before runs named their account. */
const Payload = z.object({ broadcastId: z.string().min(1), accountId: z.string().min(1).optional() });

export function runBroadcastTask(services: Services): Task {
  return async (payload) => {
    const { broadcastId, accountId } = Payload.parse(payload);
    await runBroadcast(services, broadcastId, accountId);
  };
}
