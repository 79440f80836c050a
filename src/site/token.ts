import { createHmac, type Hmac, randomFillSync, timingSafeEqual } from 'node:crypto';
import { CACHES, newCache } from '../db/caches.js';
import { isVisitClaims, type VisitClaims } from '../visits/index.js';

/**
 * The view token: what a served document tells the collector and the form handler about the visit
 * it starts, signed so that a visitor can neither forge one nor change what it names. Its key is
 * derived from the service secret that signs download links (one secret for an operator to keep,
 * a separate key per purpose). `<base64url(JSON claims)>.<base64url(HMAC-SHA256)>`.
 */
/** What a token names besides the visit: the same for every visit of one document at one path. */
export type TokenFields = Omit<VisitClaims, 'visitId' | 'issuedAt'>;

export interface ViewTokens {
  /**
   * A token for a new visit. Pass the same `fields` object for every visit of a document (the
   * document's outcome keeps one): its part of the token is then encoded once, not per visit.
   * `unit`, for `fields` without one: each visitor's own unit of an arm's shared fields.
   */
  sign(fields: TokenFields, at?: number, unit?: string): { token: string; claims: VisitClaims };
  /** The claims of a genuine token not older than `maxAgeMs`; undefined for anything else. */
  verify(token: string, at?: number): VisitClaims | undefined;
}

export const VIEW_TOKEN_MAX_AGE_MS = 24 * 60 * 60 * 1000;
const MAX_TOKEN_LENGTH = 1024;
/**
 * 16 random bytes per visit, taken from a buffer refilled by the CSPRNG 256 visits at a time (as
 * node's own randomUUID does): one call into OpenSSL per document was 5% of serving one.
 */
function randomVisitBytes(): () => Buffer {
  const pool = Buffer.alloc(16 * 256);
  let offset = pool.length;
  return () => {
    if (offset === pool.length) {
      randomFillSync(pool);
      offset = 0;
    }
    offset += 16;
    return pool.subarray(offset - 16, offset);
  };
}

export function viewTokens(serviceSecret: string, maxAgeMs = VIEW_TOKEN_MAX_AGE_MS): ViewTokens {
  const key = createHmac('sha256', serviceSecret).update('pam view token v1').digest();
  const mac = (body: string) => createHmac('sha256', key).update(body);
  const random = randomVisitBytes();
  const verified = newCache<VisitClaims>(CACHES.viewTokens);
  const remember = (token: string, claims: VisitClaims) => {
    verified.set(token, Object.freeze(claims));
  };
  const heads = new WeakMap<TokenFields, string>();
  const headOf = (fields: TokenFields) => {
    let head = heads.get(fields);
    if (head === undefined) {
      head = encodedHead(fields);
      heads.set(fields, head);
    }
    return head;
  };
  return {
    sign(fields, at = Date.now(), unit = undefined) {
      const visitId = `visit_${random().toString('base64url')}`;
      // The claims' JSON is the fields' part, then the visit's: `…[,"unit":…],"visitId":"…","issuedAt":…}`.
      const own = unit === undefined ? '' : `,"unit":${JSON.stringify(unit)}`;
      const body = headOf(fields) + Buffer.from(`${own},"visitId":"${visitId}","issuedAt":${at}}`).toString('base64url');
      const claims: VisitClaims = { ...fields, ...(unit === undefined ? {} : { unit }), visitId, issuedAt: at };
      return { token: `${body}.${mac(body).digest('base64url')}`, claims };
    },
    verify(token, at = Date.now()) {
      if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) return undefined;
      let claims = verified.get(token);
      if (claims === undefined) {
        claims = genuineClaims(token, mac);
        if (claims === undefined) return undefined;
        remember(token, claims);
      }
      if (claims.issuedAt > at + 60_000 || at - claims.issuedAt > maxAgeMs) return undefined;
      return claims;
    },
  };
}

/**
 * The base64url of the claims' JSON up to the visit's fields, padded with spaces (JSON whitespace)
 * to a whole number of 3-byte groups, so that it encodes to the same characters on its own as at
 * the start of the whole: each visit then encodes only its own few bytes and appends them.
 */
function encodedHead(fields: TokenFields): string {
  const head = Buffer.from(JSON.stringify(fields).slice(0, -1));
  const padded = Buffer.concat([head, Buffer.alloc((3 - (head.length % 3)) % 3, ' ')]);
  return padded.toString('base64url');
}

/** The claims of a token this key signed, whatever its age; undefined for anything else. */
function genuineClaims(token: string, mac: (body: string) => Hmac): VisitClaims | undefined {
  const [body, signature, extra] = token.split('.');
  if (!body || !signature || extra !== undefined) return undefined;
  const given = Buffer.from(signature, 'base64url');
  const expected = mac(body).digest();
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  return isVisitClaims(claims) ? claims : undefined;
}
