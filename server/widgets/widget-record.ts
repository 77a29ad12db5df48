// How a chat widget is shown to its owner, and the one lookup that keeps another
// account's widget "not found".
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { ChatWidget } from '../db/entities/index.ts';
import { NotFoundError } from '../errors.ts';
import { readSettings, WidgetSettings } from './widget-settings.ts';

/** Chat widget ids (the `configId` a site embeds) carry this prefix. */
export const WIDGET_ID_PREFIX = 'cw';

/** Longer ids cannot exist (ours are `cw_` + 26 base32 characters). */
export const MAX_WIDGET_ID_LENGTH = 200;
const POSSIBLE_WIDGET_ID = new RegExp(`^[A-Za-z0-9_-]{1,${MAX_WIDGET_ID_LENGTH}}$`);

/**
 * Whether text can be a widget id at all. Paths, handshakes and queries that name a widget
 * check this first, so text no id could be (a NUL, a megabyte) is simply not found instead
 * of reaching the database.
 */
export function couldBeWidgetId(text: unknown): text is string {
  return typeof text === 'string' && POSSIBLE_WIDGET_ID.test(text);
}

export const ChatWidgetRecord = z.object({
  id: z.string().describe('The configId a site embeds.'),
  name: z.string(),
  settings: WidgetSettings,
  created_at: z.string(),
  updated_at: z.string(),
});
export type ChatWidgetRecord = z.infer<typeof ChatWidgetRecord>;

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
