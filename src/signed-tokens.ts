import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signed tokens: claims a visitor carries back (the served page's view token, the snippet's
 * decision token) and can neither forge nor change. `<base64url(JSON claims)>.<base64url(HMAC-SHA256)>`
 * under a key derived from the service secret for one purpose alone: one secret for an operator to
 * keep, and a token of one purpose is never taken for another's.
 */
export interface SignedTokens<T extends Claims> {
  sign(claims: T): string;
  /** The token of a body that is already base64url JSON (the view token builds its own, faster). */
  seal(body: string): string;
  /** The claims of a token this key signed, whatever their age; undefined for anything else. */
  genuine(token: string): T | undefined;
  /** The claims of a genuine token not older than the tokens' maximum age; undefined for anything else. */
  verify(token: string, at?: number): T | undefined;
}

/** What every token's claims hold: when they were signed, in milliseconds since the epoch. */
export interface Claims {
  issuedAt: number;
}

export interface TokenOptions {
  maxAgeMs: number;
  /** Longer text is refused before any work. */
  maxLength: number;
}

/** A clock ahead of the signer's by up to a minute still takes its tokens. */
const CLOCK_SKEW_MS = 60_000;

export function encodeClaims(claims: unknown): string {
  return Buffer.from(JSON.stringify(claims)).toString('base64url');
}

/** Issued not after `at` (give or take the skew) and not more than `maxAgeMs` before it. */
export function isFresh(claims: Claims, at: number, maxAgeMs: number): boolean {
  return claims.issuedAt <= at + CLOCK_SKEW_MS && at - claims.issuedAt <= maxAgeMs;
}

/**
 * `isClaims` is the claims' schema, compiled: the signature says who wrote a token, not that its
 * claims have the shape this version reads.
 */
export function signedTokens<T extends Claims>(
  serviceSecret: string,
  purpose: string,
  isClaims: (value: unknown) => value is T,
  options: TokenOptions,
): SignedTokens<T> {
  const key = createHmac('sha256', serviceSecret).update(purpose).digest();
  const mac = (body: string) => createHmac('sha256', key).update(body).digest('base64url');
  const seal = (body: string) => `${body}.${mac(body)}`;
  const genuine = (token: string): T | undefined => {
    if (typeof token !== 'string' || token.length > options.maxLength) return undefined;
    const [body, signature, extra] = token.split('.');
    if (!body || !signature || extra !== undefined) return undefined;
    // Compared as text: base64url decoding skips stray characters and ignores the last one's spare
    // bits, so comparing decoded bytes would take other spellings of one signature as genuine.
    const given = Buffer.from(signature);
    const expected = Buffer.from(mac(body));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    let claims: unknown;
    try {
      claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    return isClaims(claims) ? claims : undefined;
  };
  return {
    sign: (claims) => seal(encodeClaims(claims)),
    seal,
    genuine,
    verify(token, at = Date.now()) {
      const claims = genuine(token);
      return claims !== undefined && isFresh(claims, at, options.maxAgeMs) ? claims : undefined;
    },
  };
}
