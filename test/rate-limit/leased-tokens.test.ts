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
