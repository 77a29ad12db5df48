// The responses an Idempotency-Key keeps: what is stored (sealed with SECRET_KEY, since a
// response may carry a secret; nothing for a 5xx, whose retry runs again), and what a retry
// gets when another request holds or held the key: a replay of the same request's stored
// response, 422 for a different request or an unreadable response, 409 while it runs.
import { ApiError, ConflictError } from '../errors.ts';
import type { Secrets } from '../secrets.ts';
import type { KeyRow, ResponseToStore } from './sql/idempotency-keys.ts';
import { IDEMPOTENCY_KEY_HEADER } from './request-fingerprint.ts';

export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** A response as the surface renders it, and as a replay sends it again. */
export type StoredResponse = { status: number; contentType: string; body: string; headers: Record<string, string> };

/** The part of a stored response that may carry a secret, sealed as one JSON text. */
type SealedPart = { body: string; headers: Record<string, string> };

/** What to store for the response; null for a 5xx (the failure was ours: the key is given back). */
export function responseToStore(secrets: Pick<Secrets, 'seal'>, response: StoredResponse): ResponseToStore | null {
  if (response.status >= 500) return null;
  const sealed: SealedPart = { body: response.body, headers: response.headers };
  return { status: response.status, contentType: response.contentType, sealed: secrets.seal(JSON.stringify(sealed)) };
}

/** The stored response, or null when it cannot be read (stored before responses were sealed, or under another SECRET_KEY). */
function unsealResponse(secrets: Pick<Secrets, 'unseal'>, row: KeyRow): StoredResponse | null {
  if (row.status === null || row.content_type === null || row.response_sealed === null) return null;
  try {
    const { body, headers } = JSON.parse(secrets.unseal(row.response_sealed)) as SealedPart;
    return { status: row.status, contentType: row.content_type, body, headers };
  } catch {
    return null;
  }
}

/**
 * The response to replay for a request whose key another claim holds (`row` as read after the
 * claim failed, null when that claim has just given it back); throws the 409 or 422 otherwise.
 */
export function replayFor(secrets: Pick<Secrets, 'unseal'>, row: KeyRow | null, fingerprint: string): StoredResponse {
  // Named error codes: these always answer in the envelope, whatever the endpoint's shapes.
  if (row && row.fingerprint !== fingerprint) {
    throw new ConflictError(`${IDEMPOTENCY_KEY_HEADER} was already used with a different request; use a new key for a new request`, {
      code: 'idempotency_key_reused',
    });
  }
  if (!row || row.state !== 'completed') {
    throw new ConflictError(`A request with this ${IDEMPOTENCY_KEY_HEADER} is still being processed; retry later`, {
      code: 'idempotency_key_in_use',
    });
  }
  const stored = unsealResponse(secrets, row);
  // Running the request again could do its work twice; the caller is told to use a new key instead.
  if (!stored) {
    throw new ApiError(422, `The response stored for this ${IDEMPOTENCY_KEY_HEADER} can no longer be read; use a new key for a new request`, {
      code: 'idempotency_key_unreadable',
    });
  }
  return stored;
}

/** The headers a replayed response carries besides the request's own (rate limits). */
export function replayedHeaders(stored: StoredResponse): Record<string, string> {
  return { ...stored.headers, [REPLAYED_HEADER]: 'true' };
}
