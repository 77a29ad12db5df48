// What a resolving statement's row makes of the caller: the credential (or the 401, or the
// plan's 403 for an API key), and the rate-limit state of this request's counting. The
// statements are sql/resolve-caller.ts; authenticate.ts runs them.
import { featureDisabledError, UnauthorizedError } from '../errors.ts';
import { PLANS, planHasFeature } from '../plans.ts';
import { sessionOutcome } from '../rate-limit/count-requests.ts';
import { policyOf, rateLimitState, type RateLimitState } from '../rate-limit/limits.ts';
import type { CallerRow, KeySpend } from './sql/resolve-caller.ts';
import type { VerifiedIdToken } from './id-token-verification.ts';
import type { Credential, Scopes } from './scopes.ts';

/** The plans whose accounts may call with an API key (ID-token sessions are not subject to it). */
export const API_ACCESS_PLANS = PLANS.filter((plan) => planHasFeature(plan, 'api_access'));

export type ResolvedCaller = { credential: Credential; rateLimit: RateLimitState; targetAgencyId: string | null };

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
  const rateLimit = rateLimitState(row, { policy: policyOf(row.kind), limit: row.bucket_limit }, counted, spend);
  return { credential, rateLimit, targetAgencyId: row.target_agency_id ?? null };
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
  const rateLimit = rateLimitState(row, { policy: 'session', limit: row.bucket_limit }, counted, sessionOutcome(row));
  return { credential, rateLimit, targetAgencyId: row.target_agency_id };
}
