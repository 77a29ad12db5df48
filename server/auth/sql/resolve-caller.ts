// The statements that resolve a request's caller: an API key by its HMAC (with its plan,
// revoked/expired state and scopes), a key this process holds (../credential-cache.ts) only
// confirmed live by its id, or an ID-token session's account by its subject; and the agency of
// the account `userId` selects (read per request, so the relation is never cached). Rate
// limiting puts its counting into the same statement (server/rate-limit/sql/rate-counters.ts),
// so a request resolves and counts in one round trip.
import type pg from 'pg';
import { prepared, queryRows, rawSql, sql, type Sql } from '../../db/sql.ts';
import type { CountingSql } from '../../rate-limit/sql/rate-counters.ts';
import type { CountedSessionRow } from '../../rate-limit/count-requests.ts';
import type { CountedKeyRow, KeySpend as KeySpendOf } from '../../rate-limit/spend-key-tokens.ts';
import type { CachedKey } from '../credential-cache.ts';
import { callerReadColumn, type CallerRead } from '../caller-read.ts';

/** An API key's caller as its statement describes it. */
export type KeyRow = CountedKeyRow & {
  kind: 'main' | 'scoped';
  /** The key's scopes (scoped keys only; null for main keys). */
  scopes: unknown;
  /** Revoked or expired. */
  lapsed: boolean;
  /** The agency of the account `userId` selects; absent when the request has no `userId`. */
  target_agency_id?: string | null;
  /** What the procedure's read found, in a held key's statement (caller-read.ts); absent when none rode. */
  caller_read?: unknown;
};

/** The key's row as its full statement finds it, with what a process holds of it (../credential-cache.ts). */
export type FoundKeyRow = KeyRow & { plan: string; credential_version: number; expires_ms: number | null };

/** What a held key's statement returns: the counting's columns (and `userId`'s agency), the rest being known. */
export type LiveKeyRow = Omit<KeyRow, 'key_id' | 'kind' | 'account_id' | 'scopes' | 'lapsed' | 'bucket_limit' | 'usable'>;

/** An API key's row with what its request spent. */
export type KeySpend = KeySpendOf<KeyRow>;

/** A session caller as its statement describes it. */
export type CallerRow = CountedSessionRow & {
  key_id: null;
  kind: 'session';
  key_hash: Buffer | null;
  scopes: unknown;
  revoked: boolean;
  expired: boolean;
  plan: string;
  target_agency_id: string | null;
};

export type CallerOptions = {
  /** The limit of main keys and sessions (a scoped key's is its own). */
  fixedLimit: number;
  /** Plans whose accounts may call this way; null = any plan. */
  allowedPlans: readonly string[] | null;
  userId: string | null;
};

const NOTHING = rawSql('');

/** The agency of the account `userId` selects. */
const targetAgency = (userId: string | null) => sql`,
  (select a.agency_id from accounts a where a.id = ${userId}::text) as target_agency_id`;

/** The API key with this HMAC. */
function keyCaller(keyHash: Buffer, options: CallerOptions): Sql {
  const plans = options.allowedPlans;
  return sql`caller as (
  select k.id as key_id, k.kind, k.account_id, case when k.kind = 'scoped' then k.scopes end as scopes,
    (k.revoked_at is not null or coalesce(k.expires_at <= now(), false)) as lapsed,
    a.plan, k.credential_version, (extract(epoch from k.expires_at) * 1000)::float8 as expires_ms,
    case when k.kind = 'scoped' then (k.scopes->>'rate_limit_per_min')::int else ${options.fixedLimit}::int end as bucket_limit,
    (k.revoked_at is null and (k.expires_at is null or k.expires_at > now())
      and (${plans}::text[] is null or a.plan = any(${plans}::text[]))) as usable
  from api_keys k join accounts a on a.id = k.account_id
  where k.key_hash = ${keyHash}::bytea
)`;
}

// A counted request touches a scoped key's last_used_at at most once a minute, when it leases:
// a key in use leases at least once a window, so the date is at most about two minutes behind.
const TOUCH_KEY = sql`, touched as (
  update api_keys k set last_used_at = clock.now from caller, clock
  where k.id = caller.key_id and caller.kind = 'scoped' and caller.usable
    and (k.last_used_at is null or k.last_used_at < clock.now - interval '1 minute')
)`;

/**
 * The API key's statement with `counting` in it. Only the caller's columns the request uses
 * (each costs the process a parser and a property per row); the agency of `userId` only when
 * the request names one (a statement without that subquery costs PostgreSQL less) or leases.
 */
export function keyCallerQuery(keyHash: Buffer, options: CallerOptions, counting: CountingSql): Sql {
  const target = options.userId !== null || counting.writes ? targetAgency(options.userId) : NOTHING;
  return sql`with ${keyCaller(keyHash, options)}, ${counting.ctes}${counting.writes ? TOUCH_KEY : NOTHING}
select caller.key_id, caller.kind, caller.account_id, caller.scopes, caller.lapsed, caller.bucket_limit, caller.usable,
  caller.plan, caller.credential_version, caller.expires_ms,
  ${counting.columns}${target}
from caller, clock`;
}

/** Runs the API key's statement: its row, null when no key has the HMAC. */
export async function resolveKey(pool: pg.Pool, keyHash: Buffer, options: CallerOptions, counting: CountingSql): Promise<FoundKeyRow | null> {
  const label = counting.writes ? 'resolve-key-and-lease' : options.userId === null ? 'resolve-key' : 'resolve-key-for-user';
  const rows = await queryRows<FoundKeyRow>(pool, prepared(label, keyCallerQuery(keyHash, options, counting)));
  return rows[0] ?? null;
}

/**
 * The statement of a key this process holds, with `counting` in it: the key is live when its
 * row, by its id, still has this HMAC and the credential_version read with it, and is neither
 * revoked nor expired. A key that is not returns no row, and nothing is counted or leased.
 */
export function liveKeyQuery(key: CachedKey, keyHash: Buffer, userId: string | null, counting: CountingSql, read: CallerRead | null = null): Sql {
  const target = userId !== null || counting.writes ? targetAgency(userId) : NOTHING;
  return sql`with caller as (
  select k.id as key_id, k.kind, k.account_id, ${key.bucketLimit}::int as bucket_limit, true as usable
  from api_keys k
  where k.id = ${key.keyId} and k.key_hash = ${keyHash}::bytea and k.credential_version = ${key.version}::int
    and k.revoked_at is null and (k.expires_at is null or k.expires_at > now())
), ${counting.ctes}${counting.writes ? TOUCH_KEY : NOTHING}
select ${counting.columns}${target}${callerReadColumn(userId === null ? read : null, sql`${key.accountId}::text`)}
from caller, clock`;
}

/** Runs a held key's statement: its row, null when the key is no longer live as held. */
export async function resolveLiveKey(
  pool: pg.Pool,
  key: CachedKey,
  keyHash: Buffer,
  userId: string | null,
  counting: CountingSql,
  read: CallerRead | null = null,
): Promise<LiveKeyRow | null> {
  const label = counting.writes ? 'live-key-and-lease' : userId === null ? 'live-key' : 'live-key-for-user';
  const rows = await queryRows<LiveKeyRow>(pool, prepared(label, liveKeyQuery(key, keyHash, userId, counting, read)));
  return rows[0] ?? null;
}

/** Runs the session's statement: the account whose `oidc_subject` this is, null when none. */
export async function resolveSession(pool: pg.Pool, subject: string, options: CallerOptions, counting: CountingSql): Promise<CallerRow | null> {
  const plans = options.allowedPlans;
  const query = sql`with caller as (
  select null::text as key_id, 'session'::text as kind, a.id as account_id, null::bytea as key_hash,
    null::jsonb as scopes, false as revoked, false as expired, a.plan,
    ${options.fixedLimit}::int as bucket_limit,
    (${plans}::text[] is null or a.plan = any(${plans}::text[])) as usable
  from accounts a
  where a.oidc_subject = ${subject}::text
), ${counting.ctes}
select caller.key_id, caller.kind, caller.account_id, caller.key_hash, caller.scopes, caller.revoked,
  caller.expired, caller.plan, caller.bucket_limit, caller.usable,
  ${counting.columns}${targetAgency(options.userId)}
from caller, clock`;
  const rows = await queryRows<CallerRow>(pool, prepared('resolve-session-and-count', query));
  return rows[0] ?? null;
}
