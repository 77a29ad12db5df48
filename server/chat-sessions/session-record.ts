// How chat sessions are shown: ChatSession, and RecentChatSession (with `session_id` in place
// of `id`, the contact's name and identifiers, and what an inbox shows of the conversation:
// whether the bot is on, whether the contact is archived, its last message, what is unread and
// the read mark).
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { ChatSession } from '../db/entities/index.ts';
import { SessionMessageRecord, toSessionMessage } from '../messages/message-record.ts';
import { newestContactSessionMessages, newestSessionMessages, type ListedMessage } from '../messages/newest-messages.ts';

/** Most messages an answer with includeMessages=true shows, across all its sessions: the newest ones. */
export const SESSION_MESSAGES_LIMIT = 1_000;

const sessionFields = {
  start_date_time: z.string(),
  /** Null while the session is open. */
  end_date_time: z.string().nullable(),
  status: z.enum(['ChatSessionOpened', 'ChatSessionClosed']),
  tag: z.string().nullable(),
  /** Only when the request asked for includeMessages=true. */
  messages: z.array(SessionMessageRecord).optional(),
};

export const ChatSessionRecord = z.object({ id: z.string(), ...sessionFields });
export type ChatSessionRecord = z.infer<typeof ChatSessionRecord>;

/** Most characters of a session's last message that `last_message_preview` shows. */
export const PREVIEW_LENGTH = 140;

export const RecentChatSessionRecord = z.object({
  session_id: z.string(),
  ...sessionFields,
  contact_id: z.string(),
  contact_name: z.string().describe('The names the contact was given, else its e-mail, else its phone number, else "Visitor" and a short suffix of its own.'),
  contact_phone: z.string(),
  contact_email: z.string(),
  is_bot_active: z.boolean().describe('Whether the bot still answers the contact (off after a hand-off or a reply from a person or an app).'),
  archived: z.boolean(),
  last_message_at: z.string().nullable().describe("The session's last message's time (ISO 8601); null for a session without messages."),
  last_message_preview: z
    .string()
    .nullable()
    .describe(`The session's last message on one line, at most ${PREVIEW_LENGTH} characters; null when it has no text.`),
  unread_count: z
    .number()
    .int()
    .describe("The session's messages from the contact after the business's read mark (POST /contacts/{contactId}/read)."),
  read_at: z
    .string()
    .nullable()
    .describe(
      "The business's read mark: the time of the contact's newest message when the conversation was last read (POST /contacts/{contactId}/read); null when never. Earlier than start_date_time: nobody has read this session yet.",
    ),
});
export type RecentChatSessionRecord = z.infer<typeof RecentChatSessionRecord>;

export function toChatSession(session: Pick<ChatSession, 'id' | 'startedAt' | 'endedAt' | 'status' | 'tag'>, messages?: ListedMessage[]): ChatSessionRecord {
  const record: ChatSessionRecord = {
    id: session.id,
    start_date_time: session.startedAt.toISOString(),
    end_date_time: session.endedAt ? session.endedAt.toISOString() : null,
    status: session.status,
    tag: session.tag ?? null,
  };
  if (messages) record.messages = messages.map(toSessionMessage);
  return record;
}

/**
 * The messages of each session, oldest first, in one query: the newest SESSION_MESSAGES_LIMIT
 * across the sessions together, so sessions older than those messages show an empty list.
 * `contactId` says the sessions are all that contact's: its index then finds the newest.
 */
export async function messagesBySession(
  em: EntityManager,
  accountId: string,
  sessionIds: string[],
  contactId?: string,
): Promise<Map<string, ListedMessage[]>> {
  const bySession = new Map<string, ListedMessage[]>(sessionIds.map((id) => [id, []]));
  if (sessionIds.length === 0) return bySession;
  const newest = contactId
    ? await newestContactSessionMessages(em, accountId, contactId, SESSION_MESSAGES_LIMIT)
    : await newestSessionMessages(em, accountId, sessionIds, SESSION_MESSAGES_LIMIT);
  for (const message of newest) bySession.get(message.sessionId!)?.push(message);
  return bySession;
}
