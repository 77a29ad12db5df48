// GET /chat-sessions/recent: the account's sessions, newest first, paged by
// keyset on the (time-ordered) session id; with includeMessages, the newest
// SESSION_MESSAGES_LIMIT messages across the page's sessions (session-record.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import { ChatSession } from '../db/entities/index.ts';
import { keysetPage, type PageInput } from '../pagination.ts';
import type { Secrets } from '../secrets.ts';
import { messagesBySession, toRecentChatSession, type RecentChatSessionRecord } from './session-record.ts';

export async function listRecentSessions(
  em: EntityManager,
  secrets: Secrets,
  accountId: string,
  input: PageInput & { includeMessages?: boolean },
): Promise<{ data: RecentChatSessionRecord[]; next_cursor: string | null }> {
  const scope = `recent-chat-sessions:${accountId}`;
  const { items, next_cursor } = await keysetPage(secrets, scope, input, (after, take) =>
    em.find(
      ChatSession,
      { account: accountId, ...(after ? { id: { $lt: after } } : {}) },
      { orderBy: { id: 'desc' }, limit: take, populate: ['contact'] },
    ),
  );
  const messages = input.includeMessages ? await messagesBySession(em, accountId, items.map((session) => session.id)) : null;
  return {
    data: items.map((session) => toRecentChatSession(session, session.contact.getEntity(), messages ? messages.get(session.id) ?? [] : undefined)),
    next_cursor,
  };
}
