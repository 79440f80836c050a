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
  'submission',
  'experiment',
  'goal',
  'funnel',
  'alert',
  'alertmsg',
  'template',
  'deal',
  'integration',
  'site',
  'experience',
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
    sequence = rand.readUInt16BE(0) & 0x7ff; // leave headroom for increments
  } else if (sequence < 0xfff) {
    sequence++;
  } else {
    lastMs++;
    sequence = rand.readUInt16BE(0) & 0x7ff;
  }
  const b = new Uint8Array(16);
  let ms = lastMs;
  for (let i = 5; i >= 0; i--) {
    b[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  b[6] = 0x70 | (sequence >> 8);
  b[7] = sequence & 0xff;
  b[8] = 0x80 | (rand.readUInt8(2) & 0x3f);
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

// What follows `<prefix>_`, checked by its shape only, as the reference writes the account id's pattern.
const ID_BODY = '[a-z0-9]{26}';

/** The JSON Schema `pattern` of the ids with `prefix`, e.g. `^account_[a-z0-9]{26}$`. */
export function idPattern(prefix: IdPrefix): string {
  return `^${prefix}_${ID_BODY}$`;
}

const ANY_ID = new RegExp(`^[a-z]{1,16}_${ID_BODY}$`);

/** Whether `value` has the shape of an id of any kind: nothing else may reach a query or a file name from outside. */
export function isIdShaped(value: string): boolean {
  return ANY_ID.test(value);
}
