// A request counted in a bucket of its own beside its credential's budget, at the credential's
// per-minute limit: GET /api-keys/usage reads that budget without spending it, yet cannot be
// called without bound (limits.ts). One upsert (sql/rate-counters.ts), after the credential
// resolved (an unknown or revoked key is never counted); only these requests pay its round trip.
import type pg from 'pg';
import { WINDOW_SECONDS } from './limits.ts';
import { countInBucket } from './sql/rate-counters.ts';

/** The policy name of the bucket in the RateLimit headers of its 429. */
const POLICY = 'usage';

/** The credential's bucket of counted-apart requests (its budget's bucket is `key:<id>` or `session:<account>`). */
function bucketOf(caller: { key_id: string | null; account_id: string }): string {
  return caller.key_id === null ? `usage:session:${caller.account_id}` : `usage:key:${caller.key_id}`;
}

/** Counts the request in the credential's bucket apart; the 429's headers once it is full, null while it counts. */
export async function countApart(pool: pg.Pool, caller: { key_id: string | null; account_id: string; bucket_limit: number }): Promise<Record<string, string> | null> {
  const limit = caller.bucket_limit;
  const row = await countInBucket(pool, bucketOf(caller), limit);
  if (row.rate_counted) return null;
  const reset = Math.max(1, Math.ceil(row.rate_window + WINDOW_SECONDS - row.rate_now));
  return {
    'Retry-After': String(reset),
    'RateLimit-Policy': `"${POLICY}";q=${limit};w=${WINDOW_SECONDS}`,
    RateLimit: `"${POLICY}";r=0;t=${reset}`,
  };
}
