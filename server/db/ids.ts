import { randomBytes } from 'node:crypto';

// Crockford base32, lowercase: no i, l, o, u, so ids read back unambiguously.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * `${prefix}_` + a 26-character ULID-style id: 10 characters of millisecond timestamp
 * (48 bits) then 16 characters of randomness (80 bits). Ids of one table sort by creation
 * time as plain strings; ids created in the same millisecond are not ordered.
 */
export function newId(prefix: string): string {
  let time = Date.now();
  let timePart = '';
  for (let i = 0; i < 10; i++) {
    timePart = ALPHABET[time % 32] + timePart;
    time = Math.floor(time / 32);
  }

  // 80 bits = 10 bytes = 16 groups of 5 bits, read most significant bit first.
  const bytes = randomBytes(10);
  let randomPart = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      randomPart += ALPHABET[(buffer >> bits) & 31];
    }
    buffer &= (1 << bits) - 1;
  }

  return `${prefix}_${timePart}${randomPart}`;
}
