// GET /chat-widget-messages: a visitor's conversation with a widget, polled every few
// seconds by every open widget page, so it is ONE statement on the pool: the contact (by
// the unique widget + visitor pair), its bot-typing flag, the widget's allowed origins
// and the page of messages (by the contact's created_at index).
import type pg from 'pg';
import type { ConversationMessage } from '../realtime/conversation-events.ts';
import { NotFoundError } from '../errors.ts';
import { refuseForeignOrigin, type RequestOrigin } from './check-widget-origin.ts';
import { CONVERSATION_MESSAGE_COLUMNS, toConversationMessage, type ConversationMessageRow } from './conversation-message.ts';

/**
 * Most messages one answer carries: the oldest ones after `after` (all sessions, oldest
 * first); ask again with the last one's timestamp, in milliseconds, for the rest.
 */
export const CONVERSATION_PAGE_SIZE = 200;

const SELECT_CONVERSATION = `
-- Typing: the bot's turn, or someone answering through the API until their time runs out.
select (c.is_bot_typing or coalesce(c.bot_typing_until > now(), false)) as is_bot_typing, w.settings->'allowedOrigins' as allowed_origins,
  coalesce((
    select json_agg(page order by page.created_at, page.id)
    from (
      select ${CONVERSATION_MESSAGE_COLUMNS}, created_at
      from messages
      where contact_id = c.id
        and ($3::bigint is null or created_at > timestamptz 'epoch' + $3::bigint * interval '1 millisecond')
      order by created_at, id
      limit ${CONVERSATION_PAGE_SIZE}
    ) page
  ), '[]'::json) as messages
from contacts c join chat_widgets w on w.id = c.chat_widget_id
where c.chat_widget_id = $1 and c.widget_visitor_id = $2`;

export type ConversationQuery = { widgetId: string; visitorId: string; after?: number };
export type Conversation = { messages: ConversationMessage[]; isBotTyping: boolean };

export async function listConversationMessages(pool: pg.Pool, query: ConversationQuery, request: RequestOrigin): Promise<Conversation> {
  const { rows } = await pool.query<{ is_bot_typing: boolean; allowed_origins: string[] | null; messages: ConversationMessageRow[] }>({
    name: 'list-widget-conversation',
    text: SELECT_CONVERSATION,
    values: [query.widgetId, query.visitorId, query.after ?? null],
  });
  const row = rows[0];
  if (!row) throw new NotFoundError('Contact not found');
  refuseForeignOrigin(request, { allowedOrigins: Array.isArray(row.allowed_origins) ? row.allowed_origins : undefined });
  return { messages: row.messages.map(toConversationMessage), isBotTyping: row.is_bot_typing };
}
