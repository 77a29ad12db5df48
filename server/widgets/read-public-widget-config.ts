// GET /chat-widget-config: what the widget page needs to draw itself and to send, and
// nothing else (never the one-time-code secret, the away message or the origin list).
import type pg from 'pg';
import { NotFoundError } from '../errors.ts';
import { refuseForeignOrigin, type RequestOrigin } from './check-widget-origin.ts';
import { readSettings, type WidgetSettings } from './widget-settings.ts';
import { couldBeWidgetId } from './widget-record.ts';

export type PublicWidgetConfig = {
  id: string;
  /** The owner's account id: the incoming-message endpoint's `userId`. */
  userId: string;
  name: string;
  /** The header title; the widget's name when no title is set. */
  title: string;
  colors: NonNullable<WidgetSettings['colors']>;
  greeting: string | null;
  position: NonNullable<WidgetSettings['position']>;
};

export async function readPublicWidgetConfig(pool: pg.Pool, widgetId: string, request: RequestOrigin): Promise<PublicWidgetConfig> {
  const { rows } =
    !couldBeWidgetId(widgetId)
      ? { rows: [] }
      : await pool.query<{ id: string; account_id: string; name: string; settings: unknown }>({
          name: 'read-public-widget-config',
          text: 'select id, account_id, name, settings from chat_widgets where id = $1',
          values: [widgetId],
        });
  const row = rows[0];
  if (!row) throw new NotFoundError('Chat widget not found');
  const settings = readSettings(row.settings);
  refuseForeignOrigin(request, settings);
  return {
    id: row.id,
    userId: row.account_id,
    name: row.name,
    title: settings.title ?? row.name,
    colors: settings.colors ?? {},
    greeting: settings.greeting ?? null,
    position: settings.position ?? 'bottom-right',
  };
}
