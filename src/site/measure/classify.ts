import { createHmac } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Transaction } from 'kysely';
import { dayOf } from '../../db/daily-secrets.js';
import { lockExclusive } from '../../db/locks.js';
import { prepared } from '../../db/prepared.js';
import type { Database } from '../../db/types.js';
import type { SessionColumn } from '../../db/session-columns.js';
import type { VisitClasses } from '../../sessions/repository.js';
import type { SiteContext } from '../context.js';
import { clientAddress } from '../limits.js';
import { countryOf } from './country.js';
import { deviceOf } from './device.js';
import { sourceOf } from './source.js';

/**
 * A visitor without a person: an HMAC of the site's host, the client's address and user agent
 * under today's secret (Plausible's daily salt; a label of its own, so it is not the experiments'
 * key). Once the day's secret is deleted it cannot be recomputed or tied to tomorrow's.
 */
export function visitorHash(secret: Buffer, host: string, address: string, userAgent: string): string {
  return createHmac('sha256', secret).update(`visitor\n${host}\n${address}\n${userAgent}`).digest('base64url');
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

export interface FirstReport {
  /** Today's secret, read before the report's transaction (on SQLite it holds the one connection). */
  secret: Buffer;
  hostname: string;
  tenantId: string;
  pageId: string;
  /** The person the audience was made for: the visitor, when there is one. */
  personId: string | null;
  referrer: string;
  adClick: boolean;
  utmMedium: string;
  /** Names the channel of a visit with neither medium nor referrer (measure/source.ts). */
  utmSource?: string;
  /** GA4's cross-network and shopping groups read the campaign's name. */
  utmCampaign?: string;
  at: number;
}

/** What a first report tells of its visit without reading: every class but the day's firsts, and the visitor's key. */
export type SeenClasses = Pick<VisitClasses, SessionColumn<'classes'>> & {
  /** The visitor's key: `person:<id>` for a person's audience, else the day's hash of host, address and user agent. */
  visitor: string;
};

/**
 * The source, the device, the country (from the address as `TRUST_PROXY` decides) and the visitor
 * key of a first report. The address and the user agent are used here, in memory, and dropped.
 */
export async function seenClasses(
  context: SiteContext,
  request: FastifyRequest,
  first: Omit<FirstReport, 'tenantId' | 'pageId' | 'at'>,
): Promise<SeenClasses> {
  const userAgent = request.headers['user-agent'] ?? '';
  const address = clientAddress(context.trusted, request.raw.socket.remoteAddress, request.headers['x-forwarded-for']);
  const source = sourceOf(first.referrer, first.hostname, {
    adClick: first.adClick,
    utmMedium: first.utmMedium,
    utmSource: first.utmSource ?? '',
    utmCampaign: first.utmCampaign ?? '',
  });
  const device = deviceOf(userAgent);
  return {
    referrer_host: source.referrerHost,
    channel: source.channel,
    channel_group: source.channelGroup,
    device_type: device.deviceType,
    browser: device.browser,
    os: device.os,
    country: await countryOf(address),
    visitor: first.personId !== null ? `person:${first.personId}` : visitorHash(first.secret, first.hostname, address, userAgent),
  };
}

/**
 * What a visit's first report makes of it, stored as classes only (seenClasses), with whether
 * this is the visitor's first session of the UTC day on this page and on the site.
 */
export async function classify(
  trx: Transaction<Database>,
  context: SiteContext,
  request: FastifyRequest,
  first: FirstReport,
): Promise<VisitClasses> {
  const { visitor, ...seen } = await seenClasses(context, request, first);
  // Two first visits of one visitor at once (two instances) must not both count as the day's first.
  await lockExclusive(trx, `visitor:${first.tenantId}:${visitor}`);
  const today = await visitorToday(trx, { tenantId: first.tenantId, visitor, since: `${dayOf(first.at)}T00:00:00.000Z` });
  return {
    ...seen,
    visitor_hash: visitor,
    first_of_day_page: today.some((s) => s.page_id === first.pageId) ? 0 : 1,
    first_of_day_site: today.length > 0 ? 0 : 1,
    // Only a visit of a person's audience is announced (`visit.started`).
    start_announced: first.personId === null ? 1 : 0,
  };
}
