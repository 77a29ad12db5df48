// Task `dispatch-webhook-events`: turns committed events into webhook deliveries, making each
// one's first attempt (server/webhooks/dispatch-events.ts).
// Queued at commit by the trigger on `events` (one pending job at a time, by job key; while
// one runs, a follow-up: server/webhooks/sql/dispatch-follow-up.ts), and every minute by
// cron as a safety net for anything left undispatched.
import type { Task } from 'graphile-worker';
import type { Logger } from 'pino';
import { dispatchEvents } from '../server/webhooks/dispatch-events.ts';
import type { SenderDeps } from '../server/webhooks/send-deliveries.ts';
import { DISPATCH_WEBHOOK_EVENTS_TASK, followUpNow } from '../server/webhooks/sql/dispatch-follow-up.ts';

export { DISPATCH_WEBHOOK_EVENTS_TASK };

export const dispatchWebhookEventsCrontab = `* * * * * ${DISPATCH_WEBHOOK_EVENTS_TASK}`;

/**
 * The trigger's keyed `add_job` adds nothing when this job is being locked at that same
 * moment, and the committing event may then land just after this run's last claim. The
 * trigger runs at commit, so that event is visible within moments: one more look after a
 * short pause catches it (the per-minute cron catches anything slower).
 */
const SETTLE_MS = 50;

export function dispatchWebhookEventsTask(deps: SenderDeps, log: Logger): Task {
  const taskLog = log.child({ task: DISPATCH_WEBHOOK_EVENTS_TASK });
  return async () => {
    let dispatchedAny = false;
    for (;;) {
      const dispatched = await dispatchEvents(deps);
      if (dispatched > 0) taskLog.debug({ events: dispatched }, 'events dispatched');
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      const late = await dispatchEvents(deps);
      dispatchedAny ||= dispatched + late > 0;
      if (late === 0) break;
      taskLog.debug({ events: late }, 'events dispatched');
    }
    // A run that joined another's pass dispatched nothing: that pass's run does this.
    if (dispatchedAny) await followUpNow(deps.pool);
  };
}
