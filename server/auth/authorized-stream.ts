// A subscription is authorized for as long as it runs, not only when it starts: its stream
// ends with the refusal a new call would get once its credential is revoked, rotated, expired
// or narrowed, or its account loses the plan or feature. It checks again when any process
// announces a change to one of its accounts (server/auth/credential-changes.ts), when the
// credential expires (a key's expiry, an ID token's `exp`), and every RECHECK_EVERY_MS in case
// an announcement was missed.
import type { Logger } from 'pino';
import type { CredentialChangeFeed } from '../process-services.ts';

/** The backstop: a live subscription's credential is checked again at least this often. */
export const RECHECK_EVERY_MS = 30_000;

export type AuthorizationWatch = {
  changes: CredentialChangeFeed;
  /** The accounts whose changes concern the subscription (the credential's, the selected one). */
  accountIds: readonly string[];
  /**
   * The check again, uncounted: resolves with when the credential expires (ms since the
   * epoch, null if never), throws `isRefusal` errors when the subscription must end.
   */
  check(): Promise<number | null>;
  isRefusal(error: unknown): boolean;
  log: Logger;
};

/** setTimeout's longest delay; a later expiry is looked at again by the periodic check. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Yields what `stream` yields until it ends, or until a check refuses the credential: then it
 * throws that refusal. A check that fails otherwise (the database away) leaves the stream
 * running until the next one.
 */
export async function* whileAuthorized<T>(stream: AsyncIterable<T>, watch: AuthorizationWatch): AsyncGenerator<T, void, undefined> {
  let refusal: { error: unknown } | null = null;
  let interrupt: ((error: unknown) => void) | null = null;
  let ended = false;
  let checking = false;
  let checkAgain = false;
  let expiryTimer: NodeJS.Timeout | undefined;

  const scheduleExpiry = (expiresAt: number | null) => {
    clearTimeout(expiryTimer);
    if (expiresAt === null || ended) return;
    // Just after the expiry; a check that still passed then (another clock) tries again a second later.
    const untilExpiry = expiresAt - Date.now();
    expiryTimer = setTimeout(() => void check(), untilExpiry > 0 ? Math.min(untilExpiry + 10, MAX_TIMER_MS) : 1000);
    expiryTimer.unref();
  };
  const check = async () => {
    if (ended || refusal) return;
    // One check at a time; changes heard meanwhile are covered by one more.
    if (checking) {
      checkAgain = true;
      return;
    }
    checking = true;
    try {
      do {
        checkAgain = false;
        scheduleExpiry(await watch.check());
      } while (checkAgain && !ended);
    } catch (error) {
      if (!watch.isRefusal(error)) {
        watch.log.warn({ err: error }, 'could not check a subscription credential again; checking at the next interval');
        return;
      }
      refusal = { error };
      interrupt?.(error);
    } finally {
      checking = false;
    }
  };

  const unwatch = watch.changes.watch(watch.accountIds, () => void check());
  const interval = setInterval(() => void check(), RECHECK_EVERY_MS);
  interval.unref();
  // Once now: a change committed after the subscription was authorized but before it was
  // watched is not missed, and the credential's expiry is learnt.
  void check();
  const iterator = stream[Symbol.asyncIterator]();
  try {
    while (true) {
      // A fresh promise per event, so nothing accumulates on a long-lived one.
      const next = await new Promise<IteratorResult<T>>((resolve, reject) => {
        if (refusal) return reject(refusal.error);
        interrupt = reject;
        iterator.next().then(resolve, reject);
      });
      interrupt = null;
      if (next.done) return;
      yield next.value;
    }
  } finally {
    ended = true;
    unwatch();
    clearInterval(interval);
    clearTimeout(expiryTimer);
    // Not awaited: a stream waiting for its next event ends when the subscription's signal
    // aborts, which the adapter does once this stream has ended.
    void Promise.resolve(iterator.return?.()).catch(() => {});
  }
}
