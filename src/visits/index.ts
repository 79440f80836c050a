import type { Kysely } from 'kysely';
import { isPostgres } from '../db/adapter.js';
import type { Database } from '../db/types.js';
import type { VisitReads, VisitStore } from './port.js';
import { postgresStore } from './postgres-store.js';
import { sqlReads } from './reads.js';
import { sqlStore } from './sql-store.js';

// The visits area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { applyCollectFunction } from './collect-function.js';
export { forgetOccurrencesNaming, type Occurrence, recordOccurrences } from './occurrences.js';
export type {
  ArmCount,
  FunnelStepCount,
  GoalReach,
  GoalScope,
  GroupColumn,
  OpenVisit,
  Recorded,
  See,
  SeenClasses,
  SumRow,
  TimeSpan,
  VisitReads,
  VisitReport,
  VisitScope,
  VisitStore,
} from './port.js';
export { isVisitClaims, VisitClaims } from './claims.js';
export { MAX_REPORT_BYTES, Report } from './report.js';

/** The store the database takes reports in: PostgreSQL's one statement, or a transaction. */
export function visitStore(db: Kysely<Database>): VisitStore {
  return isPostgres(db) ? postgresStore(db) : sqlStore(db);
}

/** What the analytics read through the port: that store's reads, which SQLite and PostgreSQL answer alike. */
export function visitReads(db: Kysely<Database>): VisitReads {
  return sqlReads(db);
}
export type { MapCounts, MapFilter } from './heatmap.js';
export { VIEWPORTS } from './report.js';
export { summarize, type Vital, type VitalSummary, VITALS } from './vitals.js';
export { announceStart, createSessionEnds } from './announce.js';
export { forgetSessions } from './erasure.js';
export {
  experimentOf,
  findVisit,
  lockVisit,
  NOT_COLLECTED,
  occurrenceVisit,
  recordVisit,
  sessionSeenSince,
  sessionsSentWithGpc,
  type Visit,
  type VisitClasses,
  type VisitFields,
} from './repository.js';
export { SITE_DIMENSIONS, type SiteDimension, truncated } from './rollups.js';
export { sessionRoutes } from './routes.js';
export { addInto, addSession, SESSION_SUMS, SUM_COLUMNS, zeroSums } from './sums.js';
export { classifyTraffic, type Landing } from './traffic.js';
