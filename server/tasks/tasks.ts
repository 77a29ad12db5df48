// Tasks of the account acted on: create, read, change, delete, and page
// through them. Every change is announced in its own transaction:
// create → Task Created (+ Task Completed when created done);
// update → Task Updated (+ Task Completed when the status becomes done).
import { ref } from '@mikro-orm/core';
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { requireContact } from '../contacts/find-contact.ts';
import { Task } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import { InvalidInputError, NotFoundError } from '../errors.ts';
import { emit } from '../events/emit.ts';
import { readPage, writePage, type PageInput } from '../pagination.ts';
import type { Secrets } from '../secrets.ts';
import { columnDateTime } from '../input-rules.ts';

export const TASK_STATUSES = ['open', 'done'] as const;

const Title = z.string().trim().min(1, 'must not be empty').max(500, 'must be at most 500 characters');
// `null` detaches the contact / clears the due date.
const ContactIdField = z.string().min(1, 'must not be empty').nullable().optional();
const DueAt = columnDateTime('must be an ISO 8601 date-time with a time zone, between the years 0001 and 9999').nullable().optional();
const Status = z.enum(TASK_STATUSES, { error: 'must be open or done' });

export const TaskCreateInput = z.object({
  title: Title,
  contactId: ContactIdField,
  due_at: DueAt,
  status: Status.optional(),
});
export type TaskCreateInput = z.infer<typeof TaskCreateInput>;

export const TaskUpdateInput = z.object({
  title: Title.optional(),
  contactId: ContactIdField,
  due_at: DueAt,
  status: Status.optional(),
});
export type TaskUpdateInput = z.infer<typeof TaskUpdateInput>;

export type TaskRecord = {
  id: string;
  title: string;
  contact_id: string | null;
  due_at: string | null;
  status: string;
  created_at: string;
  updated_at: string;
};

function toTaskRecord(task: Task): TaskRecord {
  return {
    id: task.id,
    title: task.title,
    contact_id: task.contact?.id ?? null,
    due_at: task.dueAt ? task.dueAt.toISOString() : null,
    status: task.status,
    created_at: task.createdAt.toISOString(),
    updated_at: task.updatedAt.toISOString(),
  };
}

/** A task of the account, or 404 (another account's task is not found). */
async function requireOwnTask(em: EntityManager, accountId: string, taskId: string, lock = false): Promise<Task> {
  const task = await em.findOne(
    Task,
    { id: taskId, account: accountId },
    lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {},
  );
  if (!task) throw new NotFoundError('Task not found');
  return task;
}

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

export async function getTask(em: EntityManager, accountId: string, taskId: string): Promise<TaskRecord> {
  return toTaskRecord(await requireOwnTask(em, accountId, taskId));
}

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
    // The entity's onUpdate stamps updated_at during the flush; the record (and event) shows the stored value.
    await tx.flush();
    const record = toTaskRecord(task);
    await emit(tx, accountId, 'Task Updated', record);
    if (!wasDone && record.status === 'done') await emit(tx, accountId, 'Task Completed', record);
    return record;
  });
}

export async function deleteTask(em: EntityManager, accountId: string, taskId: string): Promise<void> {
  const deleted = await em.nativeDelete(Task, { id: taskId, account: accountId });
  if (deleted === 0) throw new NotFoundError('Task not found');
}

export async function listTasks(
  em: EntityManager,
  secrets: Secrets,
  accountId: string,
  input: PageInput,
): Promise<{ tasks: TaskRecord[]; next_cursor: string | null }> {
  const scope = `tasks:${accountId}`;
  const page = readPage(secrets, scope, input);
  const rows = await em.find(
    Task,
    { account: accountId, ...(page.after ? { id: { $gt: page.after } } : {}) },
    { orderBy: { id: 'asc' }, limit: page.limit + 1 },
  );
  const { items, next_cursor } = writePage(secrets, scope, rows, page.limit, (row) => row.id);
  return { tasks: items.map(toTaskRecord), next_cursor };
}
