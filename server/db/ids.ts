import { randomBytes } from 'node:crypto';

// Crockford base32, lowercase: no i, l, o, u, so ids read back unambiguously.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

let lastTime = -1;
let lastRandom = 0n;

function encode(value: bigint, length: number): string {
  let text = '';
  for (let i = 0; i < length; i++) {
    text = ALPHABET[Number(value & 31n)] + text;
    value >>= 5n;
  }
  return text;
}

/**
 * `${prefix}_` + a 26-character ULID-style id: 10 characters of millisecond timestamp
 * (48 bits) then 16 characters of randomness (80 bits). Ids sort by creation time as
 * plain strings; within one millisecond a process increments the random part, so the
 * ids one process makes (events of one transaction, say) keep their order too.
 */
export function newId(prefix: string): string {
  const now = Date.now();
  if (now > lastTime) {
    lastTime = now;
    // Leave headroom in the top bit so increments within the millisecond never overflow.
    lastRandom = BigInt(`0x${randomBytes(10).toString('hex')}`) >> 1n;
  } else {
    lastRandom += 1n;
  }
  return `${prefix}_${encode(BigInt(lastTime), 10)}${encode(lastRandom, 16)}`;
}
