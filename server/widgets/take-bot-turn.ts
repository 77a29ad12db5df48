// The bot's turn after a visitor message that names a hand-off keyword (job
// `chat_widget_message`): it hands the conversation to a person, then ends the bot's typing
// unless a later visitor message waits for its own turn. A job queued before the greeting and
// the away message were written with the visitor's message still gives them. Safe to retry:
// the reply is keyed by the visitor message's id. The rules: docs/chat-widget.md.
import type { EntityManager } from '@mikro-orm/postgresql';
import { queryRows, runSql, sql, type Sql } from '../db/sql.ts';
import type { ContactEventBlock } from '../messages/contact-event-data.ts';
import { sessionQuery, writeMessage, type SessionRow } from '../messages/sql/insert-message.ts';
import type { ConversationEvent, ConversationEventFeed } from '../realtime/conversation-event.ts';
import { conversationMessageOf } from './conversation-message.ts';
import { handOffConversation } from './hand-off-conversation.ts';
import { WIDGET_CHANNEL } from './find-or-create-visitor.ts';
import type { BotTurnJob } from './receive-visitor-message.ts';
import { botRepliedLatelySql } from './sql/store-visitor-message.ts';
import { DEFAULT_GREETING, matchHandoffKeyword, readSettings } from './widget-settings.ts';

export type BotTurnOutcome = 'replied' | 'handed-off' | 'silent' | 'already-taken' | 'no-contact';

/** What the turn reads first, with the contact's lock. */
type LockedContact = ContactEventBlock & {
  is_bot_active: boolean;
  is_bot_typing: boolean;
  /** This turn's message is the one whose turn ends the bot's typing. */
  ends_typing: boolean;
  api_typing: boolean;
  widget_visitor_id: string;
  has_widget: boolean;
  settings: unknown;
  body: string | null;
  taken: boolean;
};

/**
 * The contact locked, with what no other turn or message changes meanwhile: the widget's
 * settings, the visitor message's text, and whether this turn's reply is recorded already
 * (only this job writes it, and a job runs once at a time).
 */
function lockContactSql(job: BotTurnJob, replyKey: string): Sql {
  return sql`select c.id, c.phone_number, c.email, c.first_name, c.last_name, c.is_bot_active, c.is_bot_typing,
       coalesce(c.bot_typing_for = ${job.messageId}, false) as ends_typing,
       coalesce(c.bot_typing_until > now(), false) as api_typing, c.widget_visitor_id,
       w.id is not null as has_widget, w.settings,
       (select m.body from messages m where m.account_id = c.account_id and m.id = ${job.messageId}) as body,
       exists (select 1 from messages m where m.account_id = c.account_id and m.contact_id = c.id and m.external_id = ${replyKey}) as taken
  from contacts c left join chat_widgets w on w.id = ${job.widgetId} and w.account_id = ${job.accountId}
 where c.id = ${job.contactId} and c.account_id = ${job.accountId}
   for update of c`;
}

/** The contact's newest inbound message id (read after the lock: a visitor message may have come meanwhile). */
function latestInboundSql(accountId: string, contactId: string): Sql {
  return sql`(select m.id from messages m where m.account_id = ${accountId} and m.contact_id = ${contactId} and m.direction = 'inbound' order by m.created_at desc, m.id desc limit 1)`;
}

type ReplyRead = SessionRow & { latest_id: string | null; recent: boolean };

/**
 * What a reply needs, read under the lock in one statement: the session the reply goes into
 * (for the one writer of messages), the newest inbound message (does typing end?) and, for
 * the away message, whether the bot replied to this visitor lately.
 */
function replyReadSql(accountId: string, contactId: string, checkRecent: boolean): Sql {
  const recent = checkRecent ? botRepliedLatelySql(accountId, contactId) : sql`false`;
  return sql`select session.*, ${latestInboundSql(accountId, contactId)} as latest_id, ${recent} as recent
  from (${sessionQuery(accountId, contactId, false, null)}) session`;
}

/**
 * A turn that writes nothing but the typing flag commits without waiting for its WAL flush
 * (synchronous_commit off for its transaction): the job's completion, committed after it
 * and synchronously, flushes the WAL through this commit too, and until then a crash loses
 * at most the flag's change along with the completion, so the job runs again.
 */
const FLAG_ONLY_COMMIT = sql`set_config('synchronous_commit', 'off', true)`;

/**
 * Typing ends when this turn's message is the one the contact names for it, or the contact's
 * newest visitor message (a later one waits for its own turn); `flagOnly`: the turn writes
 * nothing else.
 */
function endTypingSql(accountId: string, contactId: string, messageId: string, flagOnly: boolean): Sql {
  return sql`update contacts set is_bot_typing = false
   where account_id = ${accountId} and id = ${contactId} and is_bot_typing
     and (bot_typing_for = ${messageId}::text or ${latestInboundSql(accountId, contactId)} = ${messageId}::text)
  returning ${flagOnly ? FLAG_ONLY_COMMIT : sql`id`}`;
}

/**
 * The turn, in one transaction; its live events (the reply, typing ended) are announced once
 * it has committed, through `feed` (the worker's bot turns are most of the commits that
 * would otherwise notify; see announceAfterCommitText). Between BEGIN and COMMIT: the
 * lock with the reads no other change can move; for a silent turn, the typing flag's
 * conditional update when typing is on; for a possible reply, one read after the lock (its
 * session, the newest visitor message, the away check) and one write (the reply and the
 * typing flag). A hand-off runs its own statements (hand-off-conversation.ts).
 */
export async function takeBotTurn(em: EntityManager, job: BotTurnJob, feed: Pick<ConversationEventFeed, 'announce'>): Promise<BotTurnOutcome> {
  const live: ConversationEvent[] = [];
  const replyKey = `bot-turn:${job.messageId}`;
  const turn = await em.transactional(async (tx) => {
    // The contact's row lock orders the turns of one visitor's messages.
    const [contact] = await queryRows<LockedContact>(tx, lockContactSql(job, replyKey));
    if (!contact) return 'no-contact';
    const target = { accountId: job.accountId, widgetId: job.widgetId, visitorId: contact.widget_visitor_id, contactId: job.contactId };
    const typingEnded = () => {
      // Someone typing through the API keeps the indicator on (server/widgets/set-typing.ts).
      if (!contact.api_typing) live.push({ ...target, kind: 'typing', isBotTyping: false });
    };

    // A deleted widget has no settings left to answer from.
    const settings = contact.is_bot_active && !contact.taken && contact.has_widget ? readSettings(contact.settings) : null;
    const keyword = settings && contact.body ? matchHandoffKeyword(contact.body, settings.handoffKeywords) : null;
    // The reply this turn may give: the greeting, or the away message unless the bot replied lately.
    const candidate = !settings || keyword ? null : job.firstOfSession ? (settings.greeting ?? DEFAULT_GREETING) : (settings.awayMessage ?? null);

    if (candidate) {
      const [read] = await queryRows<ReplyRead>(tx, replyReadSql(job.accountId, job.contactId, !job.firstOfSession));
      const endsTyping = contact.is_bot_typing && (contact.ends_typing || read!.latest_id === job.messageId);
      if (read!.recent) {
        if (endsTyping) {
          const ended = await runSql(tx, endTypingSql(job.accountId, job.contactId, job.messageId, true));
          if (ended.rowCount > 0) typingEnded();
        }
        return 'silent';
      }
      const reply = await writeMessage(
        tx,
        {
          accountId: job.accountId,
          contact: { id: contact.id, phone_number: contact.phone_number, email: contact.email, first_name: contact.first_name, last_name: contact.last_name },
          direction: 'outbound',
          body: candidate,
          type: 'text',
          channel: WIDGET_CHANNEL,
          status: 'sent',
          sender: 'bot',
          senderName: null,
          mediaUrl: null,
          mediaContentType: null,
          externalId: replyKey,
          providerMessageId: null,
          templateId: null,
        },
        read!,
        () => ({ writes: endsTyping ? [sql`update contacts set is_bot_typing = false where account_id = ${job.accountId} and id = ${job.contactId}::text`] : [] }),
      );
      live.push({ ...target, kind: 'message', message: conversationMessageOf(reply.message) });
      if (endsTyping) typingEnded();
      return 'replied';
    }

    let outcome: BotTurnOutcome = contact.taken ? 'already-taken' : 'silent';
    if (keyword) {
      await handOffConversation(tx, job.accountId, job.contactId, { reason: `The visitor wrote "${keyword}"`, source: 'keyword' });
      outcome = 'handed-off';
    }
    if (contact.is_bot_typing) {
      // A hand-off's commit (its events, the note to the visitor) is waited for as usual.
      const ended = await runSql(tx, endTypingSql(job.accountId, job.contactId, job.messageId, !keyword));
      if (ended.rowCount > 0) typingEnded();
    }
    return outcome;
  });
  await feed.announce(live);
  return turn;
}
