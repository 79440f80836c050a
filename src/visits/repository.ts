import { sql, type Kysely, type Transaction } from 'kysely';
import type { AudienceSessionsTable, Database, PagesTable } from '../db/types.js';
import { invalidField } from '../http/errors.js';
import { keysetList } from '../http/pagination.js';
import { newId } from '../ids.js';
import { isPostgres } from '../db/adapter.js';
import { prepared } from '../db/prepared.js';
import { SESSION_COLUMNS, type SessionColumn } from '../db/session-columns.js';
import { lockExclusive } from '../db/locks.js';
import { emit } from '../events/index.js';
import { now, toInstant } from '../time.js';
import { applySessionChange } from './rollups.js';
import { isAudienceOfPage } from '../audiences/index.js';
import type { AudienceSession, SessionCreate, SessionListQuery } from './schemas.js';
import { classifyTraffic } from './traffic.js';

export const toSession = (row: AudienceSessionsTable): AudienceSession => ({
  audienceSessionId: row.id,
  analyticsSessionId: row.analytics_session_id,
  audienceId: row.audience_id,
  pageId: row.page_id,
  pageTitle: row.page_title,
  pageUrl: row.page_url,
  sessionStartedAt: row.session_started_at,
  sessionEndedAt: row.session_ended_at,
  timeSpentSeconds: Number(row.time_spent_seconds),
  maxScrollDepthPercentage: Number(row.max_scroll_depth_percentage),
  totalClicksCount: Number(row.total_clicks_count),
  questionsAskedCount: Number(row.questions_asked_count),
  isBounce: row.is_bounce === 1,
  hasFormSubmit: row.has_form_submit === 1,
  hasConversion: row.has_conversion === 1,
  formSubmissionId: row.form_submission_id,
  formSubmissionIdentifier: row.form_submission_identifier,
  formSubmissionEmail: row.form_submission_email,
  formSubmissionPhone: row.form_submission_phone,
  utmCampaign: row.utm_campaign,
  utmContent: row.utm_content,
  utmMedium: row.utm_medium,
  utmSource: row.utm_source,
  utmTerm: row.utm_term,
  experimentId: row.experiment_id,
  arm: row.experiment_arm,
  referrerHost: row.referrer_host,
  channel: row.channel as AudienceSession['channel'],
  channelGroup: row.channel_group as AudienceSession['channelGroup'],
  deviceType: row.device_type,
  browser: row.browser,
  os: row.os,
  country: row.country,
});

/**
 * The visit classes of a session the collector did not take (posted through the API, or written
 * by a test or the bench): nothing known, no visitor, no `session.ended` to announce.
 */
export const NOT_COLLECTED: Pick<
  AudienceSessionsTable,
  SessionColumn<'classes'> | 'visitor_hash' | SessionColumn<'announcing'> | SessionColumn<'firsts'> | 'gpc'
> = {
  referrer_host: '',
  channel: 'direct',
  channel_group: 'Direct',
  device_type: '',
  browser: '',
  os: '',
  country: '',
  visitor_hash: '',
  end_due_at: null,
  end_due_follows: 0,
  start_announced: 1,
  end_announced: 0,
  first_of_day_page: 1,
  first_of_day_site: 1,
  gpc: 0,
};

/** A posted session's channel and channel group, from its UTM values alone (no referrer is known). */
function postedChannels(input: SessionCreate): Pick<AudienceSessionsTable, 'channel' | 'channel_group'> {
  const { channel, channelGroup } = classifyTraffic('', {
    adClick: false,
    utmSource: input.utmSource ?? '',
    utmMedium: input.utmMedium ?? '',
    utmCampaign: input.utmCampaign ?? '',
  });
  return { channel, channel_group: channelGroup };
}

function instant(value: string, path: string, bound = false): string {
  const iso = toInstant(value, bound);
  if (iso === undefined) throw invalidField(path, 'is not a date-time of years 0001-9999 in UTC');
  return iso;
}

export async function createSession(trx: Transaction<Database>, page: PagesTable, input: SessionCreate): Promise<AudienceSession> {
  if (!(await isAudienceOfPage(trx, page, input.audienceId))) throw invalidField('/audienceId', 'is not an audience of this page');
  const startedAt = instant(input.sessionStartedAt, '/sessionStartedAt');
  const endedAt = instant(input.sessionEndedAt, '/sessionEndedAt');
  if (endedAt < startedAt) throw invalidField('/sessionEndedAt', 'is before sessionStartedAt');
  const row: AudienceSessionsTable = {
    id: newId('session'),
    tenant_id: page.tenant_id,
    page_id: page.id,
    audience_id: input.audienceId,
    analytics_session_id: input.analyticsSessionId,
    page_title: page.title,
    page_url: input.pageUrl,
    session_started_at: startedAt,
    session_ended_at: endedAt,
    time_spent_seconds: input.timeSpentSeconds ?? (Date.parse(endedAt) - Date.parse(startedAt)) / 1000,
    max_scroll_depth_percentage: input.maxScrollDepthPercentage ?? 0,
    total_clicks_count: input.totalClicksCount ?? 0,
    questions_asked_count: input.questionsAskedCount ?? 0,
    is_bounce: input.isBounce ? 1 : 0,
    has_form_submit: input.hasFormSubmit ? 1 : 0,
    has_conversion: input.hasConversion ? 1 : 0,
    form_submission_id: input.formSubmissionId ?? '',
    form_submission_identifier: input.formSubmissionIdentifier ?? '',
    form_submission_email: input.formSubmissionEmail ?? '',
    form_submission_phone: input.formSubmissionPhone ?? '',
    utm_campaign: input.utmCampaign ?? '',
    utm_content: input.utmContent ?? '',
    experiment_id: null,
    experiment_arm: null,
    experiment_unit: null,
    utm_medium: input.utmMedium ?? '',
    utm_source: input.utmSource ?? '',
    utm_term: input.utmTerm ?? '',
    visit_id: null,
    created_at: now(),
    ...NOT_COLLECTED,
    ...postedChannels(input),
  };
  await trx.insertInto('audience_sessions').values(row).execute();
  await applySessionChange(trx, undefined, row);
  const session = toSession(row);
  await emit(trx, page.tenant_id, 'audience_session.created', session);
  return session;
}

const sessionsList = keysetList({
  name: 'sessions',
  table: 'audience_sessions',
  key: [
    { column: 'session_started_at', kind: 'timestamp' },
    { column: 'id', kind: 'id' },
  ],
  direction: 'desc',
});

export interface SessionFilters {
  start: string | undefined;
  end: string | undefined;
  audienceId: string | undefined;
}

/** The list's filters as stored instants: `startDate` inclusive, `endDate` exclusive. */
export function sessionFilters(query: Pick<SessionListQuery, 'startDate' | 'endDate' | 'audienceId'>): SessionFilters {
  const start = query.startDate === undefined ? undefined : instant(query.startDate, '/startDate', true);
  const end = query.endDate === undefined ? undefined : instant(query.endDate, '/endDate', true);
  if (start !== undefined && end !== undefined && start > end) throw invalidField('/startDate', 'is after endDate');
  return { start, end, audienceId: query.audienceId };
}

/** Newest visit first. The caller has checked `audienceId`. */
export async function listSessions(db: Kysely<Database>, page: PagesTable, query: SessionListQuery) {
  const filters = sessionFilters(query);
  const { start, end } = filters;
  const matching = db
    .selectFrom('audience_sessions')
    .where('page_id', '=', page.id)
    .where('tenant_id', '=', page.tenant_id)
    .$call((q) => (query.audienceId === undefined ? q : q.where('audience_id', '=', query.audienceId)))
    .$call((q) => (start === undefined ? q : q.where('session_started_at', '>=', start)))
    .$call((q) => (end === undefined ? q : q.where('session_started_at', '<', end)));
  return sessionsList.read({ query, within: page.id, filters, rows: matching.selectAll(), count: matching, map: toSession });
}

/** The visit a session is, as the goals' occurrences copy it (src/visits/occurrences.ts). */
export const occurrenceVisit = (tenantId: string, s: AudienceSession) => ({
  sessionId: s.audienceSessionId,
  tenantId,
  pageId: s.pageId,
  audienceId: s.audienceId,
  sessionStartedAt: s.sessionStartedAt,
});

/** What a report or a lead form may change of a visit's session. */
const VISIT_FIELDS = ['session_ended_at', ...SESSION_COLUMNS.counts, ...SESSION_COLUMNS.form, ...SESSION_COLUMNS.utm] as const;
export type VisitFields = Pick<AudienceSessionsTable, (typeof VISIT_FIELDS)[number]>;

// Compiled once: the collector runs it on every report after a visit's first.
const updateVisit = prepared((db, p: VisitFields & { id: string }) =>
  db
    .updateTable('audience_sessions')
    .set(Object.fromEntries(VISIT_FIELDS.map((f) => [f, p[f]])) as VisitFields)
    .where('id', '=', p.id),
);
// The same for a report, which also sets when `session.ended` falls due (never again once announced).
const updateReported = prepared((db, p: VisitFields & { id: string; end_due_at: string }) =>
  db
    .updateTable('audience_sessions')
    .set({
      ...(Object.fromEntries(VISIT_FIELDS.map((f) => [f, p[f]])) as VisitFields),
      // `else end_due_at` (null once announced) gives PostgreSQL the column's type for the parameter.
      end_due_at: sql<string | null>`case when end_announced = 0 then ${p.end_due_at} else end_due_at end`,
      end_due_follows: 0,
    })
    .where('id', '=', p.id),
);
// A report whose end falls due the idle time after it, no sooner than the stored `end_due_at`: that
// stays a lower bound (the sweep looks again then), so the open visits' index is not rewritten.
const updateFollowing = prepared((db, p: VisitFields & { id: string }) =>
  db
    .updateTable('audience_sessions')
    .set({ ...(Object.fromEntries(VISIT_FIELDS.map((f) => [f, p[f]])) as VisitFields), end_due_follows: 1 })
    .where('id', '=', p.id),
);

/**
 * Whether a report may leave `end_due_at` as stored: the end it sets falls due the idle time after
 * it, no sooner than the stored time, and the visit is still open. SQLite only: on PostgreSQL
 * reports are one statement (site/measure/report-once.ts) that sets the due time itself, and this
 * path stays exact so the two never mix on one visit.
 */
function dueFollows(trx: Transaction<Database>, visit: Visit, existing: AudienceSessionsTable): boolean {
  return (
    visit.endAfterIdle === true &&
    visit.endDueAt !== undefined &&
    existing.end_announced === 0 &&
    existing.end_due_at !== null &&
    visit.endDueAt >= existing.end_due_at &&
    !isPostgres(trx)
  );
}

/** What the collector learned of a visit at its first report (src/site/measure/), stored with its session. */
export type VisitClasses = Pick<
  AudienceSessionsTable,
  SessionColumn<'classes'> | 'visitor_hash' | SessionColumn<'firsts'> | 'start_announced'
>;

/** The experiment a view token names, as a visit's: its id, arm and unit, all three or none. */
export function experimentOf(claims: { experimentId?: string; arm?: string; unit?: string }): Pick<Visit, 'experiment'> {
  const { experimentId: id, arm, unit } = claims;
  return id && arm && unit ? { experiment: { id, arm, unit } } : {};
}

/** Who and where a visit is: fixed by its first report. */
export interface Visit {
  tenantId: string;
  pageId: string;
  audienceId: string;
  visitId: string;
  pageUrl: string;
  pageTitle: string;
  startedAt: string;
  /** The classes of a visit the collector takes; without them, those of a session it did not take. */
  classes?: VisitClasses;
  /** When the visit's `session.ended` falls due, as of this report (collector only). */
  endDueAt?: string;
  /** The report did not say the page was left: the end falls due the idle time after it, as `end_due_follows` can say. */
  endAfterIdle?: boolean;
  /** The experiment the document was served in (from the view token), if any. */
  experiment?: { id: string; arm: string; unit: string };
  /** This report or form came with `Sec-GPC: 1`: the session keeps it (it never unsets). */
  gpc?: boolean;
}

/**
 * Holds the visit's writers off until this transaction ends (every instance, PostgreSQL; SQLite
 * writes one at a time anyway): a report and a form submission of one visit each read the stored
 * session and write it back raised, so neither may read it while the other is between the two.
 * Take it before `findVisit`.
 */
export function lockVisit(trx: Transaction<Database>, visitId: string): Promise<void> {
  return lockExclusive(trx, `visit:${visitId}`);
}

/** The session of a visit, as stored; undefined before its first report. */
export async function findVisit(db: Kysely<Database>, tenantId: string, visitId: string): Promise<AudienceSessionsTable | undefined> {
  return (await visitById(db, { tenantId, visitId }))[0];
}
// Compiled once: it runs on every report the collector takes.
const visitById = prepared((db, p: { tenantId: string; visitId: string }) =>
  db.selectFrom('audience_sessions').selectAll().where('visit_id', '=', p.visitId).where('tenant_id', '=', p.tenantId),
);

/**
 * Creates a visit's session at its first report and updates it at the later ones (the caller
 * locks the visit, reads it with `findVisit` in the same transaction and decides the new values
 * from `existing`; this stores them).
 * `audience_session.created` is emitted once per visit, when the session is created. The analytics
 * rollups move from the stored values to the new ones in the same transaction.
 */
export async function recordVisit(
  trx: Transaction<Database>,
  visit: Visit,
  existing: AudienceSessionsTable | undefined,
  fields: VisitFields,
): Promise<AudienceSession> {
  if (existing) {
    if (visit.endDueAt === undefined) await updateVisit(trx, { ...fields, id: existing.id });
    else if (dueFollows(trx, visit, existing)) await updateFollowing(trx, { ...fields, id: existing.id });
    else await updateReported(trx, { ...fields, id: existing.id, end_due_at: visit.endDueAt });
    // A later report or the form may be the first to carry the header: from then on, no alert.
    if (visit.gpc && existing.gpc !== 1) await trx.updateTable('audience_sessions').set({ gpc: 1 }).where('id', '=', existing.id).execute();
    const row: AudienceSessionsTable = { ...existing, ...fields, ...(visit.gpc ? { gpc: 1 } : {}) };
    await applySessionChange(trx, existing, row);
    return toSession(row);
  }
  const row: AudienceSessionsTable = {
    id: newId('session'),
    tenant_id: visit.tenantId,
    page_id: visit.pageId,
    audience_id: visit.audienceId,
    analytics_session_id: visit.visitId,
    page_title: visit.pageTitle,
    page_url: visit.pageUrl,
    session_started_at: visit.startedAt,
    created_at: now(),
    visit_id: visit.visitId,
    experiment_id: visit.experiment?.id ?? null,
    experiment_arm: visit.experiment?.arm ?? null,
    experiment_unit: visit.experiment?.unit ?? null,
    ...NOT_COLLECTED,
    ...visit.classes,
    end_due_at: visit.endDueAt ?? null,
    gpc: visit.gpc ? 1 : 0,
    ...fields,
  };
  // Two first reports racing (two instances): one creates, the other finds it and updates it.
  const inserted = await trx
    .insertInto('audience_sessions')
    .values(row)
    .onConflict((oc) => oc.column('visit_id').where('visit_id', 'is not', null).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0)
    return recordVisit(trx, visit, await findVisit(trx, visit.tenantId, visit.visitId), fields);
  await applySessionChange(trx, undefined, row);
  const session = toSession(row);
  await emit(trx, visit.tenantId, 'audience_session.created', session);
  return session;
}

/** Which of these sessions came with the visitor's Global Privacy Control. */
export async function sessionsSentWithGpc(db: Kysely<Database>, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  return (await db.selectFrom('audience_sessions').select('id').where('id', 'in', ids).where('gpc', '=', 1).execute()).map((r) => r.id);
}

/** Whether a visitor key had a session on the tenant's site since `since` (site/serve/visit.ts: first of the day). */
export const sessionSeenSince = prepared((db, p: { tenantId: string; visitor: string; since: string }) =>
  db
    .selectFrom('audience_sessions')
    .select('page_id')
    .where('tenant_id', '=', p.tenantId)
    .where('visitor_hash', '=', p.visitor)
    .where('session_started_at', '>=', p.since)
    .limit(1),
);
