// How a task is shown, in answers and in its events.
import { z } from 'zod';
import type { Task } from '../db/entities/index.ts';

export const TaskRecord = z.object({
  id: z.string(),
  title: z.string(),
  contact_id: z.string().nullable(),
  due_at: z.string().nullable(),
  status: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type TaskRecord = z.infer<typeof TaskRecord>;

export function toTaskRecord(task: Task): TaskRecord {
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
