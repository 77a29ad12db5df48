// SECRET_KEY (contract): one master secret, a key of its own for each purpose (API-key lookup
// hashes, AES-256-GCM at rest, cursor signatures, the fingerprint the database keeps), so one
// use can never be replayed as another, and what a release stored stays readable by the next.
import { createCipheriv, createHmac, hkdfSync } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { derivedId, newId } from '../../server/db/ids.ts';
import { createSecrets, sameSecretText } from '../../server/secrets.ts';

const MASTER = Buffer.from('a-master-secret-of-at-least-32-bytes!!');
const OTHER_MASTER = Buffer.from('another-master-secret-of-32-bytes-or-more');
const secrets = createSecrets(MASTER);

/** The purpose's key, derived here independently of the module: the derivation is a stored format. */
const purposeKey = (purpose: string, master = MASTER) => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `messaging-api/${purpose}`, 32));

describe('API-key lookup hashes', () => {
  test('HMAC-SHA256 of the key under the api-key-lookup key, so stored hashes still find their keys', () => {
    const expected = createHmac('sha256', purposeKey('api-key-lookup')).update('mk_example').digest();
    expect(secrets.hashApiKey('mk_example').equals(expected)).toBe(true);
  });

  test('differ by key and by master secret', () => {
    expect(secrets.hashApiKey('mk_a').equals(secrets.hashApiKey('mk_b'))).toBe(false);
    expect(secrets.hashApiKey('mk_a').equals(createSecrets(OTHER_MASTER).hashApiKey('mk_a'))).toBe(false);
  });
});

describe('derived ids', () => {
  test('the first 80 bits of HMAC-SHA256 under the derived-ids key, so an id made again after a crash is the one sent before', () => {
    const expected = createHmac('sha256', purposeKey('derived-ids')).update('webhook-delivery\nevt_1').digest().subarray(0, 10);
    expect(secrets.idBits('webhook-delivery\nevt_1').equals(expected)).toBe(true);
    expect(secrets.idBits('webhook-delivery\nevt_1')).toHaveLength(10);
  });

  test('differ by what they name and by master secret', () => {
    expect(secrets.idBits('a').equals(secrets.idBits('b'))).toBe(false);
    expect(secrets.idBits('a').equals(createSecrets(OTHER_MASTER).idBits('a'))).toBe(false);
  });

  test("an id in newId's form: the prefix, the time part of the id it follows, then the bits in Crockford base32", () => {
    const after = newId('evt');
    const id = derivedId('dlv', after, Buffer.from('00000000010000000002', 'hex'));
    expect(id).toBe(`dlv_${after.slice(4, 14)}0000000100000002`);
    expect(id).toMatch(/^dlv_[0-9a-hjkmnp-tv-z]{26}$/);
    expect(derivedId('dlv', after, Buffer.alloc(10, 0xff))).toBe(`dlv_${after.slice(4, 14)}${'z'.repeat(16)}`);
  });
});

describe('sealing at rest', () => {
  test('v1.<iv>.<tag>.<ciphertext> in base64url: a 96-bit random IV, a 128-bit tag, the text encrypted', () => {
    const sealed = secrets.seal('wsec_signing-secret');
    const [version, iv, tag, ciphertext, extra] = sealed.split('.');
    expect(version).toBe('v1');
    expect(extra).toBeUndefined();
    for (const part of [iv, tag, ciphertext]) expect(part).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Buffer.from(iv!, 'base64url')).toHaveLength(12);
    expect(Buffer.from(tag!, 'base64url')).toHaveLength(16);
    expect(Buffer.from(ciphertext!, 'base64url')).toHaveLength('wsec_signing-secret'.length);
    expect(sealed).not.toContain('signing');
    expect(secrets.seal('wsec_signing-secret')).not.toBe(sealed);
  });

  test('unseal gives back what was sealed, any text included', () => {
    for (const text of ['', 'plain', 'émoji 🎉 and ünïcode', 'x'.repeat(10_000)]) expect(secrets.unseal(secrets.seal(text))).toBe(text);
  });

  test('a value sealed with the at-rest-encryption key by an earlier release is read', () => {
    const iv = Buffer.alloc(12, 7);
    const cipher = createCipheriv('aes-256-gcm', purposeKey('at-rest-encryption'), iv);
    const ciphertext = Buffer.concat([cipher.update('stored before', 'utf8'), cipher.final()]);
    const stored = `v1.${[iv, cipher.getAuthTag(), ciphertext].map((part) => part.toString('base64url')).join('.')}`;
    expect(secrets.unseal(stored)).toBe('stored before');
  });

  test('another master secret, a changed byte or a malformed value never unseals', () => {
    const sealed = secrets.seal('secret');
    expect(() => createSecrets(OTHER_MASTER).unseal(sealed)).toThrow();
    const [version, iv, tag, ciphertext] = sealed.split('.') as [string, string, string, string];
    const flipped = (part: string) => {
      const bytes = Buffer.from(part, 'base64url');
      bytes[0]! ^= 1;
      return bytes.toString('base64url');
    };
    expect(() => secrets.unseal([version, iv, tag, flipped(ciphertext)].join('.'))).toThrow();
    expect(() => secrets.unseal([version, iv, flipped(tag), ciphertext].join('.'))).toThrow();
    for (const malformed of [`v2.${iv}.${tag}.${ciphertext}`, `${iv}.${tag}.${ciphertext}`, `v1..${tag}.${ciphertext}`, `v1.${iv}..${ciphertext}`, `v1.${iv}.${tag}`, 'v1', '']) {
      expect(() => secrets.unseal(malformed), malformed).toThrow('sealed value has an unknown format');
    }
  });

  test('an empty text seals to an empty ciphertext and back', () => {
    const sealed = secrets.seal('');
    expect(sealed.split('.')[3]).toBe('');
    expect(secrets.unseal(sealed)).toBe('');
  });
});

describe('signatures', () => {
  test('the first 128 bits of HMAC-SHA256 under the token-signature key, so issued cursors stay valid', () => {
    const expected = createHmac('sha256', purposeKey('token-signature')).update('cursor text').digest().subarray(0, 16).toString('base64url');
    expect(secrets.sign('cursor text')).toBe(expected);
    expect(expected).toHaveLength(22);
  });

  test('verify accepts the signature of the same text under the same master secret only', () => {
    const signature = secrets.sign('cursor text');
    expect(secrets.verify('cursor text', signature)).toBe(true);
    expect(secrets.verify('cursor text!', signature)).toBe(false);
    expect(createSecrets(OTHER_MASTER).verify('cursor text', signature)).toBe(false);
    expect(secrets.verify('cursor text', signature.slice(0, -1))).toBe(false);
    expect(secrets.verify('cursor text', `${signature}A`)).toBe(false);
    expect(secrets.verify('cursor text', '')).toBe(false);
  });
});

test('the fingerprint the database keeps is HMAC-SHA256 of a fixed text under the fingerprint key, and names the master secret', () => {
  const expected = createHmac('sha256', purposeKey('fingerprint')).update('secret-key-check').digest('hex');
  expect(secrets.fingerprint()).toBe(expected);
  expect(createSecrets(OTHER_MASTER).fingerprint()).not.toBe(expected);
});

test('sameSecretText: equal texts only, whatever their lengths', () => {
  expect(sameSecretText('metrics-token', 'metrics-token')).toBe(true);
  expect(sameSecretText('metrics-token', 'metrics-tokeN')).toBe(false);
  expect(sameSecretText('metrics', 'metrics-token')).toBe(false);
  expect(sameSecretText('', 'metrics-token')).toBe(false);
});
