import { sql, type Kysely } from 'kysely';

/**
 * A visit measured on a tenant domain is one audience session, created at its first report and
 * updated by the later ones: `visit_id` (the view token's random id) finds it again, unique where
 * set. Sessions posted through the API have none.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('audience_sessions').addColumn('visit_id', 'text').execute();
  await sql`create unique index audience_sessions_visit_uq on audience_sessions (visit_id) where visit_id is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index audience_sessions_visit_uq`.execute(db);
  await db.schema.alterTable('audience_sessions').dropColumn('visit_id').execute();
}
