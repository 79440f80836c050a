import type { Kysely } from 'kysely';

/**
 * A counter per kind of change, moved by the transaction that makes the change (src/db/changes.ts):
 * an in-process cache keeps an answer while its counter stands still, on every instance, and no
 * route has to remember to tell it. `scope` names what moved: `domains` (which hosts are tenant
 * domains), `sessions:<tenant_id>` (what a tenant's pages overview adds up). No foreign key: a
 * scope may belong to no tenant.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('change_counters')
    .addColumn('scope', 'text', (c) => c.primaryKey())
    .addColumn('value', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('change_counters').execute();
}
