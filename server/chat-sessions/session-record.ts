// How chat sessions are shown: ChatSession, and RecentChatSession (with
// `session_id` in place of `id` and the contact's name and identifiers).
import type { EntityManager } from '@mikro-orm/postgresql';
import { Message, type ChatSession, type Contact } from '../db/entities/index.ts';
import { PLACEHOLDER_EMAIL } from '../contacts/contact-record.ts';
import { contactDisplayName } from '../messages/export-chat.ts';
import { toChatMessage, type ChatMessageRecord } from '../messages/message-record.ts';

export type ChatSessionRecord = {
  id: string;
  start_date_time: string;
  /** Null while the session is open. */
  end_date_time: string | null;
  status: 'ChatSessionOpened' | 'ChatSessionClosed';
  tag: string | null;
  /** Only when the request asked for includeMessages=true. */
  messages?: ChatMessageRecord[];
};

export type RecentChatSessionRecord = Omit<ChatSessionRecord, 'id'> & {
  session_id: string;
  contact_id: string;
  contact_name: string;
  contact_phone: string;
  contact_email: string;
};

export function toChatSession(session: ChatSession, messages?: Message[]): ChatSessionRecord {
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

export function toRecentChatSession(session: ChatSession, contact: Contact, messages?: Message[]): RecentChatSessionRecord {
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

/** The messages of each session, oldest first, in one query. */
export async function messagesBySession(em: EntityManager, accountId: string, sessionIds: string[]): Promise<Map<string, Message[]>> {
  const bySession = new Map<string, Message[]>(sessionIds.map((id) => [id, []]));
  if (sessionIds.length === 0) return bySession;
  const messages = await em.find(
    Message,
    { account: accountId, session: { $in: sessionIds } },
    { orderBy: { createdAt: 'asc', id: 'asc' } },
  );
  for (const message of messages) bySession.get(message.session!.id)?.push(message);
  return bySession;
}
