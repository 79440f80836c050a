import { sql, type Kysely, type RawBuilder } from 'kysely';
import { isPostgres } from '../adapter.js';
import { columnTypes } from './dialect.js';

/**
 * Unique visitors and the visit classes in the rollups (issue 28, docs/analytics.md).
 *
 * `visitors` counts distinct visitors within each UTC day, summed over days. A distinct count does
 * not add up, so each session carries whether it was its visitor's first of the day on its page
 * (`first_of_day_page`) and on the tenant's site (`first_of_day_site`); the rollups sum those
 * flags like any other count. A session without a visitor key (posted through the API, or stored
 * before this migration) is a visitor of its own: both flags 1.
 *
 * The hourly rollup is keyed by the visit classes too (they are set at a visit's first report and
 * never change, so a later report still moves one row): it is rebuilt from the sessions.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts, id } = columnTypes(db);
  for (const column of ['first_of_day_page', 'first_of_day_site']) {
    await db.schema
      .alterTable('audience_sessions')
      .addColumn(column, 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  }
  await sql`update audience_sessions set first_of_day_page = 1, first_of_day_site = 1 where visitor_hash = ''`.execute(db);
  await sql`create index audience_sessions_visitor_idx on audience_sessions (tenant_id, visitor_hash, session_started_at)
    where visitor_hash <> ''`.execute(db);

  for (const table of ['analytics_days']) {
    for (const column of ['visitors', 'site_visitors']) {
      await db.schema
        .alterTable(table)
        .addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
    }
  }

  await db.schema.dropTable('analytics_hours_utm').execute();
  await db.schema
    .createTable('analytics_hours_utm')
    .addColumn('tenant_id', id, (c) => c.notNull())
    .addColumn('page_id', id, (c) => c.notNull())
    .addColumn('visits', 'bigint', (c) => c.notNull())
    .addColumn('bounces', 'bigint', (c) => c.notNull())
    .addColumn('time_spent_seconds', 'double precision', (c) => c.notNull())
    .addColumn('scroll_sum', 'double precision', (c) => c.notNull())
    .addColumn('clicks', 'bigint', (c) => c.notNull())
    .addColumn('questions', 'bigint', (c) => c.notNull())
    .addColumn('form_submits', 'bigint', (c) => c.notNull())
    .addColumn('conversions', 'bigint', (c) => c.notNull())
    .addColumn('visitors', 'bigint', (c) => c.notNull())
    .addColumn('site_visitors', 'bigint', (c) => c.notNull())
    .addColumn('audience_id', id, (c) => c.notNull())
    .addColumn('hour', ts, (c) => c.notNull())
    .addColumn('utm_source', 'text', (c) => c.notNull())
    .addColumn('utm_medium', 'text', (c) => c.notNull())
    .addColumn('utm_campaign', 'text', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('referrer_host', 'text', (c) => c.notNull())
    .addColumn('device_type', 'text', (c) => c.notNull())
    .addColumn('browser', 'text', (c) => c.notNull())
    .addColumn('os', 'text', (c) => c.notNull())
    .addColumn('country', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_hours_utm_pk', [...HOUR_KEY])
    .execute();
  await db.schema.createIndex('analytics_hours_utm_tenant_idx').on('analytics_hours_utm').columns(['tenant_id', 'hour']).execute();
  await fillFromSessions(db);
}

const HOUR_KEY = [
  'page_id',
  'hour',
  'audience_id',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'channel',
  'referrer_host',
  'device_type',
  'browser',
  'os',
  'country',
] as const;

/** The rollups as the stored sessions add up to, in the SQL of this day (a frozen copy of `rebuildRollups`). */
async function fillFromSessions(db: Kysely<unknown>): Promise<void> {
  const truncate = (unit: 'hour' | 'day'): RawBuilder<string> =>
    isPostgres(db)
      ? sql`date_trunc(${sql.lit(unit)}, session_started_at at time zone 'UTC') at time zone 'UTC'`
      : unit === 'hour'
        ? sql`substr(session_started_at, 1, 13) || ':00:00.000Z'`
        : sql`substr(session_started_at, 1, 10) || 'T00:00:00.000Z'`;
  const sums = sql.raw(`count(*), sum(is_bounce), sum(time_spent_seconds), sum(max_scroll_depth_percentage),
    sum(total_clicks_count), sum(questions_asked_count), sum(has_form_submit), sum(has_conversion),
    sum(first_of_day_page), sum(first_of_day_site)`);
  const columns = sql.raw(
    'visits, bounces, time_spent_seconds, scroll_sum, clicks, questions, form_submits, conversions, visitors, site_visitors',
  );
  const keys = sql.raw('audience_id, utm_source, utm_medium, utm_campaign, channel, referrer_host, device_type, browser, os, country');
  await sql`insert into analytics_hours_utm (tenant_id, page_id, hour, ${keys}, ${columns})
    select tenant_id, page_id, ${truncate('hour')}, ${keys}, ${sums}
    from audience_sessions group by tenant_id, page_id, ${truncate('hour')}, ${keys}`.execute(db);
  await sql`delete from analytics_days`.execute(db);
  await sql`insert into analytics_days (tenant_id, page_id, day, ${columns})
    select tenant_id, page_id, ${truncate('day')}, ${sums}
    from audience_sessions group by tenant_id, page_id, ${truncate('day')}`.execute(db);
}

/** Back to migration 0013's hourly rollup (keyed by UTM values only), refilled from the sessions. */
export async function down(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts, id } = columnTypes(db);
  await sql`drop index audience_sessions_visitor_idx`.execute(db);
  for (const column of ['first_of_day_site', 'first_of_day_page']) {
    await db.schema.alterTable('audience_sessions').dropColumn(column).execute();
  }
  for (const column of ['site_visitors', 'visitors']) {
    await db.schema.alterTable('analytics_days').dropColumn(column).execute();
  }
  await db.schema.dropTable('analytics_hours_utm').execute();
  const old = ['visits', 'bounces', 'time_spent_seconds', 'scroll_sum', 'clicks', 'questions', 'form_submits', 'conversions'];
  let table = db.schema
    .createTable('analytics_hours_utm')
    .addColumn('tenant_id', id, (c) => c.notNull())
    .addColumn('page_id', id, (c) => c.notNull());
  for (const column of old) {
    table = table.addColumn(column, column === 'time_spent_seconds' || column === 'scroll_sum' ? 'double precision' : 'bigint', (c) =>
      c.notNull(),
    );
  }
  await table
    .addColumn('audience_id', id, (c) => c.notNull())
    .addColumn('hour', ts, (c) => c.notNull())
    .addColumn('utm_source', 'text', (c) => c.notNull())
    .addColumn('utm_medium', 'text', (c) => c.notNull())
    .addColumn('utm_campaign', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_hours_utm_pk', ['page_id', 'hour', 'audience_id', 'utm_source', 'utm_medium', 'utm_campaign'])
    .execute();
  await db.schema.createIndex('analytics_hours_utm_tenant_idx').on('analytics_hours_utm').columns(['tenant_id', 'hour']).execute();
  const hour = isPostgres(db)
    ? sql`date_trunc('hour', session_started_at at time zone 'UTC') at time zone 'UTC'`
    : sql`substr(session_started_at, 1, 13) || ':00:00.000Z'`;
  await sql`insert into analytics_hours_utm (tenant_id, page_id, audience_id, hour, utm_source, utm_medium, utm_campaign, ${sql.raw(old.join(', '))})
    select tenant_id, page_id, audience_id, ${hour}, utm_source, utm_medium, utm_campaign, count(*), sum(is_bounce), sum(time_spent_seconds),
      sum(max_scroll_depth_percentage), sum(total_clicks_count), sum(questions_asked_count), sum(has_form_submit), sum(has_conversion)
    from audience_sessions group by tenant_id, page_id, audience_id, ${hour}, utm_source, utm_medium, utm_campaign`.execute(db);
}
