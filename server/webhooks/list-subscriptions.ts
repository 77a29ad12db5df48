// GET /webhooks: the account's own subscriptions in position order, switched-off ones
// included. An agency's inherited subscriptions belong to the agency account, so they
// never show in a client's list (Agency inheritance rule 4).
import type { EntityManager } from '@mikro-orm/postgresql';
import { subscriptionsInPositionOrder } from './find-subscription.ts';
import { toWebhookRecord, type WebhookRecord } from './subscription-record.ts';

export async function listSubscriptions(em: EntityManager, accountId: string): Promise<WebhookRecord[]> {
  const subscriptions = await subscriptionsInPositionOrder(em, accountId);
  return subscriptions.map((subscription, index) => toWebhookRecord(subscription, String(index + 1)));
}
