import type { Transaction } from 'kysely';
import { prepared } from '../db/prepared.js';
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

/** A visit's map row as a report reads it: what it was counted under, and where it stood. */
export type StoredMaps = Omit<VisitMapsTable, 'session_id' | 'tenant_id' | 'page_id' | 'audience_id'>;

/** The deepest scroll's bucket: 0 to 100 in steps of 5. */
export const depthOf = (scroll: number): number => Math.min(100, Math.floor(scroll / 5) * 5);

/** What every rollup row of a visit is counted under. */
type MapKey = Pick<VisitMapsTable, 'tenant_id' | 'page_id' | 'audience_id' | 'version_id' | 'day' | 'viewport'>;
const MAP_KEY = ['page_id', 'audience_id', 'version_id', 'day', 'viewport'] as const;
const keyOf = (p: MapKey): MapKey => ({
  tenant_id: p.tenant_id,
  page_id: p.page_id,
  audience_id: p.audience_id,
  version_id: p.version_id,
  day: p.day,
  viewport: p.viewport,
});

// Compiled once (db/prepared.ts): a report runs them, and building each cost as much as running it.
const addDepth = prepared((db, p: MapKey & { depth: number; visits: number }) =>
  db
    .insertInto('heatmap_depths')
    .values({ ...keyOf(p), depth: p.depth, visits: p.visits })
    .onConflict((oc) =>
      oc.columns([...MAP_KEY, 'depth']).doUpdateSet((eb) => ({ visits: eb('heatmap_depths.visits', '+', eb.ref('excluded.visits')) })),
    ),
);
const reachSection = prepared((db, p: MapKey & { section: number }) =>
  db
    .insertInto('heatmap_sections')
    .values({ ...keyOf(p), section: p.section, reached: 1 })
    .onConflict((oc) => oc.columns([...MAP_KEY, 'section']).doUpdateSet((eb) => ({ reached: eb('heatmap_sections.reached', '+', 1) }))),
);
const addCell = prepared((db, p: MapKey & { section: number; kind: string; x: number; y: number; clicks: number; rages: number }) =>
  db
    .insertInto('heatmap_cells')
    .values({ ...keyOf(p), section: p.section, kind: p.kind, x: p.x, y: p.y, clicks: p.clicks, rages: p.rages })
    .onConflict((oc) =>
      oc.columns([...MAP_KEY, 'section', 'kind', 'x', 'y']).doUpdateSet((eb) => ({
        clicks: eb('heatmap_cells.clicks', '+', eb.ref('excluded.clicks')),
        rages: eb('heatmap_cells.rages', '+', eb.ref('excluded.rages')),
      })),
    ),
);
const addVital = prepared((db, p: { tenant_id: string; page_id: string; day: string; metric: string; bucket: number; visits: number }) =>
  db
    .insertInto('web_vital_days')
    .values({ tenant_id: p.tenant_id, page_id: p.page_id, day: p.day, metric: p.metric, bucket: p.bucket, visits: p.visits })
    .onConflict((oc) =>
      oc
        .columns(['page_id', 'day', 'metric', 'bucket'])
        .doUpdateSet((eb) => ({ visits: eb('web_vital_days.visits', '+', eb.ref('excluded.visits')) })),
    ),
);
type Standing = Pick<VisitMapsTable, 'session_id' | 'reached' | 'depth' | (typeof VITALS)[number]>;
const insertMaps = prepared((db, p: VisitMapsTable) =>
  db.insertInto('visit_maps').values({
    session_id: p.session_id,
    ...keyOf(p),
    reached: p.reached,
    depth: p.depth,
    lcp: p.lcp,
    inp: p.inp,
    cls: p.cls,
    fcp: p.fcp,
    ttfb: p.ttfb,
  }),
);
const updateMaps = prepared((db, p: Standing) =>
  db
    .updateTable('visit_maps')
    .set({ reached: p.reached, depth: p.depth, lcp: p.lcp, inp: p.inp, cls: p.cls, fcp: p.fcp, ttfb: p.ttfb })
    .where('session_id', '=', p.session_id),
);

/**
 * Counts a report into the maps, in the caller's transaction (which holds the visit's lock). A visit
 * is counted from its first report that names a viewport, under that viewport and version for good:
 * its depth bucket moves as it scrolls, a section counts once when first reached, the report's cells
 * add the clicks it says happened since the previous report (never more, in all, than the session's
 * click count rose: a replayed report adds none), a rage click at most once per click counted, and
 * each web vital moves the visit from its previous bucket to the new one. A report that moves
 * nothing (most of a visit's, once it has settled) writes nothing. `stored`: the visit's map row,
 * read with its session (sql-store.ts).
 */
export async function recordMaps(
  trx: Transaction<Database>,
  visit: MapVisit,
  report: Report,
  stored: StoredMaps | undefined,
): Promise<void> {
  if (report.viewport === undefined) return;
  const key: MapKey = {
    tenant_id: visit.tenantId,
    page_id: visit.pageId,
    audience_id: visit.audienceId,
    version_id: stored?.version_id ?? visit.versionId ?? '',
    day: stored?.day ?? visit.sessionStartedAt.slice(0, 10),
    viewport: stored?.viewport ?? report.viewport,
  };
  const depth = depthOf(visit.scroll);
  if (!stored) await addDepth(trx, { ...key, depth, visits: 1 });
  else if (stored.depth !== depth) {
    await addDepth(trx, { ...key, depth: stored.depth, visits: -1 });
    await addDepth(trx, { ...key, depth, visits: 1 });
  }

  let reached = BigInt(stored?.reached ?? 0);
  for (const section of report.reached ?? []) {
    const bit = 1n << BigInt(section);
    if ((reached & bit) !== 0n) continue;
    reached |= bit;
    await reachSection(trx, { ...key, section });
  }

  let budget = visit.clickRise;
  for (const [section, kind, x, y, clicks, rages] of report.cells ?? []) {
    const counted = Math.min(clicks, budget);
    if (counted <= 0) continue;
    budget -= counted;
    await addCell(trx, { ...key, section, kind, x, y, clicks: counted, rages: Math.min(rages, counted) });
  }

  const vitals: Pick<VisitMapsTable, (typeof VITALS)[number]> = {
    lcp: stored?.lcp ?? null,
    inp: stored?.inp ?? null,
    cls: stored?.cls ?? null,
    fcp: stored?.fcp ?? null,
    ttfb: stored?.ttfb ?? null,
  };
  const vital = (metric: string, bucket: number, visits: number) =>
    addVital(trx, { tenant_id: key.tenant_id, page_id: key.page_id, day: key.day, metric, bucket, visits });
  for (const metric of VITALS) {
    const given = report.vitals?.[metric];
    if (given === undefined) continue;
    const value = keptValue(given);
    const before = vitals[metric];
    const bucket = bucketOf(metric, value);
    if (before === null) await vital(metric, bucket, 1);
    else if (bucketOf(metric, before) !== bucket) {
      await vital(metric, bucketOf(metric, before), -1);
      await vital(metric, bucket, 1);
    }
    vitals[metric] = value;
  }

  const standing: Standing = { session_id: visit.sessionId, reached: Number(reached), depth, ...vitals };
  if (!stored) await insertMaps(trx, { ...key, ...standing });
  else if (moved(stored, standing)) await updateMaps(trx, standing);
}

/** Whether the visit's standing differs from the stored one (`reached` is text on PostgreSQL). */
function moved(stored: StoredMaps, now: Standing): boolean {
  if (Number(stored.reached) !== now.reached || stored.depth !== now.depth) return true;
  return VITALS.some((metric) => (stored[metric] === null ? null : Number(stored[metric])) !== now[metric]);
}
