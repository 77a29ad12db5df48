// Credential resolution for every authenticated request: pick the carrier,
// resolve and count the caller with ONE statement (rate-limit/spend-key-tokens.ts for
// API keys, rate-limit/count-requests.ts for ID-token sessions),
// apply the plan, the rate limits and the key's scopes, then select the account
// the request acts on (`userId`) and check any other account, or section, its input asks for.
import type { IncomingHttpHeaders } from 'node:http';
import { PLANS, planHasFeature } from '../plans.ts';
import { featureDisabledError, ForbiddenError, UnauthorizedError } from '../errors.ts';
import { countApart } from '../rate-limit/count-apart.ts';
import { resolveSessionAndCount, type CallerRow } from '../rate-limit/count-requests.ts';
import { forgetPastTokens, resolveKeyAndSpend } from '../rate-limit/spend-key-tokens.ts';
import { sweepOldWindows } from '../rate-limit/sweep-old-windows.ts';
import {
  ACCOUNT_RATE_CEILING,
  assertWithinBudget,
  MAIN_KEY_RATE_LIMIT,
  rateLimitHeaders,
  SESSION_RATE_LIMIT,
  type RateLimitState,
} from '../rate-limit/limits.ts';
import type { Services } from '../process-services.ts';
import { isWellFormedKey, looksLikeJwt } from './key-format.ts';
import { verifyIdToken } from './id-tokens.ts';
import {
  assertAccountInScope,
  assertEveryClientInScope,
  assertProcedureAllowed,
  scopeDenied,
  type Credential,
  type ProcedureAccess,
  type Scopes,
  type SectionWhenSet,
  type TargetAccount,
} from './scopes.ts';

export type Carrier = { value: string; from: 'query' | 'header' | 'bearer' };

/** Query parameter, then X-API-Key, then bearer: the highest-ranked carrier present is used, right or wrong. */
export function pickCarrier(query: URLSearchParams, headers: IncomingHttpHeaders): Carrier | null {
  const fromQuery = query.get('apiKey');
  if (fromQuery !== null) return { value: fromQuery, from: 'query' };
  const fromHeader = headers['x-api-key'];
  if (typeof fromHeader === 'string') return { value: fromHeader, from: 'header' };
  const authorization = headers.authorization;
  if (typeof authorization === 'string' && /^bearer /i.test(authorization)) {
    return { value: authorization.slice(7).trim(), from: 'bearer' };
  }
  return null;
}

const API_ACCESS_PLANS = PLANS.filter((plan) => planHasFeature(plan, 'api_access'));

export type SelectedAccount = {
  /** The account the request acts on. */
  id: string;
  /** True when an agency acts on one of its client accounts. */
  managed: boolean;
};

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

type Resolved = { credential: Credential; rateLimit: RateLimitState; targetAgencyId: string | null };

function rateLimitState(
  row: Pick<CallerRow, 'window_epoch' | 'now_epoch'>,
  credential: Credential,
  counted: boolean,
  outcome: { refusedBy: RateLimitState['refusedBy']; credentialUsed: number; accountUsed: number },
): RateLimitState {
  return {
    counted,
    refusedBy: counted ? outcome.refusedBy : null,
    policy: credential.type === 'main' ? 'main-key' : credential.type === 'scoped' ? 'scoped-key' : 'session',
    windowStart: row.window_epoch,
    now: row.now_epoch,
    credential: { limit: credential.rateLimitPerMin, used: outcome.credentialUsed },
    account: { limit: ACCOUNT_RATE_CEILING, used: outcome.accountUsed },
  };
}

/** A session's per-request count as its statement reports it. */
function sessionOutcome(row: CallerRow) {
  return {
    refusedBy: row.bucket_counted === null ? ('credential' as const) : row.account_counted === null ? ('account' as const) : null,
    credentialUsed: row.bucket_counted ?? row.bucket_before ?? 0,
    accountUsed: row.account_counted ?? row.account_before ?? 0,
  };
}

async function resolveApiKey(services: Services, value: string, userId: string | null, count: boolean): Promise<Resolved> {
  if (!isWellFormedKey(value)) throw new UnauthorizedError();
  const hash = services.secrets.hashApiKey(value);
  const spend = await resolveKeyAndSpend(services.pool, hash, {
    count,
    fixedLimit: MAIN_KEY_RATE_LIMIT,
    allowedPlans: API_ACCESS_PLANS,
    userId,
  });
  const row = spend?.row;
  // The statement found the key by its HMAC (an exact match on the whole value).
  if (!spend || !row || row.lapsed) throw new UnauthorizedError();
  if (!row.usable) throw featureDisabledError('api_access');
  const credential: Credential = {
    type: row.kind,
    id: row.key_id,
    accountId: row.account_id,
    scopes: row.kind === 'scoped' ? (row.scopes as Scopes) : null,
    rateLimitPerMin: row.bucket_limit,
  };
  return { credential, rateLimit: rateLimitState(row, credential, count, spend), targetAgencyId: row.target_agency_id ?? null };
}

/**
 * A first-party session is an owner: full access like the main key, may manage
 * keys, and is not subject to the plan's api_access (that gates API keys; the
 * product's own app is not an API integration).
 */
async function resolveSession(services: Services, token: string, userId: string | null, count: boolean): Promise<Resolved> {
  const { subject, expiresAt } = await verifyIdToken(services, token);
  const row = await resolveSessionAndCount(services.pool, subject, {
    count,
    fixedLimit: SESSION_RATE_LIMIT,
    allowedPlans: null,
    userId,
  });
  if (!row) throw new UnauthorizedError('Invalid ID token: no account for this subject');
  const credential: Credential = {
    type: 'session',
    id: subject,
    accountId: row.account_id,
    scopes: null,
    rateLimitPerMin: row.bucket_limit,
    expiresAt,
  };
  return { credential, rateLimit: rateLimitState(row, credential, count, sessionOutcome(row)), targetAgencyId: row.target_agency_id };
}

/**
 * `userId` selects the caller's own account (the default) or a client account it
 * manages; `targetAgencyId` is that account's agency as read by this request's
 * statement, so the relation is never cached.
 */
export function selectAccount(
  credential: Credential,
  userId: string | null,
  targetAgencyId: string | null,
  options: { agencyOnly?: boolean; ownAccountOnly?: boolean } = {},
): SelectedAccount {
  // These refuse userId even when it names the caller's own account: the parameter has no place there.
  if (userId !== null && options.agencyOnly) throw new ForbiddenError('userId cannot be used on agency-only endpoints');
  if (userId !== null && options.ownAccountOnly) throw new ForbiddenError('userId cannot be used on key management endpoints');
  if (userId === null || userId === credential.accountId) return { id: credential.accountId, managed: false };
  assertAccountInScope(credential, userId);
  if (targetAgencyId !== credential.accountId) {
    if (credential.type === 'scoped') throw scopeDenied('This API key is not allowed to act on that account');
    throw new ForbiddenError('You do not have access to that account');
  }
  return { id: userId, managed: true };
}

/** Who is calling (key or ID token), counted against its rate limits. */
export async function resolveCredential(
  services: Services,
  request: { query: URLSearchParams; headers: IncomingHttpHeaders },
  options: AuthenticateOptions = {},
): Promise<Resolved> {
  const carrier = pickCarrier(request.query, request.headers);
  if (!carrier) throw new UnauthorizedError();
  const userId = request.query.get('userId') || null;
  const counting = options.counting ?? 'budget';
  const count = counting === 'budget';
  const resolved =
    carrier.from === 'bearer' && looksLikeJwt(carrier.value)
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

/**
 * A client account named in the input (not by `userId`) passes the same
 * sub_account_ids rule, before the input is parsed or the domain runs.
 */
async function assertTargetAccountAllowed(
  credential: Credential,
  target: TargetAccount | undefined,
  readInput: (() => Promise<unknown>) | undefined,
): Promise<void> {
  if (!target || credential.type !== 'scoped') return;
  if (target === 'everyClient') return assertEveryClientInScope(credential);
  if ('everyClientWhenSet' in target) {
    if ((await inputField(readInput, target.everyClientWhenSet)) === true) assertEveryClientInScope(credential);
    return;
  }
  const value = await inputField(readInput, target.inputField);
  // Absent: nothing names another account (and the input parser refuses a missing id).
  if (value === undefined || value === null) return;
  assertAccountInScope(credential, String(value));
}

/** A flag of the input that needs another section is held to the key's sections like the procedure's own. */
async function assertSectionWhenSetAllowed(
  credential: Credential,
  rule: SectionWhenSet | undefined,
  readInput: (() => Promise<unknown>) | undefined,
): Promise<void> {
  if (!rule || credential.type !== 'scoped') return;
  // Only `true` widens the call: any other value is false, absent, or refused by the input parser.
  if ((await inputField(readInput, rule.field)) === true) assertProcedureAllowed(credential, rule);
}

/** One field of the unparsed input. */
async function inputField(readInput: (() => Promise<unknown>) | undefined, field: string): Promise<unknown> {
  // Default-deny: an input that cannot be read is not allowed.
  if (!readInput) throw scopeDenied('This API key is not allowed to act on that account');
  const input = await readInput();
  return input !== null && typeof input === 'object' ? (input as Record<string, unknown>)[field] : undefined;
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
  const account = selectAccount(credential, request.query.get('userId') || null, targetAgencyId, {
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
