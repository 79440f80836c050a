import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * Goals and funnels (issue 28), and what they count: `visit_events`, the moments of a visit a goal
 * or a funnel step can name, one row per visit, kind and name (the link path it was served at, a
 * lead form sent, a click on a page action of a purpose, a `pam.track(name)` call), with how many
 * times and the sum of the tracked values. Keyed by the visit's session: nothing about the visitor
 * (no address, user agent or cookie) is stored; who the visitor is comes from the session at read
 * time. The collector bounds the rows of one visit.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts, id } = columnTypes(db);
  await db.schema
    .createTable('goals')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    // The kind's field: the action purpose, the link path or the event name ('' for a form).
    .addColumn('target', 'text', (c) => c.notNull())
    // A form goal's page; null: any page.
    .addColumn('page_id', id)
    .addColumn('currency', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('goals_list_idx').on('goals').columns(['tenant_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('funnels')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    // [{ kind, name, target, pageId }] in order, 2 to 8.
    .addColumn('steps', 'text', (c) => c.notNull())
    .addColumn('window_hours', 'integer', (c) => c.notNull())
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('funnels_list_idx').on('funnels').columns(['tenant_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('visit_events')
    .addColumn('session_id', id, (c) => c.notNull().references('audience_sessions.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('tenant_id', id, (c) => c.notNull())
    .addColumn('page_id', id, (c) => c.notNull())
    .addColumn('audience_id', id, (c) => c.notNull())
    // The session's start, copied: goals count the visits that started in a range, as every metric does.
    .addColumn('session_started_at', ts, (c) => c.notNull())
    // When it first happened in the visit: funnels order the steps by it.
    .addColumn('first_at', ts, (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addColumn('value', 'double precision', (c) => c.notNull())
    .addPrimaryKeyConstraint('visit_events_pk', ['session_id', 'kind', 'name'])
    .execute();
  // A page's goals over a range; a tenant's (the site) by goal; a funnel's steps by time.
  await db.schema.createIndex('visit_events_page_idx').on('visit_events').columns(['page_id', 'session_started_at']).execute();
  await db.schema
    .createIndex('visit_events_site_idx')
    .on('visit_events')
    .columns(['tenant_id', 'kind', 'name', 'session_started_at'])
    .execute();
  await db.schema.createIndex('visit_events_steps_idx').on('visit_events').columns(['tenant_id', 'kind', 'name', 'first_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('visit_events').execute();
  await db.schema.dropTable('funnels').execute();
  await db.schema.dropTable('goals').execute();
}
