// Every background task and the crontab, handed to the Graphile Worker runner.
// Each task lives in its own file and receives the process's services.
import type { Services } from '../server/services.ts';
import type { WorkerDefinition } from '../server/worker.ts';
import { DAILY_SUMMARIES_TASK, dailySummariesCrontab, dailySummariesTask } from './daily-summaries.ts';
import { GENERATE_SUMMARY_TASK, generateSummaryTask } from './generate-summary.ts';
import { RESET_MONTHLY_CREDITS_TASK, resetMonthlyCreditsCrontab, resetMonthlyCreditsTask } from './reset-monthly-credits.ts';

export function workerDefinition(services: Services): WorkerDefinition {
  return {
    taskList: {
      [GENERATE_SUMMARY_TASK]: generateSummaryTask(services),
      [DAILY_SUMMARIES_TASK]: dailySummariesTask(services),
      [RESET_MONTHLY_CREDITS_TASK]: resetMonthlyCreditsTask(services),
    },
    crontab: [resetMonthlyCreditsCrontab, dailySummariesCrontab].join('\n'),
  };
}
