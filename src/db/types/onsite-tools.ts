import type { OneOf } from './one-of.js';

export const TOOL_TOKEN_KINDS = ['pick', 'preview'] as const;

/**
 * The console's one-time tokens for the site script (migration 0065, issue 48 §5): `pick` shows
 * the element picker on a site's page, `preview` forces an experience with a described visit.
 * Only the token's hash is kept; the first browser that uses one holds it until it expires.
 */
export interface OnsiteToolTokensTable {
  /** SHA-256 of the token, base64url. */
  token_hash: string;
  tenant_id: string;
  site_id: string;
  kind: OneOf<typeof TOOL_TOKEN_KINDS>;
  /** The experience a preview forces; null for a pick. */
  experience_id: string | null;
  /** JSON: the described visit of a preview (`{utm?, company?}`); null for a pick. */
  visit: string | null;
  /** A hash of the daily visitor key of the browser that used it first; null: not used yet. */
  used_by: string | null;
  expires_at: string;
  created_at: string;
}
