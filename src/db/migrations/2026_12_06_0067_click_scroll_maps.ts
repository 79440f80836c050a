import { sql, type Kysely } from 'kysely';
import { columnTypes } from './dialect.js';

/**
 * Click and scroll maps, scroll goals and field web vitals (issue 49), kept by the collector
 * (src/visits/maps.ts, and `pam_collect` on PostgreSQL):
 * - `visit_maps`: one row per measured visit, what its next report is compared with: the version and
 *   viewport it was counted under, the sections it reached (bit i: section i), its depth bucket and
 *   its latest web vitals. No click of it is kept here: clicks go to the rollup only.
 * - `heatmap_cells`, `heatmap_sections`, `heatmap_depths`: per page, audience, version, UTC day and
 *   viewport, the clicks (and rage clicks) per section, kind and cell of the 20 × 20 grid; the visits
 *   that reached each section; the visits by deepest scroll (in steps of 5).
 * - `web_vital_days`: per page, UTC day and metric, the visits per histogram bucket.
 * - `goals.threshold` and `goals.path_like`: a scroll goal's depth and its path glob as a LIKE pattern.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { id } = columnTypes(db);
  const keyed = (name: string) =>
    db.schema
      .createTable(name)
      .addColumn('tenant_id', id, (c) => c.notNull())
      .addColumn('page_id', id, (c) => c.notNull())
      .addColumn('audience_id', id, (c) => c.notNull())
      .addColumn('version_id', id, (c) => c.notNull())
      .addColumn('day', 'text', (c) => c.notNull())
      .addColumn('viewport', 'text', (c) => c.notNull());
  const key = ['page_id', 'audience_id', 'version_id', 'day', 'viewport'] as const;
  await db.schema
    .createTable('visit_maps')
    .addColumn('session_id', id, (c) => c.primaryKey())
    .addColumn('tenant_id', id, (c) => c.notNull())
    .addColumn('page_id', id, (c) => c.notNull())
    .addColumn('audience_id', id, (c) => c.notNull())
    .addColumn('version_id', id, (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('viewport', 'text', (c) => c.notNull())
    .addColumn('reached', 'bigint', (c) => c.notNull())
    .addColumn('depth', 'integer', (c) => c.notNull())
    .addColumn('lcp', 'double precision')
    .addColumn('inp', 'double precision')
    .addColumn('cls', 'double precision')
    .addColumn('fcp', 'double precision')
    .addColumn('ttfb', 'double precision')
    .execute();
  await keyed('heatmap_cells')
    .addColumn('section', 'integer', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('x', 'integer', (c) => c.notNull())
    .addColumn('y', 'integer', (c) => c.notNull())
    .addColumn('clicks', 'bigint', (c) => c.notNull())
    .addColumn('rages', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('heatmap_cells_pk', [...key, 'section', 'kind', 'x', 'y'])
    .execute();
  await keyed('heatmap_sections')
    .addColumn('section', 'integer', (c) => c.notNull())
    .addColumn('reached', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('heatmap_sections_pk', [...key, 'section'])
    .execute();
  await keyed('heatmap_depths')
    .addColumn('depth', 'integer', (c) => c.notNull())
    .addColumn('visits', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('heatmap_depths_pk', [...key, 'depth'])
    .execute();
  await db.schema
    .createTable('web_vital_days')
    .addColumn('tenant_id', id, (c) => c.notNull())
    .addColumn('page_id', id, (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('metric', 'text', (c) => c.notNull())
    .addColumn('bucket', 'integer', (c) => c.notNull())
    .addColumn('visits', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('web_vital_days_pk', ['page_id', 'day', 'metric', 'bucket'])
    .execute();
  await db.schema.alterTable('goals').addColumn('threshold', 'integer').execute();
  await db.schema.alterTable('goals').addColumn('path_like', 'text').execute();
  // The site's vitals sum its pages' per day.
  await sql`create index web_vital_days_tenant_idx on web_vital_days (tenant_id, day)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index web_vital_days_tenant_idx`.execute(db);
  await db.schema.alterTable('goals').dropColumn('path_like').execute();
  await db.schema.alterTable('goals').dropColumn('threshold').execute();
  for (const table of ['web_vital_days', 'heatmap_depths', 'heatmap_sections', 'heatmap_cells', 'visit_maps']) {
    await db.schema.dropTable(table).execute();
  }
}
