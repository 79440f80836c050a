import { sql, type Kysely, type RawBuilder } from 'kysely';
import { SESSION_COLUMNS } from '../db/session-columns.js';
import type { Database } from '../db/types.js';
import { GOAL_REACHED, VISITOR } from '../goals/index.js';
import { readMapCounts, readVitals } from './heatmap.js';
import { armCounts, funnelSteps } from './journeys.js';
import type {
  GoalReach,
  GoalScope,
  Grain,
  GroupColumn,
  OpenVisit,
  OpenWindow,
  StartedSession,
  SumRow,
  TimeSpan,
  VisitReads,
  VisitScope,
} from './port.js';
import { type SiteDimension, truncated } from './rollups.js';
import { SESSION_SUMS, SUM_COLUMNS } from './sums.js';

// The reads the analytics make, as SQLite and PostgreSQL answer them (one Kysely dialect each, so one
// file for both): the rollups where whole days or hours cover a span, the sessions themselves for
// the rest. "Live pages" is the pages' `deleted_at`, read here by subquery (a declared read model).

const iso = (ms: number) => new Date(ms).toISOString();
const SUMS = sql.join(SUM_COLUMNS.map((c) => sql`sum(${sql.ref(c)}) as ${sql.ref(c)}`));
const NEGATED = sql.join(SUM_COLUMNS.map((c) => sql`-${sql.ref(c)} as ${sql.ref(c)}`));
const COLUMNS = sql.join(SUM_COLUMNS.map((c) => sql.ref(c)));
const NEGATED_SUMS = sql.join(SUM_COLUMNS.map((c) => sql`-sum(${sql.ref(c)}) as ${sql.ref(c)}`));
const deletedPages = (tenantId: string) => sql`select id from pages where tenant_id = ${tenantId} and deleted_at is not null`;
const livePages = (tenantId: string) =>
  sql<boolean>`tenant_id = ${tenantId} and page_id in (select id from pages where tenant_id = ${tenantId} and deleted_at is null)`;

/** The rows of the scope's page, or of the tenant's live pages. */
const pagesOf = (scope: Pick<VisitScope, 'tenantId' | 'pageId'>) =>
  scope.pageId !== undefined ? sql<boolean>`page_id = ${scope.pageId}` : livePages(scope.tenantId);

const rowsOf = <T>(query: RawBuilder<T>, db: Kysely<Database>) => query.execute(db).then((r) => r.rows);

function hourSums(db: Kysely<Database>, scope: VisitScope, span: TimeSpan) {
  // One hourly rollup, split by UTM values: without a UTM grouping they are summed over.
  const key = scope.group === undefined ? sql`''` : sql.ref(scope.group);
  return rowsOf(
    sql<SumRow & { hour: string; k: unknown }>`select hour, ${key} as k, ${SUMS} from analytics_hours_utm
    where ${pagesOf(scope)} and hour >= ${iso(span.start)} and hour < ${iso(span.end)}
    ${scope.audienceId === undefined ? sql`` : sql`and audience_id = ${scope.audienceId}`}
    group by hour${scope.group === undefined ? sql`` : sql`, ${key}`}`,
    db,
  );
}

async function sessionsStarted(db: Kysely<Database>, scope: VisitScope, spans: readonly TimeSpan[]): Promise<StartedSession[]> {
  const rows: StartedSession[] = [];
  // One statement per 50 spans, each span a range of the page's index.
  for (let i = 0; i < spans.length; i += 50) {
    const parts = spans.slice(i, i + 50).map((s) =>
      db
        .selectFrom('audience_sessions')
        .select([
          'session_started_at',
          'audience_id',
          'experiment_arm',
          ...SESSION_COLUMNS.dimensions,
          ...SESSION_COLUMNS.counts,
          ...SESSION_COLUMNS.firsts,
        ])
        .where(pagesOf(scope))
        .where('session_started_at', '>=', iso(s.start))
        .where('session_started_at', '<', iso(s.end))
        .$call((q) => (scope.audienceId === undefined ? q : q.where('audience_id', '=', scope.audienceId))),
    );
    const [first, ...rest] = parts;
    if (first) rows.push(...(await rest.reduce((q, part) => q.unionAll(part), first).execute()));
  }
  return rows;
}

function siteSums(db: Kysely<Database>, tenantId: string, span: TimeSpan, unit: 'hour' | 'day') {
  const [start, end] = [iso(span.start), iso(span.end)];
  const at = unit === 'hour' ? sql.ref('hour') : truncated(db, 'day', 'hour');
  // The site's rollup holds deleted pages' visits too: they come out as negated rows of their own,
  // read from their page rollup (deleted pages are few, and their visits stop with their links).
  return rowsOf(
    sql<SumRow & { hour: string }>`
    select ${at} as hour, ${SUMS} from analytics_site_hours
    where tenant_id = ${tenantId} and hour >= ${start} and hour < ${end}
    group by ${at}
    union all
    select ${at} as hour, ${NEGATED_SUMS} from analytics_hours_utm
    where page_id in (${deletedPages(tenantId)}) and hour >= ${start} and hour < ${end}
    group by ${at}`,
    db,
  );
}

function siteValueSums(db: Kysely<Database>, tenantId: string, column: SiteDimension, span: TimeSpan, grain: Grain) {
  const key = sql.ref(column);
  const [start, end] = [iso(span.start), iso(span.end)];
  const query =
    grain === 'day'
      ? sql<SumRow & { k: unknown }>`select k, ${SUMS} from (
        select value as k, ${COLUMNS} from analytics_site_days
        where tenant_id = ${tenantId} and dimension = ${column} and day >= ${start} and day < ${end}
        union all
        select ${key} as k, ${NEGATED} from analytics_hours_utm
        where page_id in (${deletedPages(tenantId)}) and hour >= ${start} and hour < ${end}
      ) x group by k`
      : grain === 'hour'
        ? sql<SumRow & { k: unknown }>`select ${key} as k, ${SUMS} from analytics_hours_utm
        where ${livePages(tenantId)} and hour >= ${start} and hour < ${end}
        group by ${key}`
        : sql<SumRow & { k: unknown }>`select ${key} as k, ${SESSION_SUMS} from audience_sessions
        where ${livePages(tenantId)} and session_started_at >= ${start} and session_started_at < ${end}
        group by ${key}`;
  return rowsOf(query, db);
}

function pageSums(db: Kysely<Database>, tenantId: string, span: TimeSpan, grain: Grain) {
  const [start, end] = [iso(span.start), iso(span.end)];
  const query =
    grain === 'day'
      ? sql<SumRow & { page_id: string }>`select page_id, ${SUMS} from analytics_days
        where tenant_id = ${tenantId} and day >= ${start} and day < ${end} group by page_id`
      : grain === 'hour'
        ? sql<SumRow & { page_id: string }>`select page_id, ${SUMS} from analytics_hours_utm
        where tenant_id = ${tenantId} and hour >= ${start} and hour < ${end} group by page_id`
        : sql<SumRow & { page_id: string }>`select page_id, ${SESSION_SUMS} from audience_sessions
        where tenant_id = ${tenantId} and session_started_at >= ${start} and session_started_at < ${end} group by page_id`;
  return rowsOf(query, db);
}

function pageValueSums(
  db: Kysely<Database>,
  tenantId: string,
  pageIds: readonly string[],
  column: GroupColumn,
  span: TimeSpan,
  grain: 'hour' | 'session',
) {
  const ids = sql.join(pageIds.map((id) => sql`${id}`));
  const key = sql.ref(column);
  const [start, end] = [iso(span.start), iso(span.end)];
  const query =
    grain === 'hour'
      ? sql<SumRow & { page_id: string; k: unknown }>`
      select page_id, ${key} as k, ${SUMS} from analytics_hours_utm
      where tenant_id = ${tenantId} and page_id in (${ids}) and hour >= ${start} and hour < ${end}
      group by page_id, ${key}`
      : sql<SumRow & { page_id: string; k: unknown }>`
      select page_id, ${key} as k, ${SESSION_SUMS}
      from audience_sessions
      where tenant_id = ${tenantId} and page_id in (${ids})
        and session_started_at >= ${start} and session_started_at < ${end}
      group by page_id, ${key}`;
  return rowsOf(query, db);
}

/**
 * Read through the open visits' index (`end_due_at`, set only while a visit is open, and never
 * before its last report), so the cost follows the visits open now, not the sessions kept. With
 * `end_due_follows` the end falls due the idle time after the last report, and `end_due_at` is
 * only a lower bound of it (migration 0029).
 */
async function openVisits(db: Kysely<Database>, tenantId: string, window: OpenWindow, limit: number) {
  const open = db
    .selectFrom('audience_sessions')
    .where('end_due_at', 'is not', null)
    .where((eb) =>
      eb.or([eb('end_due_at', '>', window.now), eb.and([eb('end_due_follows', '=', 1), eb('session_ended_at', '>', window.idleSince)])]),
    )
    .where('tenant_id', '=', tenantId)
    .where('session_ended_at', '>=', window.since);
  const [counted, visits] = await Promise.all([
    open.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    open
      .select(['id', 'page_id', 'audience_id', 'page_url', 'channel', 'channel_group', 'country', 'session_started_at', 'session_ended_at'])
      .orderBy('session_ended_at', 'desc')
      .orderBy('id')
      .limit(limit)
      .execute(),
  ]);
  return { count: Number(counted.n), visits: visits satisfies OpenVisit[] };
}

/**
 * One statement over the visits' occurrences (an index range per goal for the site, per page
 * otherwise). The goals' matchers are read beside them (a declared read model): a goal counts at
 * most once per visit (issue 36), its visitors are the person, else the daily visitor hash, and
 * each visit's value is at most the goal's `max_value`.
 */
async function goalsReached(db: Kysely<Database>, scope: GoalScope, perPage: boolean): Promise<GoalReach[]> {
  const pages = scope.pageIds;
  const { rows } = await sql<GoalReach>`select ${perPage ? sql`e.page_id` : sql`''`} as page_id, g.id as goal_id,
      count(distinct e.session_id) as completions, count(distinct e.session_id) as visits, count(distinct ${VISITOR}) as uniques,
      sum(case when e.value > g.max_value then g.max_value else e.value end) as value
    from goals g
    join visit_events e on ${GOAL_REACHED}
    join audience_sessions s on s.id = e.session_id
    left join audiences a on a.id = s.audience_id
    where g.tenant_id = ${scope.tenantId} and e.session_started_at >= ${scope.start} and e.session_started_at < ${scope.end}
      ${pages === undefined ? sql`` : sql`and e.page_id in (${sql.join(pages)})`}
      ${scope.audienceId === undefined ? sql`` : sql`and e.audience_id = ${scope.audienceId}`}
    group by ${perPage ? sql`e.page_id, ` : sql``}g.id`.execute(db);
  return rows;
}

/** The reads over SQLite's or PostgreSQL's tables. */
export function sqlReads(db: Kysely<Database>): VisitReads {
  return {
    hourSums: (scope, span) => hourSums(db, scope, span),
    sessionsStarted: (scope, spans) => sessionsStarted(db, scope, spans),
    siteSums: (tenantId, span, unit) => siteSums(db, tenantId, span, unit),
    siteValueSums: (tenantId, column, span, grain) => siteValueSums(db, tenantId, column, span, grain),
    pageSums: (tenantId, span, grain) => pageSums(db, tenantId, span, grain),
    pageValueSums: (tenantId, pageIds, column, span, grain) => pageValueSums(db, tenantId, pageIds, column, span, grain),
    openVisits: (tenantId, window, limit) => openVisits(db, tenantId, window, limit),
    goalsReached: (scope, perPage) => goalsReached(db, scope, perPage),
    funnelSteps: (query) => funnelSteps(db, query),
    armCounts: (experimentId, goal) => armCounts(db, experimentId, goal),
    mapCounts: (filter) => readMapCounts(db, filter),
    vitals: (filter) => readVitals(db, filter),
  };
}
