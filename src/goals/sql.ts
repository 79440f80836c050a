import { sql, type RawBuilder } from 'kysely';
import type { Target } from './rules.js';

/**
 * Who a visit's visitor is, over `audience_sessions s` joined to its `audiences a`: the person the
 * audience was made for when there is one, else the visit's daily visitor hash (docs/analytics.md,
 * "Unique visitors"), else the visit itself (a session recorded through the API has no hash).
 */
export const VISITOR = sql`coalesce(a.person_id, nullif(s.visitor_hash, ''), s.id)`;

/** Whether the `visit_events` row `e` is an occurrence of the goal row `g`: its kind and target, and a form goal's page. */
export const GOAL_REACHED = sql<boolean>`e.tenant_id = g.tenant_id and e.kind = g.kind and e.name = g.target and (g.page_id is null or e.page_id = g.page_id)`;

/** Whether the `visit_events` row `e` is an occurrence of `t`. */
export function occurrenceOf(t: Target, e = 'e'): RawBuilder<boolean> {
  const ref = (column: string) => sql.ref(`${e}.${column}`);
  return sql<boolean>`(${ref('kind')} = ${t.kind} and ${ref('name')} = ${t.target}${
    t.pageId === null ? sql`` : sql` and ${ref('page_id')} = ${t.pageId}`
  })`;
}
