// POST /whatsapp-templates/send: one approved template to one contact, charged one credit.
import { z } from 'zod';
import { sendTemplate } from '../../server/messaging/send-template.ts';
import { accountProcedure } from '../../server/trpc.ts';

export const TemplateSendInput = z.object({
  contactId: z.string().min(1, 'must not be empty'),
  whatsappTemplateId: z.string().min(1, 'must not be empty'),
});

export const sendTemplateProcedure = accountProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/whatsapp-templates/send',
      tags: ['Templates'],
      summary: 'Send an approved template to a contact, its variables filled from the contact; costs one credit, charged only when the provider accepts the message',
    },
    section: 'Templates',
    access: 'write',
    // The envelope (the default), listed so the OpenAPI document shows these statuses.
    errorShapes: { '400': 'envelope', '402': 'envelope', '403': 'envelope', '404': 'envelope', '500': 'envelope' },
  })
  .input(TemplateSendInput)
  .output(z.object({ success: z.literal(true), data: z.string().describe('The id of the recorded message') }))
  .mutation(async ({ ctx, input }) => {
    const sent = await sendTemplate(ctx.services, ctx.account.id, { contactId: input.contactId, templateId: input.whatsappTemplateId });
    return { success: true as const, data: sent.messageId };
  });
