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
    createdAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [
    { properties: ['contact', 'createdAt'], name: 'summaries_contact_id_created_at_index' },
    { properties: ['account', 'createdAt'], name: 'summaries_account_id_created_at_index' },
  ],
});

export class Summary extends SummarySchema.class {}
SummarySchema.setClass(Summary);
