import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../adapter.js';
import { columnTypes } from './dialect.js';

/**
 * The customer's own site (issue 48): `sites` (its origins and the public key its snippet names)
 * and `experiences` (changes by selector, for the visitors whose URL and rules match).
 * JSON documents (origins, rules, changes) are text, parsed by the row mappers (src/onsite/).
 * `last_seen_at` is stamped by the script's requests at most once a minute (touchSiteSeen).
 *
 * Both tables move the tenant's change sequence (migration 0024) as the tables a visitor sees do,
 * so a cache of the script or of a site's live experiences keyed by it is never stale; a site's
 * `last_seen_at` is not an edit and does not move it. On PostgreSQL the triggers are deferred to
 * commit, as 0044 made every other one.
 */
const TRIGGERS: { table: string; event: string; name: string }[] = [
  { table: 'sites', event: 'insert', name: 'sites_site_change_insert' },
  { table: 'sites', event: 'update of name, origins, site_key', name: 'sites_site_change_update' },
  { table: 'sites', event: 'delete', name: 'sites_site_change_delete' },
  { table: 'experiences', event: 'insert', name: 'experiences_site_change_insert' },
  { table: 'experiences', event: 'update', name: 'experiences_site_change_update' },
  { table: 'experiences', event: 'delete', name: 'experiences_site_change_delete' },
];

export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts, id } = columnTypes(db);
  await db.schema
    .createTable('sites')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('origins', 'text', (c) => c.notNull())
    .addColumn('site_key', 'text', (c) => c.notNull().unique())
    .addColumn('last_seen_at', ts)
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sites_list_idx').on('sites').columns(['tenant_id', 'created_at', 'id']).execute();
  await db.schema
    .createTable('experiences')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('site_id', id, (c) => c.notNull().references('sites.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('url_match_type', 'text', (c) => c.notNull())
    .addColumn('url_match_value', 'text', (c) => c.notNull())
    .addColumn('rules', 'text')
    .addColumn('priority', 'integer', (c) => c.notNull())
    .addColumn('holdout_percent', 'integer', (c) => c.notNull())
    .addColumn('conversion_url', 'text')
    .addColumn('changes', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('experiences_list_idx').on('experiences').columns(['tenant_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('experiences_site_idx').on('experiences').columns(['tenant_id', 'site_id', 'created_at', 'id']).execute();
  // The visitor plane's read: a site's live experiences.
  await db.schema.createIndex('experiences_live_idx').on('experiences').columns(['site_id', 'status']).execute();
  for (const t of TRIGGERS) await siteChange(db, t);
}

async function siteChange(db: Kysely<unknown>, { table, event, name }: (typeof TRIGGERS)[number]): Promise<void> {
  const on = sql.raw(`after ${event} on ${table}`);
  if (isPostgres(db)) {
    await sql`create constraint trigger ${sql.id(name)} ${on} deferrable initially deferred for each row execute function site_change()`.execute(
      db,
    );
    return;
  }
  const row = sql.raw(event === 'delete' ? 'old' : 'new');
  await sql`
    create trigger ${sql.id(name)} ${on} for each row begin
      insert into change_counters (scope, value) values ('site:' || ${row}.tenant_id, 1)
      on conflict (scope) do update set value = value + 1;
    end`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of TRIGGERS) {
    await sql`drop trigger if exists ${sql.id(t.name)}${sql.raw(isPostgres(db) ? ` on ${t.table}` : '')}`.execute(db);
  }
  await db.schema.dropTable('experiences').execute();
  await db.schema.dropTable('sites').execute();
}
