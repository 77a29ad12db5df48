// One account's conversation events as an async stream, for the tRPC subscription that
// internal apps hold open. The events come from this process's LISTEN feed, so a
// subscriber hears every process's changes. The stream listens from the moment it is
// opened, not from its first read: the subscription's `started` frame goes out between the
// two, and a client that acts on it must hear what follows.
import type { ConversationEvent, ConversationEventFeed } from './conversation-event.ts';

type WithoutVisitorId<E> = E extends unknown ? Omit<E, 'visitorId'> : never;
/**
 * What a subscriber hears: the event naming the contact, never the widget visitor id (the
 * visitor's credential on the public widget endpoints; only the widget gateway routes by it).
 */
export type ConversationFrame = WithoutVisitorId<ConversationEvent>;

function frameOf(event: ConversationEvent): ConversationFrame {
  const { visitorId: _visitorId, ...frame } = event;
  return frame as ConversationFrame;
}

/** A subscriber this far behind is cut off (it reconnects) rather than buffered without end. */
const MAX_PENDING_EVENTS = 1000;

export class SubscriberTooSlowError extends Error {
  override name = 'SubscriberTooSlowError';
}

/**
 * Listens at once; the events wait in the stream until it is read. Ends (and stops
 * listening) when `signal` aborts, also for a stream never read, or when its reader returns.
 */
export function streamConversationEvents(
  feed: ConversationEventFeed,
  accountId: string,
  filter: { widgetId?: string },
  signal: AbortSignal | undefined,
): AsyncGenerator<ConversationFrame, void, undefined> {
  const pending: ConversationFrame[] = [];
  let overflowed = false;
  let wake: (() => void) | null = null;
  const notify = () => {
    const resolve = wake;
    wake = null;
    resolve?.();
  };
  const unsubscribe = feed.subscribe((event) => {
    if (event.accountId !== accountId) return;
    if (filter.widgetId !== undefined && event.widgetId !== filter.widgetId) return;
    if (pending.length >= MAX_PENDING_EVENTS) overflowed = true;
    else pending.push(frameOf(event));
    notify();
  });
  const stop = () => {
    unsubscribe();
    signal?.removeEventListener('abort', onAbort);
    notify();
  };
  // A stream never read has no `finally` to run: its signal stops it.
  const onAbort = () => stop();
  if (signal?.aborted) stop();
  else signal?.addEventListener('abort', onAbort, { once: true });

  async function* read(): AsyncGenerator<ConversationFrame, void, undefined> {
    try {
      while (!signal?.aborted) {
        const event = pending.shift();
        if (event) {
          yield event;
          continue;
        }
        if (overflowed) throw new SubscriberTooSlowError(`more than ${MAX_PENDING_EVENTS} conversation events waiting`);
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    } finally {
      stop();
    }
  }
  return read();
}
