import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { Database } from '../db/types.js';
import type { Vital } from './vitals.js';

// What the maps' rollups hold (migration 0067), read for the heatmap and the analytics answers.

/** Which visits a map counts: one page's, on the UTC days [fromDay, toDay], maybe of one audience, version or viewport. */
export interface MapFilter {
  tenantId: string;
  pageId: string;
  audienceId?: string;
  versionId?: string;
  viewport?: string;
  /** YYYY-MM-DD, both included. */
  fromDay: string;
  toDay: string;
}

export interface MapCounts {
  /** Visits per depth bucket (0, 5, …, 100): the deepest scroll of each. */
  depths: Map<number, number>;
  /** Visits that reached each section. */
  reached: Map<number, number>;
  cells: { section: number; x: number; y: number; clicks: number; rages: number }[];
}

type MapTable = 'heatmap_depths' | 'heatmap_sections' | 'heatmap_cells';

function filtered<T extends MapTable, O>(query: SelectQueryBuilder<Database, T, O>, f: MapFilter) {
  let q = query
    .where(sql.ref('tenant_id'), '=', f.tenantId)
    .where(sql.ref('page_id'), '=', f.pageId)
    .where(sql.ref('day'), '>=', f.fromDay)
    .where(sql.ref('day'), '<=', f.toDay);
  if (f.audienceId !== undefined) q = q.where(sql.ref('audience_id'), '=', f.audienceId);
  if (f.versionId !== undefined) q = q.where(sql.ref('version_id'), '=', f.versionId);
  if (f.viewport !== undefined) q = q.where(sql.ref('viewport'), '=', f.viewport);
  return q;
}

export async function readMapCounts(db: Kysely<Database>, f: MapFilter): Promise<MapCounts> {
  const [depths, reached, cells] = await Promise.all([
    filtered(db.selectFrom('heatmap_depths').select(['depth', sql<string>`sum(visits)`.as('n')]), f)
      .groupBy('depth')
      .execute(),
    filtered(db.selectFrom('heatmap_sections').select(['section', sql<string>`sum(reached)`.as('n')]), f)
      .groupBy('section')
      .execute(),
    filtered(
      db
        .selectFrom('heatmap_cells')
        .select(['section', 'x', 'y', sql<string>`sum(clicks)`.as('clicks'), sql<string>`sum(rages)`.as('rages')]),
      f,
    )
      .groupBy(['section', 'y', 'x'])
      .orderBy('section')
      .orderBy('y')
      .orderBy('x')
      .execute(),
  ]);
  return {
    depths: new Map(depths.map((r) => [Number(r.depth), Number(r.n)])),
    reached: new Map(reached.map((r) => [Number(r.section), Number(r.n)])),
    cells: cells.map((r) => ({
      section: Number(r.section),
      x: Number(r.x),
      y: Number(r.y),
      clicks: Number(r.clicks),
      rages: Number(r.rages),
    })),
  };
}

/** Each vital's visits per bucket over the UTC days [fromDay, toDay]: one page's, or every page's of the tenant. */
export async function readVitals(
  db: Kysely<Database>,
  f: { tenantId: string; pageId?: string; fromDay: string; toDay: string },
): Promise<Map<Vital, Map<number, number>>> {
  let q = db
    .selectFrom('web_vital_days')
    .select(['metric', 'bucket', sql<string>`sum(visits)`.as('n')])
    .where('tenant_id', '=', f.tenantId)
    .where('day', '>=', f.fromDay)
    .where('day', '<=', f.toDay);
  if (f.pageId !== undefined) q = q.where('page_id', '=', f.pageId);
  const rows = await q.groupBy(['metric', 'bucket']).execute();
  const byMetric = new Map<Vital, Map<number, number>>();
  for (const r of rows) {
    const metric = r.metric as Vital;
    const buckets = byMetric.get(metric) ?? new Map<number, number>();
    buckets.set(Number(r.bucket), Number(r.n));
    byMetric.set(metric, buckets);
  }
  return byMetric;
}
