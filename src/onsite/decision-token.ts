import { createHmac, timingSafeEqual } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';

/**
 * The decision token: what `GET /_pam/decide` tells the site's script about the decision it made,
 * signed so that the script's reports (views, clicks, conversions) can name the experiences and
 * arms without a visitor being able to forge or change them. Its key is derived from the service
 * secret with its own purpose string, as the served pages' view token is (src/site/token.ts).
 * `<base64url(JSON claims)>.<base64url(HMAC-SHA256)>`.
 */
const DecisionArm = Type.Object({ experienceId: Type.String(), arm: Type.Union([Type.Literal('personalised'), Type.Literal('holdout')]) });
export type DecisionArm = Static<typeof DecisionArm>;

// The five UTM values the decision read; nothing else in it but text.
const DecisionUtm = Type.Object(
  {
    utmSource: Type.Optional(Type.String()),
    utmMedium: Type.Optional(Type.String()),
    utmCampaign: Type.Optional(Type.String()),
    utmTerm: Type.Optional(Type.String()),
    utmContent: Type.Optional(Type.String()),
  },
  { additionalProperties: Type.String() },
);
export type DecisionUtm = Static<typeof DecisionUtm>;

const DecisionClaims = Type.Object({
  tenantId: Type.String(),
  siteId: Type.String(),
  /** The daily visitor key the arms were assigned to (never the address or the user agent). */
  unit: Type.String(),
  /** The UTC day (`YYYY-MM-DD`) the unit belongs to. */
  day: Type.String(),
  /** The page's path (query excluded). */
  path: Type.String(),
  /** The experiences applied or held out on this page, each with its arm. */
  experiences: Type.Array(DecisionArm),
  /** The live experiences whose `conversionUrl` matches this page's path. */
  converting: Type.Array(Type.String()),
  referrerHost: Type.Optional(Type.String()),
  channel: Type.Optional(Type.String()),
  utm: Type.Optional(DecisionUtm),
  /** A preview (`?pam_preview=`): shown to a marketer, not to be measured. */
  preview: Type.Optional(Type.Boolean()),
  /** When the decision was made, in milliseconds since the epoch. */
  issuedAt: Type.Integer({ minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }),
});
export type DecisionClaims = Static<typeof DecisionClaims>;
const isClaims = TypeCompiler.Compile(DecisionClaims);

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
      if (!isClaims.Check(claims)) return undefined;
      if (claims.issuedAt > at + 60_000 || at - claims.issuedAt > maxAgeMs) return undefined;
      return claims;
    },
  };
}
