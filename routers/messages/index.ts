// Messages: a contact's messages, the conversation exported as text, replies and the typing indicator.
import { z } from 'zod';
import { NON_BLANK_TEXT_PATTERN } from '../../server/input-rules.ts';
import { exportChat } from '../../server/messages/export-chat.ts';
import { listContactMessages } from '../../server/messages/list-contact-messages.ts';
import { accountProcedure, router } from '../../server/trpc.ts';
import { replyProcedure } from './reply.ts';
import { typingProcedure } from './typing.ts';
import { ContactMessage } from '../../server/messages/message-record.ts';

// A blank id is 400 "Missing required parameter" (list-contact-messages.ts).
const ContactId = z.object({ contactId: z.string().meta({ pattern: NON_BLANK_TEXT_PATTERN }) });

export const messagesRouter = router({
  listForContact: accountProcedure
    .meta({
      openapi: { method: 'GET', path: '/contacts/messages/{contactId}', tags: ['Messages'], summary: "A contact's messages, oldest first" },
      section: 'Messages',
      access: 'read',
      errorShapes: { '400': 'message', '401': 'successError', '404': 'successError' },
    })
    .input(ContactId)
    .output(z.object({ success: z.literal(true), data: z.array(ContactMessage) }))
    .query(async ({ ctx, input }) => ({ success: true as const, data: await listContactMessages(ctx.em, ctx.account.id, input.contactId) })),

  exportChat: accountProcedure
    .meta({
      openapi: { method: 'GET', path: '/contacts/{contactId}/chat-export', tags: ['Messages'], summary: "A contact's whole conversation as text" },
      section: 'Messages',
      access: 'read',
      errorShapes: { '404': 'envelope' },
    })
    .input(ContactId)
    .output(
      z.object({
        success: z.literal(true),
        data: z.object({
          contactId: z.string(),
          contactName: z.string(),
          phoneNumber: z.string(),
          email: z.string(),
          messageCount: z.number().int(),
          chatExport: z.string(),
        }),
      }),
    )
    .query(async ({ ctx, input }) => ({ success: true as const, data: await exportChat(ctx.em, ctx.account.id, input.contactId) })),

  reply: replyProcedure,
  typing: typingProcedure,
});
