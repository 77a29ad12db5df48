import { defineEntity, p } from '@mikro-orm/core';
import { Broadcast } from './broadcast.ts';
import { Contact } from './contact.ts';

// One contact of a broadcast. The row is claimed (committed) before the provider call,
// so a broadcast resumed after a crash never messages a claimed recipient twice.
export const BroadcastRecipientSchema = defineEntity({
  name: 'BroadcastRecipient',
  tableName: 'broadcast_recipients',
  properties: {
    broadcast: () => p.manyToOne(Broadcast).ref().primary().deleteRule('cascade'),
    contact: () => p.manyToOne(Contact).ref().primary().deleteRule('cascade').index(false),
    // The broadcast's account, so the row lives with it when the database is sharded by account.
    accountId: p.text(),
    status: p.enum(['pending', 'claimed', 'sent', 'failed', 'skipped'] as const).default('pending'),
    messageId: p.text().nullable(),
    providerMessageId: p.text().nullable(),
    error: p.text().nullable(),
    claimedAt: p.datetime().nullable(),
    finishedAt: p.datetime().nullable(),
  },
  indexes: [{ properties: ['broadcast', 'status'], name: 'broadcast_recipients_broadcast_id_status_index' }],
});

export class BroadcastRecipient extends BroadcastRecipientSchema.class {}
BroadcastRecipientSchema.setClass(BroadcastRecipient);
