import { defineEntity, p } from '@mikro-orm/core';
import { Account } from './account.ts';
import { Contact } from './contact.ts';

export const TaskSchema = defineEntity({
  name: 'Task',
  tableName: 'tasks',
  properties: {
    id: p.text().primary(),
    account: () => p.manyToOne(Account).ref().deleteRule('cascade').index(false),
    contact: () => p.manyToOne(Contact).ref().nullable().deleteRule('cascade').index(false),
    title: p.text(),
    dueAt: p.datetime().nullable(),
    status: p.text().default('open'),
    createdAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()').onUpdate(() => new Date()),
  },
  indexes: [{ properties: ['account', 'id'], name: 'tasks_account_id_id_index' }],
});

export class Task extends TaskSchema.class {}
TaskSchema.setClass(Task);
