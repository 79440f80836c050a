import type { FastifyRequest } from 'fastify';
import { CACHES, newCache } from '../../db/caches.js';
import { sql } from 'kysely';
import { prepared } from '../../db/prepared.js';
import { newId } from '../../ids.js';
import { now } from '../../time.js';
import type { SiteContext } from '../context.js';
import type { SiteHost } from '../hosts.js';
import type { ViewClaims } from '../token.js';
import { seenClasses, type SeenClasses } from './classify.js';
import type { Report } from './report.js';

/** What the one statement of a report is told (migration 2026_11_28_0028_collect_function, replaced by 2026_12_04_0045_channel_groups). */
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
}

/** Named and planned once per connection (db/named-statements.ts): it runs on every report. */
const collectStatement = prepared((db, p: ReportParams) => ({
  compile: () =>
    sql<{ outcome: ReportOutcome }>`select pam_collect(
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
      cast(${p.os} as text), cast(${p.country} as text), cast(${p.visitorHash} as text), cast(${p.channelGroup} as text)
    ) as outcome`.compile(db),
}));

/**
 * `accepted`; `gone`: the page is not live; `slow`: nothing was written, the report's transaction
 * (collect.ts) takes it as on SQLite.
 */
export type ReportOutcome = 'accepted' | 'gone' | 'classify' | 'slow';

/** What collect.ts knows of a report before the statement. */
export interface ReportInput {
  claims: ViewClaims;
  host: SiteHost;
  /** The domain's public origin for this request: the session's pageUrl starts with it. */
  origin: string;
  at: number;
  endDueAt: string;
  report: Report;
}

/**
 * A report on PostgreSQL in one statement (issue 31): `pam_collect` applies the collector's rules
 * in the database, in the statement's own transaction. A first report also needs its visit's
 * classes, worked out here from the request (the secret, the address and the user agent stay in
 * this process): they are sent when this instance has not taken a report of the visit yet, and
 * when the database answers that the visit has no session yet (`classify`: then a second statement).
 * Of the visits this instance knows, at most `CACHES.knownVisits` allows are remembered (db/caches.ts).
 */
export function reportOnce(context: SiteContext): (request: FastifyRequest, input: ReportInput) => Promise<ReportOutcome> {
  const known = newCache<true>(CACHES.knownVisits);
  const run = async (request: FastifyRequest, input: ReportInput, first: boolean): Promise<ReportOutcome> => {
    const { claims, report } = input;
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
    const classes: SeenClasses | undefined = first
      ? await seenClasses(context, request, {
          secret: await context.secrets.today(),
          hostname: input.host.hostname,
          // The visitor key of a person's audience is made by the statement, which reads the person.
          personId: null,
          referrer: report.referrer ?? '',
          adClick: report.adClick === true,
          utmMedium: report.utmMedium ?? '',
          utmSource: report.utmSource ?? '',
          utmCampaign: report.utmCampaign ?? '',
        })
      : undefined;
    const experiment = claims.experimentId && claims.arm && claims.unit;
    const [row] = await collectStatement(context.db, {
      tenantId: claims.tenantId,
      pageId: claims.pageId,
      linkId: claims.linkId,
      audienceId: claims.audienceId,
      visitId: claims.visitId,
      issuedAt: new Date(claims.issuedAt).toISOString(),
      at: new Date(input.at).toISOString(),
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
      endDueAt: input.endDueAt,
      kinds,
      names,
      totals,
      values,
      now: classes ? now() : null,
      sessionId: classes ? newId('session') : null,
      createdEvent: classes ? newId('event') : null,
      startedEvent: classes ? newId('event') : null,
      urlPrefix: classes ? input.origin : null,
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
    });
    const outcome = row?.outcome ?? 'slow';
    if (outcome === 'accepted') known.set(claims.visitId, true);
    return outcome;
  };
  return async (request, input) => {
    const outcome = await run(request, input, !known.has(input.claims.visitId));
    return outcome === 'classify' ? run(request, input, true) : outcome;
  };
}
