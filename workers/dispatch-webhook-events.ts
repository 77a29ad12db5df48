// Task `dispatch-webhook-events`: queues the webhook deliveries of committed events.
// Queued at commit by the trigger on `events` (one pending job at a time, by job key),
// and every minute by cron as a safety net for anything left undispatched.
import type { Task } from 'graphile-worker';
import type { Services } from '../server/process-services.ts';
import { dispatchEvents } from '../server/webhooks/dispatch-events.ts';

export const DISPATCH_WEBHOOK_EVENTS_TASK = 'dispatch-webhook-events';

export const dispatchWebhookEventsCrontab = `* * * * * ${DISPATCH_WEBHOOK_EVENTS_TASK}`;

/**
 * The trigger's keyed `add_job` adds nothing when this job is being locked at that same
 * moment, and the committing event may then land just after this run's last claim. The
 * trigger runs at commit, so that event is visible within moments: one more look after a
 * short pause catches it (the per-minute cron catches anything slower).
 */
const SETTLE_MS = 50;

export function dispatchWebhookEventsTask(services: Services): Task {
  const log = services.log.child({ task: DISPATCH_WEBHOOK_EVENTS_TASK });
  return async () => {
    for (;;) {
      const dispatched = await dispatchEvents(services.pool);
      if (dispatched.events > 0) log.debug(dispatched, 'events dispatched');
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      const late = await dispatchEvents(services.pool);
      if (late.events === 0) return;
      log.debug(late, 'events dispatched');
    }
  };
}
