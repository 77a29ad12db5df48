// A hand-off: the conversation needs a person. The bot stops for the contact (Contact
// Paused when it was active), and once per chat session a person is alerted (Human
// Alerted, with the reason and the conversation's newest messages) and a chat-widget
// visitor is told a person will answer (by the notice its caller passes: the widget domain's
// noteHandOffToVisitor), instead of silence. Three ways in: POST /contacts/{id}/handoff (an
// app), the widget's "talk to a person" action (POST /chat-widget-handoff), and a visitor
// message matching the widget's `handoffKeywords` (the bot's turn); all go through
// widgets/hand-off-conversation.ts. Runs on the caller's transaction; the contact's row
// lock, taken first, orders concurrent hand-offs, so a session is alerted once.
import type { EntityManager } from '@mikro-orm/postgresql';
import { queryRows, sql } from '../db/sql.ts';
import { NotFoundError } from '../errors.ts';
import { emit } from '../events/emit.ts';
import { publishConversationEvent } from '../realtime/publish-conversation-events.ts';
import { announceBotFlip } from './update-contact.ts';

/** How many of the conversation's newest messages Human Alerted carries. */
export const HANDOFF_RECENT_MESSAGES = 10;
export const MAX_HANDOFF_REASON_LENGTH = 500;
export const MAX_HANDOFF_MESSAGE_LENGTH = 1000;

/** Who asked for the person: an app through the API, the visitor's action, or a keyword in a visitor message. */
export type HandOffSource = 'api' | 'visitor' | 'keyword';
/** `message`: what the visitor is told instead of the widget's `handoffMessage` (POST /contacts/{id}/handoff). */
export type HandOff = { reason: string | null; source: HandOffSource; message?: string | null };
export type HandOffOutcome = { paused: boolean; alerted: boolean };

/** A chat-widget visitor's contact, as the notice of a hand-off needs it. */
export type VisitorToNotify = { contactId: string; widgetId: string; visitorId: string; widgetSettings: unknown };
/**
 * Tells a chat-widget visitor, on `tx`, that a person is coming (in `message`'s words when
 * given), and returns the chat session the notice went into (implemented by the widget
 * domain, which owns the visitor's side).
 */
export type HandOffNotice = (tx: EntityManager, accountId: string, visitor: VisitorToNotify, message: string | null) => Promise<string>;

type ContactRow = {
  was_active: boolean;
  phone_number: string | null;
  email: string | null;
  first_name: string;
  last_name: string;
  chat_widget_id: string | null;
  widget_visitor_id: string | null;
  session_id: string | null;
  alerted: boolean;
  settings: unknown;
};

type RecentRow = { id: string; body: string; direction: string; timestamp: string };

export async function handOff(tx: EntityManager, accountId: string, contactId: string, handoff: HandOff, notice: HandOffNotice): Promise<HandOffOutcome> {
  // The old flag comes from the locked row (the subquery), the rest from the updated one.
  const [contact] = await queryRows<ContactRow>(
    tx,
    sql`with old as (select id, is_bot_active from contacts where id = ${contactId} and account_id = ${accountId} for update)
      update contacts c set is_bot_active = false, updated_at = now() from old where c.id = old.id
      returning old.is_bot_active as was_active, c.phone_number, c.email, c.first_name, c.last_name, c.chat_widget_id, c.widget_visitor_id,
        (select s.id from chat_sessions s where s.contact_id = c.id and s.status = 'ChatSessionOpened' limit 1) as session_id,
        coalesce((select s.human_alerted_at is not null from chat_sessions s where s.contact_id = c.id and s.status = 'ChatSessionOpened' limit 1), false) as alerted,
        (select w.settings from chat_widgets w where w.id = c.chat_widget_id) as settings`,
  );
  if (!contact) throw new NotFoundError('Contact not found');
  await announceBotFlip(tx, accountId, { id: contactId, phone_number: contact.phone_number, email: contact.email }, contact.was_active, false);
  // The account's live feed (the agent console) learns of every hand-off, alerted or not.
  if (contact.chat_widget_id && contact.widget_visitor_id) {
    await publishConversationEvent(tx, { kind: 'handoff', accountId, widgetId: contact.chat_widget_id, visitorId: contact.widget_visitor_id, contactId, reason: handoff.reason });
  }
  if (contact.alerted) return { paused: contact.was_active, alerted: false };

  // The conversation as the person will find it, before the bot's note to the visitor.
  const recent = await queryRows<RecentRow>(
    tx,
    sql`select id, body, direction, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as timestamp
          from messages where account_id = ${accountId} and contact_id = ${contactId} order by created_at desc, id desc limit ${HANDOFF_RECENT_MESSAGES}::int`,
  );

  let sessionId = contact.session_id;
  if (contact.chat_widget_id && contact.widget_visitor_id) {
    const visitor = { contactId, widgetId: contact.chat_widget_id, visitorId: contact.widget_visitor_id, widgetSettings: contact.settings };
    sessionId = await notice(tx, accountId, visitor, handoff.message ?? null);
  }
  // A contact without an open session (nothing said yet on a phone channel) has no session
  // to remember the alert on: each hand-off then alerts.
  if (sessionId) await queryRows(tx, sql`update chat_sessions set human_alerted_at = now() where account_id = ${accountId} and id = ${sessionId} and human_alerted_at is null`);
  await emit(tx, accountId, 'Human Alerted', {
    contact: { id: contactId, phone_number: contact.phone_number, email: contact.email, first_name: contact.first_name, last_name: contact.last_name },
    session_id: sessionId,
    reason: handoff.reason,
    source: handoff.source,
    recent_messages: recent.map((row) => ({ id: row.id, body: row.body, direction: row.direction, timestamp: row.timestamp })),
  });
  return { paused: contact.was_active, alerted: true };
}
