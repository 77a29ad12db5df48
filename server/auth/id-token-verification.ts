// What makes an identity-provider ID token valid, given the provider's key set: an asymmetric
// signature by one of its keys, the configured issuer and audience, `sub` and `exp`, not
// expired, and claims that obey the input rules; and what each failure answers (401, or 503
// when the key set itself could not be had). id-tokens.ts fetches the key set.
import { errors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { ApiError, UnauthorizedError } from '../errors.ts';
import { findClaimProblem } from '../input-rules.ts';

// Asymmetric algorithms only: a JWKS never legitimately carries a shared secret.
export const ID_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/** The reason of the 503 answered when the provider's key set could not be fetched. */
export const IDP_UNAVAILABLE = 'idp_unavailable';

export type VerifiedIdToken = {
  subject: string;
  /** The token's `exp`, in ms since the epoch. */
  expiresAt: number;
};

/** The verified token's subject and expiry; 401 for any token that does not verify, 503 (with the failure as its cause) without a key set. */
export async function verifyIdTokenWith(token: string, keySet: JWTVerifyGetKey, expected: { issuer: string; audience: string }): Promise<VerifiedIdToken> {
  try {
    const { payload } = await jwtVerify(token, keySet, {
      issuer: expected.issuer,
      audience: expected.audience,
      algorithms: ID_TOKEN_ALGORITHMS,
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
      throw new ApiError(503, 'The identity provider is unreachable; try again later', { reason: IDP_UNAVAILABLE, cause: error });
    }
    throw new UnauthorizedError('Invalid ID token');
  }
}
