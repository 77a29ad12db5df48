// Credential resolution for every authenticated request: pick the carrier, resolve the
// caller with ONE statement (sql/resolve-caller.ts) in which rate limiting counts it
// (server/rate-limit/rate-limit-decision.ts: one decision), apply the plan, the rate limits
// and the key's scopes, then select the account the request acts on (`userId`) and check any
// other account, or section, its input asks for. A credential this process resolved before
// is taken from its cache (credential-cache.ts), the key still confirmed live in that statement.
import type { IncomingHttpHeaders } from 'node:http';
import { prepared, queryRows, sql } from '../db/sql.ts';
import { RateLimitedError, UnauthorizedError } from '../errors.ts';
import { MAIN_KEY_RATE_LIMIT, SESSION_RATE_LIMIT, type RateLimitState } from '../rate-limit/limits.ts';
import { decideRateLimit, type Counting, type RateLimitDecision } from '../rate-limit/rate-limit-decision.ts';
import type { CountingSql } from '../rate-limit/sql/rate-counters.ts';
import type { Services } from '../process-services.ts';
import { API_ACCESS_PLANS, keyCaller, sessionCaller, type ResolvedCaller } from './caller-credential.ts';
import type { CachedKey, CachedSession, CredentialCache } from './credential-cache.ts';
import type { CallerRead, CallerReadValue } from './caller-read.ts';
import { resolveKey, resolveLiveKey, resolveSession as resolveSessionRow, type CallerOptions, type KeyRow } from './sql/resolve-caller.ts';
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
  /** What the procedure's `callerRead` found in the caller's statement, when it rode there (caller-read.ts). */
  callerRead?: CallerReadValue;
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
  /** A read to ride in an API key's statement (caller-read.ts). */
  read?: CallerRead | null;
};

type Decided = { caller: ResolvedCaller; decision: RateLimitDecision | null; read?: CallerReadValue };

async function resolveApiKey(services: Services, value: string, userId: string | null, counting: Counting, read: CallerRead | null): Promise<Decided> {
  if (!isWellFormedKey(value)) throw new UnauthorizedError();
  const { pool } = services;
  const keyHash = services.secrets.hashApiKey(value);
  const options = { fixedLimit: MAIN_KEY_RATE_LIMIT, allowedPlans: API_ACCESS_PLANS, userId };
  const { row, outcome, decision } = await decideRateLimit(
    pool,
    { kind: 'key', keyHash, statement: (countingSql) => keyRow(services, keyHash, options, countingSql, read) },
    counting,
  );
  // The statement found the key by its HMAC (an exact match on the whole value).
  const caller = keyCaller(row && { ...outcome, row }, counting === 'budget');
  const rode = read && row && row.caller_read !== undefined ? { key: read.key, accountId: row.account_id, value: row.caller_read } : undefined;
  return { caller, decision, read: rode };
}

/**
 * The key's row: a key this process holds costs only the check that it is still live (the
 * row then is what the cache holds); one that is not held, or no longer live as held, is read
 * whole, and held from then on while usable.
 */
async function keyRow(services: Services, keyHash: Buffer, options: CallerOptions, counting: CountingSql, read: CallerRead | null): Promise<KeyRow | null> {
  const { pool, credentialCache: cache } = services;
  const name = keyHash.toString('base64');
  const held = cache.get(name);
  if (held?.kind === 'key' && (options.allowedPlans === null || options.allowedPlans.includes(held.plan))) {
    const live = await resolveLiveKey(pool, held, keyHash, options.userId, counting, read);
    if (live) {
      const { keyId: key_id, keyKind: kind, accountId: account_id, scopes, bucketLimit: bucket_limit } = held;
      return { ...live, key_id, kind, account_id, scopes, bucket_limit, lapsed: false, usable: true };
    }
    // Nothing was counted: the whole statement decides, with the same counting.
    cache.forget(name);
  }
  const since = cache.moment();
  const row = await resolveKey(pool, keyHash, options, counting);
  if (row?.usable) {
    const entry: CachedKey = {
      kind: 'key',
      keyId: row.key_id,
      keyKind: row.kind,
      accountId: row.account_id,
      plan: row.plan,
      scopes: row.scopes as CachedKey['scopes'],
      bucketLimit: row.bucket_limit,
      expiresAt: row.expires_ms,
      version: row.credential_version,
    };
    cache.fill(name, entry, since);
  }
  return row;
}

/**
 * A first-party session is an owner: full access like the main key, may manage
 * keys, and is not subject to the plan's api_access (that gates API keys; the
 * product's own app is not an API integration).
 */
async function resolveSession(services: Services, token: string, userId: string | null, counting: Counting): Promise<Decided> {
  const { pool, credentialCache: cache } = services;
  const name = services.secrets.hashIdToken(token).toString('base64');
  const held = heldSession(cache, name);
  const verified = held ?? (await verifyIdToken(services, token));
  const since = cache.moment();
  const options = { fixedLimit: SESSION_RATE_LIMIT, allowedPlans: null, userId };
  const { row, decision } = await decideRateLimit(
    pool,
    { kind: 'session', statement: (countingSql) => resolveSessionRow(pool, verified.subject, options, countingSql) },
    counting,
  );
  if (row && !held) cache.fill(name, { kind: 'session', subject: verified.subject, accountId: row.account_id, expiresAt: verified.expiresAt }, since);
  return { caller: sessionCaller(verified, row, counting === 'budget'), decision };
}

/** A verified ID token this process holds (until its `exp`): its signature and claims are not checked again. */
function heldSession(cache: CredentialCache, name: string): CachedSession | undefined {
  const held = cache.get(name);
  return held?.kind === 'session' ? held : undefined;
}

/** Who is calling (key or ID token), counted against its rate limits. */
export async function resolveCredential(
  services: Services,
  request: { query: URLSearchParams; headers: IncomingHttpHeaders },
  options: AuthenticateOptions = {},
): Promise<ResolvedCaller & { read?: CallerReadValue }> {
  const carrier = pickCarrier(request.query, request.headers);
  if (!carrier) throw new UnauthorizedError();
  const userId = selectedUserId(request.query);
  const counting = options.counting ?? 'budget';
  const { caller, decision, read } = carriesIdToken(carrier)
    ? await resolveSession(services, carrier.value, userId, counting)
    : await resolveApiKey(services, carrier.value, userId, counting, options.read ?? null);
  if (decision) {
    if (options.responseHeaders) Object.assign(options.responseHeaders, decision.headers);
    if (!decision.allowed) throw new RateLimitedError(decision.refusal ?? decision.headers);
  }
  return read ? { ...caller, read } : caller;
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
  const { credential, rateLimit, targetAgencyId, read } = await resolveCredential(services, request, options);
  assertProcedureAllowed(credential, procedure);
  const account = selectAccount(credential, selectedUserId(request.query), targetAgencyId, {
    agencyOnly: procedure?.agencyOnly,
    ownAccountOnly: procedure?.ownAccountOnly,
  });
  await assertTargetAccountAllowed(credential, procedure?.targetAccount, options.readInput);
  await assertSectionWhenSetAllowed(credential, procedure?.sectionWhenSet, options.readInput);
  return read ? { credential, account, rateLimit, callerRead: read } : { credential, account, rateLimit };
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
