import { defineEntity, p } from '@mikro-orm/core';
import { Account } from './account.ts';

export const TagSchema = defineEntity({
  name: 'Tag',
  tableName: 'tags',
  properties: {
    id: p.text().primary(),
    account: () => p.manyToOne(Account).ref().deleteRule('cascade').index(false),
    name: p.text(),
    description: p.text().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  uniques: [{ properties: ['account', 'name'], name: 'tags_account_id_name_unique' }],
});

export class Tag extends TagSchema.class {}
TagSchema.setClass(Tag);
