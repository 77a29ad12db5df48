// PUT /chat-widgets/{configId}: rename the widget or replace its settings.
import type { EntityManager } from '@mikro-orm/postgresql';
import { InvalidInputError } from '../errors.ts';
import { requireOwnWidget, toWidgetRecord, type ChatWidgetRecord } from './widget-record.ts';
import type { ChatWidgetUpdateInput } from './widget-settings.ts';

export async function updateWidget(em: EntityManager, accountId: string, widgetId: string, input: ChatWidgetUpdateInput): Promise<ChatWidgetRecord> {
  if (input.name === undefined && input.settings === undefined) {
    throw new InvalidInputError('No fields to update', { reason: 'no_fields' });
  }
  const widget = await requireOwnWidget(em, accountId, widgetId);
  if (input.name !== undefined) widget.name = input.name;
  if (input.settings !== undefined) widget.settings = input.settings;
  await em.flush();
  return toWidgetRecord(widget);
}
