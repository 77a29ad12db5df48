// How a webhook subscription is shown, and the input fields create and update share.
import { z } from 'zod';
import type { WebhookSubscription } from '../db/entities/index.ts';
import { EVENT_NAMES } from '../events/event-names.ts';
import { NON_BLANK_TEXT_PATTERN, urlPattern } from '../input-rules.ts';

const KNOWN_EVENTS = new Set<string>(EVENT_NAMES);

/** Non-empty, each a name GET /webhooks/events lists (Webhook subscriptions rule 2). */
export const SubscribedTo = z
  .array(z.string().meta({ enum: [...EVENT_NAMES] }), { error: 'subscribed_to must be an array of event names' })
  .min(1, 'subscribed_to must name at least one event')
  .superRefine((names, ctx) => {
    const unknown = names.find((name) => !KNOWN_EVENTS.has(name));
    if (unknown !== undefined) {
      ctx.addIssue({ code: 'custom', message: `subscribed_to: "${unknown}" is not an event name (GET /webhooks/events lists them)` });
    }
  })
  .transform((names) => [...new Set(names)]);

export const SubscribedToTags = z
  .array(z.string().min(1, 'subscribed_to_tags must not contain empty ids'), { error: 'subscribed_to_tags must be an array of tag ids' })
  .transform((ids) => [...new Set(ids)]);

export const WebhookName = z
  .string()
  .trim()
  .min(1, 'name must not be empty')
  .max(200, 'name must be at most 200 characters')
  .meta({ pattern: NON_BLANK_TEXT_PATTERN });
// Whether the host is public is found only by resolving it (server/outbound/address-guard.ts).
export const WebhookUrl = z
  .string({ error: 'url must be a string' })
  .min(1, 'url must not be empty')
  .meta({ format: 'uri', pattern: urlPattern('https'), description: 'An https:// URL whose host resolves only to public addresses.' });

export const WebhookSummary = z.object({
  id: z.string(),
  name: z.string(),
  url: z.string(),
  subscribed_to: z.array(z.string()),
  subscribed_to_tags: z.array(z.string()),
  created_at: z.string(),
});
export type WebhookSummary = z.infer<typeof WebhookSummary>;

export const WebhookRecord = WebhookSummary.extend({
  signing_enabled: z.boolean(),
  signing_secret_created_at: z.string().nullable(),
  retries_enabled: z.boolean(),
  enabled: z.boolean(),
  apply_to_sub_accounts: z.boolean(),
});
export type WebhookRecord = z.infer<typeof WebhookRecord>;

/** `id` is the positional id; the row id never leaves the service. The secret is never shown here. */
export function toWebhookRecord(subscription: WebhookSubscription, id: string): WebhookRecord {
  return {
    id,
    name: subscription.name,
    url: subscription.url,
    subscribed_to: subscription.subscribedTo,
    subscribed_to_tags: subscription.subscribedToTags,
    created_at: subscription.createdAt.toISOString(),
    signing_enabled: subscription.signingSecretSealed !== null && subscription.signingSecretSealed !== undefined,
    signing_secret_created_at: subscription.signingSecretCreatedAt?.toISOString() ?? null,
    retries_enabled: subscription.retriesEnabled,
    // Stored-absent means on: the list always reports a concrete boolean.
    enabled: subscription.enabled !== false,
    apply_to_sub_accounts: subscription.applyToSubAccounts,
  };
}
