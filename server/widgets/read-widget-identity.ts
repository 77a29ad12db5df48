// Reading what a widget says of identity verification, and resolving a request's visitor
// before the one statement keyed by it (the rules are in visitor-identity.ts).
import type pg from 'pg';
import { prepared, queryRows, sql } from '../db/sql.ts';
import type { Secrets } from '../secrets.ts';
import { resolveWidgetVisitor, type WidgetIdentity, type WidgetVisitor } from './visitor-identity.ts';
import { couldBeWidgetId } from './widget-record.ts';

/** What the widget says of identity verification now; null when there is no such widget. */
export async function readWidgetIdentity(pool: pg.Pool, widgetId: string): Promise<WidgetIdentity | null> {
  if (!couldBeWidgetId(widgetId)) return null;
  const [widget] = await queryRows<WidgetIdentity>(
    pool,
    prepared('read-widget-identity', sql`select settings, identity_secret_sealed from chat_widgets where id = ${widgetId}`),
  );
  return widget ?? null;
}

/**
 * For endpoints whose one statement is keyed by the visitor: without a token the visitor
 * is `fromId` and the statement's widget row is checked afterwards (checkWidgetVisitor);
 * with one, the widget's secret is read first, so the statement runs for the verified user.
 */
export async function visitorBeforeStatement(pool: pg.Pool, secrets: Secrets, widgetId: string, fromId: string, token: string | undefined): Promise<WidgetVisitor> {
  if (token === undefined) return { key: fromId, verified: null };
  const widget = await readWidgetIdentity(pool, widgetId);
  if (!widget) return { key: fromId, verified: null };
  return (await resolveWidgetVisitor(secrets, widget, fromId, token))!;
}
