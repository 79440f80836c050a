import { sql, type Kysely } from 'kysely';

/**
 * Audiences get rules the reference left open: a `personRouteKey` is unique among the live
 * (not archived) audiences of its page, and at most one live audience of a page carries the
 * `home_page` flag (mirrored from `flags` into its own column, so an index can hold it).
 * Partial unique indexes enforce both on SQLite and PostgreSQL alike, also across instances.
 *
 * Data written before these rules may break them: the newest audience keeps its key or flag, the
 * older ones lose it (docs/decisions.md).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('audiences')
    .addColumn('home_page', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update audiences set home_page = 1 where flags like '%"home_page"%'`.execute(db);
  const newerLive = (column: 'home_page' | 'person_route_key') =>
    sql`exists (select 1 from audiences b where b.page_id = audiences.page_id and b.archived_at is null
      and b.${sql.ref(column)} = audiences.${sql.ref(column)}
      and (b.created_at > audiences.created_at or (b.created_at = audiences.created_at and b.id > audiences.id)))`;
  await sql`update audiences set home_page = 0, flags = '[]'
    where home_page = 1 and archived_at is null and ${newerLive('home_page')}`.execute(db);
  await sql`update audiences set person_route_key = null
    where person_route_key is not null and archived_at is null and ${newerLive('person_route_key')}`.execute(db);
  await sql`create unique index audiences_route_key_uq on audiences (page_id, person_route_key)
    where archived_at is null and person_route_key is not null`.execute(db);
  await sql`create unique index audiences_home_page_uq on audiences (page_id)
    where archived_at is null and home_page = 1`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index audiences_home_page_uq`.execute(db);
  await sql`drop index audiences_route_key_uq`.execute(db);
  await db.schema.alterTable('audiences').dropColumn('home_page').execute();
}
