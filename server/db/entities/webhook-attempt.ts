import { defineEntity, p } from '@mikro-orm/core';
import { WebhookDelivery } from './webhook-delivery.ts';

// One HTTP attempt of a delivery: the delivery log (`GET /webhooks/{id}/deliveries`).
export const WebhookAttemptSchema = defineEntity({
  name: 'WebhookAttempt',
  tableName: 'webhook_attempts',
  properties: {
    id: p.text().primary(),
    // No key: a trigger deletes a delivery's attempts with it (migration 20261128210000), as the
    // key's cascade did, without checking each attempt written against its delivery.
    delivery: () => p.manyToOne(WebhookDelivery).ref().createForeignKeyConstraint(false).index(false),
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
    { properties: ['delivery', 'attempt'], name: 'webhook_attempts_delivery_id_attempt_index' },
    // The delivery log: one subscription's attempts, newest first.
    { properties: ['subscriptionId', 'createdAt', 'id'], name: 'webhook_attempts_subscription_id_created_at_id_index' },
    // Metrics read the last minutes' attempts at scrape time; rows arrive in time order, so a
    // block-range index (16 pages a range) serves that read at almost no cost per attempt written.
    { properties: ['createdAt'], name: 'webhook_attempts_created_at_index', type: 'brin' },
  ],
});

export class WebhookAttempt extends WebhookAttemptSchema.class {}
WebhookAttemptSchema.setClass(WebhookAttempt);
