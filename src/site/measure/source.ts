import { createRequire } from 'node:module';
import type { Channel } from '../../db/enums.js';

export interface Source {
  /** The referring host, without a leading `www.`; '' when direct or from the visited host. */
  referrerHost: string;
  channel: Channel;
}

/** What the landing URL said about paid traffic, besides the referrer. */
export interface Landing {
  /** The URL carried a click id of an ad network (gclid, fbclid, msclkid). */
  adClick: boolean;
  utmMedium: string;
  /** `utm_source`: without a medium or a referrer, a known source names the channel (linkedin: social). */
  utmSource?: string;
}

const PAID_MEDIUMS = new Set(['cpc', 'ppc', 'paid']);
const MEDIUMS: Record<string, Channel> = { search: 'search', social: 'social', email: 'email', paid: 'paid' };

/**
 * The Snowplow referer-parser database (search engines, social networks, webmail, ad networks), as
 * the npm package ships it: host → channel. Read on first use; entries that need a path are left
 * out, since browsers send only the origin of a cross-site referrer by default.
 */
let known: Map<string, Channel> | undefined;
/** The same database by the names of its sources (`linkedin`, `google`), lowercased, spaces removed. */
let names: Map<string, Channel> | undefined;
function knownHosts(): Map<string, Channel> {
  if (known) return known;
  const data = createRequire(import.meta.url)('@cgamesplay/referer-parser/data/referers.json') as Record<
    string,
    Record<string, { domains: string[] }>
  >;
  known = new Map();
  names = new Map();
  for (const [medium, referers] of Object.entries(data)) {
    for (const [name, { domains }] of Object.entries(referers)) {
      const channel = MEDIUMS[medium] ?? 'referral';
      const key = name.toLowerCase().replace(/\s+/g, '');
      // The first class a name has wins: the database lists a few names under two media.
      if (!names.has(key)) names.set(key, channel);
      for (const domain of domains) if (!domain.includes('/')) known.set(domain.toLowerCase(), channel);
    }
  }
  return known;
}

/** The channel of a host in the database: the host itself, else its parent domains (m.facebook.com → facebook.com). */
function channelOfHost(host: string): Channel {
  const hosts = knownHosts();
  let rest = host;
  for (;;) {
    const hit = hosts.get(rest) ?? hosts.get(`www.${rest}`);
    if (hit) return hit;
    const dot = rest.indexOf('.');
    if (dot < 0 || rest.indexOf('.', dot + 1) < 0) return 'referral';
    rest = rest.slice(dot + 1);
  }
}

/**
 * The channel a `utm_source` names: by the database's source names (`linkedin`, `Google`), else as
 * a host (`linkedin.com`, `m.facebook.com`); undefined for a source the database does not know.
 */
export function channelOfSource(utmSource: string): Channel | undefined {
  const source = utmSource.trim().toLowerCase();
  if (source === '') return undefined;
  knownHosts();
  const byName = names?.get(source.replace(/\s+/g, ''));
  if (byName) return byName;
  if (!source.includes('.')) return undefined;
  const byHost = channelOfHost(bare(source));
  return byHost === 'referral' ? undefined : byHost;
}

const bare = (host: string) => host.toLowerCase().replace(/^www\./, '');

/**
 * The source of a visit to `visitedHost`: paid when the landing URL says so (an ad click id, or a
 * `utm_medium` of cpc, ppc or paid), email when `utm_medium` is email, else by the referrer's
 * host: none or the visited host itself is direct; a host the database knows takes its channel;
 * any other host is a referral.
 */
export function sourceOf(referrer: string, visitedHost: string, landing: Landing): Source {
  let host = '';
  try {
    host = referrer === '' ? '' : bare(new URL(referrer).hostname);
  } catch {
    host = '';
  }
  if (host === bare(visitedHost)) host = '';
  const medium = landing.utmMedium.trim().toLowerCase();
  if (landing.adClick || PAID_MEDIUMS.has(medium)) return { referrerHost: host, channel: 'paid' };
  if (medium === 'email') return { referrerHost: host, channel: 'email' };
  if (host !== '') return { referrerHost: host, channel: channelOfHost(host) };
  // No referrer (apps and many ad clicks send none): a known utm_source says more than "direct".
  return { referrerHost: host, channel: (medium === '' && channelOfSource(landing.utmSource ?? '')) || 'direct' };
}
