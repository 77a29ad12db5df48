// GET /chat-widget-messages: a visitor's conversation with a widget, polled every few
// seconds by every open widget page, so it is ONE statement on the pool: the poll counted
// against the client address and the visitor (count-visitor-requests.ts), the widget's
// allowed origins and identity mode, the contact (by the unique widget + visitor pair), its
// bot-typing flag and the page of messages (by the contact's created_at index). A visitor
// with an identity token costs one statement more: the widget's secret, read first.
import type pg from 'pg';
import type { Config } from '../config.ts';
import { prepared, rawSql, sql, type Sql } from '../db/sql.ts';
import { NotFoundError } from '../errors.ts';
import type { Secrets } from '../secrets.ts';
import { refuseForeignOrigin } from './check-widget-origin.ts';
import { CONVERSATION_MESSAGE_COLUMNS, toConversationMessage, type ConversationMessage, type ConversationMessageRow } from './conversation-message.ts';
import { addressBucket, countingChain, countingRefusals, runCountingStatement, type CountedRow, type CountingChain } from './count-visitor-requests.ts';
import { visitorBeforeStatement } from './read-widget-identity.ts';
import { checkWidgetVisitor, type VisitorRequest } from './visitor-identity.ts';

/**
 * Most messages one answer carries, oldest first (all sessions): the oldest ones after
 * `after`, ask again with the last one's timestamp, in milliseconds, for the rest; or, with
 * `before`, the newest ones before it, so a widget opens at the latest messages and loads
 * earlier ones with its first one's timestamp.
 */
export const CONVERSATION_PAGE_SIZE = 200;

export type PollLimits = Pick<Config, 'WIDGET_REQUESTS_PER_IP_PER_MINUTE' | 'WIDGET_POLLS_PER_VISITOR_PER_MINUTE'>;

const MESSAGE_COLUMNS = rawSql(CONVERSATION_MESSAGE_COLUMNS);
const OLDEST_FIRST = rawSql('created_at, id');
const NEWEST_FIRST = rawSql('created_at desc, id desc');
const PAGE_LIMIT = rawSql(String(CONVERSATION_PAGE_SIZE));

// The row is there whether or not the widget and contact are, so a refused poll is told so
// first. With `before` the page is taken from the newest end (a backward scan of the same index).
function selectConversation(chain: CountingChain, widgetId: string, visitorKey: string, after: number | null, before: number | null): Sql {
  return sql`with ${chain.ctes}
select ${chain.select}, conversation.*
from rate_clock left join lateral (
  select w.settings, c.id is not null as known, -- Typing: the bot's turn, or someone answering through the API until their time runs out.
    (coalesce(c.is_bot_typing, false) or coalesce(c.bot_typing_until > now(), false)) as is_bot_typing,
    coalesce((
      select json_agg(page order by page.created_at, page.id)
      from (
        select ${MESSAGE_COLUMNS}, created_at
        from messages
        where contact_id = c.id
          and (${after}::bigint is null or created_at > timestamptz 'epoch' + ${after}::bigint * interval '1 millisecond')
          and (${before}::bigint is null or created_at < timestamptz 'epoch' + ${before}::bigint * interval '1 millisecond')
        order by ${before === null ? OLDEST_FIRST : NEWEST_FIRST}
        limit ${PAGE_LIMIT}
      ) page
    ), '[]'::json) as messages
  from chat_widgets w left join contacts c on c.account_id = w.account_id and c.chat_widget_id = w.id and c.widget_visitor_id = ${visitorKey}::text
  where w.id = ${widgetId}::text
) conversation on true`;
}

export type ConversationQuery = { widgetId: string; visitorId: string; after?: number; before?: number };
export type Conversation = { messages: ConversationMessage[]; isBotTyping: boolean };
type ConversationRow = CountedRow & { settings: { allowedOrigins?: unknown } | null; known: boolean | null; is_bot_typing: boolean; messages: ConversationMessageRow[] };

export type PollDeps = { pool: pg.Pool; secrets: Secrets; limits: PollLimits };

export async function listConversationMessages({ pool, secrets, limits }: PollDeps, query: ConversationQuery, request: VisitorRequest): Promise<Conversation> {
  const visitor = await countingRefusals(pool, request.address, limits.WIDGET_REQUESTS_PER_IP_PER_MINUTE, () =>
    visitorBeforeStatement(pool, secrets, query.widgetId, query.visitorId, request.identityToken),
  );
  const chain = countingChain([
    addressBucket(request.address, limits.WIDGET_REQUESTS_PER_IP_PER_MINUTE),
    { key: `widget-polls:${query.widgetId}:${visitor.key}`, limit: limits.WIDGET_POLLS_PER_VISITOR_PER_MINUTE },
  ]);
  const before = query.before ?? null;
  const row = await runCountingStatement<ConversationRow>(
    pool,
    prepared(
      before === null ? 'list-widget-conversation' : 'list-widget-conversation-before',
      selectConversation(chain, query.widgetId, visitor.key, query.after ?? null, before),
    ),
  );
  if (!row.settings) throw new NotFoundError('Contact not found');
  const allowedOrigins = row.settings.allowedOrigins;
  refuseForeignOrigin(request, { allowedOrigins: Array.isArray(allowedOrigins) ? allowedOrigins : undefined });
  checkWidgetVisitor(row.settings, visitor);
  if (!row.known) throw new NotFoundError('Contact not found');
  return { messages: row.messages.map(toConversationMessage), isBotTyping: row.is_bot_typing };
}
