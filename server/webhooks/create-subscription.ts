// POST /webhooks
import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { WebhookSubscription } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import { ConflictError } from '../errors.ts';
import { assertDeliverableUrl } from '../outbound/address-guard.ts';
import type { Secrets } from '../secrets.ts';
import { positionOf } from './find-subscription.ts';
import { installNewSigningSecret } from './signing-secret.ts';
import { SubscribedTo, SubscribedToTags, toWebhookRecord, WebhookName, WebhookUrl, type WebhookSummary } from './subscription-record.ts';

export const WebhookCreateInput = z.object({
  url: WebhookUrl,
  subscribed_to: SubscribedTo,
  name: WebhookName.optional(),
  subscribed_to_tags: SubscribedToTags.optional(),
  retries_enabled: z.boolean().optional(),
  generate_signing_secret: z
    .boolean()
    .optional()
    .describe('Return a new signing secret with the answer; true needs the Integrations edit permission, as the signing-secret routes do.'),
  enabled: z.boolean().optional(),
  apply_to_sub_accounts: z
    .boolean()
    .optional()
    .describe('Also receive the events of every client account (agency inheritance); true needs a key with sub_account_ids ["*"].'),
});
export type WebhookCreateInput = z.infer<typeof WebhookCreateInput>;

export type CreatedWebhook = { webhook_id: string; webhook: WebhookSummary; signing_secret?: string };

export function duplicateName(): ConflictError {
  return new ConflictError('A webhook with that name already exists');
}

export async function createSubscription(
  em: EntityManager,
  secrets: Secrets,
  options: { accountId: string; allowHosts: readonly string[] },
  input: WebhookCreateInput,
): Promise<CreatedWebhook> {
  await assertDeliverableUrl(input.url, { allowHosts: options.allowHosts });
  const createdAt = new Date();
  const subscription = em.create(WebhookSubscription, {
    id: newId('wh'),
    account: options.accountId,
    name: input.name ?? `Webhook ${createdAt.toISOString()}`,
    url: input.url,
    subscribedTo: input.subscribed_to,
    subscribedToTags: input.subscribed_to_tags ?? [],
    retriesEnabled: input.retries_enabled ?? false,
    enabled: input.enabled ?? true,
    applyToSubAccounts: input.apply_to_sub_accounts ?? false,
    signingSecretSealed: null,
    signingSecretCreatedAt: null,
    createdAt,
    updatedAt: createdAt,
  });
  const signingSecret = input.generate_signing_secret ? installNewSigningSecret(secrets, subscription) : undefined;
  try {
    await em.persist(subscription).flush();
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) throw duplicateName();
    throw error;
  }
  const id = await positionOf(em, subscription);
  // The create answer shows the record's identity and routing fields only (spec: POST /webhooks).
  const { name, url, subscribed_to, subscribed_to_tags, created_at } = toWebhookRecord(subscription, id);
  return {
    webhook_id: id,
    webhook: { id, name, url, subscribed_to, subscribed_to_tags, created_at },
    ...(signingSecret !== undefined ? { signing_secret: signingSecret } : {}),
  };
}
