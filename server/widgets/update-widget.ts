// PUT /chat-widgets/{configId}: rename the widget or replace its settings. New settings
// (identity verification, allowed origins) apply to open visitor sockets too: the change
// is announced so that every process checks them again.
import type { EntityManager } from '@mikro-orm/postgresql';
import { flushOwned } from '../db/update-owned.ts';
import { InvalidInputError } from '../errors.ts';
import { announceWidgetChange } from './widget-changes.ts';
import { requireOwnWidget, toWidgetRecord, type ChatWidgetRecord } from './widget-record.ts';
import type { ChatWidgetUpdateInput } from './widget-settings.ts';

export async function updateWidget(em: EntityManager, accountId: string, widgetId: string, input: ChatWidgetUpdateInput): Promise<ChatWidgetRecord> {
  if (input.name === undefined && input.settings === undefined) {
    throw new InvalidInputError('No fields to update', { reason: 'no_fields' });
  }
  return em.transactional(async (tx) => {
    const widget = await requireOwnWidget(tx, accountId, widgetId);
    if (input.name !== undefined) widget.name = input.name;
    if (input.settings !== undefined) widget.settings = input.settings;
    await flushOwned(tx, widget);
    if (input.settings !== undefined) await announceWidgetChange(tx, widgetId);
    return toWidgetRecord(widget);
  });
}
