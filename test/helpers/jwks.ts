// A stand-in identity provider for ID-token tests: a JWKS endpoint on loopback
// (plain HTTP, node:http) serving a generated key set, and token signing with
// that key, with a key the set does not contain, or with any claims.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';

export type TestIdentityProvider = {
  issuer: string;
  audience: string;
  jwksUrl: string;
  /** The OIDC_* variables that point the service at this provider. */
  env: Record<string, string>;
  /** A token signed with the published key; claims override the defaults (sub, iss, aud, 5-minute expiry). */
  sign(claims: JWTPayload & { sub: string }, options?: { expiresIn?: string | number }): Promise<string>;
  /** The same, signed with a key that is not in the published set (same key id). */
  signWithUnpublishedKey(claims: JWTPayload & { sub: string }): Promise<string>;
  stop(): Promise<void>;
};

const KEY_ID = 'test-key-1';

export async function startIdentityProvider(): Promise<TestIdentityProvider> {
  const published = await generateKeyPair('ES256', { extractable: true });
  const unpublished = await generateKeyPair('ES256', { extractable: true });
  const jwk = { ...(await exportJWK(published.publicKey)), kid: KEY_ID, alg: 'ES256', use: 'sig' };
  const body = JSON.stringify({ keys: [jwk] });

  const server = createServer((request, response) => {
    if (request.url === '/.well-known/jwks.json') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(body);
      return;
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const issuer = `http://127.0.0.1:${port}/`;
  const audience = 'messaging-api-test-app';
  const jwksUrl = `http://127.0.0.1:${port}/.well-known/jwks.json`;

  const signWith = (key: CryptoKey, claims: JWTPayload & { sub: string }, expiresIn: string | number = '5m') => {
    const { sub, ...rest } = claims;
    return new SignJWT({ ...rest })
      .setProtectedHeader({ alg: 'ES256', kid: KEY_ID, typ: 'JWT' })
      .setSubject(sub)
      .setIssuer(typeof rest.iss === 'string' ? rest.iss : issuer)
      .setAudience(rest.aud ?? audience)
      .setIssuedAt()
      .setExpirationTime(typeof rest.exp === 'number' ? rest.exp : expiresIn)
      .sign(key);
  };

  return {
    issuer,
    audience,
    jwksUrl,
    env: { OIDC_ISSUER: issuer, OIDC_AUDIENCE: audience, OIDC_JWKS_URL: jwksUrl },
    sign: (claims, options) => signWith(published.privateKey, claims, options?.expiresIn),
    signWithUnpublishedKey: (claims) => signWith(unpublished.privateKey, claims),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
