// Task `typing_expired` (queued by POST /contacts/{contactId}/typing for the time the
// typing indicator ends, keyed by contact so a renewal moves it): ends it and tells the
// visitor's sockets (server/widgets/set-typing.ts).
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { Services } from '../server/process-services.ts';
import { expireTyping, TYPING_EXPIRED_TASK } from '../server/widgets/set-typing.ts';

export { TYPING_EXPIRED_TASK };

const Payload = z.object({ accountId: z.string().min(1), contactId: z.string().min(1) });

export function typingExpiredTask(services: Services): Task {
  return async (payload) => {
    await expireTyping(services.orm.em.fork(), Payload.parse(payload));
  };
}
