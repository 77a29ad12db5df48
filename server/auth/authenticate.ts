// Credential resolution for every authenticated request: pick the carrier, resolve the
// caller with ONE statement (sql/resolve-caller.ts) in which rate limiting counts it
// (server/rate-limit/rate-limit-decision.ts: one decision), apply the plan, the rate limits
// and the key's scopes, then select the account the request acts on (`userId`) and check any
// other account, or section, its input asks for.
import type { IncomingHttpHeaders } from 'node:http';
import { prepared, queryRows, sql } from '../db/sql.ts';
import { RateLimitedError, UnauthorizedError } from '../errors.ts';
import { MAIN_KEY_RATE_LIMIT, SESSION_RATE_LIMIT, type RateLimitState } from '../rate-limit/limits.ts';
import { decideRateLimit, type Counting, type RateLimitDecision } from '../rate-limit/rate-limit-decision.ts';
import type { Services } from '../process-services.ts';
import { API_ACCESS_PLANS, keyCaller, sessionCaller, type ResolvedCaller } from './caller-credential.ts';
import { resolveKey, resolveSession as resolveSessionRow } from './sql/resolve-caller.ts';
import { carriesIdToken, pickCarrier, selectedUserId } from './carrier.ts';
import { isWellFormedKey } from './key-format.ts';
import { verifyIdToken } from './id-tokens.ts';
import { assertProcedureAllowed, type Credential, type ProcedureAccess, type SectionWhenSet, type TargetAccount } from './scopes.ts';
import { assertSectionWhenSetAllowed, assertTargetAccountAllowed, selectAccount, type SelectedAccount } from './select-account.ts';

export { pickCarrier, type Carrier } from './carrier.ts';

export type Authenticated = {
  credential: Credential;
  account: SelectedAccount;
  /** This request's rate-limit counting (the usage endpoint reports it). */
  rateLimit: RateLimitState;
};

export type AuthenticateOptions = {
  /**
   * What the request spends: its credential's budget (the default); a bucket of its own at the
   * same limit, reading the budget without spending it (`apart`: the usage endpoint); or
   * nothing (`none`: a subscription's check again).
   */
  counting?: Counting;
  /** Receives the RateLimit headers as soon as the request is counted (also on refusals). */
  responseHeaders?: Record<string, string>;
  /** The procedure's unparsed input, read only when its meta names a target account field. */
  readInput?: () => Promise<unknown>;
};

type Decided = { caller: ResolvedCaller; decision: RateLimitDecision | null };

async function resolveApiKey(services: Services, value: string, userId: string | null, counting: Counting): Promise<Decided> {
  if (!isWellFormedKey(value)) throw new UnauthorizedError();
  const { pool } = services;
  const keyHash = services.secrets.hashApiKey(value);
  const options = { fixedLimit: MAIN_KEY_RATE_LIMIT, allowedPlans: API_ACCESS_PLANS, userId };
  const { row, outcome, decision } = await decideRateLimit(
    pool,
    { kind: 'key', keyHash, statement: (countingSql) => resolveKey(pool, keyHash, options, countingSql) },
    counting,
  );
  // The statement found the key by its HMAC (an exact match on the whole value).
  return { caller: keyCaller(row && { ...outcome, row }, counting === 'budget'), decision };
}

/**
 * A first-party session is an owner: full access like the main key, may manage
 * keys, and is not subject to the plan's api_access (that gates API keys; the
 * product's own app is not an API integration).
 */
async function resolveSession(services: Services, token: string, userId: string | null, counting: Counting): Promise<Decided> {
  const verified = await verifyIdToken(services, token);
  const { pool } = services;
  const options = { fixedLimit: SESSION_RATE_LIMIT, allowedPlans: null, userId };
  const { row, decision } = await decideRateLimit(
    pool,
    { kind: 'session', statement: (countingSql) => resolveSessionRow(pool, verified.subject, options, countingSql) },
    counting,
  );
  return { caller: sessionCaller(verified, row, counting === 'budget'), decision };
}

/** Who is calling (key or ID token), counted against its rate limits. */
export async function resolveCredential(
  services: Services,
  request: { query: URLSearchParams; headers: IncomingHttpHeaders },
  options: AuthenticateOptions = {},
): Promise<ResolvedCaller> {
  const carrier = pickCarrier(request.query, request.headers);
  if (!carrier) throw new UnauthorizedError();
  const userId = selectedUserId(request.query);
  const counting = options.counting ?? 'budget';
  const { caller, decision } = carriesIdToken(carrier)
    ? await resolveSession(services, carrier.value, userId, counting)
    : await resolveApiKey(services, carrier.value, userId, counting);
  if (decision) {
    if (options.responseHeaders) Object.assign(options.responseHeaders, decision.headers);
    if (!decision.allowed) throw new RateLimitedError(decision.refusal ?? decision.headers);
  }
  return caller;
}

/** The whole check an authenticated procedure runs before its own code. */
export async function authenticate(
  services: Services,
  request: { query: URLSearchParams; headers: IncomingHttpHeaders },
  procedure:
    | (ProcedureAccess & { agencyOnly?: boolean; ownAccountOnly?: boolean; targetAccount?: TargetAccount; sectionWhenSet?: SectionWhenSet })
    | undefined,
  options: AuthenticateOptions = {},
): Promise<Authenticated> {
  const { credential, rateLimit, targetAgencyId } = await resolveCredential(services, request, options);
  assertProcedureAllowed(credential, procedure);
  const account = selectAccount(credential, selectedUserId(request.query), targetAgencyId, {
    agencyOnly: procedure?.agencyOnly,
    ownAccountOnly: procedure?.ownAccountOnly,
  });
  await assertTargetAccountAllowed(credential, procedure?.targetAccount, options.readInput);
  await assertSectionWhenSetAllowed(credential, procedure?.sectionWhenSet, options.readInput);
  return { credential, account, rateLimit };
}

/**
 * When the credential expires (ms since the epoch): a scoped key's `expires_at`, a session's
 * ID token `exp`; null for keys without expiry and main keys. A key's is read when a
 * subscription starts or checks again, never per request.
 */
export async function credentialExpiry(services: Services, credential: Credential): Promise<number | null> {
  if (credential.type === 'session') return credential.expiresAt ?? null;
  if (credential.type !== 'scoped') return null;
  const rows = await queryRows<{ expires_ms: number | null }>(
    services.pool,
    prepared('credential-expiry', sql`select (extract(epoch from expires_at) * 1000)::float8 as expires_ms from api_keys where id = ${credential.id}`),
  );
  return rows[0]?.expires_ms ?? null;
}
