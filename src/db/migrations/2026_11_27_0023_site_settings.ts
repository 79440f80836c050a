import { sql, type Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * Issue 29, in one migration: the tenant's brand on served pages, and every lead as a person.
 *
 * - `site_settings`: one row per tenant, made by its first PATCH (a tenant without one is served
 *   the default style). Colours are `#rrggbb` lowercased, checked for contrast before they are
 *   written; asset ids name image assets of the tenant. `updated_at` is part of every served
 *   document's stamp, so a change shows on the next request on every instance.
 * - `leads`: one row per accepted lead form, with the person it made or found (the session's
 *   person) and the session it was recorded on. No foreign key to the session or page: a lead
 *   outlives neither's deletion in meaning, the list joins what is still there. Erasing the person
 *   deletes their leads.
 * - persons are found by email ignoring case: an index on the lowercased email within the tenant.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp, id } = columnTypes(db);
  await db.schema
    .createTable('site_settings')
    .addColumn('tenant_id', id, (c) => c.primaryKey().references('tenants.id'))
    .addColumn('logo_asset_id', id)
    .addColumn('favicon_asset_id', id)
    .addColumn('brand_color', 'text', (c) => c.notNull())
    .addColumn('text_color', 'text', (c) => c.notNull())
    .addColumn('background_color', 'text', (c) => c.notNull())
    .addColumn('font', 'text', (c) => c.notNull())
    .addColumn('footer_text', 'text')
    .addColumn('privacy_url', 'text')
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('updated_at', timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('leads')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('page_id', id, (c) => c.notNull())
    .addColumn('audience_id', id, (c) => c.notNull())
    .addColumn('session_id', id, (c) => c.notNull())
    .addColumn('person_id', id, (c) => c.notNull())
    .addColumn('action_id', 'text', (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('leads_tenant_created_idx').on('leads').columns(['tenant_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('leads_page_created_idx').on('leads').columns(['tenant_id', 'page_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('leads_person_idx').on('leads').columns(['tenant_id', 'person_id']).execute();

  await sql`create index persons_email_lc_idx on persons (tenant_id, lower(email))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index persons_email_lc_idx`.execute(db);
  await db.schema.dropTable('leads').execute();
  await db.schema.dropTable('site_settings').execute();
}
