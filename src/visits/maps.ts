import type { Transaction } from 'kysely';
import type { Database, VisitMapsTable } from '../db/types.js';
import type { Report } from './report.js';
import { bucketOf, keptValue, VITALS } from './vitals.js';

// The click and scroll maps and web vitals of a report (issue 49), in TypeScript. PostgreSQL's
// `pam_collect` applies the same rules (collect-maps.sql.ts); test/visits/parity.test.ts holds the two together.

/** The visit as its maps count it: its session after the report. */
export interface MapVisit {
  sessionId: string;
  tenantId: string;
  pageId: string;
  audienceId: string;
  /** The audience version the document showed; undefined: the page's content. */
  versionId: string | undefined;
  sessionStartedAt: string;
  /** The session's deepest scroll after the report. */
  scroll: number;
  /** How much the session's click count rose with this report: the cells count no more clicks than that. */
  clickRise: number;
}

/** The deepest scroll's bucket: 0 to 100 in steps of 5. */
export const depthOf = (scroll: number): number => Math.min(100, Math.floor(scroll / 5) * 5);

/**
 * Counts a report into the maps, in the caller's transaction (which holds the visit's lock). A visit
 * is counted from its first report that names a viewport, under that viewport and version for good:
 * its depth bucket moves as it scrolls, a section counts once when first reached, the report's cells
 * add the clicks it says happened since the previous report (never more, in all, than the session's
 * click count rose: a replayed report adds none), a rage click at most once per click counted, and
 * each web vital moves the visit from its previous bucket to the new one.
 */
export async function recordMaps(trx: Transaction<Database>, visit: MapVisit, report: Report): Promise<void> {
  if (report.viewport === undefined) return;
  const stored = await trx.selectFrom('visit_maps').selectAll().where('session_id', '=', visit.sessionId).executeTakeFirst();
  const key = {
    tenant_id: visit.tenantId,
    page_id: visit.pageId,
    audience_id: visit.audienceId,
    version_id: stored?.version_id ?? visit.versionId ?? '',
    day: stored?.day ?? visit.sessionStartedAt.slice(0, 10),
    viewport: stored?.viewport ?? report.viewport,
  };
  const depth = depthOf(visit.scroll);
  const addDepth = (d: number, n: number) =>
    trx
      .insertInto('heatmap_depths')
      .values({ ...key, depth: d, visits: n })
      .onConflict((oc) =>
        oc
          .columns(['page_id', 'audience_id', 'version_id', 'day', 'viewport', 'depth'])
          .doUpdateSet((eb) => ({ visits: eb('heatmap_depths.visits', '+', eb.ref('excluded.visits')) })),
      )
      .execute();
  if (!stored) await addDepth(depth, 1);
  else if (stored.depth !== depth) {
    await addDepth(stored.depth, -1);
    await addDepth(depth, 1);
  }

  let reached = BigInt(stored?.reached ?? 0);
  for (const section of report.reached ?? []) {
    const bit = 1n << BigInt(section);
    if ((reached & bit) !== 0n) continue;
    reached |= bit;
    await trx
      .insertInto('heatmap_sections')
      .values({ ...key, section, reached: 1 })
      .onConflict((oc) =>
        oc
          .columns(['page_id', 'audience_id', 'version_id', 'day', 'viewport', 'section'])
          .doUpdateSet((eb) => ({ reached: eb('heatmap_sections.reached', '+', 1) })),
      )
      .execute();
  }

  let budget = visit.clickRise;
  for (const [section, kind, x, y, clicks, rages] of report.cells ?? []) {
    const counted = Math.min(clicks, budget);
    if (counted <= 0) continue;
    budget -= counted;
    await trx
      .insertInto('heatmap_cells')
      .values({ ...key, section, kind, x, y, clicks: counted, rages: Math.min(rages, counted) })
      .onConflict((oc) =>
        oc.columns(['page_id', 'audience_id', 'version_id', 'day', 'viewport', 'section', 'kind', 'x', 'y']).doUpdateSet((eb) => ({
          clicks: eb('heatmap_cells.clicks', '+', eb.ref('excluded.clicks')),
          rages: eb('heatmap_cells.rages', '+', eb.ref('excluded.rages')),
        })),
      )
      .execute();
  }

  const vitals: Pick<VisitMapsTable, (typeof VITALS)[number]> = {
    lcp: stored?.lcp ?? null,
    inp: stored?.inp ?? null,
    cls: stored?.cls ?? null,
    fcp: stored?.fcp ?? null,
    ttfb: stored?.ttfb ?? null,
  };
  const addVital = (metric: string, bucket: number, n: number) =>
    trx
      .insertInto('web_vital_days')
      .values({ tenant_id: key.tenant_id, page_id: key.page_id, day: key.day, metric, bucket, visits: n })
      .onConflict((oc) =>
        oc.columns(['page_id', 'day', 'metric', 'bucket']).doUpdateSet((eb) => ({ visits: eb('web_vital_days.visits', '+', n) })),
      )
      .execute();
  for (const metric of VITALS) {
    const given = report.vitals?.[metric];
    if (given === undefined) continue;
    const value = keptValue(given);
    const before = vitals[metric];
    const bucket = bucketOf(metric, value);
    if (before === null) await addVital(metric, bucket, 1);
    else if (bucketOf(metric, before) !== bucket) {
      await addVital(metric, bucketOf(metric, before), -1);
      await addVital(metric, bucket, 1);
    }
    vitals[metric] = value;
  }

  const row: VisitMapsTable = { session_id: visit.sessionId, ...key, reached: Number(reached), depth, ...vitals };
  if (!stored) await trx.insertInto('visit_maps').values(row).execute();
  else
    await trx
      .updateTable('visit_maps')
      .set({ reached: row.reached, depth, ...vitals })
      .where('session_id', '=', visit.sessionId)
      .execute();
}
