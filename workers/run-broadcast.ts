// Task `run-broadcast` (queued by POST /broadcasts, and again by each run as its resume
// point): sends a broadcast's template to its recipients. Safe to run again at any point.
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import { RUN_BROADCAST_TASK } from '../server/broadcasts/enqueue-broadcast-run.ts';
import { runBroadcast } from '../server/broadcasts/run-broadcast.ts';
import type { Services } from '../server/process-services.ts';

export { RUN_BROADCAST_TASK };

const Payload = z.object({ broadcastId: z.string().min(1) });

export function runBroadcastTask(services: Services): Task {
  return async (payload) => {
    await runBroadcast(services, Payload.parse(payload).broadcastId);
  };
}
