import { defineEntity, p } from '@mikro-orm/core';
import { Account } from './account.ts';

// A message template as the provider approved (or not) it; synced from the provider's
// template listing, or added by the admin command as if synced.
export const MessageTemplateSchema = defineEntity({
  name: 'MessageTemplate',
  tableName: 'message_templates',
  properties: {
    id: p.text().primary(),
    account: () => p.manyToOne(Account).ref().deleteRule('cascade').index(false),
    /** The provider's own id; null for templates added by the admin command. */
    providerTemplateId: p.text().nullable(),
    name: p.text(),
    language: p.text().default('en'),
    category: p.text().default('MARKETING'),
    /** The provider's approval status: APPROVED, PENDING, REJECTED, PAUSED, DISABLED... */
    status: p.text(),
    /** The body text with its named variables, as the account wrote it. */
    body: p.text(),
    components: p.json<unknown[]>(),
    /** The full template as the provider returned it. */
    template: p.json<Record<string, unknown>>(),
    createdAt: p.datetime().defaultRaw('now()'),
    syncedAt: p.datetime().defaultRaw('now()'),
  },
  uniques: [{ properties: ['account', 'name', 'language'], name: 'message_templates_account_name_language_unique' }],
});

export class MessageTemplate extends MessageTemplateSchema.class {}
MessageTemplateSchema.setClass(MessageTemplate);
