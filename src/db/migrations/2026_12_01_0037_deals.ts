import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * Deals (issue 40): the CRM's opportunities, upserted by `(source, external_id)` from the API or a
 * CRM sync. The amount is kept in hundredths (`amount_cents`, an integer), so sums per currency are
 * exact on both databases. `account_id` is the tenant's account the deal was matched to at its last
 * upsert (given, or by `account_domain`, case-insensitively); null when none matched. No foreign key:
 * a deleted account leaves its deals, and the pipeline report joins the accounts that still exist.
 * `created_at` is the CRM's creation instant (what the report's range and window use); `updated_at`
 * is the service's own.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts, id } = columnTypes(db);
  await db.schema
    .createTable('deals')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('external_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('amount_cents', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('stage', 'text', (c) => c.notNull())
    .addColumn('account_id', id)
    .addColumn('account_domain', 'text')
    .addColumn('created_at', ts, (c) => c.notNull())
    .addColumn('closed_at', ts)
    .addColumn('recorded_at', ts, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .addUniqueConstraint('deals_external_uq', ['tenant_id', 'source', 'external_id'])
    .execute();
  await db.schema.createIndex('deals_list_idx').on('deals').columns(['tenant_id', 'created_at', 'id']).execute();
  // The list's account filter, and the pipeline report's deals of matched accounts by creation.
  await db.schema.createIndex('deals_account_idx').on('deals').columns(['tenant_id', 'account_id', 'created_at', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('deals').execute();
}
