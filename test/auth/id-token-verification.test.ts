// ID tokens (README "ID tokens"): accepted when an asymmetric key of the provider's key set
// signed them for the configured issuer and audience, with `sub` and `exp`, not expired, and
// claims that obey the input rules; every other token is 401, and a key set that cannot be
// had is 503 (not the caller's fault). The key set here is a local one, as the provider serves it.
import { createLocalJWKSet, errors, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JSONWebKeySet, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { beforeAll, describe, expect, test } from 'vitest';
import { ID_TOKEN_ALGORITHMS, IDP_UNAVAILABLE, verifyIdTokenWith } from '../../server/auth/id-token-verification.ts';
import { ApiError } from '../../server/errors.ts';

const ISSUER = 'https://idp.example/';
const AUDIENCE = 'messaging-api';
const expected = { issuer: ISSUER, audience: AUDIENCE };
const SHARED_SECRET = new TextEncoder().encode('a-shared-secret-of-at-least-32-bytes!!');

/** Every asymmetric algorithm a provider may sign with. */
const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

const signingKeys = new Map<string, CryptoKey>();
let keySet: ReturnType<typeof createLocalJWKSet>;
let unpublished: CryptoKey;

beforeAll(async () => {
  const keys: JSONWebKeySet['keys'] = [];
  for (const alg of ASYMMETRIC) {
    const pair = await generateKeyPair(alg, { extractable: true });
    signingKeys.set(alg, pair.privateKey);
    keys.push({ ...(await exportJWK(pair.publicKey)), kid: alg });
  }
  // A shared secret in the set must never verify anything.
  keys.push({ kty: 'oct', k: Buffer.from(SHARED_SECRET).toString('base64url'), kid: 'HS256' });
  keySet = createLocalJWKSet({ keys });
  unpublished = (await generateKeyPair('ES256')).privateKey;
});

const now = () => Math.floor(Date.now() / 1000);

function sign(claims: JWTPayload, options: { alg?: string; key?: CryptoKey | Uint8Array } = {}): Promise<string> {
  const alg = options.alg ?? 'ES256';
  return new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: 'oidc|ada', exp: now() + 300, ...claims })
    .setProtectedHeader({ alg, kid: alg })
    .sign(options.key ?? signingKeys.get(alg)!);
}

async function refusal(token: string, keys: JWTVerifyGetKey = keySet): Promise<ApiError> {
  try {
    await verifyIdTokenWith(token, keys, expected);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected a refusal');
}

test('a token signed with any asymmetric algorithm of the key set names its subject until its exp', async () => {
  expect(ID_TOKEN_ALGORITHMS).toEqual(ASYMMETRIC);
  const exp = now() + 600;
  for (const alg of ASYMMETRIC) {
    expect(await verifyIdTokenWith(await sign({ exp }, { alg }), keySet, expected), alg).toEqual({ subject: 'oidc|ada', expiresAt: exp * 1000 });
  }
  // An audience list that includes ours is ours.
  expect((await verifyIdTokenWith(await sign({ aud: ['other', AUDIENCE] }), keySet, expected)).subject).toBe('oidc|ada');
});

describe('401 Invalid ID token', () => {
  test('signed with a shared secret, with a key the set does not hold, or not a token at all', async () => {
    for (const token of [
      await sign({}, { alg: 'HS256', key: SHARED_SECRET }),
      await sign({}, { key: unpublished }),
      'eyJhbGciOiJFUzI1NiJ9.e30.c2ln',
      'not a token',
    ]) {
      const error = await refusal(token);
      expect([error.status, error.message]).toEqual([401, 'Invalid ID token']);
    }
  });

  test('another issuer or audience, or without sub or exp', async () => {
    for (const claims of [{ iss: 'https://other.example/' }, { aud: 'another-app' }, { sub: undefined }, { exp: undefined }]) {
      const error = await refusal(await sign(claims));
      expect([error.status, error.message], JSON.stringify(claims)).toEqual([401, 'Invalid ID token']);
    }
  });

  test('expired, or with an empty subject, says so', async () => {
    const expired = await refusal(await sign({ exp: now() - 10 }));
    expect([expired.status, expired.message]).toEqual([401, 'Invalid ID token: expired']);
    const empty = await refusal(await sign({ sub: '' }));
    expect([empty.status, empty.message]).toEqual([401, 'Invalid ID token: no subject']);
  });

  test('a claim PostgreSQL cannot store (NUL, a lone surrogate) makes the token invalid, not a 5xx', async () => {
    for (const claims of [{ sub: 'oidc|a\u0000b' }, { email: 'ada\ud800@example.com' }, { name: 'Ada \udc00' }]) {
      const error = await refusal(await sign(claims));
      expect(error.status).toBe(401);
      expect(error.message).toMatch(/^Invalid ID token: .+/);
    }
  });
});

describe('503 when the key set cannot be had', () => {
  test("a time-out, a failed fetch or jose's generic failure is the provider's fault, with the failure kept as the cause", async () => {
    const token = await sign({});
    for (const failure of [new errors.JWKSTimeout(), new TypeError('fetch failed'), new errors.JOSEError('Expected 200 OK from the JSON Web Key Set HTTP response')]) {
      const error = await refusal(token, async () => {
        throw failure;
      });
      expect([error.status, error.reason, error.message]).toEqual([503, IDP_UNAVAILABLE, 'The identity provider is unreachable; try again later']);
      expect(error.cause).toBe(failure);
    }
    expect(IDP_UNAVAILABLE).toBe('idp_unavailable');
  });

  test('a key set without the key the token names is the token at fault: 401', async () => {
    const error = await refusal(await sign({}), async () => {
      throw new errors.JWKSNoMatchingKey();
    });
    expect([error.status, error.message]).toEqual([401, 'Invalid ID token']);
  });
});
