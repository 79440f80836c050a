import { createRequire } from 'node:module';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { isPostgres } from '../adapter.js';
import * as collectFunction from './2026_11_28_0028_collect_function.js';
import { columnTypes, ownFunction } from './dialect.js';

/**
 * GA4's default channel groups (issue 45): `audience_sessions.channel_group`, and the stored visits
 * classed again from what they kept: the referrer's host, the UTM source, medium and campaign, and
 * the channel (`paid` without a paid medium: the landing URL had an ad click id, which is not
 * kept). `channel` is classed again by the same rules, so that paid social is `paid`.
 *
 * The channel group is a grouping of the analytics like the other visit classes: the page's hourly
 * rollup is keyed by it too (rebuilt from the sessions, as migration 0022 did), and the site's
 * daily rows gain its values; their `channel` rows are rebuilt with the new channels.
 *
 * PostgreSQL: `pam_collect` (migration 0028) takes the channel group as its last parameter and
 * stores it; its other rules are 0028's, unchanged. `down` restores 0028's functions and rollup
 * key; the channels classed again stay so.
 *
 * The rules below are a frozen copy of src/sessions/traffic.ts as of this migration.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('audience_sessions')
    .addColumn('channel_group', 'text', (c) => c.notNull().defaultTo('Direct'))
    .execute();
  await reclassify(db);
  await hourlyRollup(db, HOUR_KEY);
  await sql`delete from analytics_site_days where dimension in ('channel', 'channel_group')`.execute(db);
  for (const dimension of ['channel', 'channel_group']) {
    await sql`insert into analytics_site_days (tenant_id, dimension, day, value, ${COLUMNS})
      select tenant_id, ${sql.lit(dimension)}, ${truncate(db, 'day')}, ${sql.ref(dimension)}, ${SUMS_SQL}
      from audience_sessions group by tenant_id, ${truncate(db, 'day')}, ${sql.ref(dimension)}`.execute(db);
  }
  if (isPostgres(db)) {
    await sql`drop function ${await ownFunction(db, 'pam_collect')}`.execute(db);
    await sql.raw(COLLECT_FUNCTION).execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    await collectFunction.down(db);
    await collectFunction.up(db);
  }
  await sql`delete from analytics_site_days where dimension = 'channel_group'`.execute(db);
  await hourlyRollup(
    db,
    HOUR_KEY.filter((c) => c !== 'channel_group'),
  );
  await db.schema.alterTable('audience_sessions').dropColumn('channel_group').execute();
}

/** Every stored session's channel and channel group from its kept values, a page of sessions at a time. */
async function reclassify(db: Kysely<unknown>): Promise<void> {
  const tables = db as unknown as Kysely<{ audience_sessions: StoredSession }>;
  let after = '';
  for (;;) {
    const rows = await tables
      .selectFrom('audience_sessions')
      .select(['id', 'referrer_host', 'utm_source', 'utm_medium', 'utm_campaign', 'channel'])
      .where('id', '>', after)
      .orderBy('id')
      .limit(1000)
      .execute();
    const last = rows.at(-1);
    if (last === undefined) return;
    after = last.id;
    const classes = new Map<string, string[]>();
    for (const row of rows) {
      const { channel, channelGroup } = classifyTraffic(row.referrer_host, {
        adClick: row.channel === 'paid',
        utmSource: row.utm_source,
        utmMedium: row.utm_medium,
        utmCampaign: row.utm_campaign,
      });
      const key = `${channel}\n${channelGroup}`;
      classes.set(key, [...(classes.get(key) ?? []), row.id]);
    }
    for (const [key, ids] of classes) {
      const [channel = 'direct', channelGroup = 'Direct'] = key.split('\n');
      await tables.updateTable('audience_sessions').set({ channel, channel_group: channelGroup }).where('id', 'in', ids).execute();
    }
  }
}

interface StoredSession {
  id: string;
  referrer_host: string;
  utm_source: string;
  utm_medium: string;
  utm_campaign: string;
  channel: string;
  channel_group: string;
}

const COLUMNS = sql.raw(
  'visits, bounces, time_spent_seconds, scroll_sum, clicks, questions, form_submits, conversions, visitors, site_visitors',
);
const SUMS_SQL = sql.raw(`count(*), sum(is_bounce), sum(time_spent_seconds), sum(max_scroll_depth_percentage),
  sum(total_clicks_count), sum(questions_asked_count), sum(has_form_submit), sum(has_conversion),
  sum(first_of_day_page), sum(first_of_day_site)`);

function truncate(db: Kysely<unknown>, unit: 'hour' | 'day'): RawBuilder<string> {
  if (isPostgres(db)) return sql`date_trunc(${sql.lit(unit)}, session_started_at at time zone 'UTC') at time zone 'UTC'`;
  return unit === 'hour'
    ? sql`substr(session_started_at, 1, 13) || ':00:00.000Z'`
    : sql`substr(session_started_at, 1, 10) || 'T00:00:00.000Z'`;
}

/** The page's hourly rollup made again with `key` as its primary key, filled from the stored sessions (migration 0022's shape). */
async function hourlyRollup(db: Kysely<unknown>, key: string[]): Promise<void> {
  const { timestamp: ts, id } = columnTypes(db);
  await db.schema.dropTable('analytics_hours_utm').execute();
  let table = db.schema
    .createTable('analytics_hours_utm')
    .addColumn('tenant_id', id, (c) => c.notNull())
    .addColumn('page_id', id, (c) => c.notNull());
  for (const column of SUMS) {
    table = table.addColumn(column, column === 'time_spent_seconds' || column === 'scroll_sum' ? 'double precision' : 'bigint', (c) =>
      c.notNull(),
    );
  }
  table = table.addColumn('audience_id', id, (c) => c.notNull()).addColumn('hour', ts, (c) => c.notNull());
  for (const column of key.slice(3)) table = table.addColumn(column, 'text', (c) => c.notNull());
  await table.addPrimaryKeyConstraint('analytics_hours_utm_pk', key as never).execute();
  await db.schema.createIndex('analytics_hours_utm_tenant_idx').on('analytics_hours_utm').columns(['tenant_id', 'hour']).execute();
  const keys = sql.raw(['audience_id', ...key.slice(3)].join(', '));
  await sql`insert into analytics_hours_utm (tenant_id, page_id, hour, ${keys}, ${COLUMNS})
    select tenant_id, page_id, ${truncate(db, 'hour')}, ${keys}, ${SUMS_SQL}
    from audience_sessions group by tenant_id, page_id, ${truncate(db, 'hour')}, ${keys}`.execute(db);
}

/*
 * The channel rules of src/sessions/traffic.ts as of this migration (frozen).
 */

/** What the landing URL said, besides the referrer. */
interface Landing {
  /** The URL carried a click id of an ad network (gclid, fbclid, msclkid). */
  adClick: boolean;
  utmSource: string;
  utmMedium: string;
  utmCampaign: string;
}

/** A visit's source, medium and campaign as GA4 sees them (lowercased). */
interface Traffic {
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
function categoriesOf(source: string): Categories {
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
function channelGroupOf(traffic: Traffic): string {
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
function trafficOf(referrerHost: string, landing: Landing): Traffic {
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
const CHANNEL_OF_GROUP: Record<string, string | undefined> = {
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
const channelOfMedium = (medium: Medium | undefined): string | undefined =>
  medium === undefined ? undefined : medium === 'unknown' ? 'referral' : medium;

/**
 * A visit's channel and channel group. `referrerHost`: the referring host without `www.`, '' when
 * there is none or it is the visited host. The channel follows the group where the group names
 * one (paid social is `paid`); otherwise the referrer's class in the database (`referral` for a
 * host it does not know), else the class of a `utm_source` it knows, else `direct`.
 */
function classifyTraffic(referrerHost: string, landing: Landing): { channel: string; channelGroup: string } {
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

/*
 * The rollups and the occurrences are written inline in pam_collect, from the code below: a
 * function taking or returning a table's row type would depend on that table, and an earlier
 * migration's `down` (run by tests) could no longer drop it.
 */
const SUMS = [
  'visits',
  'bounces',
  'time_spent_seconds',
  'scroll_sum',
  'clicks',
  'questions',
  'form_submits',
  'conversions',
  'visitors',
  'site_visitors',
];
const HOUR_KEY = [
  'page_id',
  'hour',
  'audience_id',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'channel',
  'channel_group',
  'referrer_host',
  'device_type',
  'browser',
  'os',
  'country',
];
const DAY_KEY = ['tenant_id', 'day', 'page_id'];
const isZero = (v: string) => SUMS.map((c) => `${v}.${c} = 0`).join(' and ');

/** A session's sums, by sign, into the rollup row variable `d` (rollups.ts, `sumsOf`), with its key. */
function sumsOf(d: string, s: string, sign: 1 | -1, unit: 'hour' | 'day'): string {
  const key =
    unit === 'hour'
      ? [
          `${d}.hour := date_trunc('hour', ${s}.session_started_at at time zone 'UTC') at time zone 'UTC';`,
          ...HOUR_KEY.filter((c) => c !== 'hour').map((c) => `${d}.${c} := ${s}.${c};`),
          `${d}.tenant_id := ${s}.tenant_id;`,
        ]
      : [
          `${d}.day := date_trunc('day', ${s}.session_started_at at time zone 'UTC') at time zone 'UTC';`,
          `${d}.page_id := ${s}.page_id;`,
          `${d}.tenant_id := ${s}.tenant_id;`,
        ];
  const sums = {
    visits: `${sign}`,
    bounces: `${s}.is_bounce`,
    time_spent_seconds: `${s}.time_spent_seconds`,
    scroll_sum: `${s}.max_scroll_depth_percentage`,
    clicks: `${s}.total_clicks_count`,
    questions: `${s}.questions_asked_count`,
    form_submits: `${s}.has_form_submit`,
    conversions: `${s}.has_conversion`,
    visitors: `${s}.first_of_day_page`,
    site_visitors: `${s}.first_of_day_site`,
  };
  return [...key, ...Object.entries(sums).map(([c, v]) => `${d}.${c} := ${c === 'visits' ? v : `${sign} * ${v}`};`)].join('\n');
}

/** The new values' sums plus the stored ones' negation, into the new (rollups.ts, `plus`: the negation first). */
const plus = (into: string, from: string) => SUMS.map((c) => `${into}.${c} := ${from}.${c} + ${into}.${c};`).join('\n');

/** Moves one rollup row by `d`'s sums, as rollups.ts `addTo` does: UPDATE first, the upsert only when there is no row. */
function addRow(d: string, table: string, key: string[]): string {
  const match = (columns: string[]) => columns.map((c) => `${table}.${c} = ${d}.${c}`).join(' and ');
  return `
    if not (${isZero(d)}) then
      update ${table} set ${SUMS.map((c) => `${c} = ${table}.${c} + ${d}.${c}`).join(', ')}
      where ${match(['tenant_id', ...key.filter((c) => c !== 'tenant_id')])};
      if not found then
        insert into ${table} select (${d}).*
        on conflict (${key.join(', ')}) do update set ${SUMS.map((c) => `${c} = ${table}.${c} + excluded.${c}`).join(', ')};
      end if;
      -- A row left with no visit holds nothing any more (at most the rounding residue of its sums).
      if ${d}.visits < 0 then delete from ${table} where ${match(key)} and ${table}.visits <= 0; end if;
    end if;`;
}

/**
 * rollups.ts applySessionChange: from the stored values (`before`; none for a new session) to the
 * new ones (`after`). The tenant's sessions counter first, then the hourly rows in key order, then
 * the daily one. Uses pam_collect's variables hb, ha, dyb, dya, hours, days, r, q, sh, sd, changed.
 */
function sessionChange(before: string | null, after: string): string {
  const hourKey = (v: string, c = '') =>
    HOUR_KEY.map((k) => `${v}.${k}${c && k !== 'page_id' && k !== 'hour' && k !== 'audience_id' ? c : ''}`).join(', ');
  const moved = before
    ? `
    ${sumsOf('hb', before, -1, 'hour')}
    ${sumsOf('dyb', before, -1, 'day')}
    if (${hourKey('hb')}) is not distinct from (${hourKey('ha')}) then
      ${plus('ha', 'hb')}
      hours := array[ha];
    elsif (${hourKey('hb', ' collate "C"')}) < (${hourKey('ha')}) then hours := array[hb, ha];
    else hours := array[ha, hb];
    end if;
    if (dyb.tenant_id, dyb.day, dyb.page_id) = (dya.tenant_id, dya.day, dya.page_id) then
      ${plus('dya', 'dyb')}
      days := array[dya];
    elsif (dyb.day, dyb.page_id) < (dya.day, dya.page_id) then days := array[dyb, dya];
    else days := array[dya, dyb];
    end if;`
    : `
    hours := array[ha];
    days := array[dya];`;
  return `
    ${sumsOf('ha', after, 1, 'hour')}
    ${sumsOf('dya', after, 1, 'day')}
    ${moved}
    changed := false;
    foreach r in array hours loop
      if not (${isZero('r')}) then changed := true; end if;
    end loop;
    foreach q in array days loop
      if not (${isZero('q')}) then changed := true; end if;
    end loop;
    if changed then
      perform pam_note_change('sessions:' || ${after}.tenant_id);
      foreach r in array hours loop
        ${addRow('r', 'analytics_hours_utm', HOUR_KEY)}
        ${siteRows('r')}
      end loop;
      foreach q in array days loop ${addRow('q', 'analytics_days', DAY_KEY)} end loop;
    end if;`;
}

/**
 * The site's rollups (migration 0027, rollups.ts): an hourly row's change moves the tenant's hour
 * by the same sums, and the tenant's day for each grouping by its value. Uses sh and sd.
 */
const SITE_DIMENSIONS = [
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'channel',
  'channel_group',
  'referrer_host',
  'device_type',
  'browser',
  'os',
  'country',
];
function siteRows(r: string): string {
  const sums = (d: string) => SUMS.map((c) => `${d}.${c} := ${r}.${c};`).join(' ');
  return `
    sh.tenant_id := ${r}.tenant_id; sh.hour := ${r}.hour; ${sums('sh')}
    ${addRow('sh', 'analytics_site_hours', ['tenant_id', 'hour'])}
    sd.tenant_id := ${r}.tenant_id; sd.day := date_trunc('day', ${r}.hour at time zone 'UTC') at time zone 'UTC'; ${sums('sd')}
    ${SITE_DIMENSIONS.map(
      (dimension) => `
    sd.dimension := '${dimension}'; sd.value := ${r}.${dimension};
    ${addRow('sd', 'analytics_site_days', ['tenant_id', 'dimension', 'day', 'value'])}`,
    ).join('')}`;
}

/**
 * goals/occurrences.ts recordOccurrences, for totals (what a report carries), of the session `s`:
 * a count only rises, to at most 1,000, a value follows its count, at most 34 rows a visit.
 * Uses pam_collect's variables i, n, rows_now, e, known, before_count, cnt, val, noted.
 */
function occurrences(s: string, kinds: string, names: string, totals: string, values: string): string {
  return `
    n := coalesce(array_length(${kinds}, 1), 0);
    noted := false;
    if n > 0 then
      select count(*) into rows_now from visit_events where session_id = ${s}.id;
      for i in 1..n loop
        select v.count, v.first_at into e from visit_events v
        where v.session_id = ${s}.id and v.kind = ${kinds}[i] and v.name = ${names}[i];
        known := found;
        before_count := case when known then e.count else 0 end;
        -- A total no higher than the stored one says nothing new.
        continue when known and ${totals}[i] <= before_count;
        cnt := least(1000, ${totals}[i]);
        val := least(${values}[i], cnt::float8 * 1000000000::float8);
        continue when known and cnt = before_count;
        continue when not known and rows_now >= 34;
        if not known then rows_now := rows_now + 1; end if;
        if not noted then
          perform pam_note_change('sessions:' || ${s}.tenant_id);
          noted := true;
        end if;
        insert into visit_events (session_id, kind, name, tenant_id, page_id, audience_id, session_started_at, first_at, count, value)
        values (${s}.id, ${kinds}[i], ${names}[i], ${s}.tenant_id, ${s}.page_id, ${s}.audience_id, ${s}.session_started_at,
                case when known then e.first_at else p_at end, cnt, val)
        on conflict (session_id, kind, name) do update set count = excluded.count, value = excluded.value;
      end loop;
    end if;`;
}

/** 0028's pam_collect, with the session's channel group (the last parameter) stored and announced. */
const COLLECT_FUNCTION = `create function pam_collect(
    p_tenant text, p_page text, p_link text, p_audience text, p_visit text,
    p_issued_at timestamptz, p_at timestamptz,
    p_visible_ms bigint, p_scroll float8, p_clicks bigint, p_questions bigint, p_conversions bigint,
    p_utm_source text, p_utm_medium text, p_utm_campaign text, p_utm_term text, p_utm_content text,
    p_end_due_at timestamptz,
    p_kinds text[], p_names text[], p_totals bigint[], p_values float8[],
    -- A first report's: the new ids and times, where it was served, its experiment, its classes
    -- (p_visitor_hash null: not sent).
    p_now text, p_session_id text, p_created_event text, p_started_event text, p_url_prefix text, p_claim_path text,
    p_experiment_id text, p_arm text, p_unit text,
    p_referrer_host text, p_channel text, p_device_type text, p_browser text, p_os text, p_country text, p_visitor_hash text,
    p_channel_group text
  ) returns text language plpgsql as $$
  declare
    target record;
    s audience_sessions;
    a audience_sessions;
    stored boolean;
    previous_at timestamptz;
    seconds float8;
    wall float8;
    has_form boolean;
    visitor text;
    day_pages text[];
    kinds text[] := p_kinds;
    names text[] := p_names;
    totals bigint[] := p_totals;
    vals float8[] := p_values;
    account text;
    made_at timestamptz;
    hb analytics_hours_utm; ha analytics_hours_utm; dyb analytics_days; dya analytics_days;
    hours analytics_hours_utm[]; days analytics_days[]; r analytics_hours_utm; q analytics_days; changed boolean;
    sh analytics_site_hours; sd analytics_site_days;
    n integer; rows_now integer; e record; known boolean; before_count bigint; cnt bigint; val float8; noted boolean;
  begin
    perform pg_advisory_xact_lock(hashtext('visit:' || p_visit));
    select p.title, l.path, au.person_id into target
    from pages p
    left join page_links l on l.id = p_link and l.tenant_id = p_tenant
    left join audiences au on au.id = p_audience and au.tenant_id = p_tenant
    where p.id = p_page and p.tenant_id = p_tenant and p.deleted_at is null;
    if not found then return 'gone'; end if;
    select * into s from audience_sessions where visit_id = p_visit and tenant_id = p_tenant;
    stored := found;
    if stored and target.person_id is not null and s.start_announced = 0 then return 'slow'; end if;
    if not stored and p_visitor_hash is null then return 'classify'; end if;

    -- collect.ts raise(): the session after this report.
    previous_at := case when stored then s.session_ended_at else p_issued_at end;
    seconds := greatest(1, extract(epoch from p_at - previous_at)::float8);
    wall := greatest(0, extract(epoch from p_at - p_issued_at)::float8);
    has_form := stored and s.has_form_submit = 1;
    if stored then
      a := s;
    else
      made_at := p_now::timestamptz;
      visitor := case when target.person_id is not null then 'person:' || target.person_id else p_visitor_hash end;
      -- classify.ts: two first visits of one visitor at once must not both count as the day's first.
      perform pg_advisory_xact_lock(hashtext('visitor:' || p_tenant || ':' || visitor));
      select coalesce(array_agg(x.page_id), '{}') into day_pages from audience_sessions x
      where x.tenant_id = p_tenant and x.visitor_hash = visitor
        and x.session_started_at >= date_trunc('day', p_at at time zone 'UTC') at time zone 'UTC';
      a.id := p_session_id;
      a.tenant_id := p_tenant;
      a.page_id := p_page;
      a.audience_id := p_audience;
      a.analytics_session_id := p_visit;
      a.page_title := target.title;
      a.page_url := p_url_prefix || coalesce(p_claim_path, target.path, '/');
      a.session_started_at := p_at;
      a.created_at := made_at;
      a.visit_id := p_visit;
      a.experiment_id := p_experiment_id;
      a.experiment_arm := p_arm;
      a.experiment_unit := p_unit;
      a.referrer_host := p_referrer_host;
      a.channel := p_channel;
      a.channel_group := coalesce(p_channel_group, 'Direct');
      a.device_type := p_device_type;
      a.browser := p_browser;
      a.os := p_os;
      a.country := p_country;
      a.visitor_hash := visitor;
      a.first_of_day_page := case when p_page = any(day_pages) then 0 else 1 end;
      a.first_of_day_site := case when cardinality(day_pages) > 0 then 0 else 1 end;
      -- Announced below, in this statement.
      a.start_announced := 1;
      a.end_announced := 0;
      a.time_spent_seconds := 0;
      a.max_scroll_depth_percentage := 0;
      a.total_clicks_count := 0;
      a.questions_asked_count := 0;
      a.has_form_submit := 0;
      a.has_conversion := 0;
      a.form_submission_id := '';
      a.form_submission_identifier := '';
      a.form_submission_email := '';
      a.form_submission_phone := '';
      a.utm_source := ''; a.utm_medium := ''; a.utm_campaign := ''; a.utm_term := ''; a.utm_content := '';
    end if;
    a.session_ended_at := greatest(p_at, previous_at);
    a.time_spent_seconds := greatest(a.time_spent_seconds,
      floor(least(p_visible_ms::float8 / 1000, wall) * 1000 + 0.5) / 1000);
    a.total_clicks_count := a.total_clicks_count
      + least(greatest(0, p_clicks - a.total_clicks_count), floor(20 * seconds))::bigint;
    a.questions_asked_count := a.questions_asked_count
      + least(greatest(0, p_questions - a.questions_asked_count), floor(1 * seconds))::bigint;
    a.max_scroll_depth_percentage := greatest(a.max_scroll_depth_percentage, p_scroll);
    a.is_bounce := case when a.total_clicks_count = 0 and not has_form and a.time_spent_seconds < 10 then 1 else 0 end;
    a.has_form_submit := case when has_form then 1 else 0 end;
    a.has_conversion := case when (stored and s.has_conversion = 1) or has_form or p_conversions > 0 then 1 else 0 end;
    a.utm_source := coalesce(nullif(a.utm_source, ''), p_utm_source, '');
    a.utm_medium := coalesce(nullif(a.utm_medium, ''), p_utm_medium, '');
    a.utm_campaign := coalesce(nullif(a.utm_campaign, ''), p_utm_campaign, '');
    a.utm_term := coalesce(nullif(a.utm_term, ''), p_utm_term, '');
    a.utm_content := coalesce(nullif(a.utm_content, ''), p_utm_content, '');

    if stored then
      update audience_sessions set
        session_ended_at = a.session_ended_at,
        time_spent_seconds = a.time_spent_seconds,
        max_scroll_depth_percentage = a.max_scroll_depth_percentage,
        total_clicks_count = a.total_clicks_count,
        questions_asked_count = a.questions_asked_count,
        is_bounce = a.is_bounce,
        has_form_submit = a.has_form_submit,
        has_conversion = a.has_conversion,
        utm_source = a.utm_source,
        utm_medium = a.utm_medium,
        utm_campaign = a.utm_campaign,
        utm_term = a.utm_term,
        utm_content = a.utm_content,
        -- Never again once announced.
        end_due_at = case when end_announced = 0 then p_end_due_at else end_due_at end
      where id = s.id;
      ${sessionChange('s', 'a')}
      ${occurrences('a', 'p_kinds', 'p_names', 'p_totals', 'p_values')}
      return 'accepted';
    end if;

    a.end_due_at := p_end_due_at;
    insert into audience_sessions select (a).* on conflict (visit_id) where visit_id is not null do nothing;
    -- Another tenant's visit of the same id: the caller's transaction answers as it always did.
    if not found then return 'slow'; end if;
    ${sessionChange(null, 'a')}
    insert into events (id, tenant_id, type, payload, created_at, fanned_out, fan_lease_until)
    values (p_created_event, p_tenant, 'audience_session.created', pam_json_object(
      array['type', 'timestamp', 'data'],
      array[to_json('audience_session.created'::text), to_json(p_now), pam_json_object(
        array['audienceSessionId', 'analyticsSessionId', 'audienceId', 'pageId', 'pageTitle', 'pageUrl', 'sessionStartedAt',
          'sessionEndedAt', 'timeSpentSeconds', 'maxScrollDepthPercentage', 'totalClicksCount', 'questionsAskedCount', 'isBounce',
          'hasFormSubmit', 'hasConversion', 'formSubmissionId', 'formSubmissionIdentifier', 'formSubmissionEmail',
          'formSubmissionPhone', 'utmCampaign', 'utmContent', 'utmMedium', 'utmSource', 'utmTerm', 'experimentId', 'arm',
          'referrerHost', 'channel', 'channelGroup', 'deviceType', 'browser', 'os', 'country'],
        array[to_json(a.id), to_json(a.analytics_session_id), to_json(a.audience_id), to_json(a.page_id), to_json(a.page_title),
          to_json(a.page_url), to_json(pam_instant(a.session_started_at)), to_json(pam_instant(a.session_ended_at)),
          to_json(a.time_spent_seconds), to_json(a.max_scroll_depth_percentage), to_json(a.total_clicks_count),
          to_json(a.questions_asked_count), to_json(a.is_bounce = 1), to_json(a.has_form_submit = 1), to_json(a.has_conversion = 1),
          to_json(a.form_submission_id), to_json(a.form_submission_identifier), to_json(a.form_submission_email),
          to_json(a.form_submission_phone), to_json(a.utm_campaign), to_json(a.utm_content), to_json(a.utm_medium),
          to_json(a.utm_source), to_json(a.utm_term), to_json(a.experiment_id), to_json(a.experiment_arm),
          to_json(a.referrer_host), to_json(a.channel), to_json(a.channel_group), to_json(a.device_type), to_json(a.browser), to_json(a.os),
          to_json(a.country)])::json]), made_at, 0, null);
    -- The path goal names the link's path, then the report's events and clicked purposes.
    if coalesce(target.path, p_claim_path) is not null then
      kinds := array_prepend('path'::text, kinds);
      names := array_prepend(coalesce(target.path, p_claim_path), names);
      totals := array_prepend(1::bigint, totals);
      vals := array_prepend(0::float8, vals);
    end if;
    ${occurrences('a', 'kinds', 'names', 'totals', 'vals')}
    if target.person_id is not null then
      select acc.id into account from persons per
      join accounts acc on acc.domain_lc = per.domain_lc and acc.tenant_id = per.tenant_id
      where per.id = target.person_id and per.tenant_id = p_tenant
      order by acc.id limit 1;
      insert into events (id, tenant_id, type, payload, created_at, fanned_out, fan_lease_until)
      values (p_started_event, p_tenant, 'visit.started', pam_json_object(
        array['type', 'timestamp', 'data'],
        array[to_json('visit.started'::text), to_json(p_now), pam_json_object(
          array['audienceSessionId', 'analyticsSessionId', 'personId', 'accountId', 'pageId', 'audienceId', 'path', 'channel',
            'sessionStartedAt'],
          array[to_json(a.id), to_json(a.analytics_session_id), to_json(target.person_id), to_json(account), to_json(a.page_id),
            to_json(a.audience_id), to_json(coalesce(p_claim_path, target.path, '/')), to_json(a.channel),
            to_json(pam_instant(a.session_started_at))])::json]), made_at, 0, null);
    end if;
    return 'accepted';
  end $$`;
