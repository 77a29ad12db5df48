// Chat sessions: a contact's sessions, closing the open one, and the
// account's most recent sessions.
import { z } from 'zod';
import { closeChatSession } from '../../server/chat-sessions/close-chat-session.ts';
import { listContactSessions } from '../../server/chat-sessions/list-contact-sessions.ts';
import { listRecentSessions } from '../../server/chat-sessions/list-recent-sessions.ts';
import { PageInput } from '../../server/pagination.ts';
import { accountProcedure, router } from '../../server/trpc.ts';

const ContactId = z.object({ contactId: z.string() });

/** `includeMessages=true|false` in a query string; a boolean over tRPC. */
const IncludeMessages = z
  .union([z.boolean(), z.enum(['true', 'false'])], { error: 'includeMessages must be true or false' })
  .optional()
  .transform((value) => value === true || value === 'true');

const ChatMessageOutput = z.object({
  id: z.string(),
  body: z.string(),
  direction: z.enum(['inbound', 'outbound']),
  timestamp: z.string().nullable(),
  type: z.string(),
  channel: z.string(),
  status: z.string(),
});

const sessionFields = {
  start_date_time: z.string(),
  /** Null while the session is open. */
  end_date_time: z.string().nullable(),
  status: z.enum(['ChatSessionOpened', 'ChatSessionClosed']),
  tag: z.string().nullable(),
  messages: z.array(ChatMessageOutput).optional(),
};

const ChatSessionOutput = z.object({ id: z.string(), ...sessionFields });

const RecentChatSessionOutput = z.object({
  session_id: z.string(),
  ...sessionFields,
  contact_id: z.string(),
  contact_name: z.string(),
  contact_phone: z.string(),
  contact_email: z.string(),
});

export const chatSessionsRouter = router({
  listForContact: accountProcedure
    .meta({
      openapi: { method: 'GET', path: '/contacts/{contactId}/chat-sessions', tags: ['Chat Sessions'], summary: "A contact's chat sessions, newest first" },
      section: 'Chat Sessions',
      access: 'read',
      errorShapes: { '404': 'envelope' },
    })
    .input(ContactId.extend({ includeMessages: IncludeMessages }))
    .output(z.object({ success: z.literal(true), data: z.array(ChatSessionOutput) }))
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
    .output(z.object({ success: z.literal(true), data: ChatSessionOutput }))
    .mutation(async ({ ctx, input }) => ({ success: true as const, data: await closeChatSession(ctx.em, ctx.account.id, input.contactId) })),

  recent: accountProcedure
    .meta({
      openapi: { method: 'GET', path: '/chat-sessions/recent', tags: ['Chat Sessions'], summary: "The account's chat sessions, newest first" },
      section: 'Chat Sessions',
      access: 'read',
    })
    .input(PageInput.extend({ includeMessages: IncludeMessages }))
    .output(z.object({ success: z.literal(true), data: z.array(RecentChatSessionOutput), next_cursor: z.string().nullable() }))
    .query(async ({ ctx, input }) => ({ success: true as const, ...(await listRecentSessions(ctx.em, ctx.services.secrets, ctx.account.id, input)) })),
});
