// A task of the account acted on; another account's task is not found.
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { Task } from '../db/entities/index.ts';
import { NotFoundError } from '../errors.ts';
import { toTaskRecord, type TaskRecord } from './task-record.ts';

/** A task of the account, or 404; `lock` holds it for the caller's transaction. */
export async function requireOwnTask(em: EntityManager, accountId: string, taskId: string, lock = false): Promise<Task> {
  const task = await em.findOne(
    Task,
    { id: taskId, account: accountId },
    lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {},
  );
  if (!task) throw new NotFoundError('Task not found');
  return task;
}

export async function getTask(em: EntityManager, accountId: string, taskId: string): Promise<TaskRecord> {
  return toTaskRecord(await requireOwnTask(em, accountId, taskId));
}
