import { sql, type Kysely, type RawBuilder } from 'kysely';
import { isPostgres } from '../adapter.js';
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

  await fillFromSessions(db);
}

/**
 * The rollups as the sessions stored before this migration add up to, in the SQL of its day
 * (a frozen copy of `rebuildRollups` in src/analytics/rollups.ts): a later change to the live
 * code must not change what this step did to a database migrated before it.
 */
async function fillFromSessions(db: Kysely<unknown>): Promise<void> {
  const truncate = (unit: 'hour' | 'day'): RawBuilder<string> =>
    isPostgres(db)
      ? sql`date_trunc(${sql.lit(unit)}, session_started_at at time zone 'UTC') at time zone 'UTC'`
      : unit === 'hour'
        ? sql`substr(session_started_at, 1, 13) || ':00:00.000Z'`
        : sql`substr(session_started_at, 1, 10) || 'T00:00:00.000Z'`;
  const sums = sql.raw(`count(*), sum(is_bounce), sum(time_spent_seconds), sum(max_scroll_depth_percentage),
    sum(total_clicks_count), sum(questions_asked_count), sum(has_form_submit), sum(has_conversion)`);
  const columns = sql.raw('visits, bounces, time_spent_seconds, scroll_sum, clicks, questions, form_submits, conversions');
  await sql`insert into analytics_hours_utm (tenant_id, page_id, audience_id, hour, utm_source, utm_medium, utm_campaign, ${columns})
    select tenant_id, page_id, audience_id, ${truncate('hour')}, utm_source, utm_medium, utm_campaign, ${sums}
    from audience_sessions group by tenant_id, page_id, audience_id, ${truncate('hour')}, utm_source, utm_medium, utm_campaign`.execute(db);
  await sql`insert into analytics_days (tenant_id, page_id, day, ${columns})
    select tenant_id, page_id, ${truncate('day')}, ${sums}
    from audience_sessions group by tenant_id, page_id, ${truncate('day')}`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index audience_sessions_tenant_started_idx`.execute(db);
  for (const table of ['analytics_days', 'analytics_hours_utm']) {
    await db.schema.dropTable(table).execute();
  }
}
