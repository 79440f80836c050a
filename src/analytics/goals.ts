import { sql, type Kysely } from 'kysely';
import type { Database, GoalsTable } from '../db/types.js';
import { GOAL_REACHED, VISITOR } from '../goals/index.js';
import type { GoalMetrics } from './schemas.js';

/** The visits goals are counted over: a tenant's (the site), maybe one page or some pages, maybe one audience. */
export interface GoalScope {
  tenantId: string;
  /** Only these pages' visits; undefined: every page of the tenant. */
  pageIds?: readonly string[];
  audienceId?: string;
  /** The range of the visits' starts, ISO instants: [start, end). */
  start: string;
  end: string;
}

interface GoalRow {
  page_id: string;
  goal_id: string;
  completions: number | string;
  visits: number | string;
  uniques: number | string;
  value: number | string | null;
}

const round = (x: number) => Math.round(x * 1e6) / 1e6;

/**
 * Each goal of the tenant over the scope's visits, per page (`''` when the scope is the site): the
 * visits it happened in (a goal counts at most once per visit, issue 36: a visit holds one
 * occurrence per kind and name, so a goal meets at most one per visit), the distinct visitors (the
 * person, else the daily visitor hash), and the sum of the values tracked with it, each visit's at
 * most the goal's `max_value` (clamped, docs/analytics.md). One statement over the visits'
 * occurrences (an index range per goal for the site, per page otherwise); nothing when the tenant
 * has no goal.
 */
async function readGoals(db: Kysely<Database>, scope: GoalScope, perPage: boolean) {
  const goals = await db
    .selectFrom('goals')
    .selectAll()
    .where('tenant_id', '=', scope.tenantId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  if (goals.length === 0 || scope.pageIds?.length === 0) return { goals, rows: [] as GoalRow[] };
  const pages = scope.pageIds;
  const { rows } = await sql<GoalRow>`select ${perPage ? sql`e.page_id` : sql`''`} as page_id, g.id as goal_id,
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
  return { goals, rows };
}

function toGoalMetrics(goals: GoalsTable[], rows: GoalRow[], visits: number): GoalMetrics[] {
  const byGoal = new Map(rows.map((r) => [r.goal_id, r]));
  return goals.map((g) => {
    const r = byGoal.get(g.id);
    const converted = Number(r?.visits ?? 0);
    return {
      goalId: g.id,
      name: g.name,
      completions: Number(r?.completions ?? 0),
      uniqueCompletions: Number(r?.uniques ?? 0),
      value: round(Number(r?.value ?? 0)),
      currency: g.currency,
      conversionRate: visits > 0 ? round(Math.min(1, converted / visits)) : null,
    };
  });
}

/** The goals over the scope's visits, as one set (a page, or the site); `visits`: how many visits the scope has. */
export async function goalMetrics(db: Kysely<Database>, scope: GoalScope, visits: number): Promise<GoalMetrics[]> {
  const { goals, rows } = await readGoals(db, scope, false);
  return toGoalMetrics(goals, rows, visits);
}

/** The goals of each page of `visits` (page id → its visits in the scope), for the pages overview. */
export async function goalMetricsByPage(
  db: Kysely<Database>,
  scope: Omit<GoalScope, 'pageIds'>,
  visits: ReadonlyMap<string, number>,
): Promise<Map<string, GoalMetrics[]>> {
  const { goals, rows } = await readGoals(db, { ...scope, pageIds: [...visits.keys()] }, true);
  const byPage = new Map<string, GoalRow[]>();
  for (const r of rows) byPage.set(r.page_id, [...(byPage.get(r.page_id) ?? []), r]);
  return new Map([...visits].map(([pageId, n]) => [pageId, toGoalMetrics(goals, byPage.get(pageId) ?? [], n)]));
}
