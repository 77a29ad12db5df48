// The one writer of messages (API sends, provider callbacks, template sends, the widget's
// visitor and bot): the message lands in the contact's chat session with its events, as a
// session read and one write the caller can add its own parts to (a job, a flag, live
// notifications), so a change is one round trip. The caller holds the contact's row lock for
// its transaction, so the session read is still true when the write runs.
import type { Message } from '../../db/entities/index.ts';
import { newId } from '../../db/ids.ts';
import { joinSql, oneStatement, prepared, queryRows, runSql, sql, type Sql, type SqlRunner, type Statement } from '../../db/sql.ts';
import { eventsOf, insertEventsSql, newEventRow, type EventRow } from '../../events/sql/insert-events.ts';
import type { ContactEventBlock } from '../contact-event-data.ts';
import { toMessageEventData, type ShownMessage } from '../message-record.ts';

/** A message as stored: what its records, events and live notifications show. */
export type StoredMessage = ShownMessage & Pick<Message, 'providerMessageId' | 'templateId'>;

/** A message as the caller gives it (its id and time are the writer's). */
export type MessageContent = Omit<StoredMessage, 'id' | 'createdAt'>;

export type NewMessage = MessageContent & {
  accountId: string;
  /** The contact, as its events show it (its row locked by the caller). */
  contact: ContactEventBlock;
  /** With no open session, reopen the latest closed one instead of starting one. */
  reopenClosedSession?: boolean;
  /**
   * The sender's own id of an inbound message (its external id): when an inbound message of
   * the contact with that external id is stored already, this is that message sent again (a
   * retry after a lost answer) and nothing is written.
   */
  repeatOf?: string | null;
  /**
   * A message written after this one in the same statement and session (an outbound answer,
   * so it starts no Replies), given this one as written; null for none.
   */
  followUp?: (message: StoredMessage) => MessageContent | null;
};

export type WrittenMessage = {
  repeated: false;
  message: StoredMessage;
  sessionId: string;
  /** No session was open before this message (one was started or reopened). */
  sessionOpened: boolean;
  /** A new session was started for it. */
  sessionStarted: boolean;
  /** The follow-up written after it, if any. */
  followUp: StoredMessage | null;
};
export type RepeatedMessage = { repeated: true; messageId: string };

/** What else the caller's change writes in the same statement, given the message: rows, calls, and events beside the message's. */
export type AlsoWritten = (written: WrittenMessage) => { writes?: Sql[]; calls?: Sql[]; events?: EventRow[] };

/** sessionQuery's row. */
export type SessionRow = { id: string | null; status: string | null; last_message_id: string | null; last_direction: string | null; repeated_id: string | null };

/**
 * The contact's open session (or, for a reopen, its latest), its last message (the session's
 * own record of it), and the message this one repeats; `contactId` a value, or a column of an
 * outer query. Exported for the plan's test.
 */
export function sessionQuery(accountId: string, contactId: string | Sql, reopen: boolean, repeatOf: string | null): Sql {
  const columns = sql`id, status, last_message_id, last_message_direction`;
  const session = reopen
    ? sql`select ${columns} from chat_sessions where account_id = ${accountId} and contact_id = ${contactId}
          order by status = 'ChatSessionOpened' desc, started_at desc, id desc limit 1`
    : sql`select ${columns} from chat_sessions where account_id = ${accountId} and contact_id = ${contactId} and status = 'ChatSessionOpened'
          order by started_at desc, id desc limit 1`;
  const repeated =
    repeatOf === null
      ? sql`null::text`
      : sql`(select m.id from messages m where m.account_id = ${accountId} and m.contact_id = ${contactId} and m.external_id = ${repeatOf} and m.direction = 'inbound'
              order by m.created_at, m.id limit 1)`;
  return sql`select s.id, s.status, s.last_message_id, s.last_message_direction as last_direction, ${repeated} as repeated_id
  from (select 1) one
  left join lateral (${session}) s on true`;
}

/** Stores the message on the runner's transaction (the caller's, holding the contact's lock). */
export async function insertMessage(runner: SqlRunner, input: NewMessage, also?: AlsoWritten): Promise<WrittenMessage | RepeatedMessage> {
  const contactId = input.contact.id;
  const repeatOf = input.direction === 'inbound' ? (input.repeatOf ?? null) : null;
  const [open] = await queryRows<SessionRow>(runner, prepared('message-session', sessionQuery(input.accountId, contactId, input.reopenClosedSession === true, repeatOf)));
  if (open?.repeated_id) return { repeated: true, messageId: open.repeated_id };
  return writeMessage(runner, input, open ?? null, also);
}

/**
 * The write of insertMessage, given sessionQuery's row for the contact (read under the
 * contact's lock on this transaction, with `input.reopenClosedSession` as the read's `reopen`,
 * and not a repeat).
 */
export async function writeMessage(runner: SqlRunner, input: NewMessage, open: SessionRow | null, also?: AlsoWritten): Promise<WrittenMessage> {
  const { statement, written } = writeMessageStatement(input, open, also);
  await runSql(runner, statement);
  return written;
}

/** writeMessage's statement, for a caller that sends it itself (with its COMMIT, say), and what it writes. */
export function writeMessageStatement(input: NewMessage, open: SessionRow | null, also?: AlsoWritten): { statement: Statement; written: WrittenMessage } {
  const contactId = input.contact.id;
  const sessionStarted = !open?.id;
  const sessionId = open?.id ?? newId('cs');
  const message: StoredMessage = { id: newId('msg'), ...contentOf(input), createdAt: new Date() };
  const answer = input.followUp?.(message) ?? null;
  // 1 ms later: readers order a session's messages by created_at (then id).
  const followUp: StoredMessage | null = answer && { id: newId('msg'), ...contentOf(answer), createdAt: new Date(message.createdAt.getTime() + 1) };
  const written: WrittenMessage = { repeated: false, message, sessionId, sessionOpened: open?.status !== 'ChatSessionOpened', sessionStarted, followUp };

  const data = { message: toMessageEventData(message, sessionId), contact: input.contact };
  const events = [newEventRow('New Message', data)];
  // Replies: an inbound message answering an outbound one (the first inbound message after an
  // outbound message of the session). A session just started has no message to answer.
  if (input.direction === 'inbound' && open?.last_message_id && open.last_direction !== 'inbound') {
    events.push(newEventRow('Replies', { ...data, in_reply_to: open.last_message_id }));
  }
  if (followUp) events.push(newEventRow('New Message', { message: toMessageEventData(followUp, sessionId), contact: input.contact }));

  const createdAt = message.createdAt.toISOString();
  const last = followUp ?? message;
  const lastAt = last.createdAt.toISOString();
  const latest = sql`(last_message_id is null or last_activity_at <= ${lastAt}::timestamptz)`;
  const extra = also?.(written) ?? {};
  const statement = oneStatement({
    writes: [
      sql`insert into chat_sessions (id, account_id, contact_id, status, tag, started_at, ended_at, last_activity_at, last_message_id, last_message_direction)
  select ${sessionId}::text, ${input.accountId}::text, ${contactId}::text, 'ChatSessionOpened', null, ${createdAt}::timestamptz, null, ${lastAt}::timestamptz,
         ${last.id}::text, ${last.direction}::text
   where ${sessionStarted}::boolean`,
      // The session read found it open, or (a reopen) its latest: either way open now. Its
      // last message is this one unless one of a later time is there (written by a process
      // whose clock runs ahead): the session's messages are read in time order.
      sql`update chat_sessions set status = 'ChatSessionOpened', ended_at = null, last_activity_at = greatest(last_activity_at, ${lastAt}::timestamptz),
         last_message_id = case when ${latest} then ${last.id}::text else last_message_id end,
         last_message_direction = case when ${latest} then ${last.direction}::text else last_message_direction end
   where id = ${sessionId}::text and account_id = ${input.accountId}::text and ${!sessionStarted}::boolean`,
      sql`insert into messages (id, account_id, contact_id, session_id, direction, body, type, channel, status, sender, sender_name,
                      media_url, media_content_type, external_id, provider_message_id, template_id, read_at, created_at)
  values ${joinSql([message, ...(followUp ? [followUp] : [])].map((row) => messageValues(input.accountId, contactId, sessionId, row)))}`,
      insertEventsSql(eventsOf(input.accountId, [...events, ...(extra.events ?? [])])),
      ...(extra.writes ?? []),
    ],
    calls: extra.calls,
  });
  return { statement: prepared('insert-message', statement), written };
}

function contentOf(content: MessageContent): MessageContent {
  return {
    direction: content.direction,
    body: content.body,
    type: content.type,
    channel: content.channel,
    status: content.status,
    sender: content.sender,
    senderName: content.senderName,
    mediaUrl: content.mediaUrl,
    mediaContentType: content.mediaContentType,
    externalId: content.externalId,
    providerMessageId: content.providerMessageId,
    templateId: content.templateId,
  };
}

function messageValues(accountId: string, contactId: string, sessionId: string, message: StoredMessage): Sql {
  return sql`(${message.id}::text, ${accountId}::text, ${contactId}::text, ${sessionId}::text, ${message.direction}::text, ${message.body}::text,
          ${message.type}::text, ${message.channel}::text, ${message.status}::text, ${message.sender}::text, ${message.senderName}::text, ${message.mediaUrl}::text,
          ${message.mediaContentType}::text, ${message.externalId}::text, ${message.providerMessageId}::text, ${message.templateId}::text,
          null, ${message.createdAt.toISOString()}::timestamptz)`;
}
