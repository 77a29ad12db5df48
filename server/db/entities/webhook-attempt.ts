import { defineEntity, p } from '@mikro-orm/core';

// One HTTP attempt of a delivery: the delivery log (`GET /webhooks/{id}/deliveries`). A
// delivery whose first attempt succeeds has no row of its own in webhook_deliveries: its
// attempt is all there is of it.
export const WebhookAttemptSchema = defineEntity({
  name: 'WebhookAttempt',
  tableName: 'webhook_attempts',
  properties: {
    id: p.text().primary(),
    // The delivery's id (X-Webhook-Delivery). It has a row in webhook_deliveries unless its
    // first attempt succeeded: while pending, and once failed, dropped or delivered by a retry.
    deliveryId: p.text(),
    // The event delivered. No key: triggers delete an event's attempts with it, and a
    // subscription's with it (migration 20261129000000), without checking each attempt written.
    // Nullable only for a worker of an earlier version during a roll-over: a trigger then
    // fills it from the delivery row that version writes.
    eventId: p.text().nullable(),
    // The delivery's account, so the row lives with it when the database is sharded by account.
    accountId: p.text(),
    // The delivery's subscription, so its log pages along its own index.
    subscriptionId: p.text(),
    attempt: p.integer(),
    statusCode: p.integer().nullable(),
    durationMs: p.integer(),
    error: p.text().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [
    // What an event's deletion finds its attempts by.
    { properties: ['eventId'], name: 'webhook_attempts_event_id_index' },
    // The delivery log: one subscription's attempts, newest first.
    { properties: ['subscriptionId', 'createdAt', 'id'], name: 'webhook_attempts_subscription_id_created_at_id_index' },
  ],
});

export class WebhookAttempt extends WebhookAttemptSchema.class {}
WebhookAttemptSchema.setClass(WebhookAttempt);
