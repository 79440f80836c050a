import type { Kysely } from 'kysely';
import type { Database, PagesTable, RollupSums } from '../db/types.js';
import { labelGroups, topGroups } from '../audiences/index.js';
import { invalidField } from '../http/errors.js';
import { bucketBounds, defaultEnd, isTimeZone } from './buckets.js';
import { addInto, addSession, type GroupColumn, visitReads, type VisitScope, zeroSums } from '../visits/index.js';
import { toMetrics } from './metrics.js';
import { DAY_MS, HOUR_MS, joinSpans, resolveRange, splitSpan, type Span } from './ranges.js';
import { isSiteDimension, siteGroups } from './site.js';
import {
  type GroupBy,
  MAX_BUCKETS,
  type Metrics,
  type MetricsChange,
  type PageAnalytics,
  type PageAnalyticsQuery,
  type SiteAnalytics,
  type SiteAnalyticsQuery,
} from './schemas.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** The column a grouping reads, in the rollup and in the sessions. */
export const GROUP_COLUMN = {
  audience: 'audience_id',
  utmSource: 'utm_source',
  utmMedium: 'utm_medium',
  utmCampaign: 'utm_campaign',
  arm: 'experiment_arm',
  channel: 'channel',
  channelGroup: 'channel_group',
  referrerHost: 'referrer_host',
  deviceType: 'device_type',
  browser: 'browser',
  os: 'os',
  country: 'country',
} as const satisfies Record<GroupBy, GroupColumn>;

/** Groupings the hourly rollup does not hold: read from the sessions over the whole range. */
const SESSIONS_ONLY = new Set<string>(['experiment_arm']);

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
export async function getPageAnalytics(
  db: Kysely<Database>,
  page: PagesTable,
  query: PageAnalyticsQuery,
): Promise<Omit<PageAnalytics, Extras>> {
  return { pageId: page.id, ...(await analyze(db, { tenantId: page.tenant_id, pageId: page.id }, query)) };
}

/** What the routes add to an answer: its goals, scroll depth and web vitals. */
type Extras = 'goals' | 'averageScrollDepth' | 'webVitals';

/** The same answer over every live page of the tenant: the site-wide dashboard. */
export function getSiteAnalytics(db: Kysely<Database>, tenantId: string, query: SiteAnalyticsQuery): Promise<Omit<SiteAnalytics, Extras>> {
  return analyze(db, { tenantId, pageId: undefined }, query);
}

/** A page's query or the site's: the site's leaves out the audience and the page-only groupings. */
type AnyQuery = PageAnalyticsQuery | SiteAnalyticsQuery;
const audienceOf = (query: AnyQuery) => ('audienceId' in query ? query.audienceId : undefined);

/** The range before `range`, of the same length (`compare=previous_period`). */
export const previousOf = (range: Span): Span => ({ start: range.start - (range.end - range.start), end: range.start });

async function analyze(
  db: Kysely<Database>,
  target: { tenantId: string; pageId: string | undefined },
  query: AnyQuery,
): Promise<Omit<SiteAnalytics, Extras>> {
  const zone = query.timeZone ?? 'UTC';
  if (!isTimeZone(zone)) throw invalidField('/timeZone', 'is not an IANA time-zone name');
  const interval = query.interval ?? 'day';
  const range = resolveRange(query, defaultEnd(Date.now(), interval, zone), zone);
  const answer = await aggregate(db, target, query, range, zone);
  if (query.compare === undefined) return answer;
  const previous = await aggregate(db, target, { ...query, groupBy: undefined }, previousOf(range), zone);
  return {
    ...answer,
    previous: { startDate: previous.startDate, endDate: previous.endDate, totals: previous.totals },
    change: changeOf(answer.totals, previous.totals),
  };
}

async function aggregate(
  db: Kysely<Database>,
  target: { tenantId: string; pageId: string | undefined },
  query: AnyQuery,
  range: Span,
  zone: string,
): Promise<Omit<SiteAnalytics, Extras>> {
  const interval = query.interval ?? 'day';
  const visits = visitReads(db);
  const bounds = bucketBounds(range.start, range.end, interval, zone, MAX_BUCKETS);
  if (bounds === undefined) throw invalidField('/interval', `makes more than ${MAX_BUCKETS} buckets of the range`);
  const buckets: Span[] = bounds.slice(0, -1).map((b, i) => ({
    start: Math.max(b, range.start),
    end: Math.min(bounds[i + 1] ?? range.end, range.end),
  }));

  const scope: VisitScope = { ...target, audienceId: audienceOf(query), group: query.groupBy && GROUP_COLUMN[query.groupBy] };
  const metrics = (sums: RollupSums) => toMetrics(sums, target.pageId === undefined ? 'site' : 'page');
  const series = buckets.map(() => zeroSums());
  const groups = new Map<string, RollupSums>();
  const add = (bucket: number, key: string) => {
    const g = groups.get(key) ?? zeroSums();
    groups.set(key, g);
    return [series[bucket] ?? zeroSums(), g] as const;
  };

  // The site's groups come from its daily rows, apart from its series (src/analytics/site.ts).
  const site = target.pageId === undefined;
  const grouped = site ? { ...scope, group: undefined } : scope;
  const fromSessions = grouped.group !== undefined && SESSIONS_ONLY.has(grouped.group);
  const hours = fromSessions ? undefined : splitSpan(range, HOUR_MS).whole;
  if (hours && buckets.length > 0) {
    // The site by UTC days when no bucket bound cuts one: a row per day, not 24.
    const days = buckets.every((b) => b.start % DAY_MS === 0 && b.end % DAY_MS === 0);
    const rows = site ? await visits.siteSums(target.tenantId, hours, days ? 'day' : 'hour') : await visits.hourSums(grouped, hours);
    for (const row of rows) {
      const hour = Date.parse(row.hour);
      const i = bucketOf(bounds, hour);
      const bucket = buckets[i];
      // An hour a bucket bound cuts is read from the sessions instead (a day row is never cut).
      if (!bucket || hour < bucket.start || hour + HOUR_MS > bucket.end) continue;
      for (const sums of add(i, 'k' in row ? String(row.k) : '')) addInto(sums, row);
    }
  }
  const rawSpans = fromSessions ? joinSpans(buckets) : joinSpans(buckets.flatMap((b) => splitSpan(b, HOUR_MS).edges));
  for (const s of await visits.sessionsStarted(grouped, rawSpans)) {
    const i = bucketOf(bounds, Date.parse(s.session_started_at));
    // A visit outside any experiment has no arm: its group is ''.
    for (const sums of add(i, grouped.group === undefined ? '' : String(s[grouped.group] ?? ''))) addSession(sums, s);
  }
  if (site && scope.group !== undefined && isSiteDimension(scope.group)) {
    groups.clear();
    for (const [key, sums] of await siteGroups(visits, target.tenantId, scope.group, range)) groups.set(key, sums);
  }

  const totals = zeroSums();
  for (const s of series) addInto(totals, s);
  return {
    startDate: iso(range.start),
    endDate: iso(range.end),
    interval,
    timeZone: zone,
    totals: metrics(totals),
    series: series.map((s, i) => ({ start: iso(bounds[i] ?? range.start), ...metrics(s) })),
    ...(query.groupBy === undefined ? {} : { groups: await groupsOf(db, target, query.groupBy, groups) }),
  };
}

/** Each metric's relative change from `previous`: null where the previous value is 0 or null, or the current null. */
export function changeOf(current: Metrics, previous: Metrics): MetricsChange {
  const change: Record<string, number | null> = {};
  for (const key of Object.keys(current) as (keyof Metrics)[]) {
    const now = current[key];
    const before = previous[key];
    change[key] = now === null || before === null || before === 0 ? null : Math.round(((now - before) / before) * 1e6) / 1e6;
  }
  return change as MetricsChange;
}

async function groupsOf(
  db: Kysely<Database>,
  target: { tenantId: string; pageId: string | undefined },
  groupBy: GroupBy,
  groups: Map<string, RollupSums>,
) {
  const top = topGroups(
    [...groups].filter(([, s]) => s.visits > 0),
    (s) => s.visits,
  );
  const scope = target.pageId === undefined ? 'site' : 'page';
  const labelled = await labelGroups(db, target.tenantId, groupBy, top);
  return labelled.map(({ key, label, value }) => ({ key, label, ...toMetrics(value, scope) }));
}
