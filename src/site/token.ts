import { randomFillSync } from 'node:crypto';
import { CACHES, newCache } from '../db/caches.js';
import { isFresh, signedTokens } from '../signed-tokens.js';
import { isVisitClaims, type VisitClaims } from '../visits/index.js';

/**
 * The view token: what a served document tells the collector and the form handler about the visit
 * it starts, signed so that a visitor can neither forge one nor change what it names
 * (src/signed-tokens.ts). Built for serving: each document's part of the claims is encoded once,
 * and a token verified once is not verified again.
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
export const VIEW_TOKEN_PURPOSE = 'pam view token v1';
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
  const tokens = signedTokens(serviceSecret, VIEW_TOKEN_PURPOSE, isVisitClaims, { maxAgeMs, maxLength: MAX_TOKEN_LENGTH });
  const random = randomVisitBytes();
  const verified = newCache<VisitClaims>(CACHES.viewTokens);
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
      return { token: tokens.seal(body), claims };
    },
    verify(token, at = Date.now()) {
      let claims = verified.get(token);
      if (claims === undefined) {
        claims = tokens.genuine(token);
        if (claims === undefined) return undefined;
        verified.set(token, Object.freeze(claims));
      }
      return isFresh(claims, at, maxAgeMs) ? claims : undefined;
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
