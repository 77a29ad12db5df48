// GET /contacts/{contactId}/chat-sessions: a contact's sessions, newest first; with
// includeMessages, the newest SESSION_MESSAGES_LIMIT messages across them (session-record.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import { ChatSession } from '../db/entities/index.ts';
import { requireContact } from '../contacts/find-contact.ts';
import { messagesBySession, toChatSession, type ChatSessionRecord } from './session-record.ts';

export async function listContactSessions(
  em: EntityManager,
  accountId: string,
  contactId: string,
  includeMessages: boolean,
): Promise<ChatSessionRecord[]> {
  const contact = await requireContact(em, accountId, contactId);
  const sessions = await em.find(ChatSession, { account: accountId, contact: contact.id }, { orderBy: { id: 'desc' } });
  if (!includeMessages) return sessions.map((session) => toChatSession(session));
  const messages = await messagesBySession(em, accountId, sessions.map((session) => session.id), contact.id);
  return sessions.map((session) => toChatSession(session, messages.get(session.id) ?? []));
}
