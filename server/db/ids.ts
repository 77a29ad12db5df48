import { randomFillSync } from 'node:crypto';

// Crockford base32, lowercase: no i, l, o, u, so ids read back unambiguously.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

let lastTime = -1;
// The 80-bit random part as two 40-bit halves (Numbers hold them exactly).
const HALF = 2 ** 40;
let randomHigh = 0;
let randomLow = 0;

/**
 * Random bytes drawn ahead, 10 per new millisecond: one call into the CSPRNG per 409 ids'
 * worth rather than one (and a new buffer) per millisecond, as Node's randomUUID buffers its
 * entropy too. Each byte is used once.
 */
const POOL_BYTES = 4_090;
const pool = Buffer.alloc(POOL_BYTES);
let poolOffset = POOL_BYTES;

function randomTen(): number {
  if (poolOffset + 10 > POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const offset = poolOffset;
  poolOffset += 10;
  return offset;
}

/** `value` (a non-negative integer below 32^length) in `length` characters. */
function encode(value: number, length: number): string {
  let text = '';
  for (let i = 0; i < length; i++) {
    text = ALPHABET[value % 32]! + text;
    value = Math.floor(value / 32);
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
    const offset = randomTen();
    // Leave headroom in the top bit so increments within the millisecond never overflow.
    randomHigh = pool.readUIntBE(offset, 5) % (HALF / 2);
    randomLow = pool.readUIntBE(offset + 5, 5);
  } else if (++randomLow === HALF) {
    randomLow = 0;
    randomHigh += 1;
  }
  return `${prefix}_${encode(lastTime, 10)}${encode(randomHigh, 8)}${encode(randomLow, 8)}`;
}

/**
 * `${prefix}_` + an id in newId's form that is the same each time it is made for the same
 * thing: the time part of `after` (an id of newId's, whose moment it takes, so it sorts with
 * the ids of that moment) and the 80 bits given (Secrets.idBits of what it names) as its
 * random part. For a row written again after a crash under the id it had been sent with.
 */
export function derivedId(prefix: string, after: string, bits: Buffer): string {
  const time = after.slice(after.indexOf('_') + 1, after.indexOf('_') + 11);
  return `${prefix}_${time}${encode(bits.readUIntBE(0, 5), 8)}${encode(bits.readUIntBE(5, 5), 8)}`;
}
