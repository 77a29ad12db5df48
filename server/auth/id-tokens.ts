// First-party sessions: an identity-provider ID token on the bearer carrier,
// verified on every request (signature from the provider's JWKS, issuer,
// audience, expiry, claims by the input rules) and mapped to the account whose
// `oidc_subject` is its `sub`. A subscription opened with one ends at its `exp`.
// Configured by OIDC_ISSUER, OIDC_AUDIENCE and OIDC_JWKS_URL; while they are
// unset every ID token is refused.
import { createRemoteJWKSet, errors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { ApiError, UnauthorizedError } from '../errors.ts';
import { findClaimProblem } from '../input-rules.ts';
import type { Services } from '../process-services.ts';

// Asymmetric algorithms only: a JWKS never legitimately carries a shared secret.
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

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

export type VerifiedIdToken = {
  subject: string;
  /** The token's `exp`, in ms since the epoch. */
  expiresAt: number;
};

/** The verified token's subject and expiry; 401 for any token that does not verify. */
export async function verifyIdToken(services: Services, token: string): Promise<VerifiedIdToken> {
  const { OIDC_ISSUER, OIDC_AUDIENCE, OIDC_JWKS_URL } = services.config;
  if (!OIDC_ISSUER || !OIDC_AUDIENCE || !OIDC_JWKS_URL) {
    throw new UnauthorizedError('Invalid API key: ID tokens are not accepted by this server');
  }
  try {
    const { payload } = await jwtVerify(token, keySetFor(OIDC_JWKS_URL), {
      issuer: OIDC_ISSUER,
      audience: OIDC_AUDIENCE,
      algorithms: ALGORITHMS,
      requiredClaims: ['sub', 'exp'],
    });
    if (!payload.sub) throw new UnauthorizedError('Invalid ID token: no subject');
    // The subject goes to SQL: claims obey the input rules, and a breach is an invalid token, not a 5xx.
    const problem = findClaimProblem(payload);
    if (problem) throw new UnauthorizedError(`Invalid ID token: ${problem.message}`);
    return { subject: payload.sub, expiresAt: payload.exp! * 1000 };
  } catch (error) {
    if (error instanceof ApiError) throw error;
    if (error instanceof errors.JWTExpired) throw new UnauthorizedError('Invalid ID token: expired');
    // The provider's key set could not be fetched: not the caller's fault.
    if (error instanceof errors.JWKSTimeout || !(error instanceof errors.JOSEError) || error.code === 'ERR_JOSE_GENERIC') {
      services.log.warn({ err: error }, 'identity provider key set unavailable');
      throw new ApiError(503, 'The identity provider is unreachable; try again later', { reason: 'idp_unavailable' });
    }
    throw new UnauthorizedError('Invalid ID token');
  }
}
