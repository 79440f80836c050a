import { sql, type Kysely } from 'kysely';
import { rebuildRollups } from '../../analytics/rollups.js';
import { columnTypes } from './dialect.js';

/**
 * Rollups of audience sessions for analytics (docs/analytics.md): per page, audience, UTC hour and
 * UTM source, medium and campaign (summed over the UTM values when a query does not group by
 * them: one row fewer to write for every report the collector takes); and per page and UTC day
 * for the pages overview. Kept in step by the transactions that write sessions; filled here from the sessions
 * already stored. Sessions get an index by tenant and start, for the overview's partial hours.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts, id } = columnTypes(db);
  const withSums = (name: 'analytics_hours_utm' | 'analytics_days') =>
    db.schema
      .createTable(name)
      .addColumn('tenant_id', id, (c) => c.notNull())
      .addColumn('page_id', id, (c) => c.notNull())
      .addColumn('visits', 'bigint', (c) => c.notNull())
      .addColumn('bounces', 'bigint', (c) => c.notNull())
      .addColumn('time_spent_seconds', 'double precision', (c) => c.notNull())
      .addColumn('scroll_sum', 'double precision', (c) => c.notNull())
      .addColumn('clicks', 'bigint', (c) => c.notNull())
      .addColumn('questions', 'bigint', (c) => c.notNull())
      .addColumn('form_submits', 'bigint', (c) => c.notNull())
      .addColumn('conversions', 'bigint', (c) => c.notNull());

  await withSums('analytics_hours_utm')
    .addColumn('audience_id', id, (c) => c.notNull())
    .addColumn('hour', ts, (c) => c.notNull())
    .addColumn('utm_source', 'text', (c) => c.notNull())
    .addColumn('utm_medium', 'text', (c) => c.notNull())
    .addColumn('utm_campaign', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_hours_utm_pk', ['page_id', 'hour', 'audience_id', 'utm_source', 'utm_medium', 'utm_campaign'])
    .execute();
  await db.schema.createIndex('analytics_hours_utm_tenant_idx').on('analytics_hours_utm').columns(['tenant_id', 'hour']).execute();

  await withSums('analytics_days')
    .addColumn('day', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_days_pk', ['tenant_id', 'day', 'page_id'])
    .execute();

  await db.schema
    .createIndex('audience_sessions_tenant_started_idx')
    .on('audience_sessions')
    .columns(['tenant_id', 'session_started_at'])
    .execute();

  await rebuildRollups(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index audience_sessions_tenant_started_idx`.execute(db);
  for (const table of ['analytics_days', 'analytics_hours_utm']) {
    await db.schema.dropTable(table).execute();
  }
}
