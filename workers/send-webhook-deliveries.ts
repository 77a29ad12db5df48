// Task `send-webhook-deliveries`: makes the due delivery attempts. Woken by dispatch, by a
// job at each retry's time and at each round's limit (for a worker cut off mid-round), and
// every minute by cron.
// The process's one outbound client and sender state (its pass, wake-ups added) are shared by
// every run of the task.
import type { Task } from 'graphile-worker';
import type { OutboundClient } from '../server/outbound/http-client.ts';
import type { Services } from '../server/process-services.ts';
import { sendDueDeliveries, senderState } from '../server/webhooks/send-deliveries.ts';
import { SEND_WEBHOOK_DELIVERIES_TASK } from '../server/webhooks/sql/wake-sender.ts';

export { SEND_WEBHOOK_DELIVERIES_TASK };

export const sendWebhookDeliveriesCrontab = `* * * * * ${SEND_WEBHOOK_DELIVERIES_TASK}`;

export function sendWebhookDeliveriesTask(services: Services, client: OutboundClient): Task {
  const deps = {
    pool: services.pool,
    state: senderState(),
    client,
    secrets: services.secrets,
    log: services.log.child({ task: SEND_WEBHOOK_DELIVERIES_TASK }),
    timeoutMs: services.config.WEBHOOK_TIMEOUT_MS,
    retrySchedule: services.config.WEBHOOK_RETRY_SCHEDULE,
    disableAfter: services.config.WEBHOOK_DISABLE_AFTER,
  };
  return async () => {
    await sendDueDeliveries(deps);
  };
}
