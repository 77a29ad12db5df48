// Lists: the endpoints the contract defines beside the specification.
import { z } from 'zod';
import { ContactRecord } from '../../server/contacts/contact-record.ts';
import { createList, ListCreateInput } from '../../server/lists/create-list.ts';
import { deleteList } from '../../server/lists/delete-list.ts';
import { getList } from '../../server/lists/find-list.ts';
import { listListContacts } from '../../server/lists/list-list-contacts.ts';
import { listLists } from '../../server/lists/list-lists.ts';
import { ListRecord } from '../../server/lists/list-record.ts';
import { ListUpdateInput, updateList } from '../../server/lists/update-list.ts';
import { PageInput } from '../../server/pagination.ts';
import { accountProcedure, router } from '../../server/trpc.ts';
import { SuccessOnly } from '../shared-schemas.ts';
import { AT_LEAST_ONE_FIELD } from '../../server/http/openapi.ts';

const ListId = z.object({ listId: z.string() });
const ListData = z.object({ success: z.literal(true), data: ListRecord });

export const listsRouter = router({
  create: accountProcedure
    .meta({ openapi: { method: 'POST', path: '/lists', tags: ['Lists'], summary: 'Create a list' }, section: 'Lists', access: 'write', successStatus: 201 })
    .input(ListCreateInput)
    .output(ListData)
    .mutation(async ({ ctx, input }) => ({ success: true as const, data: await createList(ctx.em, ctx.account.id, input) })),

  list: accountProcedure
    .meta({ openapi: { method: 'GET', path: '/lists', tags: ['Lists'], summary: 'Page through lists' }, section: 'Lists', access: 'read' })
    .input(PageInput)
    .output(z.object({ success: z.literal(true), lists: z.array(ListRecord), next_cursor: z.string().nullable() }))
    .query(async ({ ctx, input }) => ({ success: true as const, ...(await listLists(ctx.em, ctx.services.secrets, ctx.account.id, input)) })),

  get: accountProcedure
    .meta({ openapi: { method: 'GET', path: '/lists/{listId}', tags: ['Lists'], summary: 'Get a list' }, section: 'Lists', access: 'read', errorShapes: { '404': 'envelope' } })
    .input(ListId)
    .output(ListData)
    .query(async ({ ctx, input }) => ({ success: true as const, data: await getList(ctx.em, ctx.account.id, input.listId) })),

  update: accountProcedure
    .meta({ openapi: { method: 'PUT', path: '/lists/{listId}', tags: ['Lists'], summary: 'Rename or describe a list' }, section: 'Lists', access: 'write', bodyConstraints: AT_LEAST_ONE_FIELD, errorShapes: { '404': 'envelope' } })
    .input(ListUpdateInput.extend(ListId.shape))
    .output(ListData)
    .mutation(async ({ ctx, input }) => {
      const { listId, ...fields } = input;
      return { success: true as const, data: await updateList(ctx.em, ctx.account.id, listId, fields) };
    }),

  delete: accountProcedure
    .meta({ openapi: { method: 'DELETE', path: '/lists/{listId}', tags: ['Lists'], summary: 'Delete a list (its contacts stay)' }, section: 'Lists', access: 'write', errorShapes: { '404': 'envelope' } })
    .input(ListId)
    .output(SuccessOnly)
    .mutation(async ({ ctx, input }) => {
      await deleteList(ctx.em, ctx.account.id, input.listId);
      return { success: true as const };
    }),

  contacts: accountProcedure
    .meta({ openapi: { method: 'GET', path: '/lists/{listId}/contacts', tags: ['Lists'], summary: "Page through a list's contacts" }, section: 'Lists', access: 'read', errorShapes: { '404': 'envelope' } })
    .input(PageInput.extend(ListId.shape))
    .output(z.object({ success: z.literal(true), contacts: z.array(ContactRecord), next_cursor: z.string().nullable() }))
    .query(async ({ ctx, input }) => {
      const { listId, ...page } = input;
      return { success: true as const, ...(await listListContacts(ctx.em, ctx.services.secrets, ctx.account.id, listId, page)) };
    }),
});
