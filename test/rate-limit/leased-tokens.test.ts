// The in-process side of leased rate-limit blocks: one lease per bucket in flight, tokens
// spent one per claim, refusals and tokens that end with their window.
import { expect, test } from 'vitest';
import { LeasedTokens, type Claim } from '../../server/rate-limit/leased-tokens.ts';

const W = 1_800_000_000;

test('a claim while a lease is in flight waits for it and spends its tokens instead of leasing again', async () => {
  const tokens = new LeasedTokens();
  expect(await tokens.claim('b')).toEqual({ kind: 'lease' });
  const waiting = tokens.claim('b');
  let settled = false;
  void waiting.then(() => (settled = true));
  await Promise.resolve();
  expect(settled).toBe(false);
  tokens.recordLease('b', W, 3);
  expect(await waiting).toEqual({ kind: 'token', window: W });
  expect(await tokens.claim('b')).toEqual({ kind: 'token', window: W });
  // Three leased, three spent: the next claim leases.
  expect(await tokens.claim('b')).toEqual({ kind: 'lease' });
});

test('an empty lease refuses the window until a statement shows the next one', async () => {
  const tokens = new LeasedTokens();
  await tokens.claim('b');
  tokens.recordLease('b', W, 0);
  expect(await tokens.claim('b')).toEqual({ kind: 'exhausted', window: W });
  tokens.observeWindow('b', W + 60);
  expect(await tokens.claim('b')).toEqual({ kind: 'lease' });
});

test("tokens of a past window are dropped; used is the database's count minus this process's unspent tokens", async () => {
  const tokens = new LeasedTokens();
  await tokens.claim('b');
  tokens.recordLease('b', W, 10);
  await tokens.claim('b');
  // 10 leased here, 2 spent; another process leased 5 more.
  expect(tokens.used('b', W, 15)).toBe(7);
  tokens.observeWindow('b', W + 60);
  expect(tokens.used('b', W + 60, 0)).toBe(0);
  expect(await tokens.claim('b')).toEqual({ kind: 'lease' });
});

test('a token given back is spent by the next claim; an unused lease lets the next claim lease', async () => {
  const tokens = new LeasedTokens();
  const lease = await tokens.claim('b');
  const waiting = tokens.claim('b');
  tokens.giveBack('b', lease);
  expect(await waiting).toEqual({ kind: 'lease' });
  tokens.recordLease('b', W, 1);
  tokens.giveBack('b', { kind: 'token', window: W });
  expect(await tokens.claim('b')).toEqual({ kind: 'token', window: W });
});

test('a claim told the database is in a later window leases at once, dropping the tokens and refusal of earlier ones', async () => {
  const tokens = new LeasedTokens();
  await tokens.claim('b');
  tokens.recordLease('b', W, 10);
  expect(await tokens.claim('b', W)).toEqual({ kind: 'token', window: W });
  expect(await tokens.claim('b', W + 60)).toEqual({ kind: 'lease' });
  tokens.recordLease('b', W + 60, 5);
  // Five leased in the new window, the leasing request spent one of them.
  expect(tokens.used('b', W + 60, 5)).toBe(1);

  await tokens.claim('c');
  tokens.recordLease('c', W, 0);
  expect(await tokens.claim('c', W)).toEqual({ kind: 'exhausted', window: W });
  expect(await tokens.claim('c', W + 60)).toEqual({ kind: 'lease' });
});

/** Whether `promise` has settled once every callback already queued has run. */
async function hasSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

/** Claims `name` until it asks for a lease; the tokens it got before. */
async function drain(tokens: LeasedTokens, name: string): Promise<Claim[]> {
  const claims: Claim[] = [];
  for (;;) {
    const claim = await tokens.claim(name);
    if (claim.kind !== 'token') return claims;
    claims.push(claim);
  }
}

test('a lease whose statement ran in a window the bucket has left spends one token there and adds none to the later window', async () => {
  const tokens = new LeasedTokens();
  await tokens.claim('b');
  // Another request's statement already showed the next window.
  tokens.observeWindow('b', W + 60);
  tokens.recordLease('b', W, 5);
  expect(await drain(tokens, 'b')).toEqual([]);
  expect(tokens.used('b', W + 60, 0)).toBe(0);
});

test("a lease made without a claim (a key's first request) joins the block whole, in its window only", async () => {
  const tokens = new LeasedTokens();
  tokens.addLease('a', W, 2);
  tokens.addLease('a', W, 3);
  expect(tokens.used('a', W, 5)).toBe(0);
  expect(await drain(tokens, 'a')).toHaveLength(5);
  expect(tokens.used('a', W, 0)).toBe(5);

  // Of an earlier window than the block's: nothing joins.
  const later = new LeasedTokens();
  later.observeWindow('a', W + 60);
  later.addLease('a', W, 4);
  expect(await later.claim('a')).toEqual({ kind: 'lease' });

  // Of a later window: the block of the earlier one is dropped.
  const moving = new LeasedTokens();
  moving.addLease('a', W, 4);
  moving.addLease('a', W + 60, 2);
  expect(await drain(moving, 'a')).toEqual([
    { kind: 'token', window: W + 60 },
    { kind: 'token', window: W + 60 },
  ]);
});

test('an empty lease made without a claim refuses its window; tokens granted later in it lift the refusal', async () => {
  const tokens = new LeasedTokens();
  tokens.addLease('a', W, 0);
  expect(await tokens.claim('a')).toEqual({ kind: 'exhausted', window: W });
  tokens.addLease('a', W, 1);
  expect(await tokens.claim('a')).toEqual({ kind: 'token', window: W });
});

test('a changed limit drops the tokens the process holds and returns them with their window; a refusal no longer stands', async () => {
  const tokens = new LeasedTokens();
  expect(tokens.limitChanged('unknown')).toBeNull();

  await tokens.claim('b');
  tokens.recordLease('b', W, 10);
  await tokens.claim('b');
  // 10 leased, 2 spent, 8 held.
  expect(tokens.limitChanged('b')).toEqual({ window: W, tokens: 8 });
  expect(tokens.used('b', W, 0)).toBe(2);
  expect(await tokens.claim('b')).toEqual({ kind: 'lease' });

  const refused = new LeasedTokens();
  await refused.claim('c');
  refused.recordLease('c', W, 0);
  expect(refused.limitChanged('c')).toBeNull();
  expect(await refused.claim('c')).toEqual({ kind: 'lease' });
});

test('forgetting past windows drops buckets of earlier windows and without one, never one of the window or leasing', async () => {
  const tokens = new LeasedTokens();
  tokens.addLease('old', W, 3);
  tokens.addLease('current', W + 60, 3);
  await tokens.claim('leasing');
  const unused = await tokens.claim('unused');
  tokens.giveBack('unused', unused);
  expect(tokens.forgetBefore(W + 60)).toEqual(['old', 'unused']);
  expect(tokens.used('old', W, 7)).toBe(7);
  expect(await tokens.claim('old')).toEqual({ kind: 'lease' });
  expect(await tokens.claim('current')).toEqual({ kind: 'token', window: W + 60 });
  expect(await hasSettled(tokens.claim('leasing'))).toBe(false);
});

test('a claim told of a later window while a lease is in flight waits for it and keeps the block it knows', async () => {
  const tokens = new LeasedTokens();
  await tokens.claim('b');
  tokens.recordLease('b', W, 2);
  await tokens.claim('b');
  await tokens.claim('b');
  const waiting = tokens.claim('b', W + 60);
  expect(await hasSettled(waiting)).toBe(false);
  // 2 leased and spent here, whatever the database's count.
  expect(tokens.used('b', W, 0)).toBe(2);
  tokens.recordLease('b', W + 60, 2);
  expect(await waiting).toEqual({ kind: 'token', window: W + 60 });
});

test('a given-back lease is no token, nor is a token of a window the bucket has left', async () => {
  const tokens = new LeasedTokens();
  await tokens.claim('b');
  tokens.recordLease('b', W, 1);
  const lease = await tokens.claim('b');
  expect(lease).toEqual({ kind: 'lease' });
  tokens.giveBack('b', lease);
  expect(await tokens.claim('b')).toEqual({ kind: 'lease' });

  const moved = new LeasedTokens();
  moved.addLease('b', W, 1);
  const token = await moved.claim('b');
  moved.observeWindow('b', W + 60);
  moved.giveBack('b', token);
  expect(await moved.claim('b')).toEqual({ kind: 'lease' });
});

test('a token given back while a lease is in flight leaves the lease in flight', async () => {
  const tokens = new LeasedTokens();
  tokens.addLease('b', W, 1);
  const token = await tokens.claim('b');
  expect(await tokens.claim('b')).toEqual({ kind: 'lease' });
  tokens.giveBack('b', token);
  expect(await tokens.claim('b')).toEqual({ kind: 'token', window: W });
  expect(await hasSettled(tokens.claim('b'))).toBe(false);
});

test('a statement of the same or an earlier window changes nothing the process holds', async () => {
  const tokens = new LeasedTokens();
  await tokens.claim('b');
  tokens.recordLease('b', W, 0);
  tokens.observeWindow('b', W);
  expect(await tokens.claim('b')).toEqual({ kind: 'exhausted', window: W });

  const held = new LeasedTokens();
  held.addLease('b', W + 60, 2);
  held.observeWindow('b', W + 60);
  held.observeWindow('b', W);
  expect(await drain(held, 'b')).toHaveLength(2);
});

test('used: the database count for a bucket the process does not hold in that window, and never below what this process leased and spent', async () => {
  const tokens = new LeasedTokens();
  expect(tokens.used('unknown', W, 9)).toBe(9);
  tokens.addLease('b', W, 10);
  await tokens.claim('b');
  await tokens.claim('b');
  expect(tokens.used('b', W + 60, 4)).toBe(4);
  expect(tokens.used('b', W, 0)).toBe(2);
  expect(tokens.used('b', W, 30)).toBe(22);
});
