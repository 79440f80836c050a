import type { SessionColumn } from '../db/session-columns.js';
import type { VisitClasses } from './repository.js';
import type { Report } from './report.js';

// The ingest port: the visitor plane (site/measure/) hands every report to a `VisitStore` and knows
// nothing of how it is kept. Each store sits beside the others in a file of its own (sql-store.ts
// for SQLite and PostgreSQL's transaction, postgres-store.ts for PostgreSQL's one statement), as
// umami keeps one query file per dialect; another store (an events store) is one more file.

/** Who a report's view token names (site/token.ts's claims, as a store needs them). */
export interface VisitClaims {
  tenantId: string;
  pageId: string;
  audienceId: string;
  linkId: string;
  /** The path the document was served at, when it is not the link's own. */
  path?: string;
  experimentId?: string;
  arm?: string;
  unit?: string;
  /** The audience version the document showed (its maps are kept per version); absent: the page's own content. */
  versionId?: string;
  visitId: string;
  /** When the document was served, in milliseconds since the epoch. */
  issuedAt: number;
}

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

/** Where reports are kept: `record` takes one report, whole or not at all. */
export interface VisitStore {
  record(visit: VisitReport): Promise<Recorded>;
}
