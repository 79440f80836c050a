import type { Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * What the customer's site reports about its experiences (issue 48 §4), in three tables, each kept
 * by day (`day`: the decision's UTC day, `YYYY-MM-DD`):
 * - `experience_days`: the rollup the analytics read, per experience, arm and day;
 * - `experience_units`: one row per experience, day and daily visitor key (the same key served
 *   pages store; never an address): its arm, when it first viewed, whether it converted, and the
 *   domain of the known person the site identified it as (`pam.identify`), for pipeline touches.
 *   It makes visitors distinct and a conversion count once per unit and day;
 * - `experience_views`: each page view's clicks so far, per experience, so that a report's totals
 *   so far add only what the last one did not (`view_key`: a hash of the decision token).
 * The experiences are the onsite area's own (migration 0064); no foreign key, so that a deleted
 * experience's history goes with the experience's owner's own rule.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts, id } = columnTypes(db);
  await db.schema
    .createTable('experience_days')
    .addColumn('tenant_id', id, (c) => c.notNull())
    .addColumn('experience_id', id, (c) => c.notNull())
    .addColumn('arm', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('views', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('visitors', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('clicks', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('conversions', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('experience_days_pk', ['experience_id', 'day', 'arm'])
    .execute();
  await db.schema
    .createTable('experience_units')
    .addColumn('tenant_id', id, (c) => c.notNull())
    .addColumn('experience_id', id, (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('unit', 'text', (c) => c.notNull())
    .addColumn('arm', 'text', (c) => c.notNull())
    .addColumn('viewed_at', ts, (c) => c.notNull())
    .addColumn('converted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('account_domain', 'text')
    .addPrimaryKeyConstraint('experience_units_pk', ['experience_id', 'day', 'unit'])
    .execute();
  // A unit's rows of a day, for `pam.conversion()` and `pam.identify()`, which name no experience.
  await db.schema.createIndex('experience_units_unit').on('experience_units').columns(['tenant_id', 'day', 'unit']).execute();
  // Pipeline touches: the identified units of some accounts' domains.
  await db.schema
    .createIndex('experience_units_account')
    .on('experience_units')
    .columns(['tenant_id', 'account_domain', 'viewed_at'])
    .execute();
  await db.schema
    .createTable('experience_views')
    .addColumn('view_key', 'text', (c) => c.notNull())
    .addColumn('experience_id', id, (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('clicks', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('experience_views_pk', ['view_key', 'experience_id'])
    .execute();
  await db.schema.createIndex('experience_views_day').on('experience_views').column('day').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('experience_views').execute();
  await db.schema.dropTable('experience_units').execute();
  await db.schema.dropTable('experience_days').execute();
}
