// DELETE /webhooks/{webhookId}: its health rows, deliveries and delivery log go with it
// (foreign-key cascades; the log by the deliveries' trigger), which is the spec's
// "delivery-health counters reset". Later subscriptions move up one position.
import type { EntityManager } from '@mikro-orm/postgresql';
import { WebhookSubscription } from '../db/entities/index.ts';
import { findSubscription } from './find-subscription.ts';

export async function deleteSubscription(em: EntityManager, accountId: string, webhookId: string): Promise<void> {
  const subscription = await findSubscription(em, accountId, webhookId);
  await em.nativeDelete(WebhookSubscription, { id: subscription.id });
}
