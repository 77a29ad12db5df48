// Message templates: the account's synced templates and template sends.
import { z } from 'zod';
import { listTemplates, TemplateListItem } from '../../server/messaging/list-templates.ts';
import { requestTemplateSyncOnDemand } from '../../server/messaging/request-template-sync.ts';
import { accountProcedure, router } from '../../server/trpc.ts';
import { sendTemplateProcedure } from './send.ts';

const tags = ['Templates'];
export const templatesRouter = router({
  send: sendTemplateProcedure,
  list: accountProcedure
    .meta({
      openapi: { method: 'GET', path: '/whatsapp-templates', tags, summary: "The account's message templates, as synced from the messaging provider" },
      section: 'Templates',
      access: 'read',
    })
    .input(z.object({}))
    .output(z.object({ success: z.literal(true), data: z.array(TemplateListItem) }))
    .query(async ({ ctx }) => ({ success: true as const, data: await listTemplates(ctx.em, ctx.account.id) })),

  sync: accountProcedure
    .meta({
      openapi: { method: 'POST', path: '/whatsapp-templates/sync', tags, summary: "Queue a sync of the account's templates from the messaging provider" },
      section: 'Templates',
      access: 'write',
      successStatus: 202,
      errorShapes: { '403': 'envelope' },
    })
    .input(z.object({}))
    .output(z.object({ success: z.literal(true), queued: z.literal(true) }))
    .mutation(async ({ ctx }) => {
      await requestTemplateSyncOnDemand(ctx.em, ctx.account.id);
      return { success: true as const, queued: true as const };
    }),
});
