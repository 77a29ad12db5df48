// GET /chat-sessions/recent: the account's sessions as an inbox shows them, newest activity
// first (a session's last message, kept by the one writer of messages), paged by keyset on
// (last activity, id), the cursor signed by the pagination module. Archived contacts' sessions
// are left out unless `archived` asks for them alone. One statement for the page: each
// session's contact, its last message (by the session's created_at index) and the contact's
// messages after the business's read mark (and the mark itself); with includeMessages, the newest
// SESSION_MESSAGES_LIMIT messages across the page's sessions (session-record.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import { contactDisplayName } from '../contacts/contact-name.ts';
import { PLACEHOLDER_EMAIL } from '../contacts/contact-record.ts';
import { queryRows, rawSql, sql } from '../db/sql.ts';
import { bodyOnOneLine } from '../messages/export-chat.ts';
import type { ListedMessage } from '../messages/newest-messages.ts';
import { invalidCursor, keysetPage, type PageInput } from '../pagination.ts';
import type { Secrets } from '../secrets.ts';
import { messagesBySession, PREVIEW_LENGTH, toChatSession, type RecentChatSessionRecord } from './session-record.ts';

export type RecentSessionsInput = PageInput & { includeMessages?: boolean; archived?: boolean };

type RecentRow = {
  id: string;
  status: 'ChatSessionOpened' | 'ChatSessionClosed';
  tag: string | null;
  started_at: string;
  ended_at: string | null;
  /** The last activity to the microsecond, as the cursor keeps it. */
  activity: string;
  contact_id: string;
  first_name: string;
  last_name: string;
  email: string | null;
  phone_number: string | null;
  is_bot_active: boolean;
  archived: boolean;
  last_body: string | null;
  last_message_at: string | null;
  unread_count: number;
  read_at: string | null;
};

const ISO_MS = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
const ISO_US = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** A cursor's key: `<last activity, µs>|<session id>`. */
function keyOf(row: RecentRow): string {
  return `${row.activity}|${row.id}`;
}

function readKey(key: string): { at: string; id: string } {
  const bar = key.indexOf('|');
  const at = key.slice(0, bar);
  const id = key.slice(bar + 1);
  // A cursor signed before sessions were listed by activity names an id alone.
  if (bar < 0 || !ISO_US.test(at) || id === '') throw invalidCursor();
  return { at, id };
}

/** The body on one line, cut to PREVIEW_LENGTH characters (never through a surrogate pair); null when blank. */
export function previewOf(body: string | null): string | null {
  if (body === null) return null;
  const line = bodyOnOneLine(body);
  if (line === '') return null;
  const cut = line.slice(0, PREVIEW_LENGTH);
  return cut.isWellFormed() ? cut : cut.slice(0, -1);
}

function selectRecent(accountId: string, archived: boolean, after: { at: string; id: string } | null, take: number) {
  const iso = (column: string) => rawSql(`to_char(${column} at time zone 'UTC', ${ISO_MS})`);
  return sql`select s.id, s.status, s.tag, ${iso('s.started_at')} as started_at, ${iso('s.ended_at')} as ended_at,
       to_char(s.last_activity_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as activity,
       c.id as contact_id, c.first_name, c.last_name, c.email, c.phone_number, c.is_bot_active, c.archived_at is not null as archived,
       last.body as last_body, last.at as last_message_at, ${iso('c.business_read_at')} as read_at,
       (select count(*) from messages m
         where m.session_id = s.id and m.direction = 'inbound' and m.created_at > coalesce(c.business_read_at, '-infinity'))::int as unread_count
  from chat_sessions s
  join contacts c on c.id = s.contact_id and c.account_id = s.account_id
  left join lateral (
    select m.body, ${iso('m.created_at')} as at from messages m where m.session_id = s.id order by m.created_at desc, m.id desc limit 1
  ) last on true
 where s.account_id = ${accountId} and (c.archived_at is not null) = ${archived}::boolean
   ${after ? sql`and (s.last_activity_at, s.id) < (${after.at}::timestamptz, ${after.id}::text)` : sql``}
 order by s.last_activity_at desc, s.id desc
 limit ${take}::int`;
}

function toRecentChatSession(row: RecentRow, messages: ListedMessage[] | undefined): RecentChatSessionRecord {
  const { id, ...session } = toChatSession(
    { id: row.id, status: row.status, tag: row.tag, startedAt: new Date(row.started_at), endedAt: row.ended_at === null ? null : new Date(row.ended_at) },
    messages,
  );
  const contact = { id: row.contact_id, firstName: row.first_name, lastName: row.last_name, email: row.email, phoneNumber: row.phone_number };
  return {
    session_id: id,
    ...session,
    contact_id: row.contact_id,
    contact_name: contactDisplayName(contact),
    contact_phone: row.phone_number ?? '',
    contact_email: row.email ?? PLACEHOLDER_EMAIL,
    is_bot_active: row.is_bot_active,
    archived: row.archived,
    last_message_at: row.last_message_at,
    last_message_preview: previewOf(row.last_body),
    unread_count: row.unread_count,
    read_at: row.read_at,
  };
}

export async function listRecentSessions(
  em: EntityManager,
  secrets: Secrets,
  accountId: string,
  input: RecentSessionsInput,
): Promise<{ data: RecentChatSessionRecord[]; next_cursor: string | null }> {
  const archived = input.archived === true;
  // The archived listing is a listing of its own: its cursors are refused by the other.
  const scope = archived ? `recent-chat-sessions-archived:${accountId}` : `recent-chat-sessions:${accountId}`;
  const { items, next_cursor } = await keysetPage(
    secrets,
    scope,
    input,
    (after, take) => queryRows<RecentRow>(em, selectRecent(accountId, archived, after === null ? null : readKey(after), take)),
    keyOf,
  );
  const messages = input.includeMessages ? await messagesBySession(em, accountId, items.map((row) => row.id)) : null;
  return { data: items.map((row) => toRecentChatSession(row, messages ? (messages.get(row.id) ?? []) : undefined)), next_cursor };
}
