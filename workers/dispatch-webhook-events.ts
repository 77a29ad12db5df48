// Task `dispatch-webhook-events`: turns committed events into webhook deliveries, making each
// one's first attempt (server/webhooks/dispatch-events.ts).
// Queued at commit by the trigger on `events` (one pending job at a time, by job key; while
// one runs, a follow-up: server/webhooks/sql/dispatch-follow-up.ts), and every minute by
// cron as a safety net for anything left undispatched.
import type { Task } from 'graphile-worker';
import type { Logger } from 'pino';
import { dispatchEvents } from '../server/webhooks/dispatch-events.ts';
import type { SenderDeps } from '../server/webhooks/send-deliveries.ts';
import { DISPATCH_WEBHOOK_EVENTS_TASK, followUpNow } from '../server/webhooks/sql/dispatch-follow-up.ts';

export { DISPATCH_WEBHOOK_EVENTS_TASK };

export const dispatchWebhookEventsCrontab = `* * * * * ${DISPATCH_WEBHOOK_EVENTS_TASK}`;

/**
 * While a run has work, it looks again this often: a commit during a run adds no job due at
 * once (only a follow-up, due later: the dispatch trigger), so this is how long such an
 * event waits for its claim at most.
 */
const LOOK_EVERY_MS = 20;
/**
 * A run ends after looking this long without finding an event. Those last looks also catch
 * an event whose commit met this job just as a worker locked it (the trigger then adds
 * nothing; the per-minute cron catches anything slower).
 */
const IDLE_BEFORE_END_MS = 100;

export function dispatchWebhookEventsTask(deps: SenderDeps, log: Logger): Task {
  const taskLog = log.child({ task: DISPATCH_WEBHOOK_EVENTS_TASK });
  /** Whether a run of this process is in its loop of looks (one at a time; below). */
  let looking = false;
  return async (_payload, helpers) => {
    // A run that starts while another run of this process is looking (a follow-up the
    // trigger added while that one ran, made due by its time) wakes a pass once and ends:
    // the pass claims after this wake-up (sending-pass.ts), so whatever committed before
    // this run is claimed, and the looking run sees the rest. A second loop would only
    // double the looks, its wake-ups keeping the pass's lanes claiming back to back.
    if (looking) {
      const dispatched = await dispatchEvents(deps);
      if (dispatched > 0) taskLog.debug({ events: dispatched }, 'events dispatched');
      return;
    }
    looking = true;
    let dispatchedAny: boolean;
    try {
      dispatchedAny = await lookUntilIdle(deps, helpers.abortSignal, taskLog);
    } finally {
      looking = false;
    }
    // A run that joined another's pass dispatched nothing: that pass's run does this.
    if (dispatchedAny) await followUpNow(deps.pool);
  };
}

/** A run's loop of looks, until it finds nothing for a while or the worker shuts down; whether it dispatched anything. */
async function lookUntilIdle(deps: SenderDeps, abortSignal: AbortSignal, taskLog: Logger): Promise<boolean> {
  let dispatchedAny = false;
  let idleSince = Date.now();
  // A worker shutting down aborts the signal after its grace period: a run kept busy by a
  // steady stream of events ends then, and another worker (or the cron) takes the rest.
  while (!abortSignal.aborted) {
    const dispatched = await dispatchEvents(deps);
    if (dispatched > 0) {
      taskLog.debug({ events: dispatched }, 'events dispatched');
      dispatchedAny = true;
      idleSince = Date.now();
    } else if (Date.now() - idleSince >= IDLE_BEFORE_END_MS) {
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, LOOK_EVERY_MS));
  }
  return dispatchedAny;
}
