// GET /webhooks/{webhookId}/health and POST /webhooks/{webhookId}/reenable. The record
// shown is the subscription's own account's row; inherited deliveries to client
// accounts keep their own rows (Agency inheritance rule 5).
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { WebhookHealth } from '../db/entities/index.ts';
import { findSubscription, positionOf } from './find-subscription.ts';

export const HealthRecord = z.object({
  consecutive_failures: z.number().int(),
  total_failures: z.number().int(),
  total_successes: z.number().int(),
  is_disabled: z.boolean(),
  disabled_at: z.string().nullable(),
  disabled_reason: z.string().nullable(),
  last_failure: z.record(z.string(), z.unknown()).nullable(),
  last_success_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type HealthRecord = z.infer<typeof HealthRecord>;

function toHealthRecord(row: WebhookHealth): HealthRecord {
  return {
    consecutive_failures: row.consecutiveFailures,
    total_failures: row.totalFailures,
    total_successes: row.totalSuccesses,
    is_disabled: row.isDisabled,
    disabled_at: row.disabledAt?.toISOString() ?? null,
    disabled_reason: row.disabledReason ?? null,
    last_failure: row.lastFailure ?? null,
    last_success_at: row.lastSuccessAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** No row yet means no delivery was ever attempted: `health: null`. */
export async function getSubscriptionHealth(
  em: EntityManager,
  accountId: string,
  webhookId: string,
): Promise<{ webhook_id: string; url: string; health: HealthRecord | null }> {
  const subscription = await findSubscription(em, accountId, webhookId);
  const row = await em.findOne(WebhookHealth, { subscription: subscription.id, account: subscription.account.id });
  return { webhook_id: await positionOf(em, subscription), url: subscription.url, health: row ? toHealthRecord(row) : null };
}

/**
 * Clears the paused flag and the failure counters of every account's row of this
 * subscription. Nothing is delivered here; the next event is.
 */
export async function reenableSubscription(em: EntityManager, accountId: string, webhookId: string): Promise<{ webhook_id: string }> {
  const subscription = await findSubscription(em, accountId, webhookId);
  await em.nativeUpdate(
    WebhookHealth,
    { subscription: subscription.id },
    { isDisabled: false, disabledAt: null, disabledReason: null, consecutiveFailures: 0, totalFailures: 0, updatedAt: new Date() },
  );
  return { webhook_id: await positionOf(em, subscription) };
}
