// The abuse limits of the public incoming-message endpoint, in one counting statement
// (count-visitor-requests.ts): the client address's requests, the visitor's messages, the
// address's messages to this widget, the address's new visitor ids for this widget (only
// for a visitor id without a contact yet: a message that would create one), and the
// widget's messages; for a visitor with no identity token, with the widget read in the
// same statement (countVisitorMessageReadingWidget). Visitor ids are the client's to
// choose, so only the address buckets stop one client from creating contacts, events and
// bot replies without end.
import type pg from 'pg';
import type { Config } from '../config.ts';
import { prepared, sql } from '../db/sql.ts';
import {
  addressBucket,
  countingChain,
  countVisitorRequest,
  runCountingStatement,
  type CountedRow,
  type CountingBucket,
} from './count-visitor-requests.ts';
import type { WidgetIdentity } from './visitor-identity.ts';

export type MessageLimits = Pick<
  Config,
  | 'WIDGET_REQUESTS_PER_IP_PER_MINUTE'
  | 'WIDGET_MESSAGES_PER_IP_PER_MINUTE'
  | 'WIDGET_NEW_VISITORS_PER_IP_PER_MINUTE'
  | 'WIDGET_MESSAGES_PER_VISITOR_PER_MINUTE'
  | 'WIDGET_MESSAGES_PER_WIDGET_PER_MINUTE'
>;

/** Whose message is counted: the widget's account, the widget, the visitor's key and the client's address. */
export type CountedMessage = { accountId: string; widgetId: string; visitorKey: string; address: string };

// With the account: the contacts' unique index on a widget's visitors leads with account_id.
const newVisitor = ({ accountId, widgetId, visitorKey }: CountedMessage) =>
  sql`not exists (select from contacts where account_id = ${accountId}::text and chat_widget_id = ${widgetId}::text and widget_visitor_id = ${visitorKey}::text)`;

function messageBuckets(limits: MessageLimits, message: CountedMessage): CountingBucket[] {
  const { widgetId, visitorKey, address } = message;
  return [
    addressBucket(address, limits.WIDGET_REQUESTS_PER_IP_PER_MINUTE),
    { key: `widget-visitor:${widgetId}:${visitorKey}`, limit: limits.WIDGET_MESSAGES_PER_VISITOR_PER_MINUTE },
    { key: `widget-address-messages:${widgetId}:${address}`, limit: limits.WIDGET_MESSAGES_PER_IP_PER_MINUTE },
    { key: `widget-new-visitors:${widgetId}:${address}`, limit: limits.WIDGET_NEW_VISITORS_PER_IP_PER_MINUTE, onlyIf: newVisitor(message) },
    { key: `widget:${widgetId}`, limit: limits.WIDGET_MESSAGES_PER_WIDGET_PER_MINUTE },
  ];
}

/** Counts one visitor message, or refuses it with 429 and Retry-After (seconds until the window resets). */
export async function countVisitorMessage(pool: pg.Pool, limits: MessageLimits, message: CountedMessage): Promise<void> {
  await countVisitorRequest(pool, 'count-visitor-message', messageBuckets(limits, message));
}

/**
 * The same count, and in the same statement the account's widget (null when it has none),
 * for a visitor known before the widget is read (one with no identity token): the message
 * then costs one statement before its transaction, not two. Refuses with 429 first, as the
 * conversation poll does (list-conversation-messages.ts); the caller checks the widget after.
 */
export async function countVisitorMessageReadingWidget(
  pool: pg.Pool,
  limits: MessageLimits,
  message: CountedMessage,
): Promise<WidgetIdentity | null> {
  const chain = countingChain(messageBuckets(limits, message));
  const row = await runCountingStatement<CountedRow & WidgetIdentity & { found: boolean }>(
    pool,
    prepared(
      'count-visitor-message-reading-widget',
      sql`with ${chain.ctes}
select ${chain.select}, w.id is not null as found, w.settings, w.identity_secret_sealed
  from rate_clock left join chat_widgets w on w.id = ${message.widgetId}::text and w.account_id = ${message.accountId}::text`,
    ),
  );
  return row.found ? { settings: row.settings, identity_secret_sealed: row.identity_secret_sealed } : null;
}
