// `Idempotency-Key` on POST /v1 operations and single /trpc mutations, with Stripe's
// semantics: the first response to a key (status, body, content type; errors included)
// is stored and replayed for 24 hours to retries of the same request by the same
// credential; the key with a different request is 422; a retry while the first still
// runs is 409.
//
// A response may carry a secret (a rotated main key, a scoped key, a signing secret), so
// it is kept like every other secret at rest: sealed with SECRET_KEY (server/secrets.ts),
// unsealed only to be replayed. And it is replayed only to the credential that made it:
// the credential (key id, or an ID token's subject) is part of the request's fingerprint,
// so another key of the account, or an agency acting on the account, gets 422, never the
// first caller's body (a scoped key refused a signing secret must not read it from a
// replay of the main key's request).
//
// Design: the key belongs to the account acted on, which is only known once
// `accountProcedure` has authenticated. The HTTP pipeline (server/http/procedure-pipeline.ts,
// for rest.ts and trpc-http.ts) attaches an IdempotentCall to the context when the header
// is present, calls claimIdempotencyKey right after authentication and BEFORE the
// procedure runs (claim, or replay / 409 / 422), and once the surface has rendered the
// response calls finishIdempotentCall to store it (or give the key back on a 5xx). So
// refusals decided while authenticating (401, 429, the plan's and the key scopes' 403) are
// never stored, and a request without the header runs no SQL here. tRPC batches go to
// tRPC's own handler and ignore the header; public (unauthenticated) operations ignore it too.
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Credential } from '../auth/scopes.ts';
import { ApiError, ConflictError, InvalidInputError } from '../errors.ts';
import type { Services } from '../process-services.ts';
import { claimKey, readKey, releaseKey, storeResponse, type ClaimedKey, type KeyRow } from './sql/idempotency-keys.ts';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** 1 to 255 printable ASCII characters. */
const VALID_KEY = /^[\x20-\x7e]{1,255}$/;

/** A response as the surface renders it, and as a replay sends it again. */
export type StoredResponse = { status: number; contentType: string; body: string; headers: Record<string, string> };

/** The part of a stored response that may carry a secret, sealed as one JSON text. */
type SealedPart = { body: string; headers: Record<string, string> };

/** An idempotent request in flight: attached to the call's context by the HTTP pipeline. */
export type IdempotentCall = {
  /** The header as received (validated by claimIdempotencyKey). */
  key: string;
  /** What the request calls (`POST /v1/contacts`, `POST /trpc/contacts.create`); part of the fingerprint. */
  target: string;
  /** Set when this request holds the key: its response must be stored. */
  claim?: ClaimedKey;
  /** Set when the key already holds this request's response: the pipeline sends it instead. */
  replay?: StoredResponse;
};

/** Thrown by the claim to stop the procedure when the response is replayed; the pipeline sends `call.replay`. */
export class IdempotentReplay extends Error {
  override name = 'IdempotentReplay';
}

/** The call for a POST carrying the header (`prefix` + `path` is what it calls), undefined without it. */
export function idempotentCallFor(headers: IncomingHttpHeaders, prefix: string, path: string): IdempotentCall | undefined {
  const value = headers['idempotency-key'];
  if (value === undefined) return undefined;
  return { key: Array.isArray(value) ? value.join(', ') : value, target: `POST ${prefix}${path}` };
}

/** JSON with object keys sorted, so the same input always has the same text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The request as a digest: what it calls, who calls (the credential itself, not its account), and its input. */
function fingerprintOf(call: IdempotentCall, credential: Pick<Credential, 'type' | 'id'>, input: unknown): string {
  return createHash('sha256').update(canonicalJson([call.target, credential.type, credential.id, input ?? null])).digest('base64url');
}

/** The stored response, or null when it cannot be read (stored before responses were sealed, or under another SECRET_KEY). */
function unsealResponse(secrets: Services['secrets'], row: KeyRow): StoredResponse | null {
  if (row.status === null || row.content_type === null || row.response_sealed === null) return null;
  try {
    const { body, headers } = JSON.parse(secrets.unseal(row.response_sealed)) as SealedPart;
    return { status: row.status, contentType: row.content_type, body, headers };
  } catch {
    return null;
  }
}

/**
 * Claims the key for this request before its procedure runs (the caller is authenticated).
 * Throws 400 for a malformed key, 422 when the key was used for a different request, 409
 * while the first request still runs, and IdempotentReplay (with `call.replay` set) when
 * the response is stored.
 */
export async function claimIdempotencyKey(
  services: Pick<Services, 'pool' | 'secrets'>,
  call: IdempotentCall,
  caller: { accountId: string; credential: Pick<Credential, 'type' | 'id'> },
  input: unknown,
): Promise<void> {
  const { pool } = services;
  if (!VALID_KEY.test(call.key)) {
    throw new InvalidInputError(`${IDEMPOTENCY_KEY_HEADER} header must be 1 to 255 printable ASCII characters`, {
      reason: 'invalid_idempotency_key',
    });
  }
  const fingerprint = fingerprintOf(call, caller.credential, input);
  const claim = await claimKey(pool, caller.accountId, call.key, fingerprint);
  if (claim) {
    call.claim = claim;
    return;
  }
  const row = await readKey(pool, caller.accountId, call.key);
  // Named error codes: these two always answer in the envelope, whatever the endpoint's shapes.
  if (row && row.fingerprint !== fingerprint) {
    throw new ApiError(422, `${IDEMPOTENCY_KEY_HEADER} was already used with a different request; use a new key for a new request`, {
      code: 'idempotency_key_reused',
    });
  }
  // No row: the first request failed and gave the key back a moment ago.
  if (!row || row.state !== 'completed') {
    throw new ConflictError(`A request with this ${IDEMPOTENCY_KEY_HEADER} is still being processed; retry later`, {
      code: 'idempotency_key_in_use',
    });
  }
  const stored = unsealResponse(services.secrets, row);
  // Running the request again could do its work twice; the caller is told to use a new key instead.
  if (!stored) {
    throw new ApiError(422, `The response stored for this ${IDEMPOTENCY_KEY_HEADER} can no longer be read; use a new key for a new request`, {
      code: 'idempotency_key_unreadable',
    });
  }
  call.replay = stored;
  throw new IdempotentReplay();
}

/**
 * Stores the response of a call that holds its key. A 5xx gives the key back instead (the
 * failure was ours, so a retry should run again), as does a failure to store.
 */
export async function finishIdempotentCall(
  services: Pick<Services, 'pool' | 'secrets' | 'log'>,
  call: IdempotentCall | undefined,
  response: StoredResponse,
): Promise<void> {
  const claim = call?.claim;
  if (!claim) return;
  call.claim = undefined;
  const { pool, log } = services;
  try {
    if (response.status >= 500) {
      await releaseKey(pool, claim);
    } else {
      const sealed: SealedPart = { body: response.body, headers: response.headers };
      await storeResponse(pool, claim, { status: response.status, contentType: response.contentType, sealed: services.secrets.seal(JSON.stringify(sealed)) });
    }
  } catch (error) {
    log.error({ err: error }, 'could not store the response of an idempotent request');
    // An abandoned claim is taken over after ABANDONED_AFTER anyway; this just makes it sooner.
    await releaseKey(pool, claim).catch(() => {});
  }
}

/** The headers a replayed response carries besides the request's own (rate limits). */
export function replayedHeaders(stored: StoredResponse): Record<string, string> {
  return { ...stored.headers, [REPLAYED_HEADER]: 'true' };
}
