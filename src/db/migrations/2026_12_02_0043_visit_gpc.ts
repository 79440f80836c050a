import type { Kysely } from 'kysely';

/**
 * `audience_sessions.gpc`: 1 when the visit was reported, or its form posted, with `Sec-GPC: 1`
 * (issue 40): its `visit.started` then wakes no alert, as a lead's `leads.gpc` (migration 0038)
 * keeps it from a CRM. Only the flag, nothing about the visitor. Nullable, null read as 0:
 * `pam_collect` (migration 0028) inserts whole rows of the table's type, in which a column it does
 * not know is null; a report with the header takes the collector's transaction instead.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('audience_sessions')
    .addColumn('gpc', 'integer', (c) => c.defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('audience_sessions').dropColumn('gpc').execute();
}
