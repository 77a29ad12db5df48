// POST /webhooks/{webhookId}/test: one sample event sent now, through the same client
// and headers as real deliveries, signed with the subscription's secret when it has
// one. It answers how the send went; it never touches health or the delivery tables
// (tests never change health counters) and is sent whatever the on/off switch says.
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Account } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import { EVENT_NAMES, type EventName } from '../events/event-names.ts';
import type { UserBlock } from '../events/sql/insert-events.ts';
import { createOutboundClient, type OutboundFailureType } from '../outbound/http-client.ts';
import type { Secrets } from '../secrets.ts';
import { findSubscription, positionOf } from './find-subscription.ts';
import { deliveryHeaders } from './signature.ts';
import { openSigningSecret } from './signing-secret.ts';

export const WebhookTestInput = z.object({
  event: z.enum(EVENT_NAMES, { error: 'event must be one of the event names GET /webhooks/events lists' }).optional(),
});
export type WebhookTestInput = z.infer<typeof WebhookTestInput>;

// "default is a delivery event"
const DEFAULT_TEST_EVENT: EventName = 'Deliveries';

export type WebhookTestResult =
  | { webhook_id: string; delivered: true }
  | { webhook_id: string; delivered: false; failure_type: OutboundFailureType; status_code: number | null; error_message: string };

export async function testSubscription(
  em: EntityManager,
  secrets: Secrets,
  options: { accountId: string; allowHosts: readonly string[]; timeoutMs: number },
  webhookId: string,
  input: WebhookTestInput,
): Promise<WebhookTestResult> {
  const subscription = await findSubscription(em, options.accountId, webhookId);
  const webhook_id = await positionOf(em, subscription);
  const account = await em.findOneOrFail(Account, options.accountId);
  const event = input.event ?? DEFAULT_TEST_EVENT;
  const eventId = newId('evt');
  const user: UserBlock = { id: account.id, email: account.email, name: account.name ?? null };
  const body = JSON.stringify({
    event,
    event_id: eventId,
    occurred_at: new Date().toISOString(),
    test: true,
    user,
    data: { message: `A test ${event} event sent from the webhook settings; it describes nothing that happened.` },
  });
  const headers = deliveryHeaders({
    deliveryId: newId('dlv'),
    attempt: 1,
    event,
    secret: openSigningSecret(secrets, subscription),
    body,
    timestamp: Math.floor(Date.now() / 1000),
  });
  // A client of its own (same module, same guard): a test is rare, and must not wait behind the sender's rounds.
  const client = createOutboundClient({ timeoutMs: options.timeoutMs, allowHosts: options.allowHosts });
  try {
    const result = await client.post(subscription.url, { headers, body });
    if (result.failure === null) return { webhook_id, delivered: true };
    return {
      webhook_id,
      delivered: false,
      failure_type: result.failure.type,
      status_code: result.statusCode,
      error_message: result.failure.message,
    };
  } finally {
    await client.close();
  }
}
