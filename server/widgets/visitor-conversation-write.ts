// What every public call that changes a visitor's conversation does before its own change
// (POST /update-message-read-status, POST /chat-widget-handoff): the visitor's identity,
// the call counted against the client address and the visitor's own budget, then, on the
// caller's transaction, the widget's allowed origins and identity mode and the visitor's
// contact.
import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';
import type { Config } from '../config.ts';
import { queryRows, sql } from '../db/sql.ts';
import type { Secrets } from '../secrets.ts';
import { refuseForeignOrigin } from './check-widget-origin.ts';
import { addressBucket, countingRefusals, countVisitorRequest } from './count-visitor-requests.ts';
import type { ConversationQuery } from './list-conversation-messages.ts';
import { visitorBeforeStatement } from './read-widget-identity.ts';
import { checkWidgetVisitor, type VisitorRequest, type WidgetVisitor } from './visitor-identity.ts';
import { readSettings } from './widget-settings.ts';

export type VisitorWriteDeps = { pool: pg.Pool; secrets: Secrets; limits: Pick<Config, 'WIDGET_REQUESTS_PER_IP_PER_MINUTE'> };

/** The visitor's own budget for one kind of write: its bucket's name and its limit per minute. */
export type VisitorWriteBudget = { statement: string; bucket: string; limit: number };

/**
 * The visitor the call speaks for, the call counted (429 over a budget; a refused identity
 * still counts against the address). Counted before the caller's transaction, which a
 * refusal would otherwise roll the count back with.
 */
export async function countVisitorWrite(
  { pool, secrets, limits }: VisitorWriteDeps,
  query: Omit<ConversationQuery, 'after'>,
  request: VisitorRequest,
  budget: VisitorWriteBudget,
): Promise<WidgetVisitor> {
  const visitor = await countingRefusals(pool, request.address, limits.WIDGET_REQUESTS_PER_IP_PER_MINUTE, () =>
    visitorBeforeStatement(pool, secrets, query.widgetId, query.visitorId, request.identityToken),
  );
  await countVisitorRequest(pool, budget.statement, [
    addressBucket(request.address, limits.WIDGET_REQUESTS_PER_IP_PER_MINUTE),
    { key: `${budget.bucket}:${query.widgetId}:${visitor.key}`, limit: budget.limit },
  ]);
  return visitor;
}

/** The visitor's contact (`id` null before their first message) and the widget's owner. */
export type VisitorContact = {
  id: string | null;
  account_id: string;
  phone_number: string | null;
  email: string | null;
  first_name: string;
  last_name: string;
};

/**
 * On `tx`: the widget's owner and the visitor's contact, once the request's origin and the
 * visitor's identity pass the widget's settings; null when there is no such widget.
 */
export async function findVisitorContact(tx: EntityManager, widgetId: string, visitor: WidgetVisitor, request: VisitorRequest): Promise<VisitorContact | null> {
  const [row] = await queryRows<VisitorContact & { settings: unknown }>(
    tx,
    sql`select c.id, w.account_id, c.phone_number, c.email, c.first_name, c.last_name, w.settings
       from chat_widgets w left join contacts c on c.account_id = w.account_id and c.chat_widget_id = w.id and c.widget_visitor_id = ${visitor.key}
      where w.id = ${widgetId}`,
  );
  if (!row) return null;
  refuseForeignOrigin(request, readSettings(row.settings));
  checkWidgetVisitor(row.settings, visitor);
  return row;
}
