// What rate limiting decides about one request, in one call: it spends the request's budget
// in the statement that resolves its caller (server/auth builds that statement; the counting
// in it is sql/rate-counters.ts), keeps the counters' housekeeping, counts a usage request in
// its bucket apart, and answers with one decision: allowed or not, the budget, when it
// resets, and the headers that say so. See limits.ts for the rules.
import type pg from 'pg';
import { countRateLimitRefusal } from '../metrics/registry.ts';
import { countApart } from './count-apart.ts';
import { sessionOutcome, type CountedSessionRow } from './count-requests.ts';
import { policyOf, rateLimitHeaders, rateLimitState, remaining, secondsUntilReset, type CountOutcome, type RateLimitState } from './limits.ts';
import { forgetPastTokens, spendKeyTokens, type CountedKeyRow, type KeyStatement } from './spend-key-tokens.ts';
import { countSessionRequest, sweepOldWindows, type CountingSql } from './sql/rate-counters.ts';

export type RateLimitDecision = {
  allowed: boolean;
  /** The credential's budget in this window. */
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  reset: number;
  /** Seconds to wait before trying again, when refused. */
  retryAfter: number | null;
  /** The RateLimit headers every answer to the request carries. */
  headers: Record<string, string>;
  /** The headers of the 429, when refused. */
  refusal: Record<string, string> | null;
  /** The budgets as counted (the usage endpoint reports them). */
  state: RateLimitState;
};

/**
 * What the request spends: its credential's budget; a bucket of its own at the same limit,
 * reading the budget without spending it (`apart`: the usage endpoint); or nothing (`none`).
 */
export type Counting = 'budget' | 'apart' | 'none';

type KeyRow = CountedKeyRow & { kind: 'main' | 'scoped' };
/** An API key's caller: its HMAC names its tokens in this process before its statement names the key. */
export type KeyCaller<Row extends KeyRow> = { kind: 'key'; keyHash: Buffer; statement: KeyStatement<Row> };
export type SessionCaller<Row extends CountedSessionRow> = { kind: 'session'; statement: (counting: CountingSql) => Promise<Row | null> };

export type Decided<Row> = { row: Row; outcome: CountOutcome; decision: RateLimitDecision | null };

/**
 * Runs the caller's statement with the request's counting in it and decides. The row is the
 * statement's (null when no caller matched); the decision is null for a caller that may not
 * call at all (revoked, expired, plan), which is never counted.
 */
export async function decideRateLimit<Row extends KeyRow>(pool: pg.Pool, caller: KeyCaller<Row>, counting: Counting): Promise<Decided<Row | null>>;
export async function decideRateLimit<Row extends CountedSessionRow>(pool: pg.Pool, caller: SessionCaller<Row>, counting: Counting): Promise<Decided<Row | null>>;
export async function decideRateLimit(
  pool: pg.Pool,
  caller: KeyCaller<KeyRow> | SessionCaller<CountedSessionRow>,
  counting: Counting,
): Promise<Decided<KeyRow | CountedSessionRow | null>> {
  const count = counting === 'budget';
  let row: KeyRow | CountedSessionRow | null;
  let outcome: CountOutcome;
  let policy: RateLimitState['policy'];
  if (caller.kind === 'key') {
    const spend = await spendKeyTokens(pool, caller.keyHash, count, caller.statement);
    if (count) forgetPastTokens(pool);
    row = spend?.row ?? null;
    outcome = spend ?? NOTHING;
    policy = row ? policyOf((row as KeyRow).kind) : 'main-key';
  } else {
    row = await caller.statement(countSessionRequest(count));
    outcome = row ? sessionOutcome(row) : NOTHING;
    policy = 'session';
  }
  if (count) sweepOldWindows(pool);
  if (!row || !row.usable) return { row, outcome, decision: null };

  const state = rateLimitState(row, { policy, limit: row.bucket_limit }, count, outcome);
  const headers = rateLimitHeaders(state);
  const reset = secondsUntilReset(state);
  const decision: RateLimitDecision = {
    allowed: true,
    limit: state.credential.limit,
    remaining: remaining(state.credential),
    reset,
    retryAfter: null,
    headers,
    refusal: null,
    state,
  };
  if (state.refusedBy) {
    decision.allowed = false;
    decision.retryAfter = reset;
    decision.refusal = { 'Retry-After': String(reset), ...headers };
  } else if (counting === 'apart') {
    const refusal = await countApart(pool, { key_id: caller.kind === 'key' ? (row as KeyRow).key_id : null, account_id: row.account_id, bucket_limit: row.bucket_limit });
    if (refusal) {
      decision.allowed = false;
      decision.remaining = 0;
      decision.retryAfter = Number(refusal['Retry-After']);
      decision.refusal = refusal;
    }
  }
  if (!decision.allowed) countRateLimitRefusal('api_key');
  return { row, outcome, decision };
}

const NOTHING: CountOutcome = { refusedBy: null, credentialUsed: 0, accountUsed: 0 };
