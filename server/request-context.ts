// The request a piece of work belongs to, carried through async calls. The HTTP host
// enters it for each request; the log mixin, `enqueueJob` and `emit()` read it, so a
// request's id reaches its log lines, the jobs it queues and the webhooks it causes
// without being passed through every function in between.
import { AsyncLocalStorage } from 'node:async_hooks';

export type RequestContext = { requestId: string };

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs `fn` (and every async continuation it starts) as part of the request. */
export function runInRequest<T>(context: RequestContext, fn: () => T): T {
  return storage.run(context, fn);
}

/** The id of the request the current code runs for; undefined in jobs, start-up and commands. */
export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}
