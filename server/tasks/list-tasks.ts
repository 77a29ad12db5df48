// GET /tasks: the account's tasks, oldest first, a page at a time.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Task } from '../db/entities/index.ts';
import { findEntityPage, type PageInput } from '../pagination.ts';
import type { Secrets } from '../secrets.ts';
import { toTaskRecord, type TaskRecord } from './task-record.ts';

export async function listTasks(
  em: EntityManager,
  secrets: Secrets,
  accountId: string,
  input: PageInput,
): Promise<{ tasks: TaskRecord[]; next_cursor: string | null }> {
  const { items, next_cursor } = await findEntityPage(em, Task, { account: accountId }, secrets, `tasks:${accountId}`, input);
  return { tasks: items.map(toTaskRecord), next_cursor };
}
