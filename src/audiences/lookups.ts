import type { Kysely } from 'kysely';
import type { AudiencesTable, Database, PagesTable } from '../db/types.js';

/** The audiences of these ids, any tenant (the agent's batch spans tenants). */
export async function audienceRowsByIds(db: Kysely<Database>, ids: readonly string[]): Promise<AudiencesTable[]> {
  return ids.length === 0 ? [] : db.selectFrom('audiences').selectAll().where('id', 'in', ids).execute();
}

/** Which of `ids` are audiences of the tenant, archived ones included. */
export async function audienceIdsAmong(db: Kysely<Database>, tenantId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('audiences').select('id').where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}

/** Whether the audience is one of this page's (archived or not). */
export async function isAudienceOfPage(db: Kysely<Database>, page: PagesTable, audienceId: string): Promise<boolean> {
  const row = await db
    .selectFrom('audiences')
    .select('id')
    .where('id', '=', audienceId)
    .where('page_id', '=', page.id)
    .where('tenant_id', '=', page.tenant_id)
    .executeTakeFirst();
  return row !== undefined;
}

/** The rules of the tenant's audiences among `ids`, each with the time it last changed (archived ones too). */
export function audienceRulesOf(db: Kysely<Database>, tenantId: string, ids: readonly string[]) {
  return db
    .selectFrom('audiences')
    .select(['id', 'updated_at', 'rules'])
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', ids)
    .execute();
}

/** The rules of the tenant's audience while it is not archived (null: not a segment). */
export async function liveAudienceRules(db: Kysely<Database>, tenantId: string, id: string): Promise<string | null | undefined> {
  const row = await db
    .selectFrom('audiences')
    .select('rules')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('archived_at', 'is', null)
    .executeTakeFirst();
  return row?.rules;
}
