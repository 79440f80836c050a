import type { SessionColumn } from '../db/session-columns.js';
import type { AudienceSessionsTable } from '../db/types.js';
import type { Occurrence } from './occurrences.js';
import type { VisitFields } from './repository.js';
import type { Report } from './report.js';

// The collector's rules, once, in TypeScript. PostgreSQL's one statement (collect.sql.ts) applies
// the same rules in SQL; test/visits/parity.test.ts holds the two together.

/** What a person can do at most per second of wall time since the previous report. */
const CLICKS_PER_SECOND = 20;
const QUESTIONS_PER_SECOND = 1;
/** Reports closer together than this are judged as if this far apart, so a burst at start counts. */
const MIN_INTERVAL_S = 1;
/** A visit with less visible time than this and no click and no form is a bounce. */
const BOUNCE_SECONDS = 10;

/** The visit so far, as a report meets it: its stored session (none before its first report) and when its document was served. */
export interface VisitSoFar {
  stored: AudienceSessionsTable | undefined;
  issuedAt: number;
}

/**
 * The session after a report: every count only rises, and by no more than a person could have
 * done since the previous report; visible time never exceeds the wall time since the document was
 * served. What a form set (part of the same visit) is kept as stored.
 */
export function raise({ stored, issuedAt }: VisitSoFar, report: Report, at: number): VisitFields {
  const previousAt = stored ? Date.parse(stored.session_ended_at) : issuedAt;
  const seconds = Math.max(MIN_INTERVAL_S, (at - previousAt) / 1000);
  const rise = (before: number, reported: number, perSecond: number) =>
    before + Math.min(Math.max(0, reported - before), Math.floor(perSecond * seconds));

  const wall = Math.max(0, (at - issuedAt) / 1000);
  const before = {
    time: Number(stored?.time_spent_seconds ?? 0),
    scroll: Number(stored?.max_scroll_depth_percentage ?? 0),
    clicks: Number(stored?.total_clicks_count ?? 0),
    questions: Number(stored?.questions_asked_count ?? 0),
  };
  const time = Math.max(before.time, Math.round(Math.min(report.visibleMs / 1000, wall) * 1000) / 1000);
  const clicks = rise(before.clicks, report.clicks, CLICKS_PER_SECOND);
  const hasFormSubmit = stored?.has_form_submit === 1;
  const utm = (column: SessionColumn<'utm'>, reported: string | undefined) => stored?.[column] || (reported ?? '');
  return {
    session_ended_at: new Date(Math.max(at, previousAt)).toISOString(),
    time_spent_seconds: time,
    max_scroll_depth_percentage: Math.max(before.scroll, report.scroll),
    total_clicks_count: clicks,
    questions_asked_count: rise(before.questions, report.questions, QUESTIONS_PER_SECOND),
    is_bounce: clicks === 0 && !hasFormSubmit && time < BOUNCE_SECONDS ? 1 : 0,
    has_form_submit: hasFormSubmit ? 1 : 0,
    has_conversion: stored?.has_conversion === 1 || hasFormSubmit || report.conversions > 0 ? 1 : 0,
    form_submission_id: stored?.form_submission_id ?? '',
    form_submission_identifier: stored?.form_submission_identifier ?? '',
    form_submission_email: stored?.form_submission_email ?? '',
    form_submission_phone: stored?.form_submission_phone ?? '',
    utm_source: utm('utm_source', report.utmSource),
    utm_medium: utm('utm_medium', report.utmMedium),
    utm_campaign: utm('utm_campaign', report.utmCampaign),
    utm_term: utm('utm_term', report.utmTerm),
    utm_content: utm('utm_content', report.utmContent),
  };
}

/**
 * What goals count in a report: the visit's path at its first report, its deepest scroll (whole
 * percent) under the path it was served at once it is at least 1 (scroll goals, issue 49), its
 * tracked events and clicked purposes.
 */
export function occurrencesOf(report: Report, firstPath: string | null, scrolled?: { path: string; scroll: number }): Occurrence[] {
  const found: Occurrence[] = [];
  if (firstPath !== null) found.push({ kind: 'path', name: firstPath, value: 0, total: 1 });
  const depth = scrolled ? Math.floor(scrolled.scroll) : 0;
  if (scrolled && depth >= 1) found.push({ kind: 'scroll', name: scrolled.path, value: 0, total: depth });
  for (const [name, total, value] of report.events ?? []) found.push({ kind: 'event', name, total, value });
  for (const [name, total] of report.actions ?? []) found.push({ kind: 'action', name, total, value: 0 });
  return found;
}

/** Seconds from a report to its visit's `session.ended`: the idle time, or at most a minute once the page is left. */
export const endDelaySeconds = (idleSeconds: number, left: boolean): number => (left ? Math.min(60, idleSeconds) : idleSeconds);

/** Whether the visitor has had a session today (UTC) on this page and on the site: the day's firsts of a new visit. */
export function dayFirsts(pagesToday: string[], pageId: string): Pick<AudienceSessionsTable, SessionColumn<'firsts'>> {
  return {
    first_of_day_page: pagesToday.includes(pageId) ? 0 : 1,
    first_of_day_site: pagesToday.length > 0 ? 0 : 1,
  };
}
