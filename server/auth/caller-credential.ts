// What a resolving statement's row makes of the caller: the credential (or the 401, or the
// plan's 403 for an API key), and the rate-limit state of this request's counting. The
// statements are rate-limit/spend-key-tokens.ts (API keys) and rate-limit/count-requests.ts
// (ID-token sessions); authenticate.ts runs them.
import { featureDisabledError, UnauthorizedError } from '../errors.ts';
import { PLANS, planHasFeature } from '../plans.ts';
import type { CallerRow } from '../rate-limit/count-requests.ts';
import { ACCOUNT_RATE_CEILING, type RateLimitState } from '../rate-limit/limits.ts';
import type { KeySpend } from '../rate-limit/spend-key-tokens.ts';
import type { VerifiedIdToken } from './id-token-verification.ts';
import type { Credential, Scopes } from './scopes.ts';

/** The plans whose accounts may call with an API key (ID-token sessions are not subject to it). */
export const API_ACCESS_PLANS = PLANS.filter((plan) => planHasFeature(plan, 'api_access'));

export type ResolvedCaller = { credential: Credential; rateLimit: RateLimitState; targetAgencyId: string | null };

type CountOutcome = { refusedBy: RateLimitState['refusedBy']; credentialUsed: number; accountUsed: number };

function rateLimitState(row: Pick<CallerRow, 'window_epoch' | 'now_epoch'>, credential: Credential, counted: boolean, outcome: CountOutcome): RateLimitState {
  return {
    counted,
    // An uncounted request (the usage endpoint) is never refused.
    refusedBy: counted ? outcome.refusedBy : null,
    policy: credential.type === 'main' ? 'main-key' : credential.type === 'scoped' ? 'scoped-key' : 'session',
    windowStart: row.window_epoch,
    now: row.now_epoch,
    credential: { limit: credential.rateLimitPerMin, used: outcome.credentialUsed },
    account: { limit: ACCOUNT_RATE_CEILING, used: outcome.accountUsed },
  };
}

/**
 * The API key's caller: 401 when no key has the value's HMAC or it is revoked or expired,
 * 403 (`api_access`) when its account's plan has no API access.
 */
export function keyCaller(spend: KeySpend | null, counted: boolean): ResolvedCaller {
  const row = spend?.row;
  if (!spend || !row || row.lapsed) throw new UnauthorizedError();
  if (!row.usable) throw featureDisabledError('api_access');
  const credential: Credential = {
    type: row.kind,
    id: row.key_id,
    accountId: row.account_id,
    scopes: row.kind === 'scoped' ? (row.scopes as Scopes) : null,
    rateLimitPerMin: row.bucket_limit,
  };
  return { credential, rateLimit: rateLimitState(row, credential, counted, spend), targetAgencyId: row.target_agency_id ?? null };
}

/** A session's count as its statement reports it: the credential's bucket refuses first. */
function sessionOutcome(row: CallerRow): CountOutcome {
  return {
    refusedBy: row.bucket_counted === null ? 'credential' : row.account_counted === null ? 'account' : null,
    credentialUsed: row.bucket_counted ?? row.bucket_before ?? 0,
    accountUsed: row.account_counted ?? row.account_before ?? 0,
  };
}

/**
 * The ID token's caller, an owner of the account whose `oidc_subject` is the subject, until
 * the token's `exp`; 401 when no account has the subject.
 */
export function sessionCaller(token: VerifiedIdToken, row: CallerRow | null, counted: boolean): ResolvedCaller {
  if (!row) throw new UnauthorizedError('Invalid ID token: no account for this subject');
  const credential: Credential = {
    type: 'session',
    id: token.subject,
    accountId: row.account_id,
    scopes: null,
    rateLimitPerMin: row.bucket_limit,
    expiresAt: token.expiresAt,
  };
  return { credential, rateLimit: rateLimitState(row, credential, counted, sessionOutcome(row)), targetAgencyId: row.target_agency_id };
}
