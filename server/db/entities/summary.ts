import { defineEntity, p } from '@mikro-orm/core';
import { Account } from './account.ts';
import { Contact } from './contact.ts';

export const SummarySchema = defineEntity({
  name: 'Summary',
  tableName: 'summaries',
  properties: {
    id: p.text().primary(),
    account: () => p.manyToOne(Account).ref().deleteRule('cascade').index(false),
    contact: () => p.manyToOne(Contact).ref().nullable().deleteRule('cascade').index(false),
    kind: p.enum(['conversation', 'daily'] as const),
    summary: p.text(),
    messageCount: p.integer().default(0),
    // The UTC day a `daily` summary covers; null for conversation summaries.
    day: p.date().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [
    { properties: ['contact', 'createdAt'], name: 'summaries_contact_id_created_at_index' },
    { properties: ['account', 'createdAt'], name: 'summaries_account_id_created_at_index' },
  ],
  // One daily summary per account and day, so a repeated run writes nothing twice.
  uniques: [{ properties: ['account', 'day'], name: 'summaries_account_id_day_unique' }],
});

export class Summary extends SummarySchema.class {}
SummarySchema.setClass(Summary);
