import { defineEntity, p } from '@mikro-orm/core';
import { Account } from './account.ts';
import { Contact } from './contact.ts';
import { List } from './list.ts';

export const ContactListSchema = defineEntity({
  name: 'ContactList',
  tableName: 'contact_lists',
  properties: {
    contact: () => p.manyToOne(Contact).ref().primary().deleteRule('cascade').index(false),
    list: () => p.manyToOne(List).ref().primary().deleteRule('cascade').index(false),
    account: () => p.manyToOne(Account).ref().deleteRule('cascade').index(false),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  primaryKeys: ['contact', 'list'],
  indexes: [{ properties: ['list', 'contact'], name: 'contact_lists_list_id_contact_id_index' }],
});

export class ContactList extends ContactListSchema.class {}
ContactListSchema.setClass(ContactList);
