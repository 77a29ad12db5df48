// Credential resolution for every authenticated request: pick the carrier,
// resolve and count the caller with ONE statement (rate-limit/spend-key-tokens.ts for
// API keys, rate-limit/count-requests.ts for ID-token sessions),
// apply the plan, the rate limits and the key's scopes, then select the account
// the request acts on (`userId`) and check any other account, or section, its input asks for.
import type { IncomingHttpHeaders } from 'node:http';
import { UnauthorizedError } from '../errors.ts';
import { countApart } from '../rate-limit/count-apart.ts';
import { resolveSessionAndCount } from '../rate-limit/count-requests.ts';
import { forgetPastTokens, resolveKeyAndSpend } from '../rate-limit/spend-key-tokens.ts';
import { sweepOldWindows } from '../rate-limit/sweep-old-windows.ts';
import { assertWithinBudget, MAIN_KEY_RATE_LIMIT, rateLimitHeaders, SESSION_RATE_LIMIT, type RateLimitState } from '../rate-limit/limits.ts';
import type { Services } from '../process-services.ts';
import { API_ACCESS_PLANS, keyCaller, sessionCaller, type ResolvedCaller } from './caller-credential.ts';
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
  counting?: 'budget' | 'apart' | 'none';
  /** Receives the RateLimit headers as soon as the request is counted (also on refusals). */
  responseHeaders?: Record<string, string>;
  /** The procedure's unparsed input, read only when its meta names a target account field. */
  readInput?: () => Promise<unknown>;
};

async function resolveApiKey(services: Services, value: string, userId: string | null, count: boolean): Promise<ResolvedCaller> {
  if (!isWellFormedKey(value)) throw new UnauthorizedError();
  const spend = await resolveKeyAndSpend(services.pool, services.secrets.hashApiKey(value), {
    count,
    fixedLimit: MAIN_KEY_RATE_LIMIT,
    allowedPlans: API_ACCESS_PLANS,
    userId,
  });
  // The statement found the key by its HMAC (an exact match on the whole value).
  return keyCaller(spend, count);
}

/**
 * A first-party session is an owner: full access like the main key, may manage
 * keys, and is not subject to the plan's api_access (that gates API keys; the
 * product's own app is not an API integration).
 */
async function resolveSession(services: Services, token: string, userId: string | null, count: boolean): Promise<ResolvedCaller> {
  const verified = await verifyIdToken(services, token);
  const row = await resolveSessionAndCount(services.pool, verified.subject, {
    count,
    fixedLimit: SESSION_RATE_LIMIT,
    allowedPlans: null,
    userId,
  });
  return sessionCaller(verified, row, count);
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
  const count = counting === 'budget';
  const resolved = carriesIdToken(carrier)
    ? await resolveSession(services, carrier.value, userId, count)
    : await resolveApiKey(services, carrier.value, userId, count);
  if (count) {
    sweepOldWindows(services.pool);
    forgetPastTokens(services.pool);
  }
  if (options.responseHeaders) Object.assign(options.responseHeaders, rateLimitHeaders(resolved.rateLimit));
  assertWithinBudget(resolved.rateLimit);
  if (counting === 'apart') await countApart(services.pool, resolved.credential);
  return resolved;
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
  const { rows } = await services.pool.query<{ expires_ms: number | null }>({
    name: 'credential-expiry',
    text: 'select (extract(epoch from expires_at) * 1000)::float8 as expires_ms from api_keys where id = $1',
    values: [credential.id],
  });
  return rows[0]?.expires_ms ?? null;
}
