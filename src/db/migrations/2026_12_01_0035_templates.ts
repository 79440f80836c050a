import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * Page templates a tenant saved from its pages (issue 38). The built-in templates are the
 * service's own, in code (src/templates/built-ins/): they change with releases and belong to no
 * tenant, so no row holds them. A template is a copy of a page's content and actions (JSON text)
 * at the time it was saved; it keeps no reference to the page, which may change or go.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp, id } = columnTypes(db);
  await db.schema
    .createTable('templates')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('actions', 'text', (c) => c.notNull())
    .addColumn('header_action_id', 'text')
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('updated_at', timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('templates_list_idx').on('templates').columns(['tenant_id', 'created_at', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('templates').execute();
}
