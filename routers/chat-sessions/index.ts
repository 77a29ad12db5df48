// Chat sessions: a contact's sessions, closing the open one, and the
// account's most recent sessions.
import { z } from 'zod';
import { closeChatSession } from '../../server/chat-sessions/close-chat-session.ts';
import { listContactSessions } from '../../server/chat-sessions/list-contact-sessions.ts';
import { listRecentSessions } from '../../server/chat-sessions/list-recent-sessions.ts';
import { ChatSessionRecord, RecentChatSessionRecord } from '../../server/chat-sessions/session-record.ts';
import { PageInput } from '../../server/pagination.ts';
import { accountProcedure, router } from '../../server/trpc.ts';
import { queryFlag } from '../shared-schemas.ts';

const ContactId = z.object({ contactId: z.string() });

/** `includeMessages=true|false` in a query string; a boolean over tRPC. */
const IncludeMessages = z
  .union([z.boolean(), z.enum(['true', 'false'])], { error: 'includeMessages must be true or false' })
  .optional()
  .transform((value) => value === true || value === 'true');

export const chatSessionsRouter = router({
  listForContact: accountProcedure
    .meta({
      openapi: { method: 'GET', path: '/contacts/{contactId}/chat-sessions', tags: ['Chat Sessions'], summary: "A contact's chat sessions, newest first" },
      section: 'Chat Sessions',
      access: 'read',
      errorShapes: { '404': 'envelope' },
    })
    .input(ContactId.extend({ includeMessages: IncludeMessages }))
    .output(z.object({ success: z.literal(true), data: z.array(ChatSessionRecord) }))
    .query(async ({ ctx, input }) => ({
      success: true as const,
      data: await listContactSessions(ctx.em, ctx.account.id, input.contactId, input.includeMessages),
    })),

  close: accountProcedure
    .meta({
      openapi: { method: 'POST', path: '/contacts/{contactId}/chat-sessions/close', tags: ['Chat Sessions'], summary: "Close the contact's open chat session" },
      section: 'Chat Sessions',
      access: 'write',
      errorShapes: { '404': 'envelope' },
    })
    .input(ContactId)
    .output(z.object({ success: z.literal(true), data: ChatSessionRecord }))
    .mutation(async ({ ctx, input }) => ({ success: true as const, data: await closeChatSession(ctx.em, ctx.account.id, input.contactId) })),

  recent: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/chat-sessions/recent',
        tags: ['Chat Sessions'],
        summary: "The account's chat sessions, newest activity first (archived contacts' sessions only with archived=true)",
        description:
          'Each session says whether the bot is on for its contact, whether the contact is archived, its last message (time and a one-line preview) and how many of its messages from the contact came after the business\'s read mark (POST /contacts/{contactId}/read). ' +
          'A session moves to the top with each new message, so a conversation may show again on a fresh first page.',
      },
      section: 'Chat Sessions',
      access: 'read',
    })
    .input(
      PageInput.extend({
        includeMessages: IncludeMessages,
        archived: queryFlag('archived').describe("true: only archived contacts' sessions; false or absent: the sessions of contacts that are not archived."),
      }),
    )
    .output(z.object({ success: z.literal(true), data: z.array(RecentChatSessionRecord), next_cursor: z.string().nullable() }))
    .query(async ({ ctx, input }) => ({ success: true as const, ...(await listRecentSessions(ctx.em, ctx.services.secrets, ctx.account.id, input)) })),
});
