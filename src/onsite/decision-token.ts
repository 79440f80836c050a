import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The decision token: what `GET /_pam/decide` tells the site's script about the decision it made,
 * signed so that the script's reports (views, clicks, conversions) can name the experiences and
 * arms without a visitor being able to forge or change them. Its key is derived from the service
 * secret with its own purpose string, as the served pages' view token is (src/site/token.ts).
 * `<base64url(JSON claims)>.<base64url(HMAC-SHA256)>`.
 */
export interface DecisionArm {
  experienceId: string;
  arm: 'personalised' | 'holdout';
}

export interface DecisionUtm {
  utmSource?: string;
  utmMedium?: string;
  utmCampaign?: string;
  utmTerm?: string;
  utmContent?: string;
}

export interface DecisionClaims {
  tenantId: string;
  siteId: string;
  /** The daily visitor key the arms were assigned to (never the address or the user agent). */
  unit: string;
  /** The UTC day (`YYYY-MM-DD`) the unit belongs to. */
  day: string;
  /** The page's path (query excluded). */
  path: string;
  /** The experiences applied or held out on this page, each with its arm. */
  experiences: DecisionArm[];
  /** The live experiences whose `conversionUrl` matches this page's path. */
  converting: string[];
  referrerHost?: string;
  channel?: string;
  utm?: DecisionUtm;
  /** A preview (`?pam_preview=`): shown to a marketer, not to be measured. */
  preview?: boolean;
  /** When the decision was made, in milliseconds since the epoch. */
  issuedAt: number;
}

export interface DecisionTokens {
  sign(claims: DecisionClaims): string;
  /** The claims of a genuine token not older than `maxAgeMs`; undefined for anything else. */
  verify(token: string, at?: number): DecisionClaims | undefined;
}

export const DECISION_TOKEN_MAX_AGE_MS = 24 * 60 * 60 * 1000;
/** The collector's reports are at most 2 KB: a token must leave room for the rest. */
export const MAX_DECISION_TOKEN_LENGTH = 1600;

export function decisionTokens(serviceSecret: string, maxAgeMs = DECISION_TOKEN_MAX_AGE_MS): DecisionTokens {
  const key = createHmac('sha256', serviceSecret).update('pam onsite decision token v1').digest();
  const mac = (body: string) => createHmac('sha256', key).update(body).digest();
  return {
    sign(claims) {
      const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
      return `${body}.${mac(body).toString('base64url')}`;
    },
    verify(token, at = Date.now()) {
      if (typeof token !== 'string' || token.length > MAX_DECISION_TOKEN_LENGTH) return undefined;
      const [body, signature, extra] = token.split('.');
      if (!body || !signature || extra !== undefined) return undefined;
      const given = Buffer.from(signature, 'base64url');
      const expected = mac(body);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      let claims: unknown;
      try {
        claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
      } catch {
        return undefined;
      }
      if (!isClaims(claims)) return undefined;
      if (claims.issuedAt > at + 60_000 || at - claims.issuedAt > maxAgeMs) return undefined;
      return claims;
    },
  };
}

const isString = (v: unknown): v is string => typeof v === 'string';
const optionalString = (v: unknown) => v === undefined || isString(v);

function isArm(value: unknown): value is DecisionArm {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return isString(v.experienceId) && (v.arm === 'personalised' || v.arm === 'holdout');
}

function isUtm(value: unknown): boolean {
  if (value === undefined) return true;
  if (typeof value !== 'object' || value === null) return false;
  return Object.values(value).every(isString);
}

function isClaims(value: unknown): value is DecisionClaims {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    ['tenantId', 'siteId', 'unit', 'day', 'path'].every((k) => isString(v[k])) &&
    Array.isArray(v.experiences) &&
    v.experiences.every(isArm) &&
    Array.isArray(v.converting) &&
    v.converting.every(isString) &&
    optionalString(v.referrerHost) &&
    optionalString(v.channel) &&
    isUtm(v.utm) &&
    (v.preview === undefined || typeof v.preview === 'boolean') &&
    typeof v.issuedAt === 'number' &&
    Number.isSafeInteger(v.issuedAt)
  );
}
