// POST /contacts/{contactId}/typing: someone answering a widget visitor through the API
// shows (or hides) the typing indicator. On, it lasts TYPING_TTL_SECONDS unless renewed:
// the visitor's GET /chat-widget-messages reads `bot_typing_until` against the database
// clock, and a job at that time tells the visitor's sockets it ended. The bot's own flag
// (`is_bot_typing`, set by a visitor message and cleared by the bot's turn) is separate;
// the visitor sees typing while either is on. A contact that is not a widget visitor has
// nobody to tell: the call succeeds and changes nothing.
import type { EntityManager } from '@mikro-orm/postgresql';
import { queryRows, sql } from '../db/sql.ts';
import { NotFoundError } from '../errors.ts';
import { enqueueJob } from '../jobs.ts';
import { publishConversationEvent } from '../realtime/publish-conversation-events.ts';

export const TYPING_TTL_SECONDS = 15;
export const TYPING_EXPIRED_TASK = 'typing_expired';

export type TypingExpiredJob = { accountId: string; contactId: string };

type TypingRow = { chat_widget_id: string | null; widget_visitor_id: string | null; is_bot_typing: boolean; bot_typing_until: Date | string | null };

export async function setTyping(em: EntityManager, accountId: string, contactId: string, typing: boolean): Promise<void> {
  await em.transactional(async (tx) => {
    const [row] = await queryRows<TypingRow>(
      tx,
      sql`update contacts
          set bot_typing_until = case when ${typing}::boolean and widget_visitor_id is not null then now() + make_interval(secs => ${TYPING_TTL_SECONDS}) end
        where id = ${contactId} and account_id = ${accountId}
      returning chat_widget_id, widget_visitor_id, is_bot_typing, bot_typing_until`,
    );
    if (!row) throw new NotFoundError('Contact not found');
    if (!row.chat_widget_id || !row.widget_visitor_id) return;
    const target = { accountId, widgetId: row.chat_widget_id, visitorId: row.widget_visitor_id, contactId };
    await publishConversationEvent(tx, { ...target, kind: 'typing', isBotTyping: typing || row.is_bot_typing });
    if (typing && row.bot_typing_until) {
      // One pending expiry per contact: a renewal moves it to the new time.
      const job: TypingExpiredJob = { accountId, contactId };
      await enqueueJob(tx, TYPING_EXPIRED_TASK, job, { runAt: new Date(row.bot_typing_until), jobKey: `${TYPING_EXPIRED_TASK}:${contactId}` });
    }
  });
}

/**
 * The expiry's job: when the typing time has passed (and was not renewed or turned off
 * meanwhile), it ends and the visitor's sockets are told, unless the bot is typing.
 */
export async function expireTyping(em: EntityManager, job: TypingExpiredJob): Promise<boolean> {
  return em.transactional(async (tx) => {
    const [row] = await queryRows<TypingRow>(
      tx,
      sql`update contacts set bot_typing_until = null
        where id = ${job.contactId} and account_id = ${job.accountId} and bot_typing_until <= now()
      returning chat_widget_id, widget_visitor_id, is_bot_typing, bot_typing_until`,
    );
    if (!row?.chat_widget_id || !row.widget_visitor_id) return false;
    if (!row.is_bot_typing) {
      const target = { accountId: job.accountId, widgetId: row.chat_widget_id, visitorId: row.widget_visitor_id, contactId: job.contactId };
      await publishConversationEvent(tx, { ...target, kind: 'typing', isBotTyping: false });
    }
    return true;
  });
}
