// The writes of a visitor's message, in SQL on the transaction's connection, no entity
// loaded: the rows recordMessage (server/messages/record-message.ts) writes for any
// message (its session, opened when none is open; New Message, and Replies when it
// answers the bot), plus the widget's own: the bot-typing flag, the job that takes the
// bot's turn, and the live events. Two statements: the caller holds the contact's row
// lock, so the open session read by the first is still the open one when the second writes.
import type pg from 'pg';
import { newId } from '../../db/ids.ts';
import { newEventRow, payloadWithUserSql } from '../../events/emit.ts';
import { addJobSql, jobPayloadJson } from '../../jobs.ts';
import type { ContactEventBlock } from '../../messages/contact-event-data.ts';
import { toMessageEventData, type ShownMessage } from '../../messages/message-record.ts';
import { conversationNotifySql, type ConversationEvent } from '../../realtime/conversation-events.ts';
import { conversationMessageOf } from '../conversation-message.ts';

/** The contact's open chat session, and the last message in it (for the Replies rule). */
const OPEN_SESSION = {
  name: 'visitor-open-session',
  text: `select s.id, last.id as last_message_id, last.direction as last_direction
  from chat_sessions s
  left join lateral (
    select m.id, m.direction from messages m where m.session_id = s.id order by m.created_at desc, m.id desc limit 1
  ) last on true
  where s.contact_id = $1 and s.status = 'ChatSessionOpened'
  order by s.started_at desc, s.id desc
  limit 1`,
};

/** Parameters of the write before the notifications' (channel, then one payload per event). */
const NOTIFY_FROM = 21;

// $1 session, $2 whether to open it, $3 account, $4 contact, $5 time, $6..$15 the message,
// $16 the events ([{id, name, payload}], payloads without `user`), $17 their request id,
// $18 task, $19 job payload, $20 job key. One prepared text per number of notifications.
function writeStatementText(notifySql: string): string {
  return `with new_session as (
  insert into chat_sessions (id, account_id, contact_id, status, tag, started_at, ended_at)
  select $1, $3, $4, 'ChatSessionOpened', null, $5::timestamptz, null where $2::boolean
), message as (
  insert into messages (id, account_id, contact_id, session_id, direction, body, type, channel, status, sender,
                        media_url, media_content_type, external_id, read_at, created_at)
  values ($6, $3, $4, $1, $7, $8, $9, $10, $11, $12, $13::text, $14::text, $15::text, null, $5::timestamptz)
), events as (
  insert into events (id, account_id, name, payload, request_id)
  select e.id, a.id, e.name, ${payloadWithUserSql('e.payload', 'a')}, $17::text
    from accounts a, jsonb_to_recordset($16::jsonb) as e(id text, name text, payload jsonb) where a.id = $3
), typing as (
  update contacts set is_bot_typing = is_bot_active where id = $4
)
select ${addJobSql('$18::text', '$19', '$20::text')}, ${notifySql}`;
}

export type VisitorMessage = {
  accountId: string;
  widgetId: string;
  visitorId: string;
  contact: { block: ContactEventBlock; isBotActive: boolean };
  body: string;
  type: string;
  channel: string;
  status: string;
  mediaUrl: string | null;
  mediaContentType: string | null;
  externalId: string | null;
  /** The bot's turn: its task, and its payload given the message id and whether the message opened a session. */
  job: { task: string; payload(messageId: string, firstOfSession: boolean): unknown };
};

/** Stores the message on `client`'s transaction; returns its id. */
export async function storeVisitorMessage(client: pg.ClientBase, visit: VisitorMessage): Promise<{ messageId: string }> {
  const contactId = visit.contact.block.id;
  const [open] = (
    await client.query<{ id: string; last_message_id: string | null; last_direction: string | null }>({ ...OPEN_SESSION, values: [contactId] })
  ).rows;
  const sessionId = open?.id ?? newId('cs');
  const message: ShownMessage = {
    id: newId('msg'),
    direction: 'inbound',
    body: visit.body,
    type: visit.type,
    channel: visit.channel,
    status: visit.status,
    sender: 'contact',
    mediaUrl: visit.mediaUrl,
    mediaContentType: visit.mediaContentType,
    externalId: visit.externalId,
    createdAt: new Date(),
  };

  const data = { message: toMessageEventData(message, sessionId), contact: visit.contact.block };
  const events = [newEventRow('New Message', data)];
  // An inbound message answers the one before it in the session when that was not inbound.
  if (open?.last_message_id && open.last_direction !== 'inbound') {
    events.push(newEventRow('Replies', { ...data, in_reply_to: open.last_message_id }));
  }

  const target = { accountId: visit.accountId, widgetId: visit.widgetId, visitorId: visit.visitorId, contactId };
  const live: ConversationEvent[] = [{ ...target, kind: 'message', message: conversationMessageOf(message) }];
  // The bot types only while it is active for the contact (not after a human took over).
  if (visit.contact.isBotActive) live.push({ ...target, kind: 'typing', isBotTyping: true });
  const notify = conversationNotifySql(live, NOTIFY_FROM);

  await client.query({
    name: `store-visitor-message-${live.length}`,
    text: writeStatementText(notify.sql),
    values: [
      sessionId,
      !open,
      visit.accountId,
      contactId,
      message.createdAt.toISOString(),
      message.id,
      message.direction,
      message.body,
      message.type,
      message.channel,
      message.status,
      message.sender,
      message.mediaUrl,
      message.mediaContentType,
      message.externalId,
      JSON.stringify(events.map((event) => ({ id: event.id, name: event.name, payload: event.payload }))),
      events[0]!.requestId,
      visit.job.task,
      jobPayloadJson(visit.job.payload(message.id, !open)),
      `${visit.job.task}:${message.id}`,
      ...notify.values,
    ],
  });
  return { messageId: message.id };
}
