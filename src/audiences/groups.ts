import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';

/** The groups a grouped answer lists at most (analytics and funnels). */
export const MAX_GROUPS = 50;

/** The top `MAX_GROUPS` of `groups` by `weight` descending, then by key. */
export function topGroups<T>(groups: Iterable<readonly [string, T]>, weight: (value: T) => number): [string, T][] {
  return [...groups]
    .map(([key, value]): [string, T] => [key, value])
    .sort(([ka, a], [kb, b]) => weight(b) - weight(a) || (ka < kb ? -1 : ka > kb ? 1 : 0))
    .slice(0, MAX_GROUPS);
}

/**
 * Each group with its label: grouped by audience, the audience's effectiveName (its id when the
 * tenant has no such audience); by anything else, the value itself.
 */
export async function labelGroups<T>(
  db: Kysely<Database>,
  tenantId: string,
  groupBy: string,
  groups: readonly (readonly [string, T])[],
): Promise<{ key: string; label: string; value: T }[]> {
  const labels = new Map<string, string>();
  if (groupBy === 'audience' && groups.length > 0) {
    const ids = groups.map(([key]) => key);
    const rows = await db
      .selectFrom('audiences')
      .select(['id', 'effective_name'])
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', ids)
      .execute();
    for (const r of rows) labels.set(r.id, r.effective_name);
  }
  return groups.map(([key, value]) => ({ key, label: labels.get(key) ?? key, value }));
}
