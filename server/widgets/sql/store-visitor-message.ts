// The writes of a visitor's message, no entity loaded: the message by the one writer of
// messages (its session, New Message, and Replies when it answers the bot), and in the same
// statement the widget's own parts: when the bot's turn may say or do something, the
// bot-typing flag (naming this message as the one whose turn ends it), the job that takes the
// turn and the live events (the job's add_job notifies in this transaction anyway). Without a
// turn, the live events are handed back to be announced right after the commit
// (ConversationEventFeed.announce): the message then commits without notifying, and does not
// queue behind the other notifying commits for PostgreSQL's notify lock and their WAL flushes. A message whose turn is known to be silent (the bot is paused for
// the contact, or job.needed says the widget gives it nothing to say: the message opens no
// session, the widget has no away message and the message names no hand-off keyword) gets
// neither: no typing shown, no job, no commit of the worker's. The caller holds the contact's row lock,
// so the open session read first is still the open one when the write runs, and a retry of
// the same message (its `messageSid`) finds the first one.
import type pg from 'pg';
import { sql } from '../../db/sql.ts';
import { addJobSql } from '../../jobs.ts';
import type { ContactEventBlock } from '../../messages/contact-event-data.ts';
import { insertMessage } from '../../messages/sql/insert-message.ts';
import { notifyConversationSql, type ConversationEvent } from '../../realtime/conversation-events.ts';
import { conversationMessageOf } from '../conversation-message.ts';

export type VisitorMessage = {
  accountId: string;
  widgetId: string;
  visitorId: string;
  contact: { block: ContactEventBlock; isBotActive: boolean; typing: boolean };
  body: string;
  type: string;
  channel: string;
  status: string;
  mediaUrl: string | null;
  mediaContentType: string | null;
  /** The widget's own id of the message: sent again, it names the same message. */
  externalId: string | null;
  /**
   * The bot's turn: its task, its payload given the message id and whether the message opened
   * a session, and whether the turn may say or do anything at all (given the same).
   */
  job: { task: string; payload(messageId: string, firstOfSession: boolean): unknown; needed(firstOfSession: boolean): boolean };
};

/** What storeVisitorMessage wrote: the message id (the first one's, for a retry), and the live events to announce once it commits. */
export type StoredVisitorMessage = { messageId: string; announce: ConversationEvent[] };

/** Stores the message on `client`'s transaction. */
export async function storeVisitorMessage(client: pg.ClientBase, visit: VisitorMessage): Promise<StoredVisitorMessage> {
  const contactId = visit.contact.block.id;
  let announce: ConversationEvent[] = [];
  const written = await insertMessage(
    client,
    {
      accountId: visit.accountId,
      contact: visit.contact.block,
      direction: 'inbound',
      body: visit.body,
      type: visit.type,
      channel: visit.channel,
      status: visit.status,
      sender: 'contact',
      mediaUrl: visit.mediaUrl,
      mediaContentType: visit.mediaContentType,
      externalId: visit.externalId,
      providerMessageId: null,
      templateId: null,
      repeatOf: visit.externalId,
    },
    ({ message, sessionStarted }) => {
      const target = { accountId: visit.accountId, widgetId: visit.widgetId, visitorId: visit.visitorId, contactId };
      const live: ConversationEvent[] = [{ ...target, kind: 'message', message: conversationMessageOf(message) }];
      // The bot types only while it is active for the contact (not after a human took over).
      const turn = visit.contact.isBotActive && visit.job.needed(sessionStarted);
      // With no turn of its own, the message still shows the indicator that is on (an earlier
      // message's turn, or someone typing through the API), as a message with a turn does.
      if (turn || visit.contact.typing) live.push({ ...target, kind: 'typing', isBotTyping: true });
      if (!turn) {
        announce = live;
        return {};
      }
      return {
        writes: [sql`update contacts set is_bot_typing = true, bot_typing_for = ${message.id}::text where id = ${contactId}::text`],
        calls: [
          addJobSql({ task: visit.job.task, payload: visit.job.payload(message.id, sessionStarted), jobKey: `${visit.job.task}:${message.id}` }),
          notifyConversationSql(live),
        ],
      };
    },
  );
  return { messageId: written.repeated ? written.messageId : written.message.id, announce };
}
