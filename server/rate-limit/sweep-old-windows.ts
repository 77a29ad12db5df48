// Housekeeping of `rate_counters`: every counting path (API keys and sessions in
// auth/authenticate.ts, the chat widget's public requests in widgets/count-visitor-requests.ts)
// calls this after counting, and this decides when a sweep is due, so no endpoint has to.
import type pg from 'pg';
import { countRateWindowSweep } from '../metrics/registry.ts';
import { WINDOW_SECONDS } from './limits.ts';

const SWEEP_EVERY_MS = 60_000;
const lastSweep = new WeakMap<pg.Pool, number>();

/**
 * Deletes windows that ended more than a minute ago. Each process does it at most
 * once a minute, in the background; several processes doing it is harmless. Each sweep is
 * counted in rate_window_sweeps_total by outcome: a failed one's rows wait for the next.
 */
export function sweepOldWindows(pool: pg.Pool): void {
  const now = Date.now();
  if (now - (lastSweep.get(pool) ?? 0) < SWEEP_EVERY_MS) return;
  lastSweep.set(pool, now);
  pool
    .query({
      name: 'sweep-rate-windows',
      text: `delete from rate_counters where window_start < now() - interval '${2 * WINDOW_SECONDS} seconds'`,
    })
    .then(
      () => countRateWindowSweep('done'),
      () => countRateWindowSweep('failed'),
    );
}
