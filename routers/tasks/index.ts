// Tasks: the endpoints the contract defines beside the specification.
import { z } from 'zod';
import { PageInput } from '../../server/pagination.ts';
import { createTask, TaskCreateInput } from '../../server/tasks/create-task.ts';
import { deleteTask } from '../../server/tasks/delete-task.ts';
import { getTask } from '../../server/tasks/find-task.ts';
import { listTasks } from '../../server/tasks/list-tasks.ts';
import { TaskRecord } from '../../server/tasks/task-record.ts';
import { TaskUpdateInput, updateTask } from '../../server/tasks/update-task.ts';
import { accountProcedure, router } from '../../server/trpc.ts';
import { SuccessOnly } from '../shared-schemas.ts';
import { AT_LEAST_ONE_FIELD } from '../../server/http/openapi.ts';

const TaskId = z.object({ id: z.string() });
const TaskData = z.object({ success: z.literal(true), data: TaskRecord });

export const tasksRouter = router({
  create: accountProcedure
    .meta({ openapi: { method: 'POST', path: '/tasks', tags: ['Tasks'], summary: 'Create a task' }, section: 'Tasks', access: 'write', successStatus: 201, errorShapes: { '404': 'envelope' } })
    .input(TaskCreateInput)
    .output(TaskData)
    .mutation(async ({ ctx, input }) => ({ success: true as const, data: await createTask(ctx.em, ctx.account.id, input) })),

  list: accountProcedure
    .meta({ openapi: { method: 'GET', path: '/tasks', tags: ['Tasks'], summary: 'Page through tasks' }, section: 'Tasks', access: 'read' })
    .input(PageInput)
    .output(z.object({ success: z.literal(true), tasks: z.array(TaskRecord), next_cursor: z.string().nullable() }))
    .query(async ({ ctx, input }) => ({ success: true as const, ...(await listTasks(ctx.em, ctx.services.secrets, ctx.account.id, input)) })),

  get: accountProcedure
    .meta({ openapi: { method: 'GET', path: '/tasks/{id}', tags: ['Tasks'], summary: 'Get a task' }, section: 'Tasks', access: 'read', errorShapes: { '404': 'envelope' } })
    .input(TaskId)
    .output(TaskData)
    .query(async ({ ctx, input }) => ({ success: true as const, data: await getTask(ctx.em, ctx.account.id, input.id) })),

  update: accountProcedure
    .meta({ openapi: { method: 'PUT', path: '/tasks/{id}', tags: ['Tasks'], summary: 'Change a task (completing it announces Task Completed)' }, section: 'Tasks', access: 'write', bodyConstraints: AT_LEAST_ONE_FIELD, errorShapes: { '404': 'envelope' } })
    .input(TaskUpdateInput.extend(TaskId.shape))
    .output(TaskData)
    .mutation(async ({ ctx, input }) => {
      const { id, ...fields } = input;
      return { success: true as const, data: await updateTask(ctx.em, ctx.account.id, id, fields) };
    }),

  delete: accountProcedure
    .meta({ openapi: { method: 'DELETE', path: '/tasks/{id}', tags: ['Tasks'], summary: 'Delete a task' }, section: 'Tasks', access: 'write', errorShapes: { '404': 'envelope' } })
    .input(TaskId)
    .output(SuccessOnly)
    .mutation(async ({ ctx, input }) => {
      await deleteTask(ctx.em, ctx.account.id, input.id);
      return { success: true as const };
    }),
});
