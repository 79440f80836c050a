import type { Kysely } from 'kysely';
import type { Database } from '../../db/types.js';
import { findExperience } from '../experiences-repository.js';
import { findSite, originsOf } from '../sites-repository.js';
import type { MeasuredExperience } from './analytics.js';

/** What measuring reads of sites and experiences, through their own repository. */

/** The origins of a tenant's site; undefined when the site is gone. */
export async function siteOriginsOf(db: Kysely<Database>, tenantId: string, siteId: string): Promise<readonly string[] | undefined> {
  const row = await findSite(db, tenantId, siteId);
  return row ? originsOf(row) : undefined;
}

/** A tenant's experience, for its analytics; undefined when it is not the tenant's. */
export async function measuredExperience(
  db: Kysely<Database>,
  tenantId: string,
  experienceId: string,
): Promise<MeasuredExperience | undefined> {
  const row = await findExperience(db, tenantId, experienceId);
  return row ? { experienceId: row.id, tenantId: row.tenant_id, holdoutPercent: Number(row.holdout_percent) } : undefined;
}

/** The names of some of a tenant's experiences, by id (the pipeline's labels). */
export async function experienceNames(db: Kysely<Database>, tenantId: string, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('experiences').select(['id', 'name']).where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}
