// DELETE /tasks/{id}.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Task } from '../db/entities/index.ts';
import { NotFoundError } from '../errors.ts';

export async function deleteTask(em: EntityManager, accountId: string, taskId: string): Promise<void> {
  const deleted = await em.nativeDelete(Task, { id: taskId, account: accountId });
  if (deleted === 0) throw new NotFoundError('Task not found');
}
