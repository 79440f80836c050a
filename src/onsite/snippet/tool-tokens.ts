import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/types.js';
import type { PreviewVisit } from '../../pages/index.js';

/** How long the console's tokens live: a pick is made at once, a preview is looked at for a while. */
export const PICK_TOKEN_MS = 10 * 60_000;
export const PREVIEW_TOKEN_MS = 60 * 60_000;

const hashOf = (value: string) => createHash('sha256').update(value).digest('base64url');

export interface ToolToken {
  token: string;
  expiresAt: string;
}

export interface NewToolToken {
  tenantId: string;
  siteId: string;
  kind: 'pick' | 'preview';
  experienceId?: string;
  visit?: PreviewVisit;
}

/** A new one-time token (only its hash is stored); expired tokens of every site go as it is made. */
export async function createToolToken(db: Kysely<Database>, made: NewToolToken, at = Date.now()): Promise<ToolToken> {
  const token = `${made.kind === 'pick' ? 'pick' : 'prev'}_${randomBytes(24).toString('base64url')}`;
  const expiresAt = new Date(at + (made.kind === 'pick' ? PICK_TOKEN_MS : PREVIEW_TOKEN_MS)).toISOString();
  await db.deleteFrom('onsite_tool_tokens').where('expires_at', '<', new Date(at).toISOString()).execute();
  await db
    .insertInto('onsite_tool_tokens')
    .values({
      token_hash: hashOf(token),
      tenant_id: made.tenantId,
      site_id: made.siteId,
      kind: made.kind,
      experience_id: made.experienceId ?? null,
      visit: made.visit ? JSON.stringify(made.visit) : null,
      used_by: null,
      expires_at: expiresAt,
      created_at: new Date(at).toISOString(),
    })
    .execute();
  return { token, expiresAt };
}

export interface RedeemedToken {
  experienceId: string | null;
  visit: PreviewVisit;
}

/**
 * A token of `kind` for `siteId`, unexpired, used by no browser but `unit`'s: the first use takes
 * it (one write that only an unused token or the same browser passes), so a token that leaks
 * (a shared link, a screenshot of the address bar) is of no use to anyone else. Undefined otherwise.
 */
export async function redeemToolToken(
  db: Kysely<Database>,
  kind: 'pick' | 'preview',
  siteId: string,
  token: string,
  unit: string,
  at = Date.now(),
): Promise<RedeemedToken | undefined> {
  if (token.length > 200) return undefined;
  const user = hashOf(unit);
  const row = await db
    .updateTable('onsite_tool_tokens')
    .set({ used_by: user })
    .where('token_hash', '=', hashOf(token))
    .where('kind', '=', kind)
    .where('site_id', '=', siteId)
    .where('expires_at', '>', new Date(at).toISOString())
    .where((eb) => eb.or([eb('used_by', 'is', null), eb('used_by', '=', user)]))
    .returning(['experience_id', 'visit'])
    .executeTakeFirst();
  if (!row) return undefined;
  return { experienceId: row.experience_id, visit: row.visit ? (JSON.parse(row.visit) as PreviewVisit) : {} };
}
