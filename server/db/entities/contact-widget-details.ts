import { defineEntity, p } from '@mikro-orm/core';
import { Account } from './account.ts';
import { Contact } from './contact.ts';

// What a chat-widget visitor's page reported with their messages (the page, where they came
// from, their language and browser) and when they were first and last seen: the contact's
// `widget` block. Written with each visitor message (server/widgets/sql/store-visitor-message.ts).
export const ContactWidgetDetailsSchema = defineEntity({
  name: 'ContactWidgetDetails',
  tableName: 'contact_widget_details',
  properties: {
    contact: () => p.manyToOne(Contact).ref().primary().deleteRule('cascade').index(false),
    account: () => p.manyToOne(Account).ref().createForeignKeyConstraint(false).index(false),
    pageUrl: p.text().nullable(),
    referrer: p.text().nullable(),
    language: p.text().nullable(),
    userAgent: p.text().nullable(),
    firstSeenAt: p.datetime(),
    lastSeenAt: p.datetime(),
  },
  primaryKeys: ['contact'],
});

export class ContactWidgetDetails extends ContactWidgetDetailsSchema.class {}
ContactWidgetDetailsSchema.setClass(ContactWidgetDetails);
