import { type Static, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { type SignedTokens, signedTokens } from '../signed-tokens.js';

/**
 * The decision token: what `GET /_pam/decide` tells the site's script about the decision it made,
 * signed so that the script's reports (views, clicks, conversions) can name the experiences and
 * arms without a visitor being able to forge or change them (src/signed-tokens.ts).
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
const checkClaims = TypeCompiler.Compile(DecisionClaims);
const isDecisionClaims = (value: unknown): value is DecisionClaims => checkClaims.Check(value);

export type DecisionTokens = Pick<SignedTokens<DecisionClaims>, 'sign' | 'verify'>;

export const DECISION_TOKEN_MAX_AGE_MS = 24 * 60 * 60 * 1000;
export const DECISION_TOKEN_PURPOSE = 'pam onsite decision token v1';
/** The collector's reports are at most 2 KB: a token must leave room for the rest. */
export const MAX_DECISION_TOKEN_LENGTH = 1600;

export function decisionTokens(serviceSecret: string, maxAgeMs = DECISION_TOKEN_MAX_AGE_MS): DecisionTokens {
  return signedTokens(serviceSecret, DECISION_TOKEN_PURPOSE, isDecisionClaims, { maxAgeMs, maxLength: MAX_DECISION_TOKEN_LENGTH });
}
