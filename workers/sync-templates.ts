// Task `sync-templates`: with `{accountId}`, pulls that account's template listing from the
// provider (queued on connect and on demand); from the daily crontab line, queues one such
// job per connected account. A thrown error lets Graphile Worker retry with its backoff.
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import { requestTemplateSyncForEveryConnection, SYNC_TEMPLATES_TASK } from '../server/messaging/request-template-sync.ts';
import { syncTemplates } from '../server/messaging/sync-templates.ts';
import type { Services } from '../server/process-services.ts';

export { SYNC_TEMPLATES_TASK };

/** 03:17 UTC daily; `fill=1d` runs a tick missed while no worker was up. */
export const syncTemplatesCrontab = `17 3 * * * ${SYNC_TEMPLATES_TASK} ?fill=1d&max=1`;

const Payload = z.object({ accountId: z.string().min(1).optional() });

export function syncTemplatesTask(services: Services): Task {
  const log = services.log.child({ task: SYNC_TEMPLATES_TASK });
  return async (payload) => {
    const { accountId } = Payload.parse(payload ?? {});
    if (!accountId) {
      const queued = await requestTemplateSyncForEveryConnection(services.orm.em.fork());
      log.info({ accounts: queued }, 'daily template sync queued');
      return;
    }
    const outcome = await syncTemplates(services.orm.em.fork(), { messaging: services.messaging, secrets: services.secrets, log }, accountId);
    log.info({ accountId, ...outcome }, 'templates synced');
  };
}
