// The bot's turn after a visitor message (job `chat_widget_message`). With no bot
// connected, the widget answers from its settings:
// - the first visitor message of a chat session gets the `greeting` (DEFAULT_GREETING
//   when the widget has none);
// - a later message gets the `awayMessage`, when one is set and the bot has not replied
//   to this visitor within AWAY_MESSAGE_INTERVAL_MINUTES;
// - nothing while the bot is paused for the contact (a human took over);
// - a message matching one of the widget's `handoffKeywords` hands the conversation to a
//   person instead (hand-off-conversation.ts: the bot pauses, Human Alerted, and the
//   visitor gets the `handoffMessage`). Checked here rather than when the message arrives,
//   so the visitor's push stays as short as it is.
// A second message within AWAY_MESSAGE_INTERVAL_MINUTES of a bot reply gets no new reply
// (the greeting already said someone will answer); its typing indicator ends all the same.
// Then typing ends, unless a later visitor message is waiting for its own turn.
// Safe to retry: the reply carries the visitor message's id (external id
// `bot-turn:<messageId>`), and a turn that finds it already recorded does not reply again.
import type { EntityManager } from '@mikro-orm/postgresql';
import { queryRows, runSql, sql } from '../db/sql.ts';
import { recordMessage } from '../messages/record-message.ts';
import type { ConversationEvent, ConversationEventFeed } from '../realtime/conversation-events.ts';
import { conversationMessageOf } from './conversation-message.ts';
import { handOffConversation } from './hand-off-conversation.ts';
import { WIDGET_CHANNEL } from './find-or-create-visitor.ts';
import type { BotTurnJob } from './receive-visitor-message.ts';
import { readSettings, type WidgetSettings } from './widget-settings.ts';

export const DEFAULT_GREETING = 'Hi! Thanks for your message. We will get back to you here as soon as we can.';
export const AWAY_MESSAGE_INTERVAL_MINUTES = 10;

export type BotTurnOutcome = 'replied' | 'handed-off' | 'silent' | 'already-taken' | 'no-contact';

/**
 * The first of `keywords` the text holds as whole words, case-insensitively: `person` matches
 * "A person, please" but not "personal"; a phrase matches with its words in order. Letters and
 * digits of any script count as word characters.
 */
export function matchHandoffKeyword(text: string, keywords: readonly string[] | undefined): string | null {
  if (!keywords?.length) return null;
  const haystack = text.toLocaleLowerCase();
  for (const keyword of keywords) {
    const words = keyword.trim().toLocaleLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length) continue;
    const phrase = words.map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\s+');
    if (new RegExp(`(?<![\\p{L}\\p{N}])${phrase}(?![\\p{L}\\p{N}])`, 'u').test(haystack)) return keyword;
  }
  return null;
}

async function chooseReply(em: EntityManager, job: BotTurnJob, settings: WidgetSettings): Promise<string | null> {
  if (job.firstOfSession) return settings.greeting ?? DEFAULT_GREETING;
  if (!settings.awayMessage) return null;
  const [recent] = await queryRows(
    em,
    sql`select 1 from messages where contact_id = ${job.contactId} and sender = 'bot'
        and created_at > now() - make_interval(mins => ${AWAY_MESSAGE_INTERVAL_MINUTES}::int) limit 1`,
  );
  return recent ? null : settings.awayMessage;
}

/**
 * The turn, in one transaction; its live events (the reply, typing ended) are announced once
 * it has committed, through `feed` (the worker's bot turns are most of the commits that
 * would otherwise notify; see ConversationEventFeed.announce).
 */
export async function takeBotTurn(em: EntityManager, job: BotTurnJob, feed: Pick<ConversationEventFeed, 'announce'>): Promise<BotTurnOutcome> {
  const live: ConversationEvent[] = [];
  const turn = await em.transactional(async (tx) => {
    // The contact's row lock orders the turns of one visitor's messages.
    const [contact] = await queryRows<{ is_bot_active: boolean; is_bot_typing: boolean; api_typing: boolean; widget_visitor_id: string }>(
      tx,
      sql`select is_bot_active, is_bot_typing, coalesce(bot_typing_until > now(), false) as api_typing, widget_visitor_id
            from contacts where id = ${job.contactId} and account_id = ${job.accountId} for update`,
    );
    if (!contact) return 'no-contact';
    const target = { accountId: job.accountId, widgetId: job.widgetId, visitorId: contact.widget_visitor_id, contactId: job.contactId };
    const replyKey = `bot-turn:${job.messageId}`;

    let outcome: BotTurnOutcome = 'silent';
    const [taken] = await queryRows(tx, sql`select 1 from messages where contact_id = ${job.contactId} and external_id = ${replyKey} limit 1`);
    if (taken) {
      outcome = 'already-taken';
    } else if (contact.is_bot_active) {
      // A deleted widget has no settings left to answer from.
      const [widget] = await queryRows<{ settings: unknown; body: string | null }>(
        tx,
        sql`select settings, (select body from messages where id = ${job.messageId}) as body from chat_widgets where id = ${job.widgetId} and account_id = ${job.accountId}`,
      );
      const settings = widget ? readSettings(widget.settings) : null;
      const keyword = settings && widget?.body ? matchHandoffKeyword(widget.body, settings.handoffKeywords) : null;
      const text = settings && !keyword ? await chooseReply(tx, job, settings) : null;
      if (keyword) {
        await handOffConversation(tx, job.accountId, job.contactId, { reason: `The visitor wrote "${keyword}"`, source: 'keyword' });
        outcome = 'handed-off';
      } else if (text) {
        const reply = await recordMessage(tx, job.accountId, {
          contactId: job.contactId,
          direction: 'outbound',
          body: text,
          channel: WIDGET_CHANNEL,
          sender: 'bot',
          externalId: replyKey,
        });
        await tx.flush();
        live.push({ ...target, kind: 'message', message: conversationMessageOf(reply.message) });
        outcome = 'replied';
      }
    }

    const [latest] = await queryRows<{ id: string }>(
      tx,
      sql`select id from messages where contact_id = ${job.contactId} and direction = 'inbound' order by created_at desc, id desc limit 1`,
    );
    if (contact.is_bot_typing && latest?.id === job.messageId) {
      await runSql(tx, sql`update contacts set is_bot_typing = false where id = ${job.contactId}`);
      // Someone typing through the API keeps the indicator on (server/widgets/set-typing.ts).
      if (!contact.api_typing) live.push({ ...target, kind: 'typing', isBotTyping: false });
    }
    return outcome;
  });
  await feed.announce(live);
  return turn;
}
