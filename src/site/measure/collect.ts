import type { FastifyInstance } from 'fastify';
import { isbot } from 'isbot';
import type { AudienceSessionsTable } from '../../db/types.js';
import { validatorCompiler } from '../../http/validation.js';
import { prepared } from '../../db/prepared.js';
import { type Occurrence, recordOccurrences } from '../../goals/occurrences.js';
import { experimentOf, lockVisit, occurrenceVisit, recordVisit, type Visit, type VisitFields } from '../../sessions/repository.js';
import { notModified, type SiteContext, siteHostOf } from '../context.js';
import { addressLimiter, takeFor } from '../limits.js';
import { MEASURING_SCRIPT, MEASURING_SCRIPT_ETAG } from './script.js';
import { announceStart } from '../../sessions/announce.js';
import type { SessionColumn } from '../../db/session-columns.js';
import { classify } from './classify.js';
import { reportOnce } from './report-once.js';
import { MAX_REPORT_BYTES, Report } from './report.js';
import { isPostgres } from '../../db/adapter.js';
import type { ViewClaims } from '../token.js';

/** What a person can do at most per second of wall time since the previous report. */
const CLICKS_PER_SECOND = 20;
const QUESTIONS_PER_SECOND = 1;
/** Reports closer together than this are judged as if this far apart, so a burst at start counts. */
const MIN_INTERVAL_S = 1;
/** A visit with less visible time than this and no click and no form is a bounce. */
const BOUNCE_SECONDS = 10;

/**
 * What a report needs, in one read compiled once (it runs on every report): the live page it is
 * for (its title, as the session records it), the path of the link it came through (deleted links
 * too: the visit keeps the path it was served at), and the visit's session as stored, if any. No
 * row when the page is not live. Taken under the visit's lock, as `findVisit` is.
 */
const reportTarget = prepared((db, p: Pick<ViewClaims, 'tenantId' | 'pageId' | 'linkId' | 'visitId' | 'audienceId'>) =>
  db
    .selectFrom('pages')
    .leftJoin('page_links', (join) => join.on('page_links.id', '=', p.linkId).on('page_links.tenant_id', '=', p.tenantId))
    .leftJoin('audience_sessions', (join) =>
      join.on('audience_sessions.visit_id', '=', p.visitId).on('audience_sessions.tenant_id', '=', p.tenantId),
    )
    .leftJoin('audiences', (join) => join.on('audiences.id', '=', p.audienceId).on('audiences.tenant_id', '=', p.tenantId))
    .selectAll('audience_sessions')
    .select(['pages.title', 'page_links.path', 'audiences.person_id'])
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

/**
 * `GET /_pam/v.js` and `POST /_pam/collect`. Registered in buildSite; its parsers, validator and
 * error answers are its own (encapsulated), so the other visitor routes keep theirs.
 */
export async function collectRoutes(site: FastifyInstance, context: SiteContext): Promise<void> {
  const { trusted } = context;
  const limiter = addressLimiter(context.config.collectRatePerMinute);
  // PostgreSQL: a report is one statement (report-once.ts); SQLite's statements cost no round trip.
  const once = isPostgres(context.db) ? reportOnce(context) : undefined;

  site.get('/_pam/v.js', async (request, reply) => {
    reply
      .header('content-type', 'text/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=86400')
      .header('etag', MEASURING_SCRIPT_ETAG);
    if (notModified(request, MEASURING_SCRIPT_ETAG)) return reply.code(304).send();
    return reply.send(MEASURING_SCRIPT);
  });

  // A beacon says text/plain; both that and application/json bodies are the report's JSON.
  site.removeAllContentTypeParsers();
  site.addContentTypeParser(['text/plain', 'application/json'], { parseAs: 'string' }, (_request, body, done) => {
    let nul = false;
    let report: unknown;
    // JSON holds a NUL only as the escape \u0000 (a raw one is not JSON): most reports skip the reviver.
    const check = (body as string).includes('\\u0000');
    try {
      report = check
        ? JSON.parse(body as string, (key, value) => {
            if (key.includes('\u0000') || (typeof value === 'string' && value.includes('\u0000'))) nul = true;
            return value;
          })
        : JSON.parse(body as string);
    } catch {
      return done(Object.assign(new Error('The report is not JSON'), { statusCode: 400 }));
    }
    // PostgreSQL can neither store nor compare a NUL: refused on both databases alike.
    if (nul) return done(Object.assign(new Error('A report holds no NUL character'), { statusCode: 400 }));
    done(null, report);
  });
  site.setValidatorCompiler(validatorCompiler);
  site.setErrorHandler((err, request, reply) => {
    const given = (err as { statusCode?: unknown }).statusCode;
    const status = typeof given === 'number' && given >= 400 && given < 500 ? given : 500;
    context.observe?.report(status === 500 ? 'error' : 'invalid_report');
    if (status === 500) {
      request.log.error({ err }, 'visit report failed');
      return reply.code(500).type('text/plain; charset=utf-8').send('The report could not be recorded.');
    }
    // A body over the limit is bad input like any other (the 400).
    return reply
      .code(status === 413 ? 400 : status)
      .type('text/plain; charset=utf-8')
      .send(status === 413 ? `A report is at most ${MAX_REPORT_BYTES} bytes.` : reportProblem(err));
  });

  site.post<{ Body: Report }>(
    '/_pam/collect',
    {
      bodyLimit: MAX_REPORT_BYTES,
      schema: { body: Report },
      // Before the body is read: a flood costs a bucket look-up, a bot nothing at all.
      onRequest: async (request, reply) => {
        const bucket = takeFor(limiter, trusted, request.raw);
        if (!bucket.allowed) {
          context.observe?.report('rate_limited');
          return reply
            .code(429)
            .header('retry-after', String(bucket.retryAfterSeconds))
            .type('text/plain; charset=utf-8')
            .send('Too many reports.');
        }
        if (isbot(request.headers['user-agent'] ?? '')) {
          context.observe?.report('bot');
          return reply.code(204).send();
        }
      },
    },
    async (request, reply) => {
      const claims = context.tokens.verify(request.body.token);
      const host = siteHostOf(request);
      if (!claims || claims.tenantId !== host.tenantId) {
        context.observe?.report('invalid_token');
        return reply.code(400).type('text/plain; charset=utf-8').send('The token is not valid here.');
      }
      const origin = context.origin(host.hostname, request.raw);
      // The visitor's Global Privacy Control: its session is marked (sessions/repository.ts), which
      // pam_collect cannot do, so such a report takes the transaction below on PostgreSQL too.
      const gpc = request.headers['sec-gpc'] === '1';
      if (once && !gpc) {
        const at = Date.now();
        const endDueAt = new Date(at + 1000 * endDelaySeconds(context.config.sessionIdleSeconds, request.body.left === true)).toISOString();
        const outcome = await once(request, { claims, host, origin, at, endDueAt, report: request.body });
        if (outcome !== 'slow') {
          context.observe?.report(outcome === 'gone' ? 'page_gone' : 'accepted');
          return reply.code(204).send();
        }
      }
      // In memory after the first report of the day.
      const secret = await context.secrets.today();
      const recorded = await context.db.transaction().execute(async (trx) => {
        await lockVisit(trx, claims.visitId);
        const [page] = await reportTarget(trx, claims);
        // The page was deleted since it was served: its sessions are gone from the API with it.
        if (!page) return false;
        const stored = storedVisit(page);
        const at = Date.now();
        const report = request.body;
        const classes = stored
          ? undefined
          : await classify(trx, context, request, {
              secret,
              hostname: host.hostname,
              tenantId: claims.tenantId,
              pageId: claims.pageId,
              personId: page.person_id,
              referrer: report.referrer ?? '',
              adClick: report.adClick === true,
              utmMedium: report.utmMedium ?? '',
              utmSource: report.utmSource ?? '',
              utmCampaign: report.utmCampaign ?? '',
              at,
            });
        const visit: Visit = {
          tenantId: claims.tenantId,
          pageId: claims.pageId,
          audienceId: claims.audienceId,
          visitId: claims.visitId,
          pageUrl: `${origin}${claims.path ?? page.path ?? '/'}`,
          pageTitle: page.title,
          startedAt: new Date(at).toISOString(),
          ...(classes ? { classes } : {}),
          endDueAt: new Date(at + 1000 * endDelaySeconds(context.config.sessionIdleSeconds, report.left === true)).toISOString(),
          endAfterIdle: report.left !== true,
          ...experimentOf(claims),
          gpc,
        };
        const session = await recordVisit(trx, visit, stored, raise(stored, report, claims, at));
        // Most reports carry none of these: they cost nothing then. A path goal names the link's
        // path (a page_routing link's too, whatever the key after it).
        if (!stored || report.events || report.actions) {
          const firstPath = stored ? null : (page.path ?? claims.path ?? null);
          const occurrences = occurrencesOf(report, firstPath);
          await recordOccurrences(trx, occurrenceVisit(claims.tenantId, session), occurrences, visit.startedAt);
        }
        if (page.person_id !== null && (classes?.start_announced ?? stored?.start_announced) === 0) {
          await announceStart(trx, claims.tenantId, session, page.person_id, claims.path ?? page.path ?? '/');
        }
        return true;
      });
      context.observe?.report(recorded ? 'accepted' : 'page_gone');
      return reply.code(204).send();
    },
  );
}

/**
 * The session after a report: every count only rises, and by no more than a person could have
 * done since the previous report; visible time never exceeds the wall time since the document was
 * served. What a form set (part of the same visit) is kept as stored.
 */
export function raise(stored: AudienceSessionsTable | undefined, report: Report, claims: ViewClaims, at: number): VisitFields {
  const previousAt = stored ? Date.parse(stored.session_ended_at) : claims.issuedAt;
  const seconds = Math.max(MIN_INTERVAL_S, (at - previousAt) / 1000);
  const rise = (before: number, reported: number, perSecond: number) =>
    before + Math.min(Math.max(0, reported - before), Math.floor(perSecond * seconds));

  const wall = Math.max(0, (at - claims.issuedAt) / 1000);
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

/** What goals count in a report: the visit's path at its first report, its tracked events and clicked purposes. */
function occurrencesOf(report: Report, firstPath: string | null): Occurrence[] {
  const found: Occurrence[] = [];
  if (firstPath !== null) found.push({ kind: 'path', name: firstPath, value: 0, total: 1 });
  for (const [name, total, value] of report.events ?? []) found.push({ kind: 'event', name, total, value });
  for (const [name, total] of report.actions ?? []) found.push({ kind: 'action', name, total, value: 0 });
  return found;
}

/** Seconds from a report to its visit's `session.ended`: the idle time, or at most a minute once the page is left. */
export const endDelaySeconds = (idleSeconds: number, left: boolean): number => (left ? Math.min(60, idleSeconds) : idleSeconds);

/** The first bad field of a report, by its JSON pointer; never echoes a value. */
function reportProblem(err: unknown): string {
  const first = (err as { validation?: { instancePath?: string; message?: string }[] }).validation?.[0];
  if (!first) return 'The report is not valid.';
  return `The report's ${first.instancePath || 'body'} ${first.message ?? 'is not valid'}.`;
}
