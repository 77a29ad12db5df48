// The abuse limits of the public incoming-message endpoint, counted in PostgreSQL like
// every rate limit (rate-limit/count-requests.ts: `rate_counters`, fixed 60-second
// windows on the database clock, shared by every process). ONE statement counts the
// message in the visitor's bucket and, when that counted, in the widget's bucket; a
// message a bucket refuses is not counted further, so one noisy visitor does not eat the
// widget's budget for everyone else.
import type pg from 'pg';
import { RateLimitedError } from '../errors.ts';
import { countRateLimitRefusal } from '../metrics/registry.ts';
import { WINDOW_SECONDS } from '../rate-limit/limits.ts';

/** Messages one visitor of a widget may send per minute. */
export const VISITOR_MESSAGES_PER_MINUTE = 20;
/** Messages all visitors of one widget together may send per minute. */
export const WIDGET_MESSAGES_PER_MINUTE = 600;

const COUNT_VISITOR_MESSAGE = `
with clock as (
  select now() as now, to_timestamp(floor(extract(epoch from now()) / ${WINDOW_SECONDS}) * ${WINDOW_SECONDS}) as window_start
), visitor_hit as (
  insert into rate_counters as c (bucket, window_start, count)
  select $1, clock.window_start, 1 from clock
  on conflict (bucket, window_start) do update set count = c.count + 1 where c.count < ${VISITOR_MESSAGES_PER_MINUTE}
  returning c.count
), widget_hit as (
  insert into rate_counters as c (bucket, window_start, count)
  select $2, clock.window_start, 1 from clock, visitor_hit
  on conflict (bucket, window_start) do update set count = c.count + 1 where c.count < ${WIDGET_MESSAGES_PER_MINUTE}
  returning c.count
)
select extract(epoch from clock.now)::float8 as now_epoch,
  extract(epoch from clock.window_start)::float8 as window_epoch,
  exists (select from widget_hit) as counted
from clock`;

/** Counts one visitor message, or refuses it with 429 and Retry-After (seconds until the window resets). */
export async function countVisitorMessage(pool: pg.Pool, widgetId: string, visitorId: string): Promise<void> {
  const { rows } = await pool.query<{ now_epoch: number; window_epoch: number; counted: boolean }>({
    name: 'count-visitor-message',
    text: COUNT_VISITOR_MESSAGE,
    values: [`widget-visitor:${widgetId}:${visitorId}`, `widget:${widgetId}`],
  });
  const row = rows[0]!;
  if (row.counted) return;
  const retryAfter = Math.max(1, Math.ceil(row.window_epoch + WINDOW_SECONDS - row.now_epoch));
  countRateLimitRefusal('widget_visitor');
  throw new RateLimitedError({ 'Retry-After': String(retryAfter) });
}
