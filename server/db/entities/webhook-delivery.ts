import { defineEntity, p } from '@mikro-orm/core';
import { Account } from './account.ts';
import { Event } from './event.ts';
import { WebhookSubscription } from './webhook-subscription.ts';

// One logical delivery of one event to one subscription (one endpoint), and the queue of
// its attempts: `next_attempt_at` is when the next attempt is due while `status` is
// `pending`. The row id (`dlv_…`) is the stable X-Webhook-Delivery value, kept across
// retries and replays.
export const WebhookDeliverySchema = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  properties: {
    id: p.text().primary(),
    // No key: a trigger on events deletes an event's deliveries with it (migration
    // 20261128213000), as the key's cascade did, without checking each delivery written.
    event: () => p.manyToOne(Event).ref().createForeignKeyConstraint(false).index(false),
    subscription: () => p.manyToOne(WebhookSubscription).ref().deleteRule('cascade').index(false),
    // The account where the event happened (a client account for inherited deliveries). No
    // key of its own: its deliveries go with its events (the trigger above).
    account: () => p.manyToOne(Account).ref().createForeignKeyConstraint(false).index(false),
    // pending | succeeded | failed | dropped
    status: p.text().default('pending'),
    attempts: p.integer().default(0),
    nextAttemptAt: p.datetime().nullable(),
    // A worker that claimed the attempt holds it until then; after a crash it is due again.
    lockedUntil: p.datetime().nullable(),
    firstAttemptAt: p.datetime().nullable(),
    lastStatusCode: p.integer().nullable(),
    lastError: p.text().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()').onUpdate(() => new Date()),
  },
  uniques: [{ properties: ['event', 'subscription', 'account'], name: 'webhook_deliveries_event_id_subscription_id_account_id_unique' }],
  indexes: [
    { properties: ['nextAttemptAt'], name: 'webhook_deliveries_due_index', where: `status = 'pending'` },
    { properties: ['subscription', 'createdAt'], name: 'webhook_deliveries_subscription_id_created_at_index' },
  ],
});

export class WebhookDelivery extends WebhookDeliverySchema.class {}
WebhookDeliverySchema.setClass(WebhookDelivery);
