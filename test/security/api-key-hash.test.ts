// API-key hashes (server/secrets.ts): HMAC-SHA256 under the lookup key, kept per process by
// the key as presented; the bytes a caller gets are always the HMAC's, whatever an earlier
// caller did with its buffer, and keys past the bound are still hashed correctly.
import { createHmac, createSecretKey, hkdfSync, randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { createSecrets } from '../../server/secrets.ts';

const master = randomBytes(32);
const lookupKey = createSecretKey(Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'messaging-api/api-key-lookup', 32)));
const hmac = (key: string) => createHmac('sha256', lookupKey).update(key).digest();

describe('hashApiKey', () => {
  test('the HMAC of the key, the first time and every time after', () => {
    const secrets = createSecrets(master);
    const key = `mk_${randomBytes(24).toString('base64url')}`;
    expect(secrets.hashApiKey(key).equals(hmac(key))).toBe(true);
    expect(secrets.hashApiKey(key).equals(hmac(key))).toBe(true);
    expect(secrets.hashApiKey(`${key}x`).equals(hmac(`${key}x`))).toBe(true);
  });

  test('a caller writing into its buffer changes no later answer', () => {
    const secrets = createSecrets(master);
    const key = `mk_${randomBytes(24).toString('base64url')}`;
    secrets.hashApiKey(key).fill(0);
    expect(secrets.hashApiKey(key).equals(hmac(key))).toBe(true);
  });

  test('more keys than are kept: every one still hashes to its HMAC', () => {
    const secrets = createSecrets(master);
    const keys = Array.from({ length: 5_000 }, (_, index) => `mk_${index}_${randomBytes(8).toString('hex')}`);
    for (const key of keys) secrets.hashApiKey(key);
    for (const key of [keys[0]!, keys[2_000]!, keys.at(-1)!]) expect(secrets.hashApiKey(key).equals(hmac(key))).toBe(true);
  });
});
