// One account's conversation events as an async stream, for the tRPC subscription that
// internal apps hold open. The events come from this process's LISTEN feed, so a
// subscriber hears every process's changes.
import type { ConversationEvent, ConversationEventFeed } from './conversation-events.ts';

/** A subscriber this far behind is cut off (it reconnects) rather than buffered without end. */
const MAX_PENDING_EVENTS = 1000;

export class SubscriberTooSlowError extends Error {
  override name = 'SubscriberTooSlowError';
}

export async function* streamConversationEvents(
  feed: ConversationEventFeed,
  accountId: string,
  filter: { widgetId?: string },
  signal: AbortSignal | undefined,
): AsyncGenerator<ConversationEvent, void, undefined> {
  const pending: ConversationEvent[] = [];
  let overflowed = false;
  let wake: (() => void) | null = null;
  const notify = () => {
    const resolve = wake;
    wake = null;
    resolve?.();
  };
  // Subscribed only once the stream is iterated: an unconsumed stream holds nothing.
  const unsubscribe = feed.subscribe((event) => {
    if (event.accountId !== accountId) return;
    if (filter.widgetId !== undefined && event.widgetId !== filter.widgetId) return;
    if (pending.length >= MAX_PENDING_EVENTS) overflowed = true;
    else pending.push(event);
    notify();
  });
  signal?.addEventListener('abort', notify, { once: true });
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
    unsubscribe();
    signal?.removeEventListener('abort', notify);
  }
}
