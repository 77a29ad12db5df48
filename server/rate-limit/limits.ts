// Rate-limit budgets and what a request learns about them: the numbers from the
// specification's Limits table, the state one request's counting produced, the
// IETF RateLimit headers that report it, and the 429 that refuses it.
//
// Semantics (one place, referenced from docs/api.md):
// - Fixed 60-second windows aligned to the database clock (`window_start` is the
//   minute boundary), shared by every server process on the database.
// - Each request is counted against two buckets: the calling credential's own
//   budget (main key 300, a scoped key its `rate_limit_per_min`, an ID-token
//   session 300) and the account-wide ceiling of 1,200 across all of them.
// - API keys: a process leases a block of a bucket's window budget in the
//   authentication statement (one upsert, only when it holds no token for that
//   bucket) and spends it one token per request in memory (spend-key-tokens.ts).
//   A block is clamp(floor(remaining / LEASE_DIVISOR), 1, LEASE_MAX_BLOCK) and the
//   leased total never passes the limit, so no more requests than the limit pass in
//   a window whatever the number of processes. Tokens a process holds unspent when
//   its traffic stops (at most one block per bucket) are lost for the window: other
//   processes may refuse that many requests early. A new window starts from nothing.
//   ID-token sessions still count each request with one upsert.
// - The credential's bucket is checked first: a request it refuses is NOT counted
//   anywhere, so a client hammering at 429 does not eat the other keys' share of
//   the account ceiling.
// - A request the account ceiling refuses has already used one unit of its own
//   key's budget (undoing costs a round trip).
// - "Used" (usage endpoint, RateLimit headers) is what the bucket's counter holds
//   for the window, i.e. tokens leased by every process (for sessions: requests
//   counted), minus the tokens the answering process holds unspent. Tokens other
//   processes hold unspent count as used, so `remaining` never overstates the
//   budget; one process alone reports its requests exactly.
// - Counting happens before authorization, so requests later refused with 403,
//   404 or 400 still count; requests with an unknown, revoked or expired key or a
//   plan without api_access are never counted. Revocation applies at once on every
//   process: each request reads the key's row.
// - GET /api-keys/usage reads the budget without spending it, so a client can learn when
//   its window resets even with the budget spent; it is counted in a bucket of its own at
//   the credential's per-minute limit (count-apart.ts), which refuses it with 429 when full.
// - What a request learns is one decision (rate-limit-decision.ts).
import { RateLimitedError } from '../errors.ts';
import { countRateLimitRefusal } from '../metrics/registry.ts';

export const WINDOW_SECONDS = 60;
export const MAIN_KEY_RATE_LIMIT = 300;
/** ID-token sessions get the main key's budget size, in a bucket of their own. */
export const SESSION_RATE_LIMIT = MAIN_KEY_RATE_LIMIT;
export const ACCOUNT_RATE_CEILING = 1200;
export const SCOPED_KEY_DEFAULT_RATE_LIMIT = 60;
export const SCOPED_KEY_MAX_RATE_LIMIT = 300;
/** A lease takes 1/LEASE_DIVISOR of what the window has left (at least 1, at most LEASE_MAX_BLOCK). */
export const LEASE_DIVISOR = 8;
export const LEASE_MAX_BLOCK = 50;

/**
 * The current window's start in SQL, the same instant in every statement that counts: the
 * database clock binned by integer arithmetic (`extract(epoch …)` would go through numeric,
 * which costs the statement more than the rest of its clock).
 */
export const WINDOW_START_SQL = `date_bin('${WINDOW_SECONDS} seconds', now(), 'epoch')`;

/** Epoch seconds of a timestamptz expression as float8 (`date_part` keeps to float8; `extract` is numeric). */
export const epochSql = (timestamp: string) => `date_part('epoch', ${timestamp})`;

export type Budget = { limit: number; used: number };

export type RateLimitState = {
  /** Whether this request was counted in this budget (false for the usage endpoint, counted apart). */
  counted: boolean;
  /** Which budget refused the request, if one did. */
  refusedBy: 'credential' | 'account' | null;
  /** Policy name of the credential's budget in the RateLimit headers. */
  policy: 'main-key' | 'scoped-key' | 'session';
  /** Unix seconds (database clock). */
  windowStart: number;
  now: number;
  credential: Budget;
  account: Budget;
};

/** What one request's counting came to: which budget refused it, and what each has spent. */
export type CountOutcome = { refusedBy: RateLimitState['refusedBy']; credentialUsed: number; accountUsed: number };

/** The RateLimit policy name of a credential's budget. */
export function policyOf(kind: 'main' | 'scoped' | 'session'): RateLimitState['policy'] {
  return kind === 'main' ? 'main-key' : kind === 'scoped' ? 'scoped-key' : 'session';
}

/** The state of a request's budgets at its statement's clock; an uncounted request (the usage endpoint) is never refused. */
export function rateLimitState(
  clock: { window_epoch: number; now_epoch: number },
  budget: { policy: RateLimitState['policy']; limit: number },
  counted: boolean,
  outcome: CountOutcome,
): RateLimitState {
  return {
    counted,
    refusedBy: counted ? outcome.refusedBy : null,
    policy: budget.policy,
    windowStart: clock.window_epoch,
    now: clock.now_epoch,
    credential: { limit: budget.limit, used: outcome.credentialUsed },
    account: { limit: ACCOUNT_RATE_CEILING, used: outcome.accountUsed },
  };
}

export function secondsUntilReset(state: RateLimitState): number {
  return Math.max(1, Math.ceil(state.windowStart + WINDOW_SECONDS - state.now));
}

export function windowResetsAt(state: RateLimitState): string {
  return new Date((state.windowStart + WINDOW_SECONDS) * 1000).toISOString();
}

export function remaining(budget: Budget): number {
  return Math.max(0, budget.limit - budget.used);
}

/** draft-ietf-httpapi-ratelimit-headers (RateLimit-Policy + RateLimit, structured-field lists). */
export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  const reset = secondsUntilReset(state);
  return {
    'RateLimit-Policy': `"${state.policy}";q=${state.credential.limit};w=${WINDOW_SECONDS}, "account";q=${state.account.limit};w=${WINDOW_SECONDS}`,
    RateLimit: `"${state.policy}";r=${remaining(state.credential)};t=${reset}, "account";r=${remaining(state.account)};t=${reset}`,
  };
}

/** Throws the 429 (with Retry-After and the RateLimit headers) when a budget refused the request. */
export function assertWithinBudget(state: RateLimitState): void {
  if (!state.refusedBy) return;
  countRateLimitRefusal('api_key');
  throw new RateLimitedError({ 'Retry-After': String(secondsUntilReset(state)), ...rateLimitHeaders(state) });
}

