// Task `dispatch-webhook-events`: queues the webhook deliveries of committed events.
// Queued at commit by the trigger on `events` (one pending job at a time, by job key),
// and every minute by cron as a safety net for anything left undispatched.
import type { Task } from 'graphile-worker';
import type { Services } from '../server/services.ts';
import { dispatchEvents } from '../server/webhooks/dispatch-events.ts';

export const DISPATCH_WEBHOOK_EVENTS_TASK = 'dispatch-webhook-events';

export const dispatchWebhookEventsCrontab = `* * * * * ${DISPATCH_WEBHOOK_EVENTS_TASK}`;

export function dispatchWebhookEventsTask(services: Services): Task {
  const log = services.log.child({ task: DISPATCH_WEBHOOK_EVENTS_TASK });
  return async () => {
    const dispatched = await dispatchEvents(services.pool);
    if (dispatched.events > 0) log.debug(dispatched, 'events dispatched');
  };
}
