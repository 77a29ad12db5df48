// POST /tasks: the task and its events in one transaction: Task Created, and
// Task Completed too when it is created done.
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { requireContact } from '../contacts/find-contact.ts';
import { Task } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import { emit } from '../events/emit.ts';
import { TaskContactId, TaskDueAt, TaskStatus, TaskTitle } from './task-fields.ts';
import { toTaskRecord, type TaskRecord } from './task-record.ts';

export const TaskCreateInput = z.object({
  title: TaskTitle,
  contactId: TaskContactId,
  due_at: TaskDueAt,
  status: TaskStatus.optional(),
});
export type TaskCreateInput = z.infer<typeof TaskCreateInput>;

export async function createTask(em: EntityManager, accountId: string, input: TaskCreateInput): Promise<TaskRecord> {
  return em.transactional(async (tx) => {
    const contact = input.contactId ? await requireContact(tx, accountId, input.contactId) : null;
    const now = new Date();
    const task = tx.create(Task, {
      id: newId('tsk'),
      account: accountId,
      contact: contact ? contact.id : null,
      title: input.title,
      dueAt: input.due_at ? new Date(input.due_at) : null,
      status: input.status ?? 'open',
      createdAt: now,
      updatedAt: now,
    });
    await tx.persist(task).flush();
    const record = toTaskRecord(task);
    await emit(tx, accountId, 'Task Created', record);
    // A task created already done has been completed, so it is announced as such too.
    if (record.status === 'done') await emit(tx, accountId, 'Task Completed', record);
    return record;
  });
}
