import type { Kysely } from 'kysely';
import { CACHES, countedCache } from '../db/caches.js';
import type { Database, RollupSums } from '../db/types.js';
import { keysetList } from '../http/pagination.js';
import type { ListPage } from '../http/schemas.js';
import { addInto, type GroupColumn, type SumRow, visitReads, zeroSums } from '../visits/index.js';
import { toMetrics } from './metrics.js';
import { goalMetricsByPage } from './goals.js';
import { DAY_MS, HOUR_MS, resolveRange, splitSpan, type Span } from './ranges.js';
import { labelGroups, topGroups } from '../audiences/index.js';
import type { PagesAnalyticsQuery, PageTotals } from './schemas.js';
import { changeOf, GROUP_COLUMN, previousOf } from './repository.js';

/** Each live page of the tenant with visits in the span, and what its visits add up to. */
async function computeTotals(db: Kysely<Database>, tenantId: string, range: Span): Promise<Map<string, RollupSums>> {
  const visits = visitReads(db);
  const totals = new Map<string, RollupSums>();
  const add = (rows: (SumRow & { page_id: string })[]) => {
    for (const row of rows) {
      const t = totals.get(row.page_id) ?? zeroSums();
      totals.set(row.page_id, t);
      addInto(t, row);
    }
  };
  const days = splitSpan(range, DAY_MS);
  if (days.whole) add(await visits.pageSums(tenantId, days.whole, 'day'));
  for (const edge of days.edges) {
    const hours = splitSpan(edge, HOUR_MS);
    if (hours.whole) add(await visits.pageSums(tenantId, hours.whole, 'hour'));
    for (const part of hours.edges) add(await visits.pageSums(tenantId, part, 'session'));
  }
  const live = await db.selectFrom('pages').select('id').where('tenant_id', '=', tenantId).where('deleted_at', 'is', null).execute();
  const kept = new Map<string, RollupSums>();
  for (const { id } of live) {
    const t = totals.get(id);
    if (t && t.visits > 0) kept.set(id, t);
  }
  return kept;
}

type Sort = NonNullable<PagesAnalyticsQuery['sort']>;
interface Ranked {
  page_id: string;
  visits: number;
  conversions: number;
  sums: RollupSums;
}

interface Fill {
  db: Kysely<Database>;
  tenantId: string;
  range: Span;
  sort: Sort;
}

function rank({ db, tenantId, range, sort }: Fill): Promise<Ranked[]> {
  return computeTotals(db, tenantId, range).then((totals) =>
    [...totals.entries()]
      .map(([page_id, sums]) => ({ page_id, visits: sums.visits, conversions: sums.conversions, sums }))
      .sort((a, b) => b[sort] - a[sort] || (a.page_id < b.page_id ? -1 : 1)),
  );
}

/**
 * Answers kept per tenant, range and order, under the tenant's `sessions` change counter
 * (src/db/changes.ts), read on every request: every transaction that changes what the overview
 * adds up moves it, on any instance, so an answer from before a change is never asked for again
 * and falls out. Kept 10 seconds at most besides. A rank over every page of a tenant costs a read
 * of all its pages' days; the overview is read far more often than what it adds up changes.
 * Each answer ranks up to every page of a tenant (a few MB for ten thousand pages): few are kept.
 */
const rankings = countedCache(CACHES.rankings, rank);

function ranking(db: Kysely<Database>, tenantId: string, range: Span, sort: Sort): Promise<Ranked[]> {
  return rankings(db, tenantId, `${range.start} ${range.end} ${sort}`, { db, tenantId, range, sort });
}

const lists = {
  visits: keysetList({
    name: 'pages-analytics',
    table: 'analytics_days',
    key: [
      { column: 'visits', kind: 'integer' },
      { column: 'page_id', kind: 'id' },
    ],
    direction: 'desc',
  }),
  conversions: keysetList({
    name: 'pages-analytics',
    table: 'analytics_days',
    key: [
      { column: 'conversions', kind: 'integer' },
      { column: 'page_id', kind: 'id' },
    ],
    direction: 'desc',
  }),
};

/**
 * The pages overview: each live page with visits in the range, with its totals, by `sort`
 * descending and then by page id; keyset-paginated over that order (the cursor holds the last
 * page's value and id). Ranges are in UTC: whole days from the daily rollup, whole hours at the
 * edges from the hourly one, the rest from the sessions.
 */
export async function listPagesAnalytics(
  db: Kysely<Database>,
  tenantId: string,
  query: PagesAnalyticsQuery,
): Promise<ListPage<PageTotals>> {
  const sort = query.sort ?? 'visits';
  const nextMidnight = Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS;
  const range = resolveRange(query, nextMidnight, 'UTC');
  const request = lists[sort].request(query, { within: tenantId, filters: { start: range.start, end: range.end, sort } });
  const ranked = await ranking(db, tenantId, range, sort);

  let from = 0;
  const after = request.after;
  if (after !== null) {
    const [value, id] = [Number(after[0]), String(after[1])];
    // The first page past the cursor in (value descending, id ascending).
    let lo = 0;
    let hi = ranked.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const r = ranked[mid];
      if (r && (r[sort] > value || (r[sort] === value && r.page_id <= id))) lo = mid + 1;
      else hi = mid;
    }
    from = lo;
  }
  const rows = ranked.slice(from, from + request.limit + 1);
  const names = new Map<string, string>();
  if (rows.length > 0) {
    const found = await db
      .selectFrom('pages')
      .select(['id', 'name'])
      .where('tenant_id', '=', tenantId)
      .where(
        'id',
        'in',
        rows.map((r) => r.page_id),
      )
      .execute();
    for (const p of found) names.set(p.id, p.name);
  }
  const shownRows = rows.slice(0, request.limit);
  const shown = shownRows.map((r) => r.page_id);
  const goals = await goalMetricsByPage(
    db,
    { tenantId, start: new Date(range.start).toISOString(), end: new Date(range.end).toISOString() },
    new Map(shownRows.map((r) => [r.page_id, r.sums.visits])),
  );
  const previous =
    query.compare === undefined
      ? undefined
      : new Map((await ranking(db, tenantId, previousOf(range), sort)).map((r) => [r.page_id, r.sums]));
  const groups = query.groupBy === undefined ? undefined : await groupsByPage(db, tenantId, shown, range, GROUP_COLUMN[query.groupBy]);
  const topByPage = new Map<string, PageTotals['groups']>();
  if (groups && query.groupBy !== undefined)
    for (const pageId of shown) {
      const top = topGroups(
        [...(groups.get(pageId) ?? [])].filter(([, s]) => s.visits > 0),
        (s) => s.visits,
      );
      const labelled = await labelGroups(db, tenantId, query.groupBy, top);
      topByPage.set(
        pageId,
        labelled.map(({ key, label, value }) => ({ key, label, ...toMetrics(value) })),
      );
    }
  const page = {
    request,
    rows,
    totalCount: ranked.length,
    map: (r: Ranked): PageTotals => {
      const totals = toMetrics(r.sums);
      const before = previous && toMetrics(previous.get(r.page_id) ?? zeroSums());
      return {
        pageId: r.page_id,
        pageName: names.get(r.page_id) ?? '',
        ...totals,
        goals: goals.get(r.page_id) ?? [],
        ...(groups ? { groups: topByPage.get(r.page_id) ?? [] } : {}),
        ...(before ? { previous: { totals: before }, change: changeOf(totals, before) } : {}),
      };
    },
  };
  return sort === 'visits' ? lists.visits.toListPage(page) : lists.conversions.toListPage(page);
}

/**
 * The sums per page and value of `column` over `range`, for the pages listed: whole UTC hours from
 * the hourly rollup (keyed by every grouping the overview offers), the edges from the sessions.
 */
async function groupsByPage(
  db: Kysely<Database>,
  tenantId: string,
  pageIds: readonly string[],
  range: Span,
  column: GroupColumn,
): Promise<Map<string, Map<string, RollupSums>>> {
  const byPage = new Map<string, Map<string, RollupSums>>();
  if (pageIds.length === 0) return byPage;
  const add = (rows: (SumRow & { page_id: string; k: unknown })[]) => {
    for (const row of rows) {
      const groups = byPage.get(row.page_id) ?? new Map<string, RollupSums>();
      byPage.set(row.page_id, groups);
      const key = String(row.k ?? '');
      const sums = groups.get(key) ?? zeroSums();
      groups.set(key, sums);
      addInto(sums, row);
    }
  };
  const visits = visitReads(db);
  const hours = splitSpan(range, HOUR_MS);
  if (hours.whole) add(await visits.pageValueSums(tenantId, pageIds, column, hours.whole, 'hour'));
  for (const part of hours.edges) add(await visits.pageValueSums(tenantId, pageIds, column, part, 'session'));
  return byPage;
}
