// PUT /tasks/{id}: the change and its events in one transaction: Task Updated,
// and Task Completed too when the status becomes done.
import { ref } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { requireContact } from '../contacts/find-contact.ts';
import { flushOwned } from '../db/update-owned.ts';
import { InvalidInputError } from '../errors.ts';
import { emit } from '../events/emit.ts';
import { requireOwnTask } from './find-task.ts';
import { TaskContactId, TaskDueAt, TaskStatus, TaskTitle } from './task-fields.ts';
import { toTaskRecord, type TaskRecord } from './task-record.ts';

export const TaskUpdateInput = z.object({
  title: TaskTitle.optional(),
  contactId: TaskContactId,
  due_at: TaskDueAt,
  status: TaskStatus.optional(),
});
export type TaskUpdateInput = z.infer<typeof TaskUpdateInput>;

export async function updateTask(em: EntityManager, accountId: string, taskId: string, input: TaskUpdateInput): Promise<TaskRecord> {
  if (Object.values(input).every((value) => value === undefined)) {
    throw new InvalidInputError('No fields to update', { reason: 'no_fields' });
  }
  return em.transactional(async (tx) => {
    const task = await requireOwnTask(tx, accountId, taskId, true);
    const wasDone = task.status === 'done';
    if (input.contactId !== undefined) {
      task.contact = input.contactId === null ? null : ref(await requireContact(tx, accountId, input.contactId));
    }
    if (input.title !== undefined) task.title = input.title;
    if (input.due_at !== undefined) task.dueAt = input.due_at === null ? null : new Date(input.due_at);
    if (input.status !== undefined) task.status = input.status;
    // updated_at is stamped as the entity's onUpdate has it; the record (and event) shows the stored value.
    await flushOwned(tx, task);
    const record = toTaskRecord(task);
    await emit(tx, accountId, 'Task Updated', record);
    if (!wasDone && record.status === 'done') await emit(tx, accountId, 'Task Completed', record);
    return record;
  });
}
