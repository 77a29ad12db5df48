// Cron task: every minute, close the customer-service windows whose 24 hours
// have passed. Running late or twice is harmless: it closes what is due now.
import type { Task } from 'graphile-worker';
import { closeExpiredChatWindows } from '../server/messaging/callbacks/close-expired-chat-windows.ts';
import type { Services } from '../server/process-services.ts';

export const CLOSE_CHAT_WINDOWS_TASK = 'close-chat-windows';

/** No backfill: one run closes every window that is due, however many ticks were missed. */
export const closeChatWindowsCrontab = `* * * * * ${CLOSE_CHAT_WINDOWS_TASK}`;

export function closeChatWindowsTask(services: Services): Task {
  return async (_payload, helpers) => {
    const closed = await closeExpiredChatWindows(services.orm.em.fork(), new Date());
    if (closed > 0) helpers.logger.info(`closed ${closed} expired chat window(s)`);
  };
}
