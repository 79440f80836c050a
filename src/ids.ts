import { randomFillSync } from 'node:crypto';

/**
 * Identifiers are TypeID-style: `<prefix>_<26 base32 characters>` over a UUIDv7, so an id made
 * later sorts after one made earlier (byte-wise and as a string), even within one millisecond.
 */
export const ID_PREFIXES = [
  'tenant',
  'key',
  'person',
  'personlog',
  'account',
  'accountlog',
  'page',
  'action',
  'audience',
  'version',
  'session',
  'file',
  'asset',
  'topic',
  'entry',
  'pagelink',
  'domain',
  'whsub',
  'event',
  'delivery',
] as const;
export type IdPrefix = (typeof ID_PREFIXES)[number];

// Crockford's base32 alphabet in lowercase, as TypeID uses it.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

const pool = Buffer.alloc(4096);
let poolOffset = pool.length;
function randomBytes(n: number): Buffer {
  if (poolOffset + n > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const bytes = pool.subarray(poolOffset, poolOffset + n);
  poolOffset += n;
  return bytes;
}

let lastMs = 0;
let sequence = 0;

/**
 * UUIDv7 with a 12-bit counter in `rand_a` (RFC 9562, method 1): within one millisecond the
 * counter increments; when it would overflow, or the clock steps back, time is borrowed from
 * the next millisecond so that order is never broken.
 */
export function uuidv7Bytes(nowMs = Date.now()): Uint8Array {
  const rand = randomBytes(10);
  if (nowMs > lastMs) {
    lastMs = nowMs;
    sequence = ((rand[0]! << 8) | rand[1]!) & 0x7ff; // leave headroom for increments
  } else if (sequence < 0xfff) {
    sequence++;
  } else {
    lastMs++;
    sequence = ((rand[0]! << 8) | rand[1]!) & 0x7ff;
  }
  const b = new Uint8Array(16);
  let ms = lastMs;
  for (let i = 5; i >= 0; i--) {
    b[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  b[6] = 0x70 | (sequence >> 8);
  b[7] = sequence & 0xff;
  b[8] = 0x80 | (rand[2]! & 0x3f);
  b.set(rand.subarray(3, 10), 9);
  return b;
}

/** 128 bits as 26 base32 characters: two leading zero bits pad the value to 130. */
export function encodeBase32(bytes: Uint8Array): string {
  let out = '';
  let value = 0;
  let bits = 2;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(value >> bits) & 31];
    }
    value &= (1 << bits) - 1;
  }
  return out;
}

export function newId<P extends IdPrefix>(prefix: P): `${P}_${string}` {
  return `${prefix}_${encodeBase32(uuidv7Bytes())}`;
}

/** Whether `value` has the exact shape of an id this service issues with `prefix`. */
export function isId(prefix: IdPrefix, value: string): boolean {
  return value.length === prefix.length + 27 && value.startsWith(`${prefix}_`) && ID_BODY.test(value.slice(prefix.length + 1));
}
const ID_BODY = /^[0-7][0-9a-hjkmnp-tv-z]{25}$/;
