// An API-key request's statement and its rate-limit accounting without a write per request.
// The statement always reads the key by its HMAC (plan, revoked/expired, scopes) and the
// agency of the account `userId` selects, so revocation applies on every process at once.
// The request spends a token this process leased earlier for the key's bucket and the
// account's bucket (leased-tokens.ts), with a statement that only reads; only when the process
// has none for a bucket does the request's statement also lease the next block, with one
// upsert per bucket. A block is
// clamp(floor(remaining_in_window / LEASE_DIVISOR), 1, LEASE_MAX_BLOCK): blocks shrink as a
// window nears its limit, so tokens stranded in other processes refuse few requests early,
// and the leased total never passes the limit. See limits.ts for the rules.
import type pg from 'pg';
import type { CountOptions } from './count-requests.ts';
import { LeasedTokens, type Claim } from './leased-tokens.ts';
import { ACCOUNT_RATE_CEILING, epochSql, LEASE_DIVISOR, LEASE_MAX_BLOCK, WINDOW_SECONDS, WINDOW_START_SQL } from './limits.ts';

export type KeyRow = {
  key_id: string;
  kind: 'main' | 'scoped';
  account_id: string;
  /** The key's scopes (scoped keys only; null for main keys). */
  scopes: unknown;
  /** Revoked or expired. */
  lapsed: boolean;
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
  /** The agency of the account `userId` selects; absent when the request has no `userId`. */
  target_agency_id?: string | null;
};

/** A block for a bucket with `used` of `limit` leased (SQL expression; the caller ensures used < limit). */
function block(limit: string, used: string): string {
  return `least(${LEASE_MAX_BLOCK}, greatest(1, (${limit} - ${used}) / ${LEASE_DIVISOR}))`;
}

/** The API key with the HMAC $1 (`limit` = main keys' limit, `plans` = plans that may call, as parameters). */
function keyCaller(limit: string, plans: string): string {
  return `
with caller as (
  select k.id as key_id, k.kind, k.account_id, case when k.kind = 'scoped' then k.scopes end as scopes,
    (k.revoked_at is not null or coalesce(k.expires_at <= now(), false)) as lapsed,
    'key:' || k.id as bucket,
    case when k.kind = 'scoped' then (k.scopes->>'rate_limit_per_min')::int else ${limit}::int end as bucket_limit,
    (k.revoked_at is null and (k.expires_at is null or k.expires_at > now())
      and (${plans}::text[] is null or a.plan = any(${plans}::text[]))) as usable
  from api_keys k join accounts a on a.id = k.account_id
  where k.key_hash = $1::bytea
), clock as (
  select now() as now, ${WINDOW_START_SQL} as window_start
)`;
}

/**
 * The columns both statements return about the caller and the clock: only what the request
 * uses (each column costs the process a parser and a property per row).
 */
const CALLER_COLUMNS = `caller.key_id, caller.kind, caller.account_id, caller.scopes, caller.lapsed, caller.bucket_limit, caller.usable,
  ${epochSql('clock.now')} as now_epoch,
  ${epochSql('clock.window_start')} as window_epoch`;

/** A bucket's leased count in the current window, as stored. */
const storedCount = (bucket: string) =>
  `(select r.count from rate_counters r where r.bucket = ${bucket} and r.window_start = clock.window_start)`;

/** The agency of the account `userId` (the parameter) selects. */
const targetAgency = (userId: string) => `(select a.agency_id from accounts a where a.id = ${userId}::text) as target_agency_id`;

// The statement of a request that spends tokens the process holds (or counts nothing): it
// only reads, so PostgreSQL sets up no insert or update for it (that set-up, even with no
// row to write, cost more than the key's read). $2 = main keys' limit, $3 = plans, and when
// the request names an account by `userId`, $4 = userId (without one there is no agency to
// read, and a statement without that subquery costs PostgreSQL less).
const keyReadSql = (withTarget: boolean) => `${keyCaller('$2', '$3')}
select ${CALLER_COLUMNS},
  coalesce(${storedCount('caller.bucket')}, 0) as key_count,
  coalesce(${storedCount("'account:' || caller.account_id")}, 0) as account_count${withTarget ? `,
  ${targetAgency('$4')}` : ''}
from caller, clock`;
/** Exported for bench/db-work/key-statement.ts. */
export const KEY_READ_SQL = keyReadSql(false);
const KEY_READ_FOR_USER_SQL = keyReadSql(true);

// The statement of a request that leases. $2 leases a block of the key's bucket, $6 of the
// account's (only when the key's budget let the request through: its lease granted tokens, or
// the process held a key token), $7 whether the request counts (touches a scoped key's
// last_used_at, at most once a minute: a key in use leases at least once a window, so the
// date is at most about two minutes behind). The WHERE of ON CONFLICT runs on the locked,
// latest row, so concurrent leases never pass the limit together. $3 = main keys' limit,
// $4 = plans, $5 = userId.
const KEY_LEASE_SQL = `${keyCaller('$3', '$4')}
, key_lease as (
  insert into rate_counters as c (bucket, window_start, count)
  select caller.bucket, clock.window_start, ${block('caller.bucket_limit', '0')} from caller, clock
  where caller.usable and $2::boolean
  on conflict (bucket, window_start) do update set count = c.count + ${block('(select bucket_limit from caller)', 'c.count')}
    where c.count < (select bucket_limit from caller)
  returning new.count, new.count - coalesce(old.count, 0) as granted
), account_lease as (
  insert into rate_counters as c (bucket, window_start, count)
  select 'account:' || caller.account_id, clock.window_start, ${block(String(ACCOUNT_RATE_CEILING), '0')} from caller, clock
  where caller.usable and $6::boolean and (not $2::boolean or exists (select from key_lease))
  on conflict (bucket, window_start) do update set count = c.count + ${block(String(ACCOUNT_RATE_CEILING), 'c.count')}
    where c.count < ${ACCOUNT_RATE_CEILING}
  returning new.count, new.count - coalesce(old.count, 0) as granted
), touched as (
  update api_keys k set last_used_at = clock.now from caller, clock
  where k.id = caller.key_id and caller.kind = 'scoped' and caller.usable and $7::boolean
    and (k.last_used_at is null or k.last_used_at < clock.now - interval '1 minute')
)
select ${CALLER_COLUMNS},
  case when caller.usable and $2::boolean then coalesce((select granted from key_lease), 0) end as key_granted,
  case when caller.usable and $6::boolean and (not $2::boolean or exists (select from key_lease))
    then coalesce((select granted from account_lease), 0) end as account_granted,
  coalesce((select count from key_lease), ${storedCount('caller.bucket')}, 0) as key_count,
  coalesce((select count from account_lease), ${storedCount("'account:' || caller.account_id")}, 0) as account_count,
  ${targetAgency('$5')}
from caller, clock`;

async function runStatement(pool: pg.Pool, keyHash: Buffer, options: CountOptions, lease: { key: boolean; account: boolean }) {
  const query =
    lease.key || lease.account
      ? {
          name: 'resolve-key-and-lease',
          text: KEY_LEASE_SQL,
          values: [keyHash, lease.key, options.fixedLimit, options.allowedPlans, options.userId, lease.account, options.count],
        }
      : options.userId === null
        ? { name: 'resolve-key', text: KEY_READ_SQL, values: [keyHash, options.fixedLimit, options.allowedPlans] }
        : { name: 'resolve-key-for-user', text: KEY_READ_FOR_USER_SQL, values: [keyHash, options.fixedLimit, options.allowedPlans, options.userId] };
  const { rows } = await pool.query<KeyRow>(query);
  return rows[0] ?? null;
}

export type KeySpend = {
  row: KeyRow;
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

/**
 * Hands unspent leased tokens back to a bucket's window (only after a limit change: rare, one
 * round trip). Best effort: tokens not handed back stay leased, which can only refuse early.
 */
async function returnTokens(pool: pg.Pool, bucket: string, dropped: { window: number; tokens: number }): Promise<void> {
  await pool
    .query({
      name: 'return-leased-tokens',
      text: 'update rate_counters set count = greatest(0, count - $3::int) where bucket = $1 and window_start = to_timestamp($2::float8)',
      values: [bucket, dropped.window, dropped.tokens],
    })
    .catch(() => {});
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
 * Resolves the key with this HMAC (null when none) and, when `options.count`, spends one token
 * of its bucket and one of its account's. An unusable key (revoked, expired, plan) spends nothing.
 */
export async function resolveKeyAndSpend(pool: pg.Pool, keyHash: Buffer, options: CountOptions): Promise<KeySpend | null> {
  const state = processTokens(pool);
  const { tokens, accountOfKey, limitOfKey } = state;
  const keyBucket = `hash:${keyHash.toString('hex')}`;
  const used = (row: KeyRow, refusedBy: KeySpend['refusedBy']): KeySpend => ({
    row,
    refusedBy,
    credentialUsed: tokens.used(keyBucket, row.window_epoch, row.key_count),
    accountUsed: tokens.used(`account:${row.account_id}`, row.window_epoch, row.account_count),
  });

  if (!options.count) {
    const row = await runStatement(pool, keyHash, options, { key: false, account: false });
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
    let row: KeyRow | null;
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
      row = await runStatement(pool, keyHash, options, {
        key: keyClaim.kind === 'lease',
        account: accountClaim?.kind === 'lease' || unclaimedAccountLease,
      });
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
      if (dropped) await returnTokens(pool, `key:${row.key_id}`, dropped);
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
