// GET /chat-widgets and /chat-widgets/{configId}: the account's widgets, newest first.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ChatWidget } from '../db/entities/index.ts';
import { requireOwnWidget, toWidgetRecord, type ChatWidgetRecord } from './widget-record.ts';

export async function getWidget(em: EntityManager, accountId: string, widgetId: string): Promise<ChatWidgetRecord> {
  return toWidgetRecord(await requireOwnWidget(em, accountId, widgetId));
}

/** An account has a handful of widgets (one per site), so the list is not paged. */
export async function listWidgets(em: EntityManager, accountId: string): Promise<ChatWidgetRecord[]> {
  const widgets = await em.find(ChatWidget, { account: accountId }, { orderBy: { createdAt: 'desc', id: 'desc' } });
  return widgets.map(toWidgetRecord);
}
