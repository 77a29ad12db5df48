import { defineEntity, p } from '@mikro-orm/core';
import { Account } from './account.ts';

export const ListSchema = defineEntity({
  name: 'List',
  tableName: 'lists',
  properties: {
    id: p.text().primary(),
    account: () => p.manyToOne(Account).ref().deleteRule('cascade').index(false),
    name: p.text(),
    description: p.text().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [{ properties: ['account', 'id'], name: 'lists_account_id_id_index' }],
});

export class List extends ListSchema.class {}
ListSchema.setClass(List);
