// First-party sessions: an identity-provider ID token on the bearer carrier,
// verified on every request (signature from the provider's JWKS, issuer,
// audience, expiry, claims by the input rules: id-token-verification.ts) and mapped
// to the account whose `oidc_subject` is its `sub`. A subscription opened with one ends at its `exp`.
// Configured by OIDC_ISSUER, OIDC_AUDIENCE and OIDC_JWKS_URL; while they are
// unset every ID token is refused.
import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';
import { ApiError, UnauthorizedError } from '../errors.ts';
import type { Services } from '../process-services.ts';
import { IDP_UNAVAILABLE, verifyIdTokenWith, type VerifiedIdToken } from './id-token-verification.ts';

export type { VerifiedIdToken } from './id-token-verification.ts';

// One key set per URL and process: jose caches the keys and refetches at most
// once per cooldown when a token names an unknown key id.
const keySets = new Map<string, JWTVerifyGetKey>();

function keySetFor(url: string): JWTVerifyGetKey {
  let keySet = keySets.get(url);
  if (!keySet) {
    keySet = createRemoteJWKSet(new URL(url));
    keySets.set(url, keySet);
  }
  return keySet;
}

/** The verified token's subject and expiry; 401 for any token that does not verify. */
export async function verifyIdToken(services: Services, token: string): Promise<VerifiedIdToken> {
  const { OIDC_ISSUER, OIDC_AUDIENCE, OIDC_JWKS_URL } = services.config;
  if (!OIDC_ISSUER || !OIDC_AUDIENCE || !OIDC_JWKS_URL) {
    throw new UnauthorizedError('Invalid API key: ID tokens are not accepted by this server');
  }
  try {
    return await verifyIdTokenWith(token, keySetFor(OIDC_JWKS_URL), { issuer: OIDC_ISSUER, audience: OIDC_AUDIENCE });
  } catch (error) {
    if (error instanceof ApiError && error.reason === IDP_UNAVAILABLE) services.log.warn({ err: error.cause }, 'identity provider key set unavailable');
    throw error;
  }
}
