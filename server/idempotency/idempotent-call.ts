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
// is present; the step after authentication (idempotency-middleware.ts) claims it BEFORE
// the procedure runs (claim, or replay / 409 / 422); and once the surface has rendered the
// response the pipeline calls finishIdempotentCall to store it (or give the key back on a 5xx). So
// refusals decided while authenticating (401, 429, the plan's and the key scopes' 403) are
// never stored, and a request without the header runs no SQL here. tRPC batches go to
// tRPC's own handler and ignore the header; public (unauthenticated) operations ignore it too.
import type { Credential } from '../auth/scopes.ts';
import type { Services } from '../process-services.ts';
import { assertValidIdempotencyKey, requestFingerprint } from './request-fingerprint.ts';
import { claimKey, readKey, releaseKey, storeResponse, type ClaimedKey } from './sql/idempotency-keys.ts';
import { replayFor, responseToStore, type StoredResponse } from './stored-responses.ts';

export { IDEMPOTENCY_KEY_HEADER, idempotentCallFor } from './request-fingerprint.ts';
export { REPLAYED_HEADER, replayedHeaders, type StoredResponse } from './stored-responses.ts';

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
  assertValidIdempotencyKey(call.key);
  const fingerprint = requestFingerprint(call.target, caller.credential, input);
  const claim = await claimKey(pool, caller.accountId, call.key, fingerprint);
  if (claim) {
    call.claim = claim;
    return;
  }
  call.replay = replayFor(services.secrets, await readKey(pool, caller.accountId, call.key), fingerprint);
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
    const stored = responseToStore(services.secrets, response);
    if (stored) await storeResponse(pool, claim, stored);
    else await releaseKey(pool, claim);
  } catch (error) {
    log.error({ err: error }, 'could not store the response of an idempotent request');
    // An abandoned claim is taken over after ABANDONED_AFTER anyway; this just makes it sooner.
    await releaseKey(pool, claim).catch(() => {});
  }
}
