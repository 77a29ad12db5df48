// An API-key request's rate-limit accounting without a write per request. The request spends
// a token this process leased earlier for the key's bucket and the account's bucket
// (leased-tokens.ts), and its caller's statement (server/auth resolves the key in it) only
// reads the counts; only when the process has none for a bucket does the statement also lease
// the next block, with one upsert per bucket (sql/rate-counters.ts). A block is
// clamp(floor(remaining_in_window / LEASE_DIVISOR), 1, LEASE_MAX_BLOCK): blocks shrink as a
// window nears its limit, so tokens stranded in other processes refuse few requests early,
// and the leased total never passes the limit. See limits.ts for the rules.
import type pg from 'pg';
import { LeasedTokens, type Claim } from './leased-tokens.ts';
import { WINDOW_SECONDS } from './limits.ts';
import { keyBucket as keyBucketOf, leaseKeyBlocks, READ_KEY_COUNTS, returnLeasedTokens, type CountingSql } from './sql/rate-counters.ts';

/** What the caller's statement returns that the accounting reads (server/auth/sql/resolve-caller.ts has the whole row). */
export type CountedKeyRow = {
  key_id: string;
  account_id: string;
  bucket_limit: number;
  usable: boolean;
  now_epoch: number;
  window_epoch: number;
  /**
   * Tokens the key lease granted (0 = spent), null when the statement did not lease; absent
   * from the statement that only reads.
   */
  key_granted?: number | null;
  account_granted?: number | null;
  /** Tokens leased in the current window by all processes (after this statement's leases). */
  key_count: number;
  account_count: number;
};

/** Runs the caller's statement with this counting in it; its row, null when no key has the HMAC. */
export type KeyStatement<Row extends CountedKeyRow> = (counting: CountingSql) => Promise<Row | null>;

export type KeySpend<Row extends CountedKeyRow = CountedKeyRow> = {
  row: Row;
  refusedBy: 'credential' | 'account' | null;
  /** Tokens of the window spent as this process can tell (see LeasedTokens.used). */
  credentialUsed: number;
  accountUsed: number;
};

type ProcessTokens = {
  tokens: LeasedTokens;
  /** The account bucket of each key bucket, learnt from the statement. */
  accountOfKey: Map<string, string>;
  /** The limit each key bucket's tokens were leased under. */
  limitOfKey: Map<string, number>;
  forgotAt: number;
  /** The database's clock minus this process's, as the last statement showed it (ms); null before one. */
  clockOffsetMs: number | null;
};

/** How far into a window this process's estimate of the database's clock must be to trust it. */
const CLOCK_MARGIN_MS = 1000;

/**
 * The window the database is surely in, by this process's clock and the offset the last
 * statement showed (its now() precedes the answer, so the estimate runs late, never early,
 * by the round trip); undefined before any statement or within CLOCK_MARGIN_MS of a window's start.
 */
function surelyCurrentWindow(state: ProcessTokens): number | undefined {
  if (state.clockOffsetMs === null) return undefined;
  const now = Date.now() + state.clockOffsetMs;
  const intoWindow = now % (WINDOW_SECONDS * 1000);
  return intoWindow < CLOCK_MARGIN_MS ? undefined : (now - intoWindow) / 1000;
}

const tokensByPool = new WeakMap<pg.Pool, ProcessTokens>();

function processTokens(pool: pg.Pool) {
  let state = tokensByPool.get(pool);
  if (!state) {
    state = { tokens: new LeasedTokens(), accountOfKey: new Map(), limitOfKey: new Map(), forgotAt: Date.now(), clockOffsetMs: null };
    tokensByPool.set(pool, state);
  }
  return state;
}

/** Drops this process's tokens of past windows, at most once a window. */
export function forgetPastTokens(pool: pg.Pool): void {
  const state = tokensByPool.get(pool);
  if (!state || Date.now() - state.forgotAt < WINDOW_SECONDS * 1000) return;
  state.forgotAt = Date.now();
  const currentWindow = Math.floor(Date.now() / 1000 / WINDOW_SECONDS) * WINDOW_SECONDS;
  for (const name of state.tokens.forgetBefore(currentWindow - WINDOW_SECONDS)) {
    state.accountOfKey.delete(name);
    state.limitOfKey.delete(name);
  }
}

type Outcome = 'spent' | 'refused' | 'again';

/**
 * What a claim comes to in the window the statement ran in: `spent` (the request holds a
 * token of `window`), `refused` (the bucket is spent in `window`), or `again` (the claim
 * belonged to an earlier window, or its lease did not run: claim again).
 */
function settle(tokens: LeasedTokens, bucket: string, claim: Claim, window: number, granted: number | null | undefined): Outcome {
  if (claim.kind === 'lease') {
    if (granted == null) {
      tokens.giveBack(bucket, claim);
      return 'again';
    }
    tokens.recordLease(bucket, window, granted);
    return granted > 0 ? 'spent' : 'refused';
  }
  tokens.observeWindow(bucket, window);
  if (claim.window !== window) return 'again';
  return claim.kind === 'token' ? 'spent' : 'refused';
}

/** Bounds the claim-and-read rounds (each round but the last follows a window change or a first sighting). */
const MAX_ROUNDS = 6;

/**
 * Runs the key's statement (null when no key has the HMAC) and, when `count`, spends one token
 * of its bucket and one of its account's. `keyHash` names the key's tokens in this process
 * before the statement names the key. An unusable key (revoked, expired, plan) spends nothing.
 */
export async function spendKeyTokens<Row extends CountedKeyRow>(
  pool: pg.Pool,
  keyHash: Buffer,
  count: boolean,
  statement: KeyStatement<Row>,
): Promise<KeySpend<Row> | null> {
  const state = processTokens(pool);
  const { tokens, accountOfKey, limitOfKey } = state;
  const keyBucket = `hash:${keyHash.toString('hex')}`;
  const used = (row: Row, refusedBy: KeySpend['refusedBy']): KeySpend<Row> => ({
    row,
    refusedBy,
    credentialUsed: tokens.used(keyBucket, row.window_epoch, row.key_count),
    accountUsed: tokens.used(`account:${row.account_id}`, row.window_epoch, row.account_count),
  });

  if (!count) {
    const row = await statement(READ_KEY_COUNTS);
    return row && used(row, null);
  }

  let keyClaim: Claim | null = null;
  let accountClaim: Claim | null = null;
  let accountBucket = accountOfKey.get(keyBucket) ?? null;
  const giveBackAll = () => {
    if (keyClaim) tokens.giveBack(keyBucket, keyClaim);
    if (accountClaim && accountBucket) tokens.giveBack(accountBucket, accountClaim);
  };

  for (let round = 1; ; round++) {
    let row: Row | null;
    // The key's account is unknown to this process: lease for it in the same statement
    // rather than in a second round trip; the tokens join whatever the process holds.
    let unclaimedAccountLease = false;
    try {
      // Tokens of a window the database has surely left are not claimed: a statement would only
      // show they are spent, and a second one lease (once per bucket at every window's start).
      const currentWindow = surelyCurrentWindow(state);
      keyClaim ??= await tokens.claim(keyBucket, currentWindow);
      accountBucket ??= accountOfKey.get(keyBucket) ?? null;
      // A request the key's budget refuses takes nothing from the account's.
      if (!accountClaim && accountBucket && keyClaim.kind !== 'exhausted') accountClaim = await tokens.claim(accountBucket, currentWindow);
      unclaimedAccountLease = !accountBucket && keyClaim.kind !== 'exhausted';
      const lease = { key: keyClaim.kind === 'lease', account: accountClaim?.kind === 'lease' || unclaimedAccountLease };
      row = await statement(lease.key || lease.account ? leaseKeyBlocks(lease) : READ_KEY_COUNTS);
    } catch (error) {
      giveBackAll();
      throw error;
    }
    if (row) state.clockOffsetMs = row.now_epoch * 1000 - Date.now();
    if (!row || !row.usable) {
      giveBackAll();
      return row && used(row, null);
    }
    const window = row.window_epoch;
    accountBucket = `account:${row.account_id}`;
    accountOfKey.set(keyBucket, accountBucket);
    if (unclaimedAccountLease && row.account_granted != null) tokens.addLease(accountBucket, window, row.account_granted);

    // A changed rate_limit_per_min applies at once: the tokens this process holds are handed
    // back to the database (leases under the new limit decide from then on) and a refusal
    // under the old limit no longer stands.
    const leasedUnder = limitOfKey.get(keyBucket);
    limitOfKey.set(keyBucket, row.bucket_limit);
    const limitChanged = leasedUnder !== undefined && leasedUnder !== row.bucket_limit && keyClaim.kind !== 'lease';
    if (limitChanged) {
      tokens.giveBack(keyBucket, keyClaim);
      const dropped = tokens.limitChanged(keyBucket);
      if (dropped) await returnLeasedTokens(pool, keyBucketOf(row.key_id), dropped);
    }
    const key: Outcome = limitChanged ? 'again' : settle(tokens, keyBucket, keyClaim, window, row.key_granted);
    let account: Outcome | null = accountClaim ? settle(tokens, accountBucket, accountClaim, window, row.account_granted) : null;
    if (key === 'refused') {
      if (account === 'spent') tokens.giveBack(accountBucket, { kind: 'token', window });
      return used(row, 'credential');
    }
    if (key === 'again') {
      keyClaim = null;
      accountClaim = account === 'spent' ? { kind: 'token', window } : null;
    } else {
      keyClaim = { kind: 'token', window };
      if (account === null || account === 'again') {
        // First sighting of the key's account in this process, or its claim was of an earlier window.
        tokens.observeWindow(accountBucket, window);
        accountClaim = await tokens.claim(accountBucket);
        account = accountClaim.kind === 'lease' ? 'again' : accountClaim.window !== window ? 'again' : accountClaim.kind === 'token' ? 'spent' : 'refused';
        if (account === 'again' && accountClaim.kind !== 'lease') accountClaim = null;
      }
      // A request the account's ceiling refuses has spent its key token (limits.ts).
      if (account === 'spent') return used(row, null);
      if (account === 'refused') return used(row, 'account');
    }
    if (round >= MAX_ROUNDS) {
      // Only a window change in every round gets here: refuse rather than loop.
      giveBackAll();
      return used(row, 'credential');
    }
  }
}
