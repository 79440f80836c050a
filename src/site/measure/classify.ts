import { createHmac } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { SeenClasses } from '../../visits/index.js';
import type { SiteContext } from '../context.js';
import { clientAddress } from '../../http/proxies.js';
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

export interface FirstReport {
  /** Today's secret, read before the report's transaction (on SQLite it holds the one connection). */
  secret: Buffer;
  hostname: string;
  /** The person the audience was made for: the visitor, when there is one. */
  personId: string | null;
  referrer: string;
  adClick: boolean;
  utmMedium: string;
  /** Names the channel of a visit with neither medium nor referrer (measure/source.ts). */
  utmSource?: string;
  /** GA4's cross-network and shopping groups read the campaign's name. */
  utmCampaign?: string;
}

/**
 * The source, the device, the country (from the address as `TRUST_PROXY` decides) and the visitor
 * key of a first report. The address and the user agent are used here, in memory, and dropped.
 */
export async function seenClasses(context: SiteContext, request: FastifyRequest, first: FirstReport): Promise<SeenClasses> {
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
