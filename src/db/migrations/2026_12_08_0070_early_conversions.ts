import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * `experience_early_conversions` (issue 48 §4): a conversion the site script reported for a unit
 * before the view it converts was kept (the view's report still in flight, or arriving after the
 * conversion page's). Kept for the unit's day with the conversion's decision time, so that a view
 * decided no later than it still counts it when its report comes. `experience_id` is '' for
 * `pam.conversion()`, which converts every experience the unit viewed that day.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { id } = columnTypes(db);
  await db.schema
    .createTable('experience_early_conversions')
    .addColumn('tenant_id', id, (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('unit', 'text', (c) => c.notNull())
    .addColumn('experience_id', 'text', (c) => c.notNull())
    // The conversion page's decision time (ms since the epoch): the latest, if reported again.
    .addColumn('issued_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('experience_early_conversions_pk', ['tenant_id', 'day', 'unit', 'experience_id'])
    .execute();
  await db.schema.createIndex('experience_early_conversions_day').on('experience_early_conversions').column('day').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('experience_early_conversions').execute();
}
