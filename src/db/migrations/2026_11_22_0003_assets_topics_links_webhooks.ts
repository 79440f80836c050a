import { sql, type Kysely } from 'kysely';
import { columnTypes, createSubstringIndex } from './dialect.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts, id, bytes } = columnTypes(db);

  // Generated secrets that every instance must share (e.g. the key of signed download links).
  await db.schema
    .createTable('service_secrets')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('files')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size_bytes', 'bigint', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('width', 'integer', (c) => c.notNull())
    .addColumn('height', 'integer', (c) => c.notNull())
    .addColumn('preview_content_type', 'text')
    .addColumn('store', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('deleted_at', ts)
    .execute();

  // The bytes of the database file store, by key (`<fileId>` and `<fileId>.preview`).
  await db.schema
    .createTable('file_blobs')
    .addColumn('key', id, (c) => c.primaryKey())
    .addColumn('data', bytes, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('assets')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('tags', 'text', (c) => c.notNull())
    .addColumn('ai_description', 'text')
    .addColumn('parent_asset_id', id, (c) => c.references('assets.id'))
    .addColumn('hidden', 'integer', (c) => c.notNull())
    .addColumn('file_id', id, (c) => c.notNull().references('files.id'))
    .addColumn('lifecycle_state', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addColumn('trashed_at', ts)
    .addColumn('deleted_at', ts)
    .execute();
  await db.schema.createIndex('assets_file_idx').on('assets').columns(['file_id', 'lifecycle_state']).execute();

  await db.schema
    .createTable('topics')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('purpose', 'text')
    .addColumn('sort_order', 'bigint', (c) => c.notNull())
    .addColumn('is_default', 'integer', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('topics_list_idx').on('topics').columns(['tenant_id', 'sort_order', 'id']).execute();
  // Exactly one default topic per tenant, held by the database.
  await db.schema.createIndex('topics_default_uq').on('topics').column('tenant_id').unique().where(sql<boolean>`is_default = 1`).execute();

  await db.schema
    .createTable('topic_entries')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('topic_id', id, (c) => c.notNull().references('topics.id'))
    .addColumn('sort_order', 'bigint', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('topic_entries_list_idx').on('topic_entries').columns(['topic_id', 'sort_order', 'id']).execute();

  await db.schema
    .createTable('tenant_domains')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('hostname', 'text', (c) => c.notNull().unique())
    .addColumn('is_fallback', 'integer', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('tenant_domains_list_idx').on('tenant_domains').columns(['tenant_id', 'created_at', 'id']).execute();
  await db.schema
    .createIndex('tenant_domains_fallback_uq')
    .on('tenant_domains')
    .column('tenant_id')
    .unique()
    .where(sql<boolean>`is_fallback = 1`)
    .execute();

  await db.schema
    .createTable('page_links')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('tenant_domain_id', id, (c) => c.notNull().references('tenant_domains.id'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('path_lc', 'text', (c) => c.notNull())
    .addColumn('target_type', 'text', (c) => c.notNull())
    .addColumn('target_audience_id', id, (c) => c.references('audiences.id'))
    .addColumn('target_page_id', id, (c) => c.references('pages.id'))
    // The page the link leads to, directly or through its audience: what `pageId` filters on.
    .addColumn('page_id', id, (c) => c.notNull().references('pages.id'))
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addColumn('deleted_at', ts)
    .execute();
  await db.schema
    .createIndex('page_links_path_uq')
    .on('page_links')
    .columns(['tenant_domain_id', 'path'])
    .unique()
    .where(sql<boolean>`deleted_at is null`)
    .execute();
  await db.schema
    .createIndex('page_links_search_idx')
    .on('page_links')
    .columns(['tenant_domain_id', 'created_at', 'id'])
    .where(sql<boolean>`deleted_at is null`)
    .execute();
  await db.schema.createIndex('page_links_page_idx').on('page_links').columns(['page_id', 'created_at', 'id']).execute();
  await createSubstringIndex(db, 'page_links', ['path_lc']);

  await db.schema
    .createTable('webhook_subscriptions')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_expires_at', ts)
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_subscriptions_list_idx')
    .on('webhook_subscriptions')
    .columns(['tenant_id', 'created_at', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists page_links_fts`.execute(db);
  for (const table of [
    'webhook_subscriptions',
    'page_links',
    'tenant_domains',
    'topic_entries',
    'topics',
    'assets',
    'file_blobs',
    'files',
    'service_secrets',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
