import { sql, type Kysely } from 'kysely';
import { columnTypes, createSubstringIndex } from './dialect.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts, id } = columnTypes(db);

  await db.schema
    .createTable('pages')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('page_context', 'text', (c) => c.notNull())
    .addColumn('page_type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('flags', 'text', (c) => c.notNull())
    .addColumn('brand_id', 'text', (c) => c.notNull())
    .addColumn('header_action_id', 'text')
    .addColumn('actions', 'text', (c) => c.notNull())
    .addColumn('action_card_widgets', 'text', (c) => c.notNull())
    .addColumn('footer_links', 'text', (c) => c.notNull())
    .addColumn('scripts', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text')
    .addColumn('audience_seq', 'integer', (c) => c.notNull())
    .addColumn('archived_at', ts)
    .addColumn('deleted_at', ts)
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('pages_list_idx')
    .on('pages')
    .columns(['tenant_id', 'created_at', 'id'])
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();

  await db.schema
    .createTable('audiences')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('page_id', id, (c) => c.notNull().references('pages.id'))
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('custom_name', 'text')
    .addColumn('computed_name', 'text', (c) => c.notNull())
    .addColumn('effective_name', 'text', (c) => c.notNull())
    .addColumn('effective_name_lc', 'text', (c) => c.notNull())
    .addColumn('page_name', 'text', (c) => c.notNull())
    .addColumn('page_name_lc', 'text', (c) => c.notNull())
    .addColumn('page_deleted', 'integer', (c) => c.notNull())
    .addColumn('person_id', id, (c) => c.references('persons.id'))
    .addColumn('person_route_key', 'text')
    .addColumn('flags', 'text', (c) => c.notNull())
    .addColumn('action_form_id_override', 'text')
    .addColumn('action_form_instructions_override', 'text')
    .addColumn('action_url_override', 'text')
    .addColumn('metadata_override', 'text')
    .addColumn('version_seq', 'integer', (c) => c.notNull())
    .addColumn('latest_version_id', id, (c) => c.notNull())
    .addColumn('published_version_id', id, (c) => c.notNull())
    .addColumn('archived_at', ts)
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audiences_page_idx').on('audiences').columns(['page_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('audiences_live_idx').on('audiences').columns(['page_id', 'archived_at']).execute();
  // Search sees only live audiences of live pages: a partial index holds exactly those.
  await db.schema
    .createIndex('audiences_search_idx')
    .on('audiences')
    .columns(['tenant_id', 'created_at', 'id'])
    .where(sql<boolean>`archived_at is null and page_deleted = 0`)
    .execute();
  await db.schema.createIndex('audiences_person_idx').on('audiences').column('person_id').execute();
  await createSubstringIndex(db, 'audiences', ['effective_name_lc', 'page_name_lc']);

  await db.schema
    .createTable('audience_versions')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('audience_id', id, (c) => c.notNull().references('audiences.id'))
    .addColumn('version_number', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('is_new_page_agent', 'integer', (c) => c.notNull())
    .addColumn('supplementary_context', 'text')
    .addColumn('queue_duration_ms', 'bigint')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('became_draft_at', ts)
    .addColumn('queued_at', ts)
    .addColumn('published_at', ts)
    .addColumn('cancelled_at', ts)
    .addColumn('obsolete_at', ts)
    .addColumn('archived_at', ts)
    .addUniqueConstraint('audience_versions_number_uq', ['audience_id', 'version_number'])
    .execute();

  await db.schema
    .createTable('audience_sessions')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('page_id', id, (c) => c.notNull().references('pages.id'))
    .addColumn('audience_id', id, (c) => c.notNull().references('audiences.id'))
    .addColumn('analytics_session_id', 'text', (c) => c.notNull())
    .addColumn('page_title', 'text', (c) => c.notNull())
    .addColumn('page_url', 'text', (c) => c.notNull())
    .addColumn('session_started_at', ts, (c) => c.notNull())
    .addColumn('session_ended_at', ts, (c) => c.notNull())
    .addColumn('time_spent_seconds', 'double precision', (c) => c.notNull())
    .addColumn('max_scroll_depth_percentage', 'double precision', (c) => c.notNull())
    .addColumn('total_clicks_count', 'bigint', (c) => c.notNull())
    .addColumn('questions_asked_count', 'bigint', (c) => c.notNull())
    .addColumn('is_bounce', 'integer', (c) => c.notNull())
    .addColumn('has_form_submit', 'integer', (c) => c.notNull())
    .addColumn('has_conversion', 'integer', (c) => c.notNull())
    .addColumn('form_submission_id', 'text', (c) => c.notNull())
    .addColumn('form_submission_identifier', 'text', (c) => c.notNull())
    .addColumn('form_submission_email', 'text', (c) => c.notNull())
    .addColumn('form_submission_phone', 'text', (c) => c.notNull())
    .addColumn('utm_campaign', 'text', (c) => c.notNull())
    .addColumn('utm_content', 'text', (c) => c.notNull())
    .addColumn('utm_medium', 'text', (c) => c.notNull())
    .addColumn('utm_source', 'text', (c) => c.notNull())
    .addColumn('utm_term', 'text', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('audience_sessions_page_idx')
    .on('audience_sessions')
    .columns(['page_id', 'session_started_at', 'id'])
    .execute();
  await db.schema
    .createIndex('audience_sessions_audience_idx')
    .on('audience_sessions')
    .columns(['audience_id', 'session_started_at', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists audiences_fts`.execute(db);
  for (const table of ['audience_sessions', 'audience_versions', 'audiences', 'pages']) {
    await db.schema.dropTable(table).execute();
  }
}
