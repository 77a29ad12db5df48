// The writes of a visitor's message in one statement, no entity loaded: the message through
// the one writer of messages, the bot's answer when the widget's settings alone decide it,
// what the visitor's page reported, and the contact's unarchiving. Only a message naming a
// hand-off keyword queues the bot's turn (and notifies with it, as its add_job does anyway);
// any other hands its live events back to be announced after the commit, so its commit does
// not queue for the notify lock. The session read it needs runs before it, under the
// contact's lock, as a statement of its own (one statement reads one snapshot).
import type pg from 'pg';
import { UNARCHIVED_SET, contactUnarchivedEvent } from '../../contacts/sql/unarchive-contact.ts';
import { joinSql, prepared, queryRows, sql, type Sql, type Statement } from '../../db/sql.ts';
import { addJobSql } from '../../jobs.ts';
import type { ContactEventBlock } from '../../messages/contact-event-data.ts';
import { sessionQuery, writeMessageStatement, type MessageContent, type SessionRow } from '../../messages/sql/insert-message.ts';
import { notifyConversationSql } from '../../realtime/publish-conversation-events.ts';
import type { ConversationEvent } from '../../realtime/conversation-event.ts';
import { conversationMessageOf } from '../conversation-message.ts';
import { AWAY_MESSAGE_INTERVAL_MINUTES, type BotAnswers } from '../widget-settings.ts';
import { recordVisitorDetailsSql, type VisitorDetails } from './record-visitor-details.ts';

export type VisitorMessage = {
  accountId: string;
  widgetId: string;
  visitorId: string;
  /** The contact as read under its lock; `archived`: the message unarchives it. */
  contact: { block: ContactEventBlock; isBotActive: boolean; typing: boolean; archived: boolean };
  body: string;
  type: string;
  channel: string;
  status: string;
  mediaUrl: string | null;
  mediaContentType: string | null;
  /** The widget's own id of the message: sent again, it names the same message. */
  externalId: string | null;
  /** What the visitor's page reported with the message, and the request's user agent. */
  details: VisitorDetails;
  /** What the widget's settings have the bot answer (widget-settings.ts botAnswersOf). */
  answers: BotAnswers;
  /** The bot's turn for a hand-off: its task, and its payload given the message id and whether the message opened a session. */
  job: { task: string; payload(messageId: string, firstOfSession: boolean): unknown };
};

/** Whether the bot wrote to the contact within AWAY_MESSAGE_INTERVAL_MINUTES (read under the contact's lock). */
export function botRepliedLatelySql(accountId: string, contactId: string | Sql): Sql {
  return sql`exists (select 1 from messages m where m.account_id = ${accountId} and m.contact_id = ${contactId} and m.sender = 'bot'
        and m.created_at > now() - make_interval(mins => ${AWAY_MESSAGE_INTERVAL_MINUTES}::int))`;
}

export type VisitorSessionRow = SessionRow & { replied_lately: boolean };

/** The writer's session read, and whether the bot replied lately when `checkLately` (only an open session can be that recent); exported for the plan's test. */
export function visitorSessionSql(accountId: string, contactId: string, repeatOf: string | null, checkLately: boolean): Sql {
  const lately = checkLately ? sql`session.id is not null and ${botRepliedLatelySql(accountId, contactId)}` : sql`false`;
  return sql`select session.*, ${lately} as replied_lately from (${sessionQuery(accountId, contactId, false, repeatOf)}) session`;
}

/** The visitor's contact by its key (the unique index on a widget's visitors). */
export type VisitorKey = { accountId: string; widgetId: string; visitorId: string };

/**
 * The same read for the contact known by its key, to send right behind the lock on it
 * (lockVisitorContact), before its id is known: no row without a contact, and the away check
 * only while the bot is active for it.
 */
export function visitorSessionOfKeySql({ accountId, widgetId, visitorId }: VisitorKey, repeatOf: string | null, checkLately: boolean): Statement {
  const contactId = sql`c.id`;
  const lately = checkLately ? sql`c.is_bot_active and session.id is not null and ${botRepliedLatelySql(accountId, contactId)}` : sql`false`;
  return prepared(
    'visitor-message-session-of-key',
    sql`select session.*, ${lately} as replied_lately
  from contacts c cross join lateral (${sessionQuery(accountId, contactId, false, repeatOf)}) session
 where c.account_id = ${accountId} and c.chat_widget_id = ${widgetId} and c.widget_visitor_id = ${visitorId}`,
  );
}

/** Whether the session read checks if the bot replied lately: only when its answer could be the away message. */
export function checksLately(answers: BotAnswers): boolean {
  return !answers.handsOff && answers.awayMessage !== null;
}

/** The session read of a contact this transaction created: it has no session and no message. */
export const NO_SESSION: VisitorSessionRow = { id: null, status: null, last_message_id: null, last_direction: null, repeated_id: null, replied_lately: false };

/** What the bot does for a visitor's message, by the session read. */
export type BotPart = {
  /** The session read. */
  open: VisitorSessionRow;
  /** The text of the bot's answer, written with the message; null for none. */
  reply: string | null;
  /** The bot's turn runs as a job (a hand-off keyword). */
  turn: boolean;
};

/**
 * The session read for a visitor's message (`client` holding the contact's lock) and what the
 * bot does for it; the id of the message it repeats instead, when it is a retry.
 */
export async function readVisitorSession(
  client: pg.ClientBase,
  visit: Pick<VisitorMessage, 'accountId' | 'contact' | 'externalId' | 'answers'>,
): Promise<{ repeatedId: string } | BotPart> {
  const checkLately = visit.contact.isBotActive && checksLately(visit.answers);
  const [open] = await queryRows<VisitorSessionRow>(client, prepared('visitor-message-session', visitorSessionSql(visit.accountId, visit.contact.block.id, visit.externalId, checkLately)));
  return botPartOf(visit, open!);
}

/** What the bot does, given the session read (under the contact's lock); the id of the message it repeats instead, when it is a retry. */
export function botPartOf(visit: Pick<VisitorMessage, 'contact' | 'answers'>, open: VisitorSessionRow): { repeatedId: string } | BotPart {
  const { contact, answers } = visit;
  if (open.repeated_id) return { repeatedId: open.repeated_id };
  const answering = contact.isBotActive && !answers.handsOff;
  const reply = !answering ? null : !open.id ? answers.greeting : open.replied_lately ? null : answers.awayMessage;
  return { open, reply, turn: contact.isBotActive && answers.handsOff };
}

/** The bot's answer to the visitor message `messageId`, keyed as its turn's reply so a turn for the same message never repeats it. */
export function botReplyContent(messageId: string, body: string, channel: string): MessageContent {
  return {
    direction: 'outbound',
    body,
    type: 'text',
    channel,
    status: 'sent',
    sender: 'bot',
    senderName: null,
    mediaUrl: null,
    mediaContentType: null,
    externalId: `bot-turn:${messageId}`,
    providerMessageId: null,
    templateId: null,
  };
}

/** The visitor message's one write: its statement, the message id, and the live events to announce once it commits. */
export type VisitorMessageWrite = { statement: Statement; messageId: string; announce: ConversationEvent[] };

/**
 * The write of a message that is no retry (botPartOf gave `bot`), to run on the transaction
 * holding the contact's row lock that the session read ran under; nothing of the bot's while
 * it is paused for the contact.
 */
export function visitorMessageWrite(visit: VisitorMessage, bot: BotPart): VisitorMessageWrite {
  const contactId = visit.contact.block.id;
  let announce: ConversationEvent[] = [];
  const { reply, turn } = bot;
  // Before the message's own events: it came back before the message was written.
  const unarchived = visit.contact.archived ? [contactUnarchivedEvent(visit.contact.block, 'inbound_message')] : [];
  const { statement, written } = writeMessageStatement(
    {
      accountId: visit.accountId,
      contact: visit.contact.block,
      direction: 'inbound',
      body: visit.body,
      type: visit.type,
      channel: visit.channel,
      status: visit.status,
      sender: 'contact',
      senderName: null,
      mediaUrl: visit.mediaUrl,
      mediaContentType: visit.mediaContentType,
      externalId: visit.externalId,
      providerMessageId: null,
      templateId: null,
      followUp: reply === null ? undefined : (message) => botReplyContent(message.id, reply, visit.channel),
    },
    bot.open,
    ({ message, sessionStarted, followUp }) => {
      const target = { accountId: visit.accountId, widgetId: visit.widgetId, visitorId: visit.visitorId, contactId };
      const live: ConversationEvent[] = [{ ...target, kind: 'message', message: conversationMessageOf(message) }];
      if (followUp) live.push({ ...target, kind: 'message', message: conversationMessageOf(followUp) });
      // With no turn of its own, the message still shows the indicator that is on (an earlier
      // message's turn, or someone typing through the API), as a message with a turn does.
      if (turn || visit.contact.typing) live.push({ ...target, kind: 'typing', isBotTyping: true });
      const seen = recordVisitorDetailsSql(visit.accountId, contactId, visit.details, message.createdAt);
      const sets = [...(turn ? [sql`is_bot_typing = true, bot_typing_for = ${message.id}::text`] : []), ...(visit.contact.archived ? [UNARCHIVED_SET] : [])];
      const writes = sets.length === 0 ? [seen] : [seen, sql`update contacts set ${joinSql(sets)} where id = ${contactId}::text and account_id = ${visit.accountId}::text`];
      if (!turn) {
        announce = live;
        return { writes, events: unarchived };
      }
      return {
        writes,
        events: unarchived,
        calls: [
          addJobSql({ task: visit.job.task, payload: visit.job.payload(message.id, sessionStarted), jobKey: `${visit.job.task}:${message.id}` }),
          notifyConversationSql(live),
        ],
      };
    },
  );
  return { statement, messageId: written.message.id, announce };
}
