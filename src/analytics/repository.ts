import { sql, type Kysely } from 'kysely';
import type { Database, PagesTable, RollupSums } from '../db/types.js';
import { invalidField } from '../http/errors.js';
import { bucketBounds, defaultEnd, isTimeZone } from './buckets.js';
import { addInto, addSession, SUM_COLUMNS, toMetrics, zeroSums } from './metrics.js';
import { HOUR_MS, joinSpans, resolveRange, splitSpan, type Span } from './ranges.js';
import { type GroupBy, MAX_BUCKETS, MAX_GROUPS, type PageAnalytics, type PageAnalyticsQuery } from './schemas.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** The column a grouping reads, in the rollup and in the sessions. */
const GROUP_COLUMN: Record<GroupBy, 'audience_id' | 'utm_source' | 'utm_medium' | 'utm_campaign' | 'experiment_arm'> = {
  audience: 'audience_id',
  utmSource: 'utm_source',
  utmMedium: 'utm_medium',
  utmCampaign: 'utm_campaign',
  arm: 'experiment_arm',
};

/** Groupings the hourly rollup does not hold: read from the sessions over the whole range. */
const SESSIONS_ONLY = new Set<string>(['experiment_arm']);

const SUMS_SQL = sql.join(SUM_COLUMNS.map((c) => sql`sum(${sql.ref(c)}) as ${sql.ref(c)}`));

type SumRow = Record<(typeof SUM_COLUMNS)[number], unknown>;

/** Where one page's query reads: the page, maybe one audience, maybe a grouping column. */
interface Scope {
  pageId: string;
  audienceId: string | undefined;
  group: (typeof GROUP_COLUMN)[GroupBy] | undefined;
}

/** The rollup's hours in `span`, summed per hour (and group). */
function readHours(db: Kysely<Database>, scope: Scope, span: Span) {
  // One hourly rollup, split by UTM values: without a UTM grouping they are summed over.
  const table = 'analytics_hours_utm';
  const key = scope.group === undefined ? sql`''` : sql.ref(scope.group);
  return sql<SumRow & { hour: string; k: string }>`select hour, ${key} as k, ${SUMS_SQL} from ${sql.table(table)}
    where page_id = ${scope.pageId} and hour >= ${iso(span.start)} and hour < ${iso(span.end)}
    ${scope.audienceId === undefined ? sql`` : sql`and audience_id = ${scope.audienceId}`}
    group by hour${scope.group === undefined ? sql`` : sql`, ${key}`}`
    .execute(db)
    .then((r) => r.rows);
}

/** The stored sessions that started in `spans` (the parts of the range no whole rollup hour covers). */
async function readSessions(db: Kysely<Database>, scope: Scope, spans: readonly Span[]) {
  const rows = [];
  // One statement per 50 spans, each span a range of the page's index.
  for (let i = 0; i < spans.length; i += 50) {
    const parts = spans.slice(i, i + 50).map((s) =>
      db
        .selectFrom('audience_sessions')
        .select([
          'session_started_at',
          'audience_id',
          'utm_source',
          'utm_medium',
          'utm_campaign',
          'experiment_arm',
          'time_spent_seconds',
          'max_scroll_depth_percentage',
          'total_clicks_count',
          'questions_asked_count',
          'is_bounce',
          'has_form_submit',
          'has_conversion',
        ])
        .where('page_id', '=', scope.pageId)
        .where('session_started_at', '>=', iso(s.start))
        .where('session_started_at', '<', iso(s.end))
        .$call((q) => (scope.audienceId === undefined ? q : q.where('audience_id', '=', scope.audienceId))),
    );
    const [first, ...rest] = parts;
    if (first) rows.push(...(await rest.reduce((q, part) => q.unionAll(part), first).execute()));
  }
  return rows;
}

/** The index of the bucket holding `ms` in `bounds` (which holds it). */
function bucketOf(bounds: readonly number[], ms: number): number {
  let lo = 0;
  let hi = bounds.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((bounds[mid] ?? 0) <= ms) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * One page's analytics: totals, every bucket of the range, and the top groups. Whole UTC hours
 * inside one bucket come from the hourly rollup; the rest of the range (its edges, and the hours
 * a bucket bound cuts, as in zones whose offset is not whole hours) from the sessions themselves.
 * The caller has checked `audienceId`.
 */
export async function getPageAnalytics(db: Kysely<Database>, page: PagesTable, query: PageAnalyticsQuery): Promise<PageAnalytics> {
  const zone = query.timeZone ?? 'UTC';
  if (!isTimeZone(zone)) throw invalidField('/timeZone', 'is not an IANA time-zone name');
  const interval = query.interval ?? 'day';
  const range = resolveRange(query, defaultEnd(Date.now(), interval, zone), zone);
  const bounds = bucketBounds(range.start, range.end, interval, zone, MAX_BUCKETS);
  if (bounds === undefined) throw invalidField('/interval', `makes more than ${MAX_BUCKETS} buckets of the range`);
  const buckets: Span[] = bounds.slice(0, -1).map((b, i) => ({
    start: Math.max(b, range.start),
    end: Math.min(bounds[i + 1] ?? range.end, range.end),
  }));

  const scope: Scope = { pageId: page.id, audienceId: query.audienceId, group: query.groupBy && GROUP_COLUMN[query.groupBy] };
  const series = buckets.map(() => zeroSums());
  const groups = new Map<string, RollupSums>();
  const add = (bucket: number, key: string) => {
    const g = groups.get(key) ?? zeroSums();
    groups.set(key, g);
    return [series[bucket] ?? zeroSums(), g] as const;
  };

  const fromSessions = scope.group !== undefined && SESSIONS_ONLY.has(scope.group);
  const hours = fromSessions ? undefined : splitSpan(range, HOUR_MS).whole;
  if (hours && buckets.length > 0) {
    for (const row of await readHours(db, scope, hours)) {
      const hour = Date.parse(row.hour);
      const i = bucketOf(bounds, hour);
      const bucket = buckets[i];
      // An hour a bucket bound cuts is read from the sessions instead.
      if (!bucket || hour < bucket.start || hour + HOUR_MS > bucket.end) continue;
      for (const sums of add(i, String(row.k))) addInto(sums, row);
    }
  }
  const rawSpans = fromSessions ? joinSpans(buckets) : joinSpans(buckets.flatMap((b) => splitSpan(b, HOUR_MS).edges));
  for (const s of await readSessions(db, scope, rawSpans)) {
    const i = bucketOf(bounds, Date.parse(s.session_started_at));
    // A visit outside any experiment has no arm: its group is ''.
    for (const sums of add(i, scope.group === undefined ? '' : String(s[scope.group] ?? ''))) addSession(sums, s);
  }

  const totals = zeroSums();
  for (const s of series) addInto(totals, s);
  return {
    pageId: page.id,
    startDate: iso(range.start),
    endDate: iso(range.end),
    interval,
    timeZone: zone,
    totals: toMetrics(totals),
    series: series.map((s, i) => ({ start: iso(bounds[i] ?? range.start), ...toMetrics(s) })),
    ...(query.groupBy === undefined ? {} : { groups: await topGroups(db, page, query.groupBy, groups) }),
  };
}

async function topGroups(db: Kysely<Database>, page: PagesTable, groupBy: GroupBy, groups: Map<string, RollupSums>) {
  const top = [...groups.entries()]
    .filter(([, s]) => s.visits > 0)
    .sort(([ka, a], [kb, b]) => b.visits - a.visits || (ka < kb ? -1 : ka > kb ? 1 : 0))
    .slice(0, MAX_GROUPS);
  const labels = new Map<string, string>();
  if (groupBy === 'audience' && top.length > 0) {
    const rows = await db
      .selectFrom('audiences')
      .select(['id', 'effective_name'])
      .where('page_id', '=', page.id)
      .where(
        'id',
        'in',
        top.map(([k]) => k),
      )
      .execute();
    for (const r of rows) labels.set(r.id, r.effective_name);
  }
  return top.map(([key, sums]) => ({ key, label: labels.get(key) ?? key, ...toMetrics(sums) }));
}
