import { defineEntity, p } from '@mikro-orm/core';
import { Account } from './account.ts';
import { WebhookSubscription } from './webhook-subscription.ts';

// Delivery health of one subscription for one account: the subscription's own account,
// or, for an agency subscription inherited by its clients, each client account. No row
// means no delivery was ever attempted (the API shows `health: null`).
export const WebhookHealthSchema = defineEntity({
  name: 'WebhookHealth',
  tableName: 'webhook_health',
  properties: {
    subscription: () => p.manyToOne(WebhookSubscription).ref().deleteRule('cascade').primary(),
    account: () => p.manyToOne(Account).ref().deleteRule('cascade').primary(),
    consecutiveFailures: p.integer().default(0),
    totalFailures: p.integer().default(0),
    totalSuccesses: p.integer().default(0),
    isDisabled: p.boolean().default(false),
    disabledAt: p.datetime().nullable(),
    disabledReason: p.text().nullable(),
    lastFailure: p.json<Record<string, unknown>>().nullable(),
    lastSuccessAt: p.datetime().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()').onUpdate(() => new Date()),
  },
});

export class WebhookHealth extends WebhookHealthSchema.class {}
WebhookHealthSchema.setClass(WebhookHealth);
