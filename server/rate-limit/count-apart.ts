// A request counted in a bucket of its own beside its credential's budget, at the credential's
// per-minute limit: GET /api-keys/usage reads that budget without spending it, yet cannot be
// called without bound (limits.ts). One upsert by the house chain of counted buckets, after
// the credential resolved (an unknown or revoked key is never counted); only these requests
// pay its round trip.
import type pg from 'pg';
import type { Credential } from '../auth/scopes.ts';
import { RateLimitedError } from '../errors.ts';
import { countRateLimitRefusal } from '../metrics/registry.ts';
import { countBucketsSql, type CountedRow } from '../widgets/count-visitor-requests.ts';
import { WINDOW_SECONDS } from './limits.ts';
import { sweepOldWindows } from './sweep-old-windows.ts';

/** The policy name of the bucket in the RateLimit headers of its 429. */
const POLICY = 'usage';

/** The credential's bucket of counted-apart requests (its budget's bucket is `key:<id>` or `session:<account>`). */
function bucketOf(credential: Pick<Credential, 'type' | 'id' | 'accountId'>): string {
  return credential.type === 'session' ? `usage:session:${credential.accountId}` : `usage:key:${credential.id}`;
}

/** Counts the request in the credential's bucket apart; refuses with 429 (Retry-After, RateLimit headers) once it is full. */
export async function countApart(pool: pg.Pool, credential: Pick<Credential, 'type' | 'id' | 'accountId' | 'rateLimitPerMin'>): Promise<void> {
  const limit = credential.rateLimitPerMin;
  const counting = countBucketsSql([{ key: bucketOf(credential), limit }], 1);
  const { rows } = await pool.query<CountedRow>({ name: 'count-apart', text: `with ${counting.ctes} select ${counting.select}`, values: counting.values });
  sweepOldWindows(pool);
  const row = rows[0]!;
  if (row.rate_counted) return;
  const reset = Math.max(1, Math.ceil(row.rate_window + WINDOW_SECONDS - row.rate_now));
  countRateLimitRefusal('api_key');
  throw new RateLimitedError({
    'Retry-After': String(reset),
    'RateLimit-Policy': `"${POLICY}";q=${limit};w=${WINDOW_SECONDS}`,
    RateLimit: `"${POLICY}";r=0;t=${reset}`,
  });
}
