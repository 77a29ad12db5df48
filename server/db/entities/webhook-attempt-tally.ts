import { defineEntity, p } from '@mikro-orm/core';

// Webhook attempts counted per 10-second slice and database connection
// (server/webhooks/attempt-tallies.ts): what the metrics' trailing window reads. Unlogged, as
// rate_counters: a crash loses only recent figures. Not account-owned (a coordinator-local
// table when sharded).
export const WebhookAttemptTallySchema = defineEntity({
  name: 'WebhookAttemptTally',
  tableName: 'webhook_attempt_tallies',
  properties: {
    slice: p.datetime().primary(),
    // The backend pid of the connection that wrote it: one transaction at a time writes a row.
    slot: p.integer().primary(),
    delivered: p.integer(),
    failed: p.integer(),
    // Attempts per duration bucket (DURATION_BOUNDS_MS).
    durations: p.array<number>().columnType('int[]'),
  },
  primaryKeys: ['slice', 'slot'],
});

export class WebhookAttemptTally extends WebhookAttemptTallySchema.class {}
WebhookAttemptTallySchema.setClass(WebhookAttemptTally);
