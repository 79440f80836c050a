import type { RollupSums } from '../db/types.js';
import { addInto, SITE_DIMENSIONS, type SiteDimension, type SumRow, type VisitReads, zeroSums } from '../visits/index.js';
import { DAY_MS, HOUR_MS, splitSpan, type Span } from './ranges.js';

/**
 * The site answer's groups (every live page of a tenant), from the site's own rollups (migration
 * 0027) per UTC day and value, which hold deleted pages' visits too: the store takes a deleted
 * page's rows out again (visits/reads.ts).
 */

export const isSiteDimension = (column: string): column is SiteDimension => (SITE_DIMENSIONS as readonly string[]).includes(column);

/**
 * The site's sums per value of `column` over `range`: whole UTC days from the daily rows; the
 * rest of the range (less than a day at each end) from the page rollup's whole hours, then the
 * sessions.
 */
export async function siteGroups(
  visits: VisitReads,
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
  const days = splitSpan(range, DAY_MS);
  if (days.whole) add(await visits.siteValueSums(tenantId, column, days.whole, 'day'));
  for (const edge of days.edges) {
    const hours = splitSpan(edge, HOUR_MS);
    if (hours.whole) add(await visits.siteValueSums(tenantId, column, hours.whole, 'hour'));
    for (const part of hours.edges) add(await visits.siteValueSums(tenantId, column, part, 'session'));
  }
  return groups;
}
