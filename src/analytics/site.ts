import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database, RollupSums } from '../db/types.js';
import { addInto, SESSION_SUMS, SUM_COLUMNS, zeroSums, SITE_DIMENSIONS, type SiteDimension, truncated } from '../visits/index.js';
import { DAY_MS, HOUR_MS, splitSpan, type Span } from './ranges.js';

/**
 * The site answer's reads (every live page of a tenant), from the site's own rollups (migration
 * 0027): per UTC hour (or day) for the totals and series, per UTC day and value for the groups.
 * Those hold deleted pages' visits too; each read takes a deleted page's rows out again, read from
 * its page rollup (deleted pages are few, and their visits stop with their links).
 */

const iso = (ms: number) => new Date(ms).toISOString();
type SumRow = Record<(typeof SUM_COLUMNS)[number], unknown>;

const SUMS = sql.join(SUM_COLUMNS.map((c) => sql`sum(${sql.ref(c)}) as ${sql.ref(c)}`));
const NEGATED = sql.join(SUM_COLUMNS.map((c) => sql`-${sql.ref(c)} as ${sql.ref(c)}`));
const COLUMNS = sql.join(SUM_COLUMNS.map((c) => sql.ref(c)));
const NEGATED_SUMS = sql.join(SUM_COLUMNS.map((c) => sql`-sum(${sql.ref(c)}) as ${sql.ref(c)}`));
const deletedPages = (tenantId: string) => sql`select id from pages where tenant_id = ${tenantId} and deleted_at is not null`;
const livePages = (tenantId: string) =>
  sql<boolean>`tenant_id = ${tenantId} and page_id in (select id from pages where tenant_id = ${tenantId} and deleted_at is null)`;

export const isSiteDimension = (column: string): column is SiteDimension => (SITE_DIMENSIONS as readonly string[]).includes(column);

/**
 * The site's whole UTC hours in `span`, summed per hour, or per UTC day when `span` and every
 * bucket are whole UTC days (`unit`): each row is named by its first instant. Deleted pages'
 * visits come as negated rows of their own, which the caller adds as it adds the rest. A month by
 * day is 30 rows, not 720: half the time on SQLite, and the rows to send on PostgreSQL.
 */
export async function readSiteHours(db: Kysely<Database>, tenantId: string, span: Span, unit: 'hour' | 'day') {
  const [start, end] = [iso(span.start), iso(span.end)];
  const at = unit === 'hour' ? sql.ref('hour') : truncated(db, 'day', 'hour');
  const { rows } = await sql<SumRow & { hour: string }>`
    select ${at} as hour, ${SUMS} from analytics_site_hours
    where tenant_id = ${tenantId} and hour >= ${start} and hour < ${end}
    group by ${at}
    union all
    select ${at} as hour, ${NEGATED_SUMS} from analytics_hours_utm
    where page_id in (${deletedPages(tenantId)}) and hour >= ${start} and hour < ${end}
    group by ${at}`.execute(db);
  return rows;
}

/**
 * The site's sums per value of `column` over `range`: whole UTC days from the daily rows; the
 * rest of the range (less than a day at each end) from the page rollup's whole hours, then the
 * sessions.
 */
export async function siteGroups(
  db: Kysely<Database>,
  tenantId: string,
  column: SiteDimension,
  range: Span,
): Promise<Map<string, RollupSums>> {
  const groups = new Map<string, RollupSums>();
  const add = (rows: (SumRow & { k: unknown })[]) => {
    for (const row of rows) {
      const key = String(row.k ?? '');
      const sums = groups.get(key) ?? zeroSums();
      groups.set(key, sums);
      addInto(sums, row);
    }
  };
  const key: RawBuilder<unknown> = sql.ref(column);
  const days = splitSpan(range, DAY_MS);
  if (days.whole) {
    const [start, end] = [iso(days.whole.start), iso(days.whole.end)];
    const { rows } = await sql<SumRow & { k: unknown }>`select k, ${SUMS} from (
        select value as k, ${COLUMNS} from analytics_site_days
        where tenant_id = ${tenantId} and dimension = ${column} and day >= ${start} and day < ${end}
        union all
        select ${key} as k, ${NEGATED} from analytics_hours_utm
        where page_id in (${deletedPages(tenantId)}) and hour >= ${start} and hour < ${end}
      ) x group by k`.execute(db);
    add(rows);
  }
  for (const edge of days.edges) {
    const hours = splitSpan(edge, HOUR_MS);
    if (hours.whole) {
      const { rows } = await sql<SumRow & { k: unknown }>`select ${key} as k, ${SUMS} from analytics_hours_utm
        where ${livePages(tenantId)} and hour >= ${iso(hours.whole.start)} and hour < ${iso(hours.whole.end)}
        group by ${key}`.execute(db);
      add(rows);
    }
    for (const part of hours.edges) {
      const { rows } = await sql<SumRow & { k: unknown }>`select ${key} as k, ${SESSION_SUMS} from audience_sessions
        where ${livePages(tenantId)} and session_started_at >= ${iso(part.start)} and session_started_at < ${iso(part.end)}
        group by ${key}`.execute(db);
      add(rows);
    }
  }
  return groups;
}
