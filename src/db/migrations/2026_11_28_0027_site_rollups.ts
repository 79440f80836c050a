import { sql, type Kysely, type RawBuilder } from 'kysely';
import { isPostgres } from '../adapter.js';
import { columnTypes } from './dialect.js';

/**
 * The site's own rollups (issue 28, docs/analytics.md): the page rollup keyed by the visit classes
 * holds about one row per visit once visits differ in class, so a site-wide answer summed every
 * visit of the range. `analytics_site_hours` holds a tenant's sums per UTC hour, without any key
 * besides, for the site's totals and series; `analytics_site_days` its sums per UTC day and value
 * of each grouping the site answer offers (`dimension`: the session column), for its groups. Both
 * hold every page's visits, deleted pages' too: the site answer takes a deleted page's rows out
 * at read time (from its page rollup), through the index on deleted pages made here.
 * Kept in step by the transactions that write sessions; filled here from the sessions stored.
 */
const DIMENSIONS = ['utm_source', 'utm_medium', 'utm_campaign', 'channel', 'referrer_host', 'device_type', 'browser', 'os', 'country'];

export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts, id } = columnTypes(db);
  const withSums = (name: string) =>
    db.schema
      .createTable(name)
      .addColumn('tenant_id', id, (c) => c.notNull())
      .addColumn('visits', 'bigint', (c) => c.notNull())
      .addColumn('bounces', 'bigint', (c) => c.notNull())
      .addColumn('time_spent_seconds', 'double precision', (c) => c.notNull())
      .addColumn('scroll_sum', 'double precision', (c) => c.notNull())
      .addColumn('clicks', 'bigint', (c) => c.notNull())
      .addColumn('questions', 'bigint', (c) => c.notNull())
      .addColumn('form_submits', 'bigint', (c) => c.notNull())
      .addColumn('conversions', 'bigint', (c) => c.notNull())
      .addColumn('visitors', 'bigint', (c) => c.notNull())
      .addColumn('site_visitors', 'bigint', (c) => c.notNull());
  await withSums('analytics_site_hours')
    .addColumn('hour', ts, (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_site_hours_pk', ['tenant_id', 'hour'])
    .execute();
  await withSums('analytics_site_days')
    .addColumn('dimension', 'text', (c) => c.notNull())
    .addColumn('day', ts, (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_site_days_pk', ['tenant_id', 'dimension', 'day', 'value'])
    .execute();
  await sql`create index pages_deleted_idx on pages (tenant_id) where deleted_at is not null`.execute(db);
  await fillFromSessions(db);
}

/** The rollups as the stored sessions add up to, in the SQL of this day (a frozen copy of part of `rebuildRollups`). */
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
  await sql`insert into analytics_site_hours (tenant_id, hour, ${columns})
    select tenant_id, ${truncate('hour')}, ${sums} from audience_sessions group by tenant_id, ${truncate('hour')}`.execute(db);
  for (const dimension of DIMENSIONS) {
    await sql`insert into analytics_site_days (tenant_id, dimension, day, value, ${columns})
      select tenant_id, ${sql.lit(dimension)}, ${truncate('day')}, ${sql.ref(dimension)}, ${sums}
      from audience_sessions group by tenant_id, ${truncate('day')}, ${sql.ref(dimension)}`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index pages_deleted_idx`.execute(db);
  await db.schema.dropTable('analytics_site_days').execute();
  await db.schema.dropTable('analytics_site_hours').execute();
}
