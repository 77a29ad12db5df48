import { defineEntity, p } from '@mikro-orm/core';
import { Account } from './account.ts';

// Transactional outbox: rows are written in the same transaction as the change they
// announce, and a worker dispatches them afterwards.
export const EventSchema = defineEntity({
  name: 'Event',
  tableName: 'events',
  properties: {
    id: p.text().primary(),
    // No key: the event writer reads the account in the same statement, and the account's
    // deletion takes its events by a trigger (accounts_delete_events).
    account: () => p.manyToOne(Account).ref().createForeignKeyConstraint(false).index(false),
    name: p.text(),
    payload: p.json<Record<string, unknown>>(),
    createdAt: p.datetime().defaultRaw('now()'),
    dispatchedAt: p.datetime().nullable(),
    /** The HTTP request that caused the event, sent as X-Request-Id on its webhook deliveries. */
    requestId: p.text().nullable(),
  },
  indexes: [
    { properties: ['account', 'createdAt'], name: 'events_account_id_created_at_index' },
    { properties: ['createdAt'], name: 'events_undispatched_index', where: 'dispatched_at is null' },
    // The history sweep's (workers/sweep-webhook-history.ts): events by time, appended in time order.
    { properties: ['createdAt'], name: 'events_created_at_index', type: 'brin' },
  ],
});

export class Event extends EventSchema.class {}
EventSchema.setClass(Event);
