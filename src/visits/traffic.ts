import { createRequire } from 'node:module';
import type { Channel, ChannelGroup } from '../db/enums.js';

/**
 * Where a visit came from, in the two vocabularies the API speaks (issue 45): `channel`, the
 * service's own six classes, and `channelGroup`, Google Analytics 4's default channel groups by
 * GA4's published rules. Both are worked out once, when a session is made (the collector's first
 * report, or a session posted through the API), from the referrer's host and the landing URL's
 * UTM values. Migration 2026_12_04_0045 holds a frozen copy of these rules for the visits stored
 * before them: a change here needs a migration of its own to reach those.
 */

/** What the landing URL said, besides the referrer. */
export interface Landing {
  /** The URL carried a click id of an ad network (gclid, fbclid, msclkid). */
  adClick: boolean;
  utmSource: string;
  utmMedium: string;
  utmCampaign: string;
}

/** A visit's source, medium and campaign as GA4 sees them (lowercased). */
export interface Traffic {
  source: string;
  medium: string;
  campaign: string;
}

type Medium = 'search' | 'social' | 'email' | 'paid' | 'unknown';

/**
 * The Snowplow referer-parser database (search engines, social networks, webmail, ad networks), as
 * the npm package ships it: by host, and by the names of its sources (`linkedin`, `google`),
 * lowercased, spaces removed. Read on first use; entries that need a path are left out, since
 * browsers send only the origin of a cross-site referrer by default.
 */
let byHost: Map<string, Medium> | undefined;
let byName: Map<string, Medium[]> | undefined;
function database(): { hosts: Map<string, Medium>; names: Map<string, Medium[]> } {
  if (byHost && byName) return { hosts: byHost, names: byName };
  const data = createRequire(import.meta.url)('@cgamesplay/referer-parser/data/referers.json') as Record<
    Medium,
    Record<string, { domains: string[] }>
  >;
  const hosts = new Map<string, Medium>();
  const names = new Map<string, Medium[]>();
  for (const [medium, referers] of Object.entries(data) as [Medium, Record<string, { domains: string[] }>][]) {
    for (const [name, { domains }] of Object.entries(referers)) {
      const key = name.toLowerCase().replace(/\s+/g, '');
      names.set(key, [...(names.get(key) ?? []), medium]);
      for (const domain of domains) if (!domain.includes('/')) hosts.set(domain.toLowerCase(), medium);
    }
  }
  byHost = hosts;
  byName = names;
  return { hosts, names };
}

/** The value a host (or a parent domain of it: m.facebook.com → facebook.com) has in `table`, with or without `www.`. */
function walk<T>(host: string, table: (name: string) => T | undefined): T | undefined {
  let rest = host;
  for (;;) {
    const hit = table(rest) ?? table(`www.${rest}`);
    if (hit !== undefined) return hit;
    const dot = rest.indexOf('.');
    if (dot < 0 || rest.indexOf('.', dot + 1) < 0) return undefined;
    rest = rest.slice(dot + 1);
  }
}

/**
 * GA4's source categories (its "list of video sites", "of shopping sites") that the referer
 * database has no category for, and the social sources it lacks; a host's subdomains included.
 */
const VIDEO = new Set(
  'youtube youtube.com youtu.be vimeo vimeo.com twitch twitch.tv dailymotion dailymotion.com wistia wistia.com wistia.net netflix netflix.com hulu hulu.com disneyplus disneyplus.com ted ted.com crackle crackle.com curiositystream curiositystream.com iqiyi iqiyi.com iq.com youku youku.com veoh veoh.com utreon utreon.com justin.tv'.split(
    ' ',
  ),
);
const SHOPPING = new Set(
  'amazon amazon.com ebay ebay.com ebay.co.uk ebay.de etsy etsy.com shopify shopify.com shop.app alibaba alibaba.com walmart walmart.com mercadolibre mercadolibre.com stripe stripe.com checkout.stripe.com shopzilla shopzilla.com shopping.naver.com shopping.yahoo.com shopping.yahoo.co.jp igshopping simplycodes.com'.split(
    ' ',
  ),
).add('google shopping');
const SOCIAL = new Set(
  'fb ig tiktok tiktok.com x.com threads.net snapchat snapchat.com discord discord.com quora quora.com whatsapp whatsapp.com messenger messenger.com bsky.app'.split(
    ' ',
  ),
);

const inList = (list: Set<string>, source: string) =>
  list.has(source) || (source.includes('.') && walk(source, (h) => (list.has(h) ? true : undefined)) === true);

/** The database's classes of a source: by its name (`linkedin`, `Google`), else as a host (`linkedin.com`, `m.facebook.com`). */
function mediaOf(source: string): Medium[] {
  const { hosts, names } = database();
  const named = names.get(source.replace(/\s+/g, ''));
  if (named) return named;
  if (!source.includes('.')) return [];
  const hit = walk(source.replace(/^www\./, ''), (h) => hosts.get(h));
  return hit ? [hit] : [];
}

interface Categories {
  search: boolean;
  social: boolean;
  video: boolean;
  shopping: boolean;
}

/** Which of GA4's site lists a source is on. A video site is not a social one (YouTube): GA4 files it under video. */
export function categoriesOf(source: string): Categories {
  const media = mediaOf(source);
  const video = inList(VIDEO, source);
  return {
    search: media.includes('search'),
    social: !video && (media.includes('social') || inList(SOCIAL, source)),
    video,
    shopping: inList(SHOPPING, source),
  };
}

/** GA4's regular expressions and lists of its default channel group rules. */
const PAID_MEDIUM = /^(.*cp.*|ppc|retargeting|paid.*)$/;
const SHOPPING_CAMPAIGN = /^(.*(([^a-df-z]|^)shop|shopping).*)$/;
const VIDEO_MEDIUM = /^(.*video.*)$/;
const DISPLAY_MEDIUMS = new Set(['display', 'banner', 'expandable', 'interstitial', 'cpm']);
const SOCIAL_MEDIUMS = new Set(['social', 'social-network', 'social-media', 'sm', 'social network', 'social media']);
const REFERRAL_MEDIUMS = new Set(['referral', 'app', 'link']);
const EMAIL = new Set(['email', 'e-mail', 'e_mail', 'e mail']);

/**
 * GA4's default channel group of a source, medium and campaign: its rules, in its order, the first
 * that matches wins (support.google.com/analytics/answer/9756891, manual traffic).
 */
export function channelGroupOf(traffic: Traffic): ChannelGroup {
  const source = traffic.source.trim().toLowerCase();
  const medium = traffic.medium.trim().toLowerCase();
  const campaign = traffic.campaign.trim().toLowerCase();
  const is = categoriesOf(source);
  const paid = PAID_MEDIUM.test(medium);
  const shoppingCampaign = SHOPPING_CAMPAIGN.test(campaign);
  if (source === '(direct)' && (medium === '(not set)' || medium === '(none)')) return 'Direct';
  if (campaign.includes('cross-network')) return 'Cross-network';
  if ((is.shopping || shoppingCampaign) && paid) return 'Paid Shopping';
  if (is.search && paid) return 'Paid Search';
  if (is.social && paid) return 'Paid Social';
  if (is.video && paid) return 'Paid Video';
  if (DISPLAY_MEDIUMS.has(medium)) return 'Display';
  if (paid) return 'Paid Other';
  if (is.shopping || shoppingCampaign) return 'Organic Shopping';
  if (is.social || SOCIAL_MEDIUMS.has(medium)) return 'Organic Social';
  if (is.video || VIDEO_MEDIUM.test(medium)) return 'Organic Video';
  if (is.search || medium === 'organic') return 'Organic Search';
  if (REFERRAL_MEDIUMS.has(medium)) return 'Referral';
  if (EMAIL.has(source) || EMAIL.has(medium)) return 'Email';
  if (medium === 'affiliate') return 'Affiliates';
  if (medium === 'audio') return 'Audio';
  if (source === 'sms' || medium === 'sms') return 'SMS';
  if (medium.endsWith('push') || medium.includes('mobile') || medium.includes('notification') || source === 'firebase') {
    return 'Mobile Push Notifications';
  }
  return 'Unassigned';
}

/**
 * The source and medium GA4 would record: the UTM values when the URL has a source or a medium
 * (a click id without a medium says `cpc`); else the referrer's host, with medium `organic` for a
 * search engine and `referral` for any other; else `(direct)` / `(none)`.
 */
export function trafficOf(referrerHost: string, landing: Landing): Traffic {
  const source = landing.utmSource.trim().toLowerCase();
  const medium = landing.utmMedium.trim().toLowerCase();
  const campaign = landing.utmCampaign.trim().toLowerCase();
  const clicked = landing.adClick ? 'cpc' : '';
  if (source !== '' || medium !== '') return { source: source || '(not set)', medium: medium || clicked || '(not set)', campaign };
  if (referrerHost !== '') {
    return { source: referrerHost, medium: clicked || (categoriesOf(referrerHost).search ? 'organic' : 'referral'), campaign };
  }
  if (clicked !== '') return { source: '(not set)', medium: clicked, campaign };
  return { source: '(direct)', medium: '(none)', campaign };
}

/** The service's channel of the groups that name one; the others keep the referrer's (or the source's) class. */
const CHANNEL_OF_GROUP: Partial<Record<ChannelGroup, Channel>> = {
  Direct: 'direct',
  'Organic Search': 'search',
  'Organic Social': 'social',
  Email: 'email',
  'Cross-network': 'paid',
  'Paid Shopping': 'paid',
  'Paid Search': 'paid',
  'Paid Social': 'paid',
  'Paid Video': 'paid',
  Display: 'paid',
  'Paid Other': 'paid',
};

/** The database's class as the service's channel: ad networks are paid, webmail email, the rest a referral. */
const channelOfMedium = (medium: Medium | undefined): Channel | undefined =>
  medium === undefined ? undefined : medium === 'unknown' ? 'referral' : medium;

/**
 * A visit's channel and channel group. `referrerHost`: the referring host without `www.`, '' when
 * there is none or it is the visited host. The channel follows the group where the group names
 * one (paid social is `paid`); otherwise `email` for an email medium, the referrer's class in the database (`referral` for a
 * host it does not know), else the class of a `utm_source` it knows, else `referral` for a link
 * tagged as one (Referral, Affiliates) and `direct` for the rest.
 */
export function classifyTraffic(referrerHost: string, landing: Landing): { channel: Channel; channelGroup: ChannelGroup } {
  const channelGroup = channelGroupOf(trafficOf(referrerHost, landing));
  const byGroup = CHANNEL_OF_GROUP[channelGroup];
  if (byGroup) return { channel: byGroup, channelGroup };
  // An email's link whose campaign GA4 files elsewhere (a shopping campaign) still came by email.
  if (EMAIL.has(landing.utmMedium.trim().toLowerCase())) return { channel: 'email', channelGroup };
  if (referrerHost !== '') {
    return { channel: channelOfMedium(walk(referrerHost, (h) => database().hosts.get(h))) ?? 'referral', channelGroup };
  }
  const source = landing.utmSource.trim().toLowerCase();
  const named = source === '' ? undefined : mediaOf(source)[0];
  const linked = channelGroup === 'Referral' || channelGroup === 'Affiliates';
  return { channel: channelOfMedium(named) ?? (linked ? 'referral' : 'direct'), channelGroup };
}
