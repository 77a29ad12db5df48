// Every background task and the crontab, handed to the Graphile Worker runner.
// Each task lives in its own file and receives the process's services.
import { createOutboundClient } from '../server/outbound/http-client.ts';
import type { Services } from '../server/process-services.ts';
import { SUMMARY_TIMEOUT_MS } from '../server/summaries/chat-completions-summarizer.ts';
import { SENDER_CLIENT_LIMITS } from '../server/webhooks/send-deliveries.ts';
import type { WorkerDefinition } from '../server/worker.ts';
import { CHAT_WIDGET_MESSAGE_TASK, chatWidgetMessageTask } from './chat-widget-message.ts';
import { CLOSE_CHAT_WINDOWS_TASK, closeChatWindowsCrontab, closeChatWindowsTask } from './close-chat-windows.ts';
import { DAILY_SUMMARIES_TASK, dailySummariesCrontab, dailySummariesTask } from './daily-summaries.ts';
import { DISPATCH_WEBHOOK_EVENTS_TASK, dispatchWebhookEventsCrontab, dispatchWebhookEventsTask } from './dispatch-webhook-events.ts';
import { GENERATE_SUMMARY_TASK, generateSummaryTask } from './generate-summary.ts';
import { RELEASE_CREDIT_RESERVATIONS_TASK, releaseCreditReservationsCrontab, releaseCreditReservationsTask } from './release-credit-reservations.ts';
import { RUN_BROADCAST_TASK, runBroadcastTask } from './run-broadcast.ts';
import { RESET_MONTHLY_CREDITS_TASK, resetMonthlyCreditsCrontab, resetMonthlyCreditsTask } from './reset-monthly-credits.ts';
import { SEND_WEBHOOK_DELIVERIES_TASK, sendWebhookDeliveriesCrontab, sendWebhookDeliveriesTask, webhookSenderDeps } from './send-webhook-deliveries.ts';
import { SWEEP_IDEMPOTENCY_KEYS_TASK, sweepIdempotencyKeysCrontab, sweepIdempotencyKeysTask } from './sweep-idempotency-keys.ts';
import { SWEEP_WEBHOOK_HISTORY_TASK, sweepWebhookHistoryCrontab, sweepWebhookHistoryTask } from './sweep-webhook-history.ts';
import { SYNC_TEMPLATES_TASK, syncTemplatesCrontab, syncTemplatesTask } from './sync-templates.ts';
import { TYPING_EXPIRED_TASK, typingExpiredTask } from './typing-expired.ts';

export function workerDefinition(services: Services): WorkerDefinition {
  // One outbound client (connection pools, concurrency limits) per worker process.
  const webhookClient = createOutboundClient({
    timeoutMs: services.config.WEBHOOK_TIMEOUT_MS,
    allowHosts: services.config.WEBHOOK_ALLOW_HOSTS ?? [],
    ...SENDER_CLIENT_LIMITS,
  });
  // Dispatch's first attempts and the sender's retries share the client and the process's passes.
  const webhooks = webhookSenderDeps(services, webhookClient);
  // Summaries wait longer for an answer than webhooks; their own client keeps that apart.
  const summaryUrl = services.config.SUMMARY_API_URL;
  const summaryClient = createOutboundClient({
    timeoutMs: SUMMARY_TIMEOUT_MS,
    allowHosts: services.config.WEBHOOK_ALLOW_HOSTS ?? [],
    operatorOrigin: summaryUrl ? new URL(summaryUrl).origin : undefined,
  });
  return {
    taskList: {
      [GENERATE_SUMMARY_TASK]: generateSummaryTask(services, summaryClient),
      [DAILY_SUMMARIES_TASK]: dailySummariesTask(services),
      [RESET_MONTHLY_CREDITS_TASK]: resetMonthlyCreditsTask(services),
      [DISPATCH_WEBHOOK_EVENTS_TASK]: dispatchWebhookEventsTask(webhooks, services.log),
      [SEND_WEBHOOK_DELIVERIES_TASK]: sendWebhookDeliveriesTask(webhooks),
      [RUN_BROADCAST_TASK]: runBroadcastTask(services),
      [SYNC_TEMPLATES_TASK]: syncTemplatesTask(services),
      [CLOSE_CHAT_WINDOWS_TASK]: closeChatWindowsTask(services),
      [CHAT_WIDGET_MESSAGE_TASK]: chatWidgetMessageTask(services),
      [SWEEP_IDEMPOTENCY_KEYS_TASK]: sweepIdempotencyKeysTask(services),
      [SWEEP_WEBHOOK_HISTORY_TASK]: sweepWebhookHistoryTask(services),
      [RELEASE_CREDIT_RESERVATIONS_TASK]: releaseCreditReservationsTask(services),
      [TYPING_EXPIRED_TASK]: typingExpiredTask(services),
    },
    crontab: [resetMonthlyCreditsCrontab, dailySummariesCrontab, dispatchWebhookEventsCrontab, sendWebhookDeliveriesCrontab, closeChatWindowsCrontab, syncTemplatesCrontab, sweepIdempotencyKeysCrontab, sweepWebhookHistoryCrontab, releaseCreditReservationsCrontab].join('\n'),
    close: async () => {
      await Promise.all([webhookClient.close(), summaryClient.close()]);
    },
  };
}
