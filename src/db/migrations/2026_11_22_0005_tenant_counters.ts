import { sql, type Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * Exact row counts of a tenant's large unfiltered lists, kept in the transaction of every insert,
 * so `totalCount` costs one read however many rows there are (the persons list counts up to
 * millions of rows, where COUNT(*) would cost tens of milliseconds).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { id } = columnTypes(db);
  await db.schema
    .createTable('tenant_counters')
    .addColumn('tenant_id', id, (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('value', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('tenant_counters_pk', ['tenant_id', 'name'])
    .execute();
  await sql`insert into tenant_counters (tenant_id, name, value) select tenant_id, 'persons', count(*) from persons group by tenant_id`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('tenant_counters').execute();
}
