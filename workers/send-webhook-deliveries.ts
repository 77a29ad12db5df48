// Task `send-webhook-deliveries`: makes the due delivery attempts (retries, and deliveries a
// dispatch round queued without attempting them). Woken by dispatch, by a job at each retry's
// time and at each round's limit (for a worker cut off mid-round), and every minute by cron.
// The process's one outbound client and sender state (its passes, wake-ups added) are shared
// by every run of this task and of dispatch's (webhookSenderDeps).
import type { Task } from 'graphile-worker';
import type { OutboundClient } from '../server/outbound/http-client.ts';
import type { Services } from '../server/process-services.ts';
import { sendDueDeliveries, senderState, type SenderDeps } from '../server/webhooks/send-deliveries.ts';
import { SEND_WEBHOOK_DELIVERIES_TASK } from '../server/webhooks/sql/wake-sender.ts';

export { SEND_WEBHOOK_DELIVERIES_TASK };

export const sendWebhookDeliveriesCrontab = `* * * * * ${SEND_WEBHOOK_DELIVERIES_TASK}`;

/** What the process's webhook attempts share: its outbound client, its passes, the settings. */
export function webhookSenderDeps(services: Services, client: OutboundClient): SenderDeps {
  return {
    pool: services.pool,
    state: senderState(),
    client,
    secrets: services.secrets,
    log: services.log.child({ task: SEND_WEBHOOK_DELIVERIES_TASK }),
    timeoutMs: services.config.WEBHOOK_TIMEOUT_MS,
    retrySchedule: services.config.WEBHOOK_RETRY_SCHEDULE,
    disableAfter: services.config.WEBHOOK_DISABLE_AFTER,
  };
}

export function sendWebhookDeliveriesTask(deps: SenderDeps): Task {
  return async () => {
    await sendDueDeliveries(deps);
  };
}
