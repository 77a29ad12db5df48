// The statements behind Idempotency-Key: each is one round trip on the request path,
// on the shared pool (not the ORM). A key's row is claimed before the call runs,
// completed with the response after it, or deleted when the call could not store one.
import type pg from 'pg';
import { prepared, queryRows, rawSql, runSql, sql } from '../../db/sql.ts';

/** A claim older than this whose call never stored a response was abandoned (a crash): a retry takes it over. */
export const ABANDONED_AFTER = '5 minutes';
/** How long a stored response is replayed. */
export const KEY_LIFETIME = '24 hours';

export type KeyRow = {
  fingerprint: string;
  state: 'running' | 'completed';
  status: number | null;
  content_type: string | null;
  /** Body and headers, sealed (server/idempotency/idempotent-call.ts seals and unseals them). */
  response_sealed: string | null;
};

export type ClaimedKey = { accountId: string; key: string; /** created_at as text: the claim's identity. */ token: string };

const ABANDONED = rawSql(`interval '${ABANDONED_AFTER}'`);
const LIFETIME = rawSql(`interval '${KEY_LIFETIME}'`);

/** The claim's token when this request now holds the key, null when another row holds it. */
export async function claimKey(pool: pg.Pool, accountId: string, key: string, fingerprint: string): Promise<ClaimedKey | null> {
  // A new key is inserted; an existing row is taken over only when its claim was abandoned
  // (same request) or its response has outlived KEY_LIFETIME (the sweep has not run yet).
  // The conflicting row is locked while the WHERE is decided, so two claims never both win.
  const claim = sql`insert into idempotency_keys as k (account_id, key, fingerprint, state, created_at)
values (${accountId}, ${key}, ${fingerprint}, 'running', now())
on conflict (account_id, key) do update
  set fingerprint = excluded.fingerprint, state = 'running', status = null, content_type = null,
      response_sealed = null, created_at = now(), completed_at = null
  where (k.state = 'running' and k.fingerprint = excluded.fingerprint and k.created_at < now() - ${ABANDONED})
     or k.created_at < now() - ${LIFETIME}
returning k.created_at::text as token`;
  const rows = await queryRows<{ token: string }>(pool, prepared('idempotency-claim', claim));
  return rows[0] ? { accountId, key, token: rows[0].token } : null;
}

export async function readKey(pool: pg.Pool, accountId: string, key: string): Promise<KeyRow | null> {
  const read = sql`select fingerprint, state, status, content_type, response_sealed from idempotency_keys
    where account_id = ${accountId} and key = ${key}`;
  const rows = await queryRows<KeyRow>(pool, prepared('idempotency-read', read));
  return rows[0] ?? null;
}

/** A response to store: what may carry a secret is already sealed. */
export type ResponseToStore = { status: number; contentType: string; sealed: string };

/** Completes the claim with the response (a no-op when the claim was taken over meanwhile). */
export async function storeResponse(pool: pg.Pool, claim: ClaimedKey, response: ResponseToStore): Promise<void> {
  const store = sql`update idempotency_keys
    set state = 'completed', status = ${response.status}, content_type = ${response.contentType}, response_sealed = ${response.sealed}, completed_at = now()
    where account_id = ${claim.accountId} and key = ${claim.key} and created_at = ${claim.token}::timestamptz and state = 'running'`;
  await runSql(pool, prepared('idempotency-store', store));
}

/** Gives the key back, so a retry runs the call again. */
export async function releaseKey(pool: pg.Pool, claim: ClaimedKey): Promise<void> {
  const release = sql`delete from idempotency_keys
    where account_id = ${claim.accountId} and key = ${claim.key} and created_at = ${claim.token}::timestamptz and state = 'running'`;
  await runSql(pool, prepared('idempotency-release', release));
}

/** Deletes up to `batch` rows older than KEY_LIFETIME; returns how many. */
export async function deleteExpiredKeys(pool: pg.Pool, batch: number): Promise<number> {
  const sweep = sql`delete from idempotency_keys where (account_id, key) in (
    select account_id, key from idempotency_keys where created_at < now() - ${LIFETIME} limit ${batch})`;
  const { rowCount } = await runSql(pool, prepared('idempotency-sweep', sweep));
  return rowCount;
}
