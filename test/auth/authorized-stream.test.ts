// A subscription is authorized for as long as it runs (README "Sockets and batches"): it is
// checked again when a change to one of its accounts is announced, at its credential's
// expiry and every 30 seconds, and ends with the refusal a new call would get. Virtual
// timers stand in for the clock; the change feed is the real in-process one.
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { RECHECK_EVERY_MS, whileAuthorized, type AuthorizationWatch } from '../../server/auth/authorized-stream.ts';
import { createCredentialChangeFeed } from '../../server/auth/credential-changes.ts';

class Refusal extends Error {}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Lets every callback already queued run (setImmediate is not faked). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A source stream fed by the test, which records being returned. */
function source<T>() {
  const waiting: ((result: IteratorResult<T>) => void)[] = [];
  const queued: IteratorResult<T>[] = [];
  const state = { returned: 0, failReturn: false };
  const iterator: AsyncIterator<T> = {
    next: () => (queued.length ? Promise.resolve(queued.shift()!) : new Promise((resolve) => waiting.push(resolve))),
    return: async () => {
      state.returned++;
      if (state.failReturn) throw new Error('the source could not be closed');
      return { done: true, value: undefined };
    },
  };
  const deliver = (result: IteratorResult<T>) => {
    const reader = waiting.shift();
    if (reader) reader(result);
    else queued.push(result);
  };
  return { stream: { [Symbol.asyncIterator]: () => iterator }, push: (value: T) => deliver({ value, done: false }), end: () => deliver({ done: true, value: undefined }), state };
}

type Deferred = { resolve(expiresAt: number | null): void; reject(error: unknown): void };

/** The check again: answers `answer()` unless the test holds the calls to settle them itself. */
function checks(answer: () => Promise<number | null> = async () => null) {
  const held: Deferred[] = [];
  const state = { calls: 0, holding: false, answer };
  const check = () => {
    state.calls++;
    if (!state.holding) return state.answer();
    return new Promise<number | null>((resolve, reject) => held.push({ resolve, reject }));
  };
  return { state, check, held };
}

function watching(check: () => Promise<number | null>) {
  const logLines: string[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => void logLines.push(line) });
  const feed = createCredentialChangeFeed(log);
  const listening = { count: 0 };
  const changes: AuthorizationWatch['changes'] = {
    ...feed,
    watch(accountIds, listener) {
      listening.count++;
      const unwatch = feed.watch(accountIds, listener);
      return () => {
        listening.count--;
        unwatch();
      };
    },
  };
  const watch: AuthorizationWatch = { changes, accountIds: ['usr_key', 'usr_client'], check, isRefusal: (error) => error instanceof Refusal, log };
  return { watch, feed, listening, logLines };
}

function subscribe(answer?: () => Promise<number | null>) {
  const src = source<number>();
  const checking = checks(answer);
  const watched = watching(checking.check);
  const iterator = whileAuthorized(src.stream, watched.watch)[Symbol.asyncIterator]();
  return { src, checking, ...watched, iterator };
}

test('events pass while the credential is accepted; the end of the stream unwatches, clears its timers and returns the source', async () => {
  const { src, checking, listening, iterator } = subscribe(async () => Date.now() + 60_000);
  const first = iterator.next();
  src.push(1);
  expect(await first).toEqual({ value: 1, done: false });
  // Checked once at the start, before any announcement.
  expect(checking.state.calls).toBe(1);
  src.push(2);
  expect(await iterator.next()).toEqual({ value: 2, done: false });
  src.end();
  expect(await iterator.next()).toEqual({ value: undefined, done: true });
  expect(listening.count).toBe(0);
  expect(vi.getTimerCount()).toBe(0);
  expect(src.state.returned).toBe(1);
});

test("a change announced for one of its accounts checks again; another account's does not", async () => {
  const { feed, checking, iterator } = subscribe();
  void iterator.next();
  await settle();
  expect(checking.state.calls).toBe(1);
  feed.receive('usr_elsewhere');
  feed.receive('usr_client');
  await settle();
  expect(checking.state.calls).toBe(2);
  feed.receive('usr_key');
  await settle();
  expect(checking.state.calls).toBe(3);
});

describe('a refusal ends the subscription with it', () => {
  test('while it waits for an event: the wait ends at once, and nothing is watched or timed any more', async () => {
    const { src, feed, checking, listening, iterator } = subscribe();
    const waiting = iterator.next();
    await settle();
    const refusal = new Refusal('revoked');
    checking.state.answer = () => Promise.reject(refusal);
    feed.receive('usr_key');
    await expect(waiting).rejects.toBe(refusal);
    expect(listening.count).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    expect(src.state.returned).toBe(1);
    // No more checks once refused, whatever is announced.
    feed.receive('usr_key');
    await vi.advanceTimersByTimeAsync(RECHECK_EVERY_MS);
    expect(checking.state.calls).toBe(2);
  });

  test('between events: the next read is refused, even with an event ready', async () => {
    const { src, feed, checking, iterator } = subscribe();
    src.push(1);
    expect(await iterator.next()).toEqual({ value: 1, done: false });
    const refusal = new Refusal('narrowed');
    checking.state.answer = () => Promise.reject(refusal);
    feed.receive('usr_client');
    await settle();
    // Refused: what is announced before the next read checks nothing more.
    feed.receive('usr_key');
    await settle();
    expect(checking.state.calls).toBe(2);
    src.push(2);
    await expect(iterator.next()).rejects.toBe(refusal);
  });

  test('found by the first check, before any event', async () => {
    const refusal = new Refusal('expired');
    const { src, iterator } = subscribe(() => Promise.reject(refusal));
    src.push(1);
    await expect(iterator.next()).rejects.toBe(refusal);
  });
});

test('a check that fails otherwise (the database away) is logged, and the stream goes on until a check refuses', async () => {
  const { src, feed, checking, logLines, iterator } = subscribe();
  void iterator.next().then(() => {});
  await settle();
  checking.state.answer = () => Promise.reject(new Error('database away'));
  feed.receive('usr_key');
  await settle();
  expect(logLines.map((line) => [JSON.parse(line).msg, JSON.parse(line).err?.message])).toEqual([
    ['could not check a subscription credential again; checking at the next interval', 'database away'],
  ]);
  src.push(1);
  src.push(2);
  expect(await iterator.next()).toEqual({ value: 2, done: false });
  const refusal = new Refusal('revoked');
  checking.state.answer = () => Promise.reject(refusal);
  const refused = expect(iterator.next()).rejects.toBe(refusal);
  await vi.advanceTimersByTimeAsync(RECHECK_EVERY_MS);
  await refused;
});

test('checked again every 30 seconds', async () => {
  expect(RECHECK_EVERY_MS).toBe(30_000);
  const { checking, iterator } = subscribe();
  void iterator.next();
  await settle();
  await vi.advanceTimersByTimeAsync(RECHECK_EVERY_MS - 1);
  expect(checking.state.calls).toBe(1);
  await vi.advanceTimersByTimeAsync(1);
  expect(checking.state.calls).toBe(2);
  await vi.advanceTimersByTimeAsync(RECHECK_EVERY_MS);
  expect(checking.state.calls).toBe(3);
});

describe("at the credential's expiry", () => {
  test('checked 10 ms after it, then every second while a check still passes (another clock)', async () => {
    const expiresAt = Date.now() + 5_000;
    const { checking, iterator } = subscribe(async () => expiresAt);
    void iterator.next();
    await settle();
    await vi.advanceTimersByTimeAsync(5_009);
    expect(checking.state.calls).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(checking.state.calls).toBe(2);
    await vi.advanceTimersByTimeAsync(999);
    expect(checking.state.calls).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(checking.state.calls).toBe(3);
  });

  test('an expiry that is now is checked a second later', async () => {
    const { checking, iterator } = subscribe(async () => Date.now());
    void iterator.next();
    await settle();
    await vi.advanceTimersByTimeAsync(999);
    expect(checking.state.calls).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(checking.state.calls).toBe(2);
  });

  test('one expiry timer at a time, none without an expiry', async () => {
    let expiresAt: number | null = Date.now() + 60_000;
    const { feed, iterator } = subscribe(async () => expiresAt);
    void iterator.next();
    await settle();
    feed.receive('usr_key');
    await settle();
    // The interval and one expiry timer.
    expect(vi.getTimerCount()).toBe(2);
    expiresAt = null;
    feed.receive('usr_key');
    await settle();
    expect(vi.getTimerCount()).toBe(1);
  });

  test("an expiry beyond setTimeout's range waits for the periodic checks", async () => {
    const { checking, iterator } = subscribe(async () => Date.now() + 2 ** 32);
    void iterator.next();
    await settle();
    await vi.advanceTimersByTimeAsync(RECHECK_EVERY_MS - 1);
    expect(checking.state.calls).toBe(1);
  });
});

test('changes heard while a check runs are covered by one more check, not one each', async () => {
  const { feed, checking, iterator } = subscribe();
  const { held } = checking;
  checking.state.holding = true;
  void iterator.next();
  await settle();
  expect(held).toHaveLength(1);
  for (const account of ['usr_key', 'usr_client', 'usr_key']) feed.receive(account);
  await settle();
  expect(checking.state.calls).toBe(1);
  held[0]!.resolve(null);
  await settle();
  expect(checking.state.calls).toBe(2);
  held[1]!.resolve(null);
  await settle();
  // The sentinel: one announcement now is one check.
  feed.receive('usr_key');
  await settle();
  expect(checking.state.calls).toBe(3);
});

test('a check still running when the stream ends checks no more and sets no timer', async () => {
  const { src, feed, checking, iterator } = subscribe();
  const { held } = checking;
  checking.state.holding = true;
  const first = iterator.next();
  await settle();
  feed.receive('usr_key');
  src.end();
  expect(await first).toEqual({ value: undefined, done: true });
  held[0]!.resolve(Date.now() + 5_000);
  await settle();
  expect(checking.state.calls).toBe(1);
  expect(vi.getTimerCount()).toBe(0);
});

test('a source that fails to close does not fail the ended subscription', async () => {
  const { src, iterator } = subscribe();
  src.state.failReturn = true;
  src.end();
  expect(await iterator.next()).toEqual({ value: undefined, done: true });
  await settle();
  expect(src.state.returned).toBe(1);
});

test('a source without a return method ends like any other', async () => {
  const checking = checks();
  const { watch } = watching(checking.check);
  const bare: AsyncIterable<number> = { [Symbol.asyncIterator]: () => ({ next: async () => ({ done: true, value: undefined }) }) };
  expect(await whileAuthorized(bare, watch)[Symbol.asyncIterator]().next()).toEqual({ value: undefined, done: true });
});
