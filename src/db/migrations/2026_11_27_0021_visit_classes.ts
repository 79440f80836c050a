import { sql, type Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * What the collector learns about a visit, kept as classes only (issue 28): where it came from
 * (`referrer_host`, '' when direct or from the same host; `channel`), the device's class, browser
 * and system family, the country of the address, and `visitor_hash`, an HMAC of host, address and
 * user agent under a salt deleted after its day (never exposed by the API). The address and the
 * user agent themselves are never stored. `device_type` is '' (unknown) for sessions that were
 * not collected: those posted through the API and those stored before this migration.
 *
 * `end_due_at` is when the visit's `session.ended` falls due (last report plus the idle time, or
 * a minute after the page was left); null once announced or when the visit was not collected. The
 * two `*_announced` flags are claimed by conditional UPDATE so each event leaves once across
 * instances. Sessions stored before this migration count as already started.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp } = columnTypes(db);
  const texts: [string, string][] = [
    ['referrer_host', ''],
    ['channel', 'direct'],
    ['device_type', ''],
    ['browser', ''],
    ['os', ''],
    ['country', ''],
    ['visitor_hash', ''],
  ];
  for (const [column, value] of texts) {
    await db.schema
      .alterTable('audience_sessions')
      .addColumn(column, 'text', (c) => c.notNull().defaultTo(value))
      .execute();
  }
  await db.schema.alterTable('audience_sessions').addColumn('end_due_at', timestamp).execute();
  for (const column of ['start_announced', 'end_announced']) {
    await db.schema
      .alterTable('audience_sessions')
      .addColumn(column, 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  }
  await sql`update audience_sessions set start_announced = 1`.execute(db);
  await sql`create index audience_sessions_end_due_idx on audience_sessions (end_due_at) where end_due_at is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index audience_sessions_end_due_idx`.execute(db);
  for (const column of [
    'end_announced',
    'start_announced',
    'end_due_at',
    'visitor_hash',
    'country',
    'os',
    'browser',
    'device_type',
    'channel',
    'referrer_host',
  ]) {
    await db.schema.alterTable('audience_sessions').dropColumn(column).execute();
  }
}
