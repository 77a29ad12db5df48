import { defineEntity, p } from '@mikro-orm/core';
import { Account } from './account.ts';
import { Contact } from './contact.ts';
import { Tag } from './tag.ts';

export const ContactTagSchema = defineEntity({
  name: 'ContactTag',
  tableName: 'contact_tags',
  properties: {
    contact: () => p.manyToOne(Contact).ref().primary().deleteRule('cascade').index(false),
    tag: () => p.manyToOne(Tag).ref().primary().deleteRule('cascade').index('contact_tags_tag_id_index'),
    account: () => p.manyToOne(Account).ref().deleteRule('cascade').index(false),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  primaryKeys: ['contact', 'tag'],
});

export class ContactTag extends ContactTagSchema.class {}
ContactTagSchema.setClass(ContactTag);
