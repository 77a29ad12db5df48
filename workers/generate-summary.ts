// Task `generate-summary` (queued by POST /summaries): summarizes one contact's
// conversation. A thrown error lets Graphile Worker retry with its backoff.
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { OutboundClient } from '../server/outbound/http-client.ts';
import type { Services } from '../server/process-services.ts';
import { generateConversationSummary } from '../server/summaries/generate-conversation-summary.ts';
import { summarizerFor } from '../server/summaries/summarizer.ts';

export { GENERATE_SUMMARY_TASK } from '../server/summaries/request-summary.ts';

const Payload = z.object({ accountId: z.string().min(1), contactId: z.string().min(1) });

export function generateSummaryTask(services: Services, client: OutboundClient): Task {
  const summarize = summarizerFor(services.config, client);
  const log = services.log.child({ task: 'generate-summary' });
  return async (payload, helpers) => {
    const { accountId, contactId } = Payload.parse(payload);
    // A worker shutting down aborts the signal after its grace period: the provider call is
    // abandoned, the job fails this attempt and is unlocked for another worker.
    await generateConversationSummary(services.orm.em.fork(), { summarize, log, signal: helpers.abortSignal }, accountId, contactId);
  };
}
