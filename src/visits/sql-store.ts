import type { Kysely, Transaction } from 'kysely';
import { dayOf } from '../db/daily-secrets.js';
import { lockExclusive } from '../db/locks.js';
import { prepared } from '../db/prepared.js';
import type { AudienceSessionsTable, Database } from '../db/types.js';
import { recordMaps, type StoredMaps } from './maps.js';
import { recordOccurrences } from './occurrences.js';
import { sqlReads } from './reads.js';
import { announceStart } from './announce.js';
import { experimentOf, lockVisit, occurrenceVisit, recordVisit, type Visit, type VisitClasses } from './repository.js';
import type { VisitClaims } from './claims.js';
import type { Recorded, SeenClasses, VisitReport, VisitStore } from './port.js';
import { dayFirsts, endDelaySeconds, occurrencesOf, raise } from './reducer.js';

/** The visit's map row (maps.ts), beside the session's columns under names of its own. */
const MAP_COLUMNS = [
  'visit_maps.session_id as map_session_id',
  'visit_maps.version_id as map_version_id',
  'visit_maps.day as map_day',
  'visit_maps.viewport as map_viewport',
  'visit_maps.reached as map_reached',
  'visit_maps.depth as map_depth',
  'visit_maps.lcp as map_lcp',
  'visit_maps.inp as map_inp',
  'visit_maps.cls as map_cls',
  'visit_maps.fcp as map_fcp',
  'visit_maps.ttfb as map_ttfb',
] as const;

/**
 * What a report needs, in one read compiled once (it runs on every report): the live page it is
 * for (its title, as the session records it), the path of the link it came through (deleted links
 * too: the visit keeps the path it was served at), the visit's session as stored, if any, and its
 * maps' standing (maps.ts). No row when the page is not live. Taken under the visit's lock, as
 * `findVisit` is.
 */
const reportTarget = prepared((db, p: Pick<VisitClaims, 'tenantId' | 'pageId' | 'linkId' | 'visitId' | 'audienceId'>) =>
  db
    .selectFrom('pages')
    .leftJoin('page_links', (join) => join.on('page_links.id', '=', p.linkId).on('page_links.tenant_id', '=', p.tenantId))
    .leftJoin('audience_sessions', (join) =>
      join.on('audience_sessions.visit_id', '=', p.visitId).on('audience_sessions.tenant_id', '=', p.tenantId),
    )
    .leftJoin('audiences', (join) => join.on('audiences.id', '=', p.audienceId).on('audiences.tenant_id', '=', p.tenantId))
    .leftJoin('visit_maps', 'visit_maps.session_id', 'audience_sessions.id')
    .selectAll('audience_sessions')
    .select(['pages.title', 'page_links.path', 'audiences.person_id'])
    .select(MAP_COLUMNS)
    .where('pages.id', '=', p.pageId)
    .where('pages.tenant_id', '=', p.tenantId)
    .where('pages.deleted_at', 'is', null),
);

/**
 * The stored session of a `reportTarget` row (its columns are all null when there is none yet).
 * The row itself, with the page's two columns beside the session's: copying it without them cost
 * more than the read.
 */
function storedVisit(row: ReportTarget): AudienceSessionsTable | undefined {
  return row.id === null ? undefined : (row as AudienceSessionsTable);
}
type ReportTarget = Awaited<ReturnType<typeof reportTarget>>[number];

/** The stored map row of a `reportTarget` row, if the visit has one. */
function storedMaps(row: ReportTarget): StoredMaps | undefined {
  if (row.map_session_id === null) return undefined;
  return {
    version_id: row.map_version_id as string,
    day: row.map_day as string,
    viewport: row.map_viewport as string,
    reached: row.map_reached as StoredMaps['reached'],
    depth: row.map_depth as number,
    lcp: row.map_lcp,
    inp: row.map_inp,
    cls: row.map_cls,
    fcp: row.map_fcp,
    ttfb: row.map_ttfb,
  };
}

/** The pages a visitor's sessions of today (UTC) were on, under the visitor's lock. */
const visitorToday = prepared((db, p: { tenantId: string; visitor: string; since: string }) =>
  db
    .selectFrom('audience_sessions')
    .select('page_id')
    .where('tenant_id', '=', p.tenantId)
    .where('visitor_hash', '=', p.visitor)
    .where('session_started_at', '>=', p.since),
);

/** A first report's classes: what its request showed, and whether it is the visitor's first session of the UTC day on this page and on the site. */
async function classesOf(
  trx: Transaction<Database>,
  claims: VisitClaims,
  seen: SeenClasses,
  personId: string | null,
  at: number,
): Promise<VisitClasses> {
  const { visitor, ...classes } = seen;
  // Two first visits of one visitor at once (two instances) must not both count as the day's first.
  await lockExclusive(trx, `visitor:${claims.tenantId}:${visitor}`);
  const today = await visitorToday(trx, { tenantId: claims.tenantId, visitor, since: `${dayOf(at)}T00:00:00.000Z` });
  return {
    ...classes,
    visitor_hash: visitor,
    ...dayFirsts(
      today.map((s) => s.page_id),
      claims.pageId,
    ),
    // Only a visit of a person's audience is announced (`visit.started`).
    start_announced: personId === null ? 1 : 0,
  };
}

/** A report in a transaction of statements: SQLite's store, and PostgreSQL's when its one statement cannot take a report. */
export function sqlStore(db: Kysely<Database>): VisitStore {
  return { record: (visit) => recordInTransaction(db, visit), ...sqlReads(db) };
}

async function recordInTransaction(db: Kysely<Database>, visit: VisitReport): Promise<Recorded> {
  const { claims, report } = visit;
  // In memory after the first report of the day.
  const see = await visit.seer();
  const recorded = await db.transaction().execute(async (trx) => {
    await lockVisit(trx, claims.visitId);
    const [page] = await reportTarget(trx, claims);
    // The page was deleted since it was served: its sessions are gone from the API with it.
    if (!page) return false;
    const stored = storedVisit(page);
    const at = Date.now();
    const classes = stored ? undefined : await classesOf(trx, claims, await see(page.person_id), page.person_id, at);
    const row: Visit = {
      tenantId: claims.tenantId,
      pageId: claims.pageId,
      audienceId: claims.audienceId,
      visitId: claims.visitId,
      pageUrl: `${visit.origin}${claims.path ?? page.path ?? '/'}`,
      pageTitle: page.title,
      startedAt: new Date(at).toISOString(),
      ...(classes ? { classes } : {}),
      endDueAt: new Date(at + 1000 * endDelaySeconds(visit.idleSeconds, report.left === true)).toISOString(),
      endAfterIdle: report.left !== true,
      ...experimentOf(claims),
      gpc: visit.gpc,
    };
    const session = await recordVisit(trx, row, stored, raise({ stored, issuedAt: claims.issuedAt }, report, at));
    const path = page.path ?? claims.path ?? null;
    // A scroll goal counts the deepest scroll under the path, as it rises.
    const scrolled =
      path !== null && Math.floor(session.maxScrollDepthPercentage) > Math.floor(Number(stored?.max_scroll_depth_percentage ?? 0));
    // Most reports carry none of these: they cost nothing then. A path goal names the link's
    // path (a page_routing link's too, whatever the key after it).
    if (!stored || report.events || report.actions || scrolled) {
      const firstPath = stored ? null : path;
      const scroll = path === null ? undefined : { path, scroll: session.maxScrollDepthPercentage };
      await recordOccurrences(trx, occurrenceVisit(claims.tenantId, session), occurrencesOf(report, firstPath, scroll), row.startedAt);
    }
    await recordMaps(
      trx,
      {
        sessionId: session.audienceSessionId,
        tenantId: claims.tenantId,
        pageId: claims.pageId,
        audienceId: claims.audienceId,
        versionId: claims.versionId,
        sessionStartedAt: session.sessionStartedAt,
        scroll: session.maxScrollDepthPercentage,
        clickRise: session.totalClicksCount - Number(stored?.total_clicks_count ?? 0),
      },
      report,
      storedMaps(page),
    );
    if (page.person_id !== null && (classes?.start_announced ?? stored?.start_announced) === 0) {
      await announceStart(trx, claims.tenantId, session, page.person_id, claims.path ?? page.path ?? '/');
    }
    return true;
  });
  return recorded ? 'accepted' : 'gone';
}
