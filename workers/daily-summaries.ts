// Task `daily-summaries`: shortly after midnight UTC, a summary of the day
// that just ended for every account with messages on it. Cron backfills a
// missed run within a day; a repeated run for a day writes nothing twice.
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { Services } from '../server/process-services.ts';
import { previousUtcDay, writeDailySummaries } from '../server/summaries/daily-summaries.ts';

export const DAILY_SUMMARIES_TASK = 'daily-summaries';
/** 00:05 UTC daily; `fill=1d` runs a tick missed while no worker was up. */
export const dailySummariesCrontab = `5 0 * * * ${DAILY_SUMMARIES_TASK} ?fill=1d&max=5`;

const Payload = z.object({
  /** A day to summarize (`YYYY-MM-DD`); otherwise the day before the cron tick. */
  day: z.string().optional(),
  _cron: z.object({ ts: z.coerce.date() }).optional(),
});

export function dailySummariesTask(services: Services): Task {
  const log = services.log.child({ task: 'daily-summaries' });
  return async (payload) => {
    const input = Payload.parse(payload ?? {});
    const day = input.day ?? previousUtcDay(input._cron?.ts ?? new Date());
    const written = await writeDailySummaries(services.orm.em.fork(), day);
    log.info({ day, summaries: written.length }, 'daily summaries written');
  };
}
