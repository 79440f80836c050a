import { type Kysely, sql } from 'kysely';
import { CACHES, newCache } from '../db/caches.js';
import { prepared } from '../db/prepared.js';
import type { Database } from '../db/types.js';
import { newId } from '../ids.js';
import { now } from '../time.js';
import type { Recorded, SeenClasses, VisitReport, VisitStore } from './port.js';
import type { Report } from './report.js';
import { keptValue, VITALS } from './vitals.js';
import { endDelaySeconds } from './reducer.js';
import { sqlStore } from './sql-store.js';

/** What the one statement of a report is told (`pam_collect`, collect.sql.ts). */
interface ReportParams {
  tenantId: string;
  pageId: string;
  linkId: string;
  audienceId: string;
  visitId: string;
  issuedAt: string;
  at: string;
  visibleMs: number;
  scroll: number;
  clicks: number;
  questions: number;
  conversions: number;
  utmSource: string | null;
  utmMedium: string | null;
  utmCampaign: string | null;
  utmTerm: string | null;
  utmContent: string | null;
  endDueAt: string;
  kinds: string[];
  names: string[];
  totals: number[];
  values: number[];
  now: string | null;
  sessionId: string | null;
  createdEvent: string | null;
  startedEvent: string | null;
  urlPrefix: string | null;
  claimPath: string | null;
  experimentId: string | null;
  arm: string | null;
  unit: string | null;
  referrerHost: string | null;
  channel: string | null;
  deviceType: string | null;
  browser: string | null;
  os: string | null;
  country: string | null;
  visitorHash: string | null;
  channelGroup: string | null;
  viewport: string | null;
  versionId: string | null;
  reached: number[];
  cellSections: number[];
  cellKinds: string[];
  cellX: number[];
  cellY: number[];
  cellClicks: number[];
  cellRages: number[];
  vitals: (number | null)[];
}

/** A report's maps and vitals as the statement's arrays (maps.ts). */
function mapParams(report: Report, versionId: string | undefined) {
  const cells = report.cells ?? [];
  return {
    viewport: report.viewport ?? null,
    versionId: versionId ?? null,
    reached: report.reached ?? [],
    cellSections: cells.map((c) => c[0]),
    cellKinds: cells.map((c) => c[1]),
    cellX: cells.map((c) => c[2]),
    cellY: cells.map((c) => c[3]),
    cellClicks: cells.map((c) => c[4]),
    cellRages: cells.map((c) => c[5]),
    vitals: VITALS.map((m) => {
      const value = report.vitals?.[m];
      return value === undefined ? null : keptValue(value);
    }),
  };
}

/** Named and planned once per connection (db/named-statements.ts): it runs on every report. */
const collectStatement = prepared((db, p: ReportParams) => ({
  compile: () =>
    sql<{ outcome: Outcome }>`select pam_collect(
      ${p.tenantId}, ${p.pageId}, ${p.linkId}, ${p.audienceId}, ${p.visitId},
      cast(${p.issuedAt} as timestamptz), cast(${p.at} as timestamptz),
      cast(${p.visibleMs} as bigint), cast(${p.scroll} as float8), cast(${p.clicks} as bigint), cast(${p.questions} as bigint),
      cast(${p.conversions} as bigint),
      cast(${p.utmSource} as text), cast(${p.utmMedium} as text), cast(${p.utmCampaign} as text), cast(${p.utmTerm} as text),
      cast(${p.utmContent} as text), cast(${p.endDueAt} as timestamptz),
      cast(${p.kinds} as text[]), cast(${p.names} as text[]), cast(${p.totals} as bigint[]), cast(${p.values} as float8[]),
      cast(${p.now} as text), cast(${p.sessionId} as text), cast(${p.createdEvent} as text), cast(${p.startedEvent} as text),
      cast(${p.urlPrefix} as text), cast(${p.claimPath} as text),
      cast(${p.experimentId} as text), cast(${p.arm} as text), cast(${p.unit} as text),
      cast(${p.referrerHost} as text), cast(${p.channel} as text), cast(${p.deviceType} as text), cast(${p.browser} as text),
      cast(${p.os} as text), cast(${p.country} as text), cast(${p.visitorHash} as text), cast(${p.channelGroup} as text),
      cast(${p.viewport} as text), cast(${p.versionId} as text), cast(${p.reached} as integer[]),
      cast(${p.cellSections} as integer[]), cast(${p.cellKinds} as text[]), cast(${p.cellX} as integer[]), cast(${p.cellY} as integer[]),
      cast(${p.cellClicks} as bigint[]), cast(${p.cellRages} as bigint[]), cast(${p.vitals} as float8[])
    ) as outcome`.compile(db),
}));

/**
 * `accepted`; `gone`: the page is not live; `classify`: the visit has no session yet and its classes
 * were not sent; `slow`: nothing was written, the report's transaction (sql-store.ts) takes it.
 */
type Outcome = 'accepted' | 'gone' | 'classify' | 'slow';

/**
 * PostgreSQL's store: a report in one statement (issue 31). `pam_collect` applies the collector's
 * rules in the database, in the statement's own transaction. A first report also needs its visit's
 * classes, worked out by the visitor plane from the request (the secret, the address and the user
 * agent stay in that process): they are sent when this instance has not taken a report of the visit
 * yet, and when the database answers that the visit has no session yet (`classify`: then a second
 * statement). Of the visits this instance knows, at most `CACHES.knownVisits` allows are remembered
 * (db/caches.ts). A report with `Sec-GPC: 1` marks its session (visits/repository.ts), which
 * `pam_collect` cannot do: it takes the transaction, as a `slow` one does.
 */
export function postgresStore(db: Kysely<Database>): VisitStore {
  const known = newCache<true>(CACHES.knownVisits);
  const transaction = sqlStore(db);
  const run = async (visit: VisitReport, at: number, first: boolean): Promise<Outcome> => {
    const { claims, report } = visit;
    const kinds: string[] = [];
    const names: string[] = [];
    const totals: number[] = [];
    const values: number[] = [];
    for (const [name, total, value] of report.events ?? []) {
      kinds.push('event');
      names.push(name);
      totals.push(total);
      values.push(value);
    }
    for (const [name, total] of report.actions ?? []) {
      kinds.push('action');
      names.push(name);
      totals.push(total);
      values.push(0);
    }
    // The visitor key of a person's audience is made by the statement, which reads the person.
    const classes: SeenClasses | undefined = first ? await (await visit.seer())(null) : undefined;
    const experiment = claims.experimentId && claims.arm && claims.unit;
    const [row] = await collectStatement(db, {
      tenantId: claims.tenantId,
      pageId: claims.pageId,
      linkId: claims.linkId,
      audienceId: claims.audienceId,
      visitId: claims.visitId,
      issuedAt: new Date(claims.issuedAt).toISOString(),
      at: new Date(at).toISOString(),
      visibleMs: report.visibleMs,
      scroll: report.scroll,
      clicks: report.clicks,
      questions: report.questions,
      conversions: report.conversions,
      utmSource: report.utmSource ?? null,
      utmMedium: report.utmMedium ?? null,
      utmCampaign: report.utmCampaign ?? null,
      utmTerm: report.utmTerm ?? null,
      utmContent: report.utmContent ?? null,
      endDueAt: new Date(at + 1000 * endDelaySeconds(visit.idleSeconds, report.left === true)).toISOString(),
      kinds,
      names,
      totals,
      values,
      now: classes ? now() : null,
      sessionId: classes ? newId('session') : null,
      createdEvent: classes ? newId('event') : null,
      startedEvent: classes ? newId('event') : null,
      urlPrefix: classes ? visit.origin : null,
      claimPath: claims.path ?? null,
      experimentId: experiment ? (claims.experimentId ?? null) : null,
      arm: experiment ? (claims.arm ?? null) : null,
      unit: experiment ? (claims.unit ?? null) : null,
      referrerHost: classes?.referrer_host ?? null,
      channel: classes?.channel ?? null,
      deviceType: classes?.device_type ?? null,
      browser: classes?.browser ?? null,
      os: classes?.os ?? null,
      country: classes?.country ?? null,
      visitorHash: classes?.visitor ?? null,
      channelGroup: classes?.channel_group ?? null,
      ...mapParams(report, claims.versionId),
    });
    const outcome = row?.outcome ?? 'slow';
    if (outcome === 'accepted') known.set(claims.visitId, true);
    return outcome;
  };
  return {
    ...transaction,
    async record(visit): Promise<Recorded> {
      if (visit.gpc) return transaction.record(visit);
      const at = Date.now();
      let outcome = await run(visit, at, !known.has(visit.claims.visitId));
      if (outcome === 'classify') outcome = await run(visit, at, true);
      return outcome === 'slow' || outcome === 'classify' ? transaction.record(visit) : outcome;
    },
  };
}
