// Summaries: ask for a contact's conversation summary (generated in the
// background), and read a contact's summaries.
import { z } from 'zod';
import { SummaryRecord } from '../../server/summaries/summary-record.ts';
import { listContactSummaries } from '../../server/summaries/list-contact-summaries.ts';
import { requestSummary, SummaryRequestInput } from '../../server/summaries/request-summary.ts';
import { exactlyOneOf } from '../../server/http/openapi.ts';
import { accountProcedure, router } from '../../server/trpc.ts';

export const summariesRouter = router({
  request: accountProcedure
    .meta({
      openapi: { method: 'POST', path: '/summaries', tags: ['Summaries'], summary: "Start generating a summary of a contact's conversation" },
      section: 'Summaries',
      access: 'write',
      errorShapes: { '400': 'text', '401': 'text', '404': 'text', '500': 'error' },
      bodyConstraints: exactlyOneOf('phoneNumber', 'email'),
    })
    .input(SummaryRequestInput)
    .output(z.object({ success: z.literal(true), message: z.string() }))
    .mutation(async ({ ctx, input }) => ({ success: true as const, ...(await requestSummary(ctx.em, ctx.account.id, input)) })),

  listForContact: accountProcedure
    .meta({
      openapi: { method: 'GET', path: '/contacts/{contactId}/summaries', tags: ['Summaries'], summary: "A contact's conversation summaries, newest first" },
      section: 'Summaries',
      access: 'read',
      errorShapes: { '404': 'envelope' },
    })
    .input(z.object({ contactId: z.string() }))
    .output(
      z.object({
        success: z.literal(true),
        data: z.array(SummaryRecord),
      }),
    )
    .query(async ({ ctx, input }) => ({ success: true as const, data: await listContactSummaries(ctx.em, ctx.account.id, input.contactId) })),
});
