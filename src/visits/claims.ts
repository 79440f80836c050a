import { type Static, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';

/**
 * Who a visit is, as the view token names it (site/token.ts signs and verifies it) and as a store
 * keeps it. Written once here: the token's check and the stores' type come from this schema.
 * Optional fields were added after the first tokens were signed, so a token without them stays valid.
 */
export const VisitClaims = Type.Object({
  tenantId: Type.String(),
  pageId: Type.String(),
  audienceId: Type.String(),
  /** The page link the visitor came through. */
  linkId: Type.String(),
  /** The path the document was served at, when it is not the link's own (`P/<key>` of a `page_routing` link): the session's `pageUrl`. */
  path: Type.Optional(Type.String()),
  /**
   * The experiment the document was served in, its arm, and the unit the arm was assigned to
   * (`person:<id>`, or a daily visitor key): the session's experiment fields.
   */
  experimentId: Type.Optional(Type.String()),
  arm: Type.Optional(Type.String()),
  unit: Type.Optional(Type.String()),
  /** The audience version the document showed (issue 49: maps per version); absent: the page's own content. */
  versionId: Type.Optional(Type.String()),
  /** A random id of this visit: the session's `analyticsSessionId`. */
  visitId: Type.String(),
  /** When the document was served, in milliseconds since the epoch. */
  issuedAt: Type.Integer({ minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }),
});
export type VisitClaims = Static<typeof VisitClaims>;

const checkClaims = TypeCompiler.Compile(VisitClaims);

/** Whether a token's decoded JSON holds a visit's claims (other fields may sit beside them). */
export const isVisitClaims = (value: unknown): value is VisitClaims => checkClaims.Check(value);
