// GET /chat-widget-config: what the widget page needs to draw itself and to send, and
// nothing else (never the one-time-code or identity secret, the away message or the origin
// list). One statement: the request counted against the client address, and the widget.
// The text colours for the widget's colours come with it (widget-colours.ts), so the page and
// the embed script's launcher draw the same readable ones.
import type pg from 'pg';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { prepared, sql } from '../db/sql.ts';
import { NotFoundError } from '../errors.ts';
import type { Secrets } from '../secrets.ts';
import { refuseForeignOrigin } from './check-widget-origin.ts';
import { addressBucket, countingChain, runCountingStatement, type CountedRow } from './count-visitor-requests.ts';
import { resolveWidgetVisitor, type VisitorRequest } from './visitor-identity.ts';
import { WidgetForeground, widgetForeground } from './widget-colours.ts';
import { readSettings } from './widget-settings.ts';
import { couldBeWidgetId } from './widget-record.ts';

export const PublicWidgetConfig = z.object({
  id: z.string(),
  userId: z.string().describe("The widget owner's account id: send it as `userId` with visitor messages."),
  name: z.string(),
  /** The header title; the widget's name when no title is set. */
  title: z.string(),
  colors: z.object({
    primary: z.string().optional(),
    background: z.string().optional(),
    text: z.string().optional(),
    visitorBubble: z.string().optional(),
    botBubble: z.string().optional(),
  }),
  foreground: WidgetForeground,
  greeting: z.string().nullable(),
  position: z.enum(['bottom-right', 'bottom-left']),
  handoffButton: z.boolean().describe('Whether the page offers "Talk to a person" (`settings.handoffButton`, default true).'),
});
export type PublicWidgetConfig = z.infer<typeof PublicWidgetConfig>;

export type PageLimits = Pick<Config, 'WIDGET_REQUESTS_PER_IP_PER_MINUTE'>;

type WidgetRow = { id: string | null; account_id: string; name: string; settings: unknown; identity_secret_sealed: string | null };

/**
 * Counts a request for a widget's configuration or page against the client address and
 * reads the widget (no row: `id` null); refuses with 429 when the address is over its limit.
 */
export async function countAndReadWidget(pool: pg.Pool, limits: PageLimits, widgetId: string, address: string): Promise<WidgetRow | null> {
  const chain = countingChain([addressBucket(address, limits.WIDGET_REQUESTS_PER_IP_PER_MINUTE)]);
  // Text no widget id could be is looked up as no id at all.
  const id = couldBeWidgetId(widgetId) ? widgetId : null;
  const row = await runCountingStatement<CountedRow & WidgetRow>(
    pool,
    prepared(
      'count-and-read-widget',
      sql`with ${chain.ctes}
select ${chain.select}, w.id, w.account_id, w.name, w.settings, w.identity_secret_sealed
from rate_clock left join chat_widgets w on w.id = ${id}::text`,
    ),
  );
  return row.id === null ? null : row;
}

export type ConfigDeps = { pool: pg.Pool; secrets: Secrets; limits: PageLimits };

export async function readPublicWidgetConfig({ pool, secrets, limits }: ConfigDeps, widgetId: string, request: VisitorRequest): Promise<PublicWidgetConfig> {
  const row = await countAndReadWidget(pool, limits, widgetId, request.address);
  if (!row) throw new NotFoundError('Chat widget not found');
  const settings = readSettings(row.settings);
  refuseForeignOrigin(request, settings);
  // No visitor to name here, but a widget that requires identity shows itself only to verified ones.
  await resolveWidgetVisitor(secrets, row, null, request.identityToken);
  return {
    id: row.id!,
    userId: row.account_id,
    name: row.name,
    title: settings.title ?? row.name,
    colors: settings.colors ?? {},
    foreground: widgetForeground(settings.colors),
    greeting: settings.greeting ?? null,
    position: settings.position ?? 'bottom-right',
    handoffButton: settings.handoffButton ?? true,
  };
}
