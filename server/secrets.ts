// The service's one master secret and the purpose-bound keys derived from it:
// API-key lookup hashes (and those a process holds verified ID tokens under), encryption
// of retrievable copies, and signatures (cursors). Each purpose gets its own HKDF-derived
// key, so one use can never be replayed as another. Where the master secret comes from: master-secret.ts.
import {
  createCipheriv,
  createHash,
  createDecipheriv,
  createHmac,
  createSecretKey,
  hkdfSync,
  type KeyObject,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

export type Secrets = {
  /** HMAC-SHA256 of an API key, the only form used to look a key up. */
  hashApiKey(key: string): Buffer;
  /** HMAC-SHA256 of an ID token, the only form a process holds a verified token under. */
  hashIdToken(token: string): Buffer;
  /** AES-256-GCM: `v1.<iv>.<tag>.<ciphertext>` in base64url. */
  seal(plaintext: string): string;
  unseal(sealed: string): string;
  /** A short MAC for tamper-proof opaque tokens such as cursors. */
  sign(text: string): string;
  verify(text: string, signature: string): boolean;
  /** A value that identifies the master secret without revealing it. */
  fingerprint(): string;
  /** 80 bits of HMAC-SHA256 of `text`: the same text always gives the same bits, and nobody without the key can foretell them (ids made again after a crash, ids.ts derivedId). */
  idBits(text: string): Buffer;
};

/**
 * A KeyObject made once: given raw bytes, every createHmac/createCipheriv call would
 * build one itself (about 13 µs of the 16 µs an API-key hash costs).
 */
function derive(master: Buffer, purpose: string): KeyObject {
  return createSecretKey(Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `messaging-api/${purpose}`, 32)));
}

/**
 * Whether a presented token equals a configured one, compared as digests so neither its
 * length nor its bytes leak through timing (verify tokens, the metrics token).
 */
export function sameSecretText(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

export function createSecrets(master: Buffer): Secrets {
  const lookupKey = derive(master, 'api-key-lookup');
  const tokenKey = derive(master, 'id-token-lookup');
  const sealKey = derive(master, 'at-rest-encryption');
  const signKey = derive(master, 'token-signature');
  const fingerprintKey = derive(master, 'fingerprint');
  const idKey = derive(master, 'derived-ids');

  const sign = (text: string) =>
    createHmac('sha256', signKey).update(text).digest().subarray(0, 16).toString('base64url');

  return {
    hashApiKey: (key) => createHmac('sha256', lookupKey).update(key).digest(),
    hashIdToken: (token) => createHmac('sha256', tokenKey).update(token).digest(),
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', sealKey, iv);
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const parts = [iv, cipher.getAuthTag(), ciphertext].map((part) => part.toString('base64url'));
      return `v1.${parts.join('.')}`;
    },
    unseal(sealed) {
      const [version, iv, tag, ciphertext] = sealed.split('.');
      if (version !== 'v1' || !iv || !tag || ciphertext === undefined) {
        throw new Error('sealed value has an unknown format');
      }
      const decipher = createDecipheriv('aes-256-gcm', sealKey, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([
        decipher.update(Buffer.from(ciphertext, 'base64url')),
        decipher.final(),
      ]).toString('utf8');
    },
    sign,
    fingerprint: () => createHmac('sha256', fingerprintKey).update('secret-key-check').digest('hex'),
    idBits: (text) => createHmac('sha256', idKey).update(text).digest().subarray(0, 10),
    verify(text, signature) {
      const expected = Buffer.from(sign(text));
      const given = Buffer.from(signature);
      return expected.length === given.length && timingSafeEqual(expected, given);
    },
  };
}
