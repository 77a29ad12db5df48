// The newest messages of a conversation, chosen in SQL (newest first, `limit` rows, by the
// contact's or the session's created_at index) and handed back oldest first, as plain
// objects: however long a conversation grew (a widget visitor can write thousands of
// messages an hour), a read of it loads a bounded number of rows and no entities.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Message } from '../db/entities/index.ts';
import { queryRows, rawSql, sql, type Sql } from '../db/sql.ts';

/** What the conversation reads show of a message. */
export type ListedMessage = Pick<
  Message,
  'id' | 'body' | 'direction' | 'type' | 'channel' | 'status' | 'sender' | 'senderName' | 'mediaUrl' | 'mediaContentType' | 'createdAt'
> & {
  sessionId: string | null;
};

type ListedMessageRow = {
  id: string;
  body: string;
  direction: Message['direction'];
  type: string;
  channel: string;
  status: string;
  sender: string | null;
  sender_name: string | null;
  media_url: string | null;
  media_content_type: string | null;
  session_id: string | null;
  /** ISO 8601 in milliseconds, as entities show created_at (the pool returns timestamps as text). */
  created_at_iso: string;
  total: string | null;
};

function toListedMessage(row: ListedMessageRow): ListedMessage {
  return {
    id: row.id,
    body: row.body,
    direction: row.direction,
    type: row.type,
    channel: row.channel,
    status: row.status,
    sender: row.sender,
    senderName: row.sender_name,
    mediaUrl: row.media_url,
    mediaContentType: row.media_content_type,
    sessionId: row.session_id,
    createdAt: new Date(row.created_at_iso),
  };
}

const LISTED_COLUMNS = rawSql(`id, body, direction, type, channel, status, sender, sender_name, media_url, media_content_type, session_id,
  to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at_iso`);

/** `where` is a condition on the contact's messages. */
async function selectNewestOfContact(em: EntityManager, where: Sql, limit: number, countAll: boolean) {
  // The count is a sub-select of the same statement, so it and the rows come from one snapshot.
  const rows = await queryRows<ListedMessageRow>(
    em,
    sql`select ${LISTED_COLUMNS}, ${countAll ? sql`(select count(*) from messages where ${where})` : sql`null`} as total
       from messages
      where ${where}
      order by created_at desc, id desc
      limit ${limit}`,
  );
  // No row means no message at all (limit is at least 1), so the count is 0.
  const total = rows.length ? Number(rows[0]!.total) : 0;
  return { messages: rows.reverse().map(toListedMessage), total };
}

/** The contact's newest `limit` messages, oldest first (ties by id). */
export async function newestContactMessages(em: EntityManager, accountId: string, contactId: string, limit: number): Promise<ListedMessage[]> {
  return (await selectNewestOfContact(em, sql`account_id = ${accountId} and contact_id = ${contactId}`, limit, false)).messages;
}

/** The same, with the number of all the contact's messages. */
export async function newestContactMessagesAndCount(
  em: EntityManager,
  accountId: string,
  contactId: string,
  limit: number,
): Promise<{ messages: ListedMessage[]; total: number }> {
  return selectNewestOfContact(em, sql`account_id = ${accountId} and contact_id = ${contactId}`, limit, true);
}

/** The newest `limit` of the contact's messages that belong to a chat session, oldest first. */
export async function newestContactSessionMessages(em: EntityManager, accountId: string, contactId: string, limit: number): Promise<ListedMessage[]> {
  const where = sql`account_id = ${accountId} and contact_id = ${contactId} and session_id is not null`;
  return (await selectNewestOfContact(em, where, limit, false)).messages;
}

/**
 * The newest `limit` messages across these sessions of the account together, oldest first:
 * each session's newest `limit` by the session index, then the newest of those, so a page of
 * old, quiet sessions never walks the account's whole history.
 */
export async function newestSessionMessages(em: EntityManager, accountId: string, sessionIds: string[], limit: number): Promise<ListedMessage[]> {
  if (sessionIds.length === 0) return [];
  const rows = await queryRows<ListedMessageRow>(
    em,
    sql`select newest.*
       from chat_sessions s
       cross join lateral (
         select ${LISTED_COLUMNS}, created_at, null as total
           from messages where session_id = s.id order by created_at desc, id desc limit ${limit}
       ) newest
      where s.account_id = ${accountId} and s.id = any(${sessionIds}::text[])
      order by newest.created_at desc, newest.id desc
      limit ${limit}`,
  );
  return rows.reverse().map(toListedMessage);
}
