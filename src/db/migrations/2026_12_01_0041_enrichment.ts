import type { Kysely } from 'kysely';

/**
 * Issue 39: the tenant's `enrichment` site setting. 1 (the default): leads' email domains name an
 * account, and the enrichment provider, when one is configured, is asked about companies; 0: off.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('site_settings')
    .addColumn('enrichment', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('site_settings').dropColumn('enrichment').execute();
}
