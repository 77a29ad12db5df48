// Broadcasts: a template sent to every contact of a list by a background job.
import { z } from 'zod';
import { BroadcastRecord } from '../../server/broadcasts/broadcast-record.ts';
import { BroadcastCreateInput, createBroadcast } from '../../server/broadcasts/create-broadcast.ts';
import { getBroadcast } from '../../server/broadcasts/find-broadcast.ts';
import { listBroadcasts } from '../../server/broadcasts/list-broadcasts.ts';
import { PageInput } from '../../server/pagination.ts';
import { accountProcedure, router } from '../../server/trpc.ts';

const tags = ['Broadcasts'];
const BroadcastData = z.object({ success: z.literal(true), data: BroadcastRecord });

export const broadcastsRouter = router({
  create: accountProcedure
    .meta({
      openapi: { method: 'POST', path: '/broadcasts', tags, summary: 'Send an approved template to every contact of a list, as a background job (one credit per message sent)' },
      section: 'Broadcasts',
      access: 'write',
      successStatus: 201,
      errorShapes: { '400': 'envelope', '403': 'envelope', '404': 'envelope' },
    })
    .input(BroadcastCreateInput)
    .output(BroadcastData)
    .mutation(async ({ ctx, input }) => ({ success: true as const, data: await createBroadcast(ctx.em, ctx.services.secrets, ctx.account.id, input) })),

  list: accountProcedure
    .meta({ openapi: { method: 'GET', path: '/broadcasts', tags, summary: 'Page through broadcasts, oldest first' }, section: 'Broadcasts', access: 'read' })
    .input(PageInput)
    .output(z.object({ success: z.literal(true), broadcasts: z.array(BroadcastRecord), next_cursor: z.string().nullable() }))
    .query(async ({ ctx, input }) => ({ success: true as const, ...(await listBroadcasts(ctx.em, ctx.services.secrets, ctx.account.id, input)) })),

  get: accountProcedure
    .meta({ openapi: { method: 'GET', path: '/broadcasts/{id}', tags, summary: "A broadcast and its progress" }, section: 'Broadcasts', access: 'read', errorShapes: { '404': 'envelope' } })
    .input(z.object({ id: z.string() }))
    .output(BroadcastData)
    .query(async ({ ctx, input }) => ({ success: true as const, data: await getBroadcast(ctx.em, ctx.account.id, input.id) })),
});
