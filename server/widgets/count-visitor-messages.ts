// The abuse limits of the public incoming-message endpoint, in one counting statement
// (count-visitor-requests.ts): the client address's requests, the visitor's messages, the
// address's messages to this widget, the address's new visitor ids for this widget (only
// for a visitor id without a contact yet: a message that would create one), and the
// widget's messages. Visitor ids are the client's to choose, so only the address buckets
// stop one client from creating contacts, events and bot replies without end.
import type pg from 'pg';
import type { Config } from '../config.ts';
import { addressBucket, countVisitorRequest, VISITOR_MESSAGES_PER_MINUTE, WIDGET_MESSAGES_PER_MINUTE } from './count-visitor-requests.ts';

export type MessageLimits = Pick<Config, 'WIDGET_REQUESTS_PER_IP_PER_MINUTE' | 'WIDGET_MESSAGES_PER_IP_PER_MINUTE' | 'WIDGET_NEW_VISITORS_PER_IP_PER_MINUTE'>;

// With the account: the contacts' unique index on a widget's visitors leads with account_id.
const NEW_VISITOR = 'not exists (select from contacts where account_id = $3::text and chat_widget_id = $1::text and widget_visitor_id = $2::text)';

/** Counts one visitor message, or refuses it with 429 and Retry-After (seconds until the window resets). */
export async function countVisitorMessage(
  pool: pg.Pool,
  limits: MessageLimits,
  accountId: string,
  widgetId: string,
  visitorKey: string,
  address: string,
): Promise<void> {
  await countVisitorRequest(
    pool,
    'count-visitor-message',
    [
      addressBucket(address, limits.WIDGET_REQUESTS_PER_IP_PER_MINUTE),
      { key: `widget-visitor:${widgetId}:${visitorKey}`, limit: VISITOR_MESSAGES_PER_MINUTE },
      { key: `widget-address-messages:${widgetId}:${address}`, limit: limits.WIDGET_MESSAGES_PER_IP_PER_MINUTE },
      { key: `widget-new-visitors:${widgetId}:${address}`, limit: limits.WIDGET_NEW_VISITORS_PER_IP_PER_MINUTE, onlyIf: NEW_VISITOR },
      { key: `widget:${widgetId}`, limit: WIDGET_MESSAGES_PER_MINUTE },
    ],
    [widgetId, visitorKey, accountId],
  );
}
