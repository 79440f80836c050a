import type { Kysely } from 'kysely';
import type { Database, GoalsTable } from '../db/types.js';
import { type GoalReach, type GoalScope, visitReads } from '../visits/index.js';
import type { GoalMetrics } from './schemas.js';

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
  if (goals.length === 0 || scope.pageIds?.length === 0) return { goals, rows: [] as GoalReach[] };
  const rows = await visitReads(db).goalsReached(scope, perPage);
  return { goals, rows };
}

function toGoalMetrics(goals: GoalsTable[], rows: GoalReach[], visits: number): GoalMetrics[] {
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
  const byPage = new Map<string, GoalReach[]>();
  for (const r of rows) byPage.set(r.page_id, [...(byPage.get(r.page_id) ?? []), r]);
  return new Map([...visits].map(([pageId, n]) => [pageId, toGoalMetrics(goals, byPage.get(pageId) ?? [], n)]));
}
