import type { SessionColumn } from '../db/session-columns.js';
import type { AudienceSessionsTable } from '../db/types.js';
import type { Target } from '../goals/index.js';
import type { MapCounts, MapFilter } from './heatmap.js';
import type { VisitClasses } from './repository.js';
import type { Report } from './report.js';
import type { SiteDimension } from './rollups.js';
import type { SUM_COLUMNS } from './sums.js';
import type { Vital } from './vitals.js';
import type { VisitClaims } from './claims.js';

// The ingest port: the visitor plane (site/measure/) hands every report to a `VisitStore` and knows
// nothing of how it is kept, and the analytics read what it keeps through the same store. Each
// store sits beside the others in a file of its own (sql-store.ts for SQLite and PostgreSQL's
// transaction, postgres-store.ts for PostgreSQL's one statement, reads.ts for the reads both
// answer alike), as umami keeps one query file per dialect; another store (an events store) is
// one more file.

/** What a first report tells of its visit without reading: every class but the day's firsts, and the visitor's key. */
export type SeenClasses = Pick<VisitClasses, SessionColumn<'classes'>> & {
  /** The visitor's key: `person:<id>` for a person's audience, else the day's hash of host, address and user agent. */
  visitor: string;
};

/** A first report's classes from its request, for the audience's person (null: none, or not known yet). */
export type See = (personId: string | null) => Promise<SeenClasses>;

/** One report, verified, with what the visitor plane knows of its request. */
export interface VisitReport {
  claims: VisitClaims;
  report: Report;
  /** The domain's public origin for this request: a new session's pageUrl starts with it. */
  origin: string;
  /** The request said `Sec-GPC: 1`: the session keeps it. */
  gpc: boolean;
  /** SESSION_IDLE_SECONDS: a visit's `session.ended` falls due this long after its last report. */
  idleSeconds: number;
  /**
   * Makes the classifier of a first report ready (today's secret read: on SQLite it must be read
   * before the report's transaction holds the one connection); called at most once per report.
   */
  seer: () => Promise<See>;
}

/** `gone`: the page is not live (deleted since it was served); nothing was written. */
export type Recorded = 'accepted' | 'gone';

/** Where reports are kept: `record` takes one report, whole or not at all; the reads are the analytics'. */
export interface VisitStore extends VisitReads {
  record(visit: VisitReport): Promise<Recorded>;
}

/** Instants in milliseconds since the epoch, [start, end). */
export interface TimeSpan {
  readonly start: number;
  readonly end: number;
}

/** A row's sums, named as `RollupSums` names them, as a driver returns aggregates (numbers or numeric strings). */
export type SumRow = Record<(typeof SUM_COLUMNS)[number], unknown>;

/** What visits are grouped by: the audience, the experiment's arm, or a dimension of the site's rollups. */
export type GroupColumn = 'audience_id' | 'experiment_arm' | SiteDimension;

/** Which visits a read adds up: one page's (maybe of one audience) or the tenant's live pages', maybe per value of a column. */
export interface VisitScope {
  tenantId: string;
  /** Undefined: every live page of the tenant (a deleted page's visits leave the site's answers with it). */
  pageId: string | undefined;
  audienceId: string | undefined;
  group: GroupColumn | undefined;
}

/** Where a span's sums come from: whole UTC days, whole UTC hours (both rollups), or the sessions (any span). */
export type Grain = 'day' | 'hour' | 'session';

/** A stored session as the analytics add it up, for the parts of a range no rollup covers. */
export type StartedSession = Pick<
  AudienceSessionsTable,
  'session_started_at' | 'audience_id' | 'experiment_arm' | SessionColumn<'dimensions'> | SessionColumn<'counts'> | SessionColumn<'firsts'>
>;

/** The instants that say which visits are open: ISO instants. */
export interface OpenWindow {
  now: string;
  /** A report since then. */
  since: string;
  /** A visit whose end follows its last report is open while that report is after this. */
  idleSince: string;
}

/** A visit open now, as the realtime view lists it. */
export type OpenVisit = Pick<
  AudienceSessionsTable,
  'id' | 'page_id' | 'audience_id' | 'page_url' | 'channel' | 'channel_group' | 'country' | 'session_started_at' | 'session_ended_at'
>;

/** The visits goals are counted over: a tenant's (the site), maybe one page or some pages, maybe one audience. */
export interface GoalScope {
  tenantId: string;
  /** Only these pages' visits; undefined: every page of the tenant. */
  pageIds?: readonly string[];
  audienceId?: string;
  /** The range of the visits' starts, ISO instants: [start, end). */
  start: string;
  end: string;
}

/** A goal reached over a scope's visits (per page, or `''` for them all); numbers as the driver returns them. */
export interface GoalReach {
  page_id: string;
  goal_id: string;
  completions: number | string;
  visits: number | string;
  uniques: number | string;
  value: number | string | null;
}

/** A funnel over a range: each visitor's steps in order, the first within `windowHours` of the rest. */
export interface FunnelQuery {
  tenantId: string;
  /** 2 or more. */
  steps: readonly Target[];
  windowHours: number;
  /** The range of the first steps' instants, ISO: [start, end). */
  start: string;
  end: string;
  /** Per value of this column of the first step's visit; undefined: one group, ''. */
  group: GroupColumn | undefined;
}

/** Visitors who reached a step (0-based) in a group, and the median seconds from the step before; numbers as the driver returns them. */
export interface FunnelStepCount {
  step: number | string;
  g: string;
  visitors: number | string;
  median: number | string | null;
}

/** An experiment's units that first met an arm in a period, their visits, and the units that converted. */
export interface ArmCount {
  number: number | string;
  arm: string;
  units: number | string;
  visits: number | string;
  conversions: number | string;
}

/** What the analytics read of the kept visits. */
export interface VisitReads {
  /** The scope's whole UTC hours in `span`, summed per hour and value of the scope's group (`k`, '' without one). */
  hourSums(scope: VisitScope, span: TimeSpan): Promise<(SumRow & { hour: string; k: unknown })[]>;
  /** The scope's sessions started in `spans`. */
  sessionsStarted(scope: VisitScope, spans: readonly TimeSpan[]): Promise<StartedSession[]>;
  /**
   * The live pages' whole UTC hours in `span`, summed per hour or per UTC day (`span` then whole
   * days), each row named by its first instant. Rows may be split: the caller adds them up.
   */
  siteSums(tenantId: string, span: TimeSpan, unit: 'hour' | 'day'): Promise<(SumRow & { hour: string })[]>;
  /** The live pages' sums per value of `column` over `span`, whole at `grain` (rows may be split, keys repeated). */
  siteValueSums(tenantId: string, column: SiteDimension, span: TimeSpan, grain: Grain): Promise<(SumRow & { k: unknown })[]>;
  /** Each page's sums over `span`, whole at `grain`: deleted pages too, the caller keeps the live. */
  pageSums(tenantId: string, span: TimeSpan, grain: Grain): Promise<(SumRow & { page_id: string })[]>;
  /** The sums per page and value of `column` over `span`, whole hours or any, of the pages listed (at least one). */
  pageValueSums(
    tenantId: string,
    pageIds: readonly string[],
    column: GroupColumn,
    span: TimeSpan,
    grain: Exclude<Grain, 'day'>,
  ): Promise<(SumRow & { page_id: string; k: unknown })[]>;
  /** How many visits are open in `window`, and the `limit` last seen, newest first. */
  openVisits(tenantId: string, window: OpenWindow, limit: number): Promise<{ count: number; visits: OpenVisit[] }>;
  /** Each of the tenant's goals reached over the scope's visits, per page when `perPage`. */
  goalsReached(scope: GoalScope, perPage: boolean): Promise<GoalReach[]>;
  /** A funnel's visitors per step and group. */
  funnelSteps(query: FunnelQuery): Promise<FunnelStepCount[]>;
  /** An experiment's counts per period and arm; with a goal, it is the conversion. */
  armCounts(experimentId: string, goal?: Target): Promise<ArmCount[]>;
  /** A page's click and scroll maps. */
  mapCounts(filter: MapFilter): Promise<MapCounts>;
  /** Each vital's visits per bucket over the UTC days [fromDay, toDay]: one page's, or every page's of the tenant. */
  vitals(filter: { tenantId: string; pageId?: string; fromDay: string; toDay: string }): Promise<Map<Vital, Map<number, number>>>;
}
