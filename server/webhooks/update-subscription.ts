// PUT /webhooks/{webhookId}: omitted fields keep their values, the two arrays are
// replaced, the signing secret is untouched. A new url starts with fresh health: the
// spec's "PUT changing url" re-enables an auto-disabled URL.
import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { WebhookHealth, type WebhookSubscription } from '../db/entities/index.ts';
import { InvalidInputError } from '../errors.ts';
import { assertDeliverableUrl } from '../outbound/address-guard.ts';
import { duplicateName } from './create-subscription.ts';
import { findSubscription, positionOf } from './find-subscription.ts';
import { SubscribedTo, SubscribedToTags, toWebhookRecord, WebhookName, WebhookUrl, type WebhookRecord } from './subscription-record.ts';

export const WebhookUpdateInput = z.object({
  url: WebhookUrl.optional(),
  subscribed_to: SubscribedTo.optional(),
  name: WebhookName.optional(),
  subscribed_to_tags: SubscribedToTags.optional(),
  retries_enabled: z.boolean().optional(),
  enabled: z.boolean().optional(),
  apply_to_sub_accounts: z
    .boolean()
    .optional()
    .describe('true needs a key with sub_account_ids ["*"], as does a new url or subscribed_to on a subscription that applies to sub-accounts.'),
});
export type WebhookUpdateInput = z.infer<typeof WebhookUpdateInput>;

export type UpdateOptions = {
  accountId: string;
  allowHosts: readonly string[];
  /** Throws unless the caller may act on every client account (a scoped key needs sub_account_ids ["*"]). */
  assertMayActOnEveryClient: () => void;
};

export async function updateSubscription(
  em: EntityManager,
  options: UpdateOptions,
  webhookId: string,
  input: WebhookUpdateInput,
): Promise<{ webhook_id: string; webhook: WebhookRecord }> {
  if (Object.values(input).every((value) => value === undefined)) {
    throw new InvalidInputError('No fields to update', { reason: 'no_fields' });
  }
  if (input.url !== undefined) await assertDeliverableUrl(input.url, { allowHosts: options.allowHosts });
  let subscription;
  try {
    subscription = await em.transactional(async (tx) => {
      // Locked: a concurrent update cannot switch inheritance on between this check and the write.
      const found = await findSubscription(tx, options.accountId, webhookId, true);
      if (redirectsEveryClient(found, input)) options.assertMayActOnEveryClient();
      const urlChanged = input.url !== undefined && input.url !== found.url;
      if (input.url !== undefined) found.url = input.url;
      if (input.subscribed_to !== undefined) found.subscribedTo = input.subscribed_to;
      if (input.name !== undefined) found.name = input.name;
      if (input.subscribed_to_tags !== undefined) found.subscribedToTags = input.subscribed_to_tags;
      if (input.retries_enabled !== undefined) found.retriesEnabled = input.retries_enabled;
      if (input.enabled !== undefined) found.enabled = input.enabled;
      if (input.apply_to_sub_accounts !== undefined) found.applyToSubAccounts = input.apply_to_sub_accounts;
      found.updatedAt = new Date();
      // The old URL's failures say nothing about the new one (every account's row of it).
      if (urlChanged) await tx.nativeDelete(WebhookHealth, { subscription: found.id });
      return found;
    });
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) throw duplicateName();
    throw error;
  }
  const id = await positionOf(em, subscription);
  return { webhook_id: id, webhook: toWebhookRecord(subscription, id) };
}

/**
 * Whether the update changes where, or which of, every client's events go: a new URL or
 * event list on a subscription that inherits and still will. Switching inheritance on is
 * the procedure meta's `everyClientWhenSet` check. Everything else keeps to the URL and
 * events a caller allowed to act on every client chose: switching inheritance off,
 * disabling or enabling, the name, retries, tags (not inherited), deleting.
 */
function redirectsEveryClient(found: WebhookSubscription, input: WebhookUpdateInput): boolean {
  if (!found.applyToSubAccounts || input.apply_to_sub_accounts === false) return false;
  const urlChanged = input.url !== undefined && input.url !== found.url;
  const before = new Set(found.subscribedTo);
  const eventsChanged =
    input.subscribed_to !== undefined && (input.subscribed_to.length !== before.size || input.subscribed_to.some((name) => !before.has(name)));
  return urlChanged || eventsChanged;
}
