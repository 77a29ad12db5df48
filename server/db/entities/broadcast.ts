import { defineEntity, p } from '@mikro-orm/core';
import { Account } from './account.ts';

// A template sent to every contact of a list by a background job; the counters are
// its progress, kept equal to the counts of its recipients' outcomes.
export const BroadcastSchema = defineEntity({
  name: 'Broadcast',
  tableName: 'broadcasts',
  properties: {
    id: p.text().primary(),
    account: () => p.manyToOne(Account).ref().deleteRule('cascade').index(false),
    listId: p.text(),
    templateId: p.text(),
    status: p.enum(['queued', 'running', 'completed', 'failed'] as const).default('queued'),
    total: p.integer().default(0),
    sent: p.integer().default(0),
    failed: p.integer().default(0),
    skipped: p.integer().default(0),
    error: p.text().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
    startedAt: p.datetime().nullable(),
    completedAt: p.datetime().nullable(),
    updatedAt: p.datetime().defaultRaw('now()').onUpdate(() => new Date()),
  },
  indexes: [{ properties: ['account', 'id'], name: 'broadcasts_account_id_id_index' }],
});

export class Broadcast extends BroadcastSchema.class {}
BroadcastSchema.setClass(Broadcast);
