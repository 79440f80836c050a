// The tables of click and scroll maps and web vitals (migration 0067, issue 49).

/** Where a measured visit stands: what its next report is compared with. */
export interface VisitMapsTable {
  session_id: string;
  tenant_id: string;
  page_id: string;
  audience_id: string;
  /** The audience version it was served ('' when none: the page's own content). */
  version_id: string;
  /** The UTC day of the session's start, YYYY-MM-DD. */
  day: string;
  viewport: string;
  /** Bit i: the visit saw at least half of section i (sections 0 to 49). */
  reached: number | string;
  /** The deepest scroll's bucket: 0, 5, …, 100. */
  depth: number;
  lcp: number | null;
  inp: number | null;
  cls: number | null;
  fcp: number | null;
  ttfb: number | null;
}

interface MapKey {
  tenant_id: string;
  page_id: string;
  audience_id: string;
  version_id: string;
  day: string;
  viewport: string;
}

export interface HeatmapCellsTable extends MapKey {
  section: number;
  kind: string;
  x: number;
  y: number;
  clicks: number | string;
  rages: number | string;
}

export interface HeatmapSectionsTable extends MapKey {
  section: number;
  reached: number | string;
}

export interface HeatmapDepthsTable extends MapKey {
  depth: number;
  visits: number | string;
}

export interface WebVitalDaysTable {
  tenant_id: string;
  page_id: string;
  day: string;
  metric: string;
  /** The bucket's upper bound: milliseconds, or thousandths for CLS (src/visits/vitals.ts). */
  bucket: number;
  visits: number | string;
}
