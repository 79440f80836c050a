import { sql, type RawBuilder } from 'kysely';
import { likeOfGlob, type Target } from './rules.js';

/**
 * Who a visit's visitor is, over `audience_sessions s` joined to its `audiences a`: the person the
 * audience was made for when there is one, else the visit's daily visitor hash (docs/analytics.md,
 * "Unique visitors"), else the visit itself (a session recorded through the API has no hash).
 */
export const VISITOR = sql`coalesce(a.person_id, nullif(s.visitor_hash, ''), s.id)`;

/** Whether the `visit_events` row `e` is an occurrence of the goal row `g`: its kind and target, and a form goal's page. */
export const GOAL_REACHED = sql<boolean>`e.tenant_id = g.tenant_id and e.kind = g.kind and (g.page_id is null or e.page_id = g.page_id)
  and ((g.kind <> 'scroll' and e.name = g.target)
    or (g.kind = 'scroll' and e.count >= g.threshold and lower(e.name) like g.path_like escape ${sql.lit('\\')}))`;

/** Whether the `visit_events` row `e` is an occurrence of `t`. */
export function occurrenceOf(t: Target, e = 'e'): RawBuilder<boolean> {
  const ref = (column: string) => sql.ref(`${e}.${column}`);
  if (t.kind === 'scroll') {
    return sql<boolean>`(${ref('kind')} = 'scroll' and ${ref('count')} >= ${t.threshold ?? 100} and lower(${ref('name')}) like ${likeOfGlob(
      t.target,
    )} escape ${sql.lit('\\')})`;
  }
  return sql<boolean>`(${ref('kind')} = ${t.kind} and ${ref('name')} = ${t.target}${
    t.pageId === null ? sql`` : sql` and ${ref('page_id')} = ${t.pageId}`
  })`;
}
