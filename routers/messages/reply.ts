// POST /contacts/{contactId}/messages: a reply from the account's people and apps on the
// contact's own channel (server/messaging/send-reply.ts). Section Messages.
import { z } from 'zod';
import { MEDIA_PAIR, ReplyInput, sendReply, SESSION_MESSAGE_CREDITS } from '../../server/messaging/send-reply.ts';
import { authorOf } from '../../server/auth/credential-name.ts';
import { accountProcedure } from '../../server/trpc.ts';

export const replyProcedure = accountProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/contacts/{contactId}/messages',
      tags: ['Messages'],
      summary: 'Reply to a contact on its own channel: a chat-widget visitor sees it live; a WhatsApp contact gets a session message while the 24-hour window is open',
      description:
        `To a WhatsApp contact the reply costs ${SESSION_MESSAGE_CREDITS} credit, charged only when the provider accepts it; ` +
        '409 with error_code `chat_window_closed` when the window is closed (send a template instead). Emits New Message. ' +
        'The reply stops the bot for the contact (`is_bot_active` false, Contact Paused when it was on; no Human Alerted, no hand-off message) until PUT /contacts/{contactId} sets `is_bot_active` true again. ' +
        "Its `sender` in GET /contacts/messages/{contactId} names the credential that wrote it: a scoped key's label, an ID token's name (else e-mail, else subject), `api` for the main key.",
    },
    section: 'Messages',
    access: 'write',
    successStatus: 201,
    // The envelope (the default), listed so the OpenAPI document shows these statuses.
    errorShapes: { '400': 'envelope', '402': 'envelope', '403': 'envelope', '404': 'envelope', '409': 'envelope', '500': 'envelope' },
    bodyConstraints: MEDIA_PAIR,
  })
  .input(ReplyInput)
  .output(
    z.object({
      success: z.literal(true),
      data: z.object({
        id: z.string(),
        body: z.string(),
        direction: z.literal('outbound-api'),
        channel: z.string().describe('`chat_widget` or `whatsapp`.'),
        status: z.string().describe('`sent`; a WhatsApp reply moves on to delivered, read or failed as the provider reports.'),
        timestamp: z.string().describe('ISO 8601 date-time.'),
      }),
    }),
  )
  .mutation(async ({ ctx, input }) => ({
    success: true as const,
    data: await sendReply(ctx.services, ctx.account.id, input, authorOf(ctx.credential, ctx.request)),
  }));
