// How a chat widget is shown to its owner, and the one lookup that keeps another
// account's widget "not found".
import type { EntityManager } from '@mikro-orm/postgresql';
import { ChatWidget } from '../db/entities/index.ts';
import { NotFoundError } from '../errors.ts';
import { readSettings, type WidgetSettings } from './widget-settings.ts';

/** Chat widget ids (the `configId` a site embeds) carry this prefix. */
export const WIDGET_ID_PREFIX = 'cw';

export type ChatWidgetRecord = {
  id: string;
  name: string;
  settings: WidgetSettings;
  created_at: string;
  updated_at: string;
};

export function toWidgetRecord(widget: ChatWidget): ChatWidgetRecord {
  return {
    id: widget.id,
    name: widget.name,
    settings: readSettings(widget.settings),
    created_at: widget.createdAt.toISOString(),
    updated_at: widget.updatedAt.toISOString(),
  };
}

export async function requireOwnWidget(em: EntityManager, accountId: string, widgetId: string): Promise<ChatWidget> {
  const widget = await em.findOne(ChatWidget, { id: widgetId, account: accountId });
  if (!widget) throw new NotFoundError('Chat widget not found');
  return widget;
}
