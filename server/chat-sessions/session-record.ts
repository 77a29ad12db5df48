// How chat sessions are shown: ChatSession, and RecentChatSession (with
// `session_id` in place of `id` and the contact's name and identifiers).
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { ChatSession, Contact } from '../db/entities/index.ts';
import { PLACEHOLDER_EMAIL } from '../contacts/contact-record.ts';
import { contactDisplayName } from '../messages/export-chat.ts';
import { ChatMessageRecord, toChatMessage } from '../messages/message-record.ts';
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
  messages: z.array(ChatMessageRecord).optional(),
};

export const ChatSessionRecord = z.object({ id: z.string(), ...sessionFields });
export type ChatSessionRecord = z.infer<typeof ChatSessionRecord>;

export const RecentChatSessionRecord = z.object({
  session_id: z.string(),
  ...sessionFields,
  contact_id: z.string(),
  contact_name: z.string(),
  contact_phone: z.string(),
  contact_email: z.string(),
});
export type RecentChatSessionRecord = z.infer<typeof RecentChatSessionRecord>;

export function toChatSession(session: ChatSession, messages?: ListedMessage[]): ChatSessionRecord {
  const record: ChatSessionRecord = {
    id: session.id,
    start_date_time: session.startedAt.toISOString(),
    end_date_time: session.endedAt ? session.endedAt.toISOString() : null,
    status: session.status,
    tag: session.tag ?? null,
  };
  if (messages) record.messages = messages.map(toChatMessage);
  return record;
}

export function toRecentChatSession(session: ChatSession, contact: Contact, messages?: ListedMessage[]): RecentChatSessionRecord {
  const { id, ...rest } = toChatSession(session, messages);
  return {
    session_id: id,
    ...rest,
    contact_id: contact.id,
    contact_name: contactDisplayName(contact),
    contact_phone: contact.phoneNumber ?? '',
    contact_email: contact.email ?? PLACEHOLDER_EMAIL,
  };
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
