/**
 * Fills a fresh database for the benchmark through the service's own data layer, in bulk
 * (multi-row inserts in large transactions), with realistic values that are deterministic from a seed.
 */
import type { Kysely } from 'kysely';
import { createApiKey, createTenant } from '../src/admin/repository.js';
import type { Database } from '../src/db/types.js';
import { bump } from '../src/db/counters.js';
import { slugify } from '../src/db/slugs.js';
import { seedDeals } from './seed-deals.js';
import { newId } from '../src/ids.js';
import { rebuildRollups } from '../src/visits/rollups.js';

export type Scale = 'tiny' | 'small' | 'full';

export const SCALES: Record<
  Scale,
  {
    pages: number;
    audiences: number;
    persons: number;
    accounts: number;
    sessions: number;
    links: number;
    topics: number;
    entries: number;
    deepPersons: number;
    /** Audiences of the page the agent scenario regenerates. */
    agentAudiences: number;
    /** Deals of the pipeline scenario (issue 40). */
    deals: number;
  }
> = {
  tiny: {
    pages: 20,
    audiences: 100,
    persons: 100,
    accounts: 100,
    sessions: 500,
    links: 100,
    topics: 5,
    entries: 5,
    deepPersons: 2_000,
    agentAudiences: 200,
    deals: 100,
  },
  small: {
    pages: 1_000,
    audiences: 10_000,
    persons: 10_000,
    accounts: 10_000,
    sessions: 100_000,
    links: 10_000,
    topics: 100,
    entries: 20,
    deepPersons: 200_000,
    agentAudiences: 2_000,
    deals: 1_000,
  },
  full: {
    pages: 10_000,
    audiences: 100_000,
    persons: 100_000,
    accounts: 100_000,
    sessions: 1_000_000,
    links: 100_000,
    topics: 100,
    entries: 20,
    deepPersons: 1_000_000,
    agentAudiences: 10_000,
    deals: 10_000,
  },
};

const FIRST = [
  'James',
  'Mary',
  'Robert',
  'Patricia',
  'John',
  'Jennifer',
  'Michael',
  'Linda',
  'David',
  'Elizabeth',
  'William',
  'Barbara',
  'Richard',
  'Susan',
  'Joseph',
  'Jessica',
  'Thomas',
  'Sarah',
  'Carlos',
  'Karen',
  'Wei',
  'Aisha',
  'Hiroshi',
  'Olga',
  'Mateo',
  'Fatima',
  'Lars',
  'Ines',
  'Kwame',
  'Priya',
];
const LAST = [
  'Smith',
  'Johnson',
  'Williams',
  'Brown',
  'Jones',
  'Garcia',
  'Miller',
  'Davis',
  'Rodriguez',
  'Martinez',
  'Hernandez',
  'Lopez',
  'Gonzalez',
  'Wilson',
  'Anderson',
  'Thomas',
  'Taylor',
  'Moore',
  'Jackson',
  'Martin',
  'Lee',
  'Perez',
  'Thompson',
  'White',
  'Harris',
  'Sanchez',
  'Clark',
  'Ramirez',
  'Lewis',
  'Robinson',
];
const WORDS = [
  'acme',
  'globex',
  'initech',
  'umbrella',
  'hooli',
  'stark',
  'wayne',
  'wonka',
  'cyberdyne',
  'soylent',
  'tyrell',
  'aperture',
  'vandelay',
  'prestige',
  'oscorp',
  'massive',
  'dynamic',
  'nimbus',
  'quantum',
  'vertex',
  'summit',
  'harbor',
  'pioneer',
  'atlas',
  'beacon',
  'cobalt',
  'ember',
  'falcon',
  'granite',
  'horizon',
];
const SUFFIX = ['labs', 'systems', 'group', 'works', 'partners', 'digital', 'logistics', 'health', 'energy', 'capital'];
const TLD = ['com', 'io', 'co', 'net', 'de', 'fr', 'co.uk', 'dev'];
const CAMPAIGNS = [
  'spring-launch',
  'summer-sale',
  'webinar',
  'demo-day',
  'trade-fair',
  'onboarding',
  'renewal',
  'partner-week',
  'product-tour',
  'roadshow',
];

/** mulberry32: a small, fast, seeded generator, so every run builds the same data. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Seeded {
  key: string;
  deepKey: string;
  personIds: string[];
  audiences: { pageId: string; audienceId: string }[];
  pageIds: string[];
  /** Substrings that match something, for the search scenarios. */
  audienceQueries: string[];
  accountQueries: string[];
  linkQueries: string[];
  /** What a search box sends while a real value is typed: its prefixes of 1 to 8 characters, lowercased. */
  audienceTyping: string[];
  accountTyping: string[];
  linkTyping: string[];
  sessionWindows: { pageId: string; audienceId: string; startDate: string; endDate: string }[];
  /** The 30 days the sessions fall in, for the analytics scenarios. */
  analyticsRange: { startDate: string; endDate: string };
  /** The newest-first sort key of the deep tenant's 200,000th person: the cursor after 10,000 pages of 20. */
  deepTenantId: string;
  samplePerson: unknown;
  /** The tenant's fallback domain and paths of its audience links there, for the visitor-plane scenarios. */
  siteHost: string;
  sitePaths: string[];
  /** Pages, audiences and links of those paths, to sign view tokens for the collector scenario. */
  siteVisits: { tenantId: string; pageId: string; audienceId: string; linkId: string }[];
  /** The page of `agentAudiences` audiences the agent scenario regenerates. */
  agentPageId: string;
  /** A three-step funnel over the occurrences of one visit in ten. */
  funnelId: string;
}

const BATCH = 500;

async function insertAll<T extends keyof Database>(db: Kysely<Database>, table: T, rows: Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 20_000) {
    await db.transaction().execute(async (trx) => {
      for (let j = i; j < Math.min(i + 20_000, rows.length); j += BATCH) {
        // Rows are built to the table's shape above; Kysely's per-table insert type is too narrow to name here.
        await trx
          .insertInto(table)
          .values(rows.slice(j, j + BATCH) as never)
          .execute();
      }
    });
  }
}

const VISIT_CHANNELS = ['direct', 'search', 'search', 'social', 'email', 'paid', 'referral'] as const;
const REFERRERS: Record<Exclude<(typeof VISIT_CHANNELS)[number], 'direct'>, readonly string[]> = {
  search: ['google.com', 'bing.com', 'duckduckgo.com'],
  social: ['linkedin.com', 'm.facebook.com', 't.co'],
  email: ['mail.google.com', 'outlook.live.com'],
  paid: ['google.com', ''],
  referral: ['news.ycombinator.com', 'blog.example.org', 'partner.example.com'],
};
const sample = <T>(rand: () => number, list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
const typing = (value: string) =>
  Array.from({ length: 8 }, (_, i) =>
    Array.from(value.toLowerCase())
      .slice(0, i + 1)
      .join(''),
  );
const threeLetters = (rand: () => number, text: string) => {
  const clean = text.toLowerCase();
  const at = Math.floor(rand() * Math.max(1, clean.length - 2));
  return clean.slice(at, at + 3);
};

export async function seed(db: Kysely<Database>, scale: Scale, seedValue = 42): Promise<Seeded> {
  const n = SCALES[scale];
  const rand = prng(seedValue);
  const base = Date.UTC(2026, 0, 1);
  const ts = (i: number, total: number) => new Date(base + Math.floor((i / Math.max(1, total)) * 300 * 86_400_000)).toISOString();

  const { tenantId, key, deepTenantId, deepKey } = await db.transaction().execute(async (trx) => {
    const main = await createTenant(trx, 'Bench Corp', 'pages.localhost');
    const deep = await createTenant(trx, 'Deep Pagination Inc', 'pages.localhost');
    return {
      tenantId: main.tenantId,
      key: (await createApiKey(trx, main.tenantId)).apiKey,
      deepTenantId: deep.tenantId,
      deepKey: (await createApiKey(trx, deep.tenantId)).apiKey,
    };
  });

  const company = () => `${sample(rand, WORDS)} ${sample(rand, SUFFIX)}`;
  const personName = () => `${sample(rand, FIRST)} ${sample(rand, LAST)}`;
  const domainOf = (name: string, i: number) => `${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}${i}.${sample(rand, TLD)}`;

  const persons = Array.from({ length: n.persons }, (_, i) => {
    const name = personName();
    const domain = i % 3 === 0 ? null : domainOf(company(), i % 5000);
    const at = ts(i, n.persons);
    return {
      id: newId('person'),
      tenant_id: tenantId,
      name,
      email: `${name.toLowerCase().replace(' ', '.')}${i}@example.com`,
      domain,
      domain_lc: domain,
      slug: `${slugify(name, 'person')}-${i}`,
      phone_number: `+1415555${String(i % 10000).padStart(4, '0')}`,
      linkedin_profile_url: null,
      created_at: at,
      updated_at: at,
    };
  });
  await insertAll(db, 'persons', persons);

  const accounts = Array.from({ length: n.accounts }, (_, i) => {
    const name = `${company()} ${i}`;
    const domain = domainOf(name, i);
    const at = ts(i, n.accounts);
    return {
      id: newId('account'),
      tenant_id: tenantId,
      name,
      name_lc: name.toLowerCase(),
      domain,
      domain_lc: domain,
      created_at: at,
      updated_at: at,
      latest_activity_at: at,
    };
  });
  await insertAll(db, 'accounts', accounts);

  const pages = Array.from({ length: n.pages }, (_, i) => {
    const name = `${sample(rand, CAMPAIGNS).replace('-', ' ')} ${company()} ${i}`;
    const at = ts(i, n.pages);
    const actions = [
      { actionId: newId('action'), purpose: 'book', buttonTitle: 'Book a demo', actionType: 'link', url: 'https://example.com/demo' },
    ];
    return {
      id: newId('page'),
      tenant_id: tenantId,
      name,
      name_lc: name.toLowerCase(),
      title: `Welcome to ${name}`,
      page_context: 'A personalised landing page',
      page_type: 'inbound',
      status: 'published',
      flags: '[]',
      brand_id: '',
      header_action_id: actions[0]!.actionId,
      actions: JSON.stringify(actions),
      action_card_widgets: '[]',
      footer_links: '[]',
      scripts: '[]',
      metadata: JSON.stringify({ title: name, description: 'Landing page', keywords: ['demo', 'launch'] }),
      audience_seq: 0,
      archived_at: null,
      deleted_at: null,
      created_at: at,
      updated_at: at,
    };
  });
  const audiences: Record<string, unknown>[] = [];
  const versions: Record<string, unknown>[] = [];
  const audienceRefs: { pageId: string; audienceId: string }[] = [];
  for (let i = 0; i < n.audiences; i++) {
    const page = pages[i % pages.length]!;
    page.audience_seq += 1;
    const person = persons[i % persons.length]!;
    const computed = person.domain ? `${person.name} (${person.domain})` : person.name;
    const at = ts(i, n.audiences);
    const id = newId('audience');
    const ids = [newId('version'), newId('version'), newId('version')];
    for (const [v, versionId] of ids.entries()) {
      versions.push({
        id: versionId,
        tenant_id: tenantId,
        audience_id: id,
        version_number: v + 1,
        status: v === 2 ? 'published' : 'archived',
        is_new_page_agent: 0,
        supplementary_context: `Context v${v + 1}`,
        queue_duration_ms: v === 0 ? null : 1200,
        created_at: at,
        became_draft_at: v === 0 ? null : at,
        queued_at: v === 0 ? null : at,
        published_at: at,
        cancelled_at: null,
        obsolete_at: v === 2 ? null : at,
        archived_at: v === 2 ? null : at,
      });
    }
    audiences.push({
      id,
      tenant_id: tenantId,
      page_id: page.id,
      number: page.audience_seq,
      custom_name: null,
      computed_name: computed,
      effective_name: computed,
      effective_name_lc: computed.toLowerCase(),
      page_deleted: 0,
      person_id: person.id,
      person_route_key: null,
      home_page: 0,
      flags: '[]',
      action_form_id_override: null,
      action_form_instructions_override: null,
      action_url_override: null,
      metadata_override: JSON.stringify({ description: `For ${person.name}` }),
      version_seq: 3,
      latest_version_id: ids[2],
      published_version_id: ids[2],
      archived_at: null,
      created_at: at,
      updated_at: at,
    });
    audienceRefs.push({ pageId: page.id, audienceId: id });
  }
  // The agent scenario's page: content with tokens, and one published version per audience, each with a context.
  const agentPage = {
    ...(pages[0] as (typeof pages)[number]),
    id: newId('page'),
    name: 'Agent page',
    name_lc: 'agent page',
    title: 'Welcome',
    content: JSON.stringify({
      headline: 'Hello {{ person.firstName | there }}',
      subheadline: 'What {{ account.name | your team }} gets',
      sections: [
        { heading: 'Why', body: 'Faster launches, **measured**.' },
        { heading: 'How', body: '- Plan\n- Launch\n- Learn' },
      ],
    }),
    audience_seq: n.agentAudiences,
  };
  pages.push(agentPage);
  for (let i = 0; i < n.agentAudiences; i++) {
    const person = persons[i % persons.length]!;
    const computed = person.domain ? `${person.name} (${person.domain})` : person.name;
    const at = ts(i, n.agentAudiences);
    const id = newId('audience');
    const versionId = newId('version');
    versions.push({
      id: versionId,
      tenant_id: tenantId,
      audience_id: id,
      version_number: 1,
      status: 'published',
      is_new_page_agent: 1,
      supplementary_context: `Mention the offer for ${person.name}.`,
      queue_duration_ms: null,
      created_at: at,
      became_draft_at: null,
      queued_at: null,
      published_at: at,
      cancelled_at: null,
      obsolete_at: null,
      archived_at: null,
    });
    audiences.push({
      ...(audiences[0] as Record<string, unknown>),
      id,
      page_id: agentPage.id,
      number: i + 1,
      computed_name: computed,
      effective_name: computed,
      effective_name_lc: computed.toLowerCase(),
      person_id: person.id,
      metadata_override: null,
      version_seq: 1,
      latest_version_id: versionId,
      published_version_id: versionId,
      created_at: at,
      updated_at: at,
    });
  }
  await insertAll(db, 'pages', pages);
  // In the order a running service writes them, by time: the agent page's audiences are spread over
  // the same days as the others (a search reads rows in insertion order when that is also time order).
  const byTime = (a: Record<string, unknown>, b: Record<string, unknown>) =>
    String(a.created_at).localeCompare(String(b.created_at)) || String(a.id).localeCompare(String(b.id));
  await insertAll(db, 'audiences', audiences.sort(byTime));
  await insertAll(db, 'audience_versions', versions);

  const sessions = Array.from({ length: n.sessions }, (_, i) => {
    const ref = audienceRefs[i % audienceRefs.length]!;
    const started = base + Math.floor(rand() * 30) * 86_400_000 + Math.floor(rand() * 86_400_000);
    return {
      id: newId('session'),
      tenant_id: tenantId,
      page_id: ref.pageId,
      audience_id: ref.audienceId,
      analytics_session_id: `ga-${i}`,
      page_title: 'Welcome',
      page_url: 'https://bench-corp.pages.localhost/welcome',
      session_started_at: new Date(started).toISOString(),
      session_ended_at: new Date(started + 90_000).toISOString(),
      time_spent_seconds: 90,
      max_scroll_depth_percentage: Math.floor(rand() * 100),
      total_clicks_count: Math.floor(rand() * 10),
      questions_asked_count: Math.floor(rand() * 3),
      is_bounce: rand() < 0.3 ? 1 : 0,
      has_form_submit: 0,
      has_conversion: 0,
      form_submission_id: '',
      form_submission_identifier: '',
      form_submission_email: '',
      form_submission_phone: '',
      utm_campaign: sample(rand, CAMPAIGNS),
      utm_content: '',
      utm_medium: 'email',
      utm_source: 'newsletter',
      utm_term: '',
      // GA4's group of a newsletter's link (src/visits/traffic.ts).
      channel_group: 'Email',
      created_at: new Date(started).toISOString(),
      // Issue 28's visit classes, spread as a site's would be: a visitor key shared by a few visits.
      ...(() => {
        const channel = sample(rand, VISIT_CHANNELS);
        return {
          channel,
          referrer_host: channel === 'direct' ? '' : sample(rand, REFERRERS[channel]),
          device_type: sample(rand, ['desktop', 'desktop', 'mobile', 'tablet'] as const),
          browser: sample(rand, ['Chrome', 'Safari', 'Firefox', 'Edge'] as const),
          os: sample(rand, ['Windows', 'Mac OS', 'iOS', 'Android', 'Linux'] as const),
          country: sample(rand, ['US', 'GB', 'DE', 'FR', 'NL', 'IN', ''] as const),
          visitor_hash: `v${Math.floor(rand() * n.sessions * 0.7)}`,
          first_of_day_page: rand() < 0.8 ? 1 : 0,
          first_of_day_site: rand() < 0.7 ? 1 : 0,
        };
      })(),
    };
  });
  await insertAll(db, 'audience_sessions', sessions);
  await seedDeals(db, {
    tenantId,
    count: n.deals,
    personDomains: persons.map((p) => p.domain),
    accountDomains: new Set(accounts.map((a) => a.domain_lc)),
    base,
    rand,
    insertAll: (table, rows) => insertAll(db, table, rows),
  });
  // Goals' occurrences for one visit in ten (the funnel scenario): its path; for half of those a
  // click on the "demo" action a minute in, and for a quarter a tracked signup two minutes in.
  const occurrences = sessions
    .filter((_, i) => i % 10 === 0)
    .flatMap((s, i) => {
      const at = (seconds: number) => new Date(Date.parse(s.session_started_at) + seconds * 1000).toISOString();
      const of = {
        session_id: s.id,
        tenant_id: tenantId,
        page_id: s.page_id,
        audience_id: s.audience_id,
        session_started_at: s.session_started_at,
      };
      return [
        { ...of, kind: 'path', name: '/welcome', first_at: at(0), count: 1, value: 0 },
        ...(i % 2 === 0 ? [{ ...of, kind: 'action', name: 'demo', first_at: at(60), count: 1, value: 0 }] : []),
        ...(i % 4 === 0 ? [{ ...of, kind: 'event', name: 'signup', first_at: at(120), count: 1, value: 49 }] : []),
      ];
    });
  await insertAll(db, 'visit_events', occurrences);
  const funnelId = newId('funnel');
  await insertAll(db, 'funnels', [
    {
      id: funnelId,
      tenant_id: tenantId,
      name: 'Welcome to signup',
      steps: JSON.stringify([
        { name: 'Welcome', kind: 'path', target: '/welcome', pageId: null },
        { name: 'Demo', kind: 'action', target: 'demo', pageId: null },
        { name: 'Signup', kind: 'event', target: 'signup', pageId: null },
      ]),
      window_hours: 24,
      created_at: new Date(base).toISOString(),
      updated_at: new Date(base).toISOString(),
    },
  ]);
  // Bulk inserts bypass the repository, so the analytics rollups are built here, as the migration builds them.
  await rebuildRollups(db);

  const domain = await db
    .selectFrom('tenant_domains')
    .select(['id', 'hostname'])
    .where('tenant_id', '=', tenantId)
    .where('is_fallback', '=', 1)
    .executeTakeFirstOrThrow();
  const links = Array.from({ length: n.links }, (_, i) => {
    const ref = audienceRefs[i % audienceRefs.length]!;
    const person = persons[i % persons.length]!;
    const path = `/${sample(rand, CAMPAIGNS)}/${person.slug}-${i}`;
    const at = ts(i, n.links);
    return {
      id: newId('pagelink'),
      tenant_id: tenantId,
      tenant_domain_id: domain.id,
      path,
      path_lc: path,
      target_type: 'audience',
      target_audience_id: ref.audienceId,
      target_page_id: null,
      page_id: ref.pageId,
      created_at: at,
      updated_at: at,
      deleted_at: null,
    };
  });
  await insertAll(db, 'page_links', links);

  const topics = Array.from({ length: n.topics }, (_, i) => ({
    id: newId('topic'),
    tenant_id: tenantId,
    title: `Topic ${i}`,
    purpose: null,
    sort_order: i,
    is_default: i === 0 ? 1 : 0,
    created_at: ts(i, n.topics),
    updated_at: ts(i, n.topics),
  }));
  await insertAll(db, 'topics', topics);
  await insertAll(
    db,
    'topic_entries',
    topics.flatMap((t) =>
      Array.from({ length: n.entries }, (_, i) => ({
        id: newId('entry'),
        tenant_id: tenantId,
        topic_id: t.id,
        sort_order: i,
        content_type: 'text',
        content: `Talking point ${i}`,
        created_at: t.created_at,
        updated_at: t.created_at,
      })),
    ),
  );

  for (let i = 0; i < n.deepPersons; i += 100_000) {
    await insertAll(
      db,
      'persons',
      Array.from({ length: Math.min(100_000, n.deepPersons - i) }, (_, j) => {
        const name = personName();
        const at = ts(i + j, n.deepPersons);
        return {
          id: newId('person'),
          tenant_id: deepTenantId,
          name,
          email: null,
          domain: null,
          domain_lc: null,
          slug: `${slugify(name, 'person')}-${i + j}`,
          phone_number: null,
          linkedin_profile_url: null,
          created_at: at,
          updated_at: at,
        };
      }),
    );
  }

  // Bulk inserts bypass the repository, so the list counters are set here.
  await bump(db, tenantId, 'persons', n.persons);
  await bump(db, tenantId, 'pages', pages.length);
  await bump(db, deepTenantId, 'persons', n.deepPersons);

  const pick = <T>(list: T[], count: number) =>
    Array.from({ length: Math.min(count, list.length) }, () => list[Math.floor(rand() * list.length)]!);
  const first = persons[0]!;
  return {
    key,
    deepKey,
    deepTenantId,
    personIds: pick(persons, 5000).map((p) => p.id),
    audiences: pick(audienceRefs, 5000),
    pageIds: pick(pages, 1000).map((p) => p.id),
    audienceQueries: pick(audiences, 500).map((a) => threeLetters(rand, String(a.effective_name))),
    accountQueries: pick(accounts, 500).map((a) => threeLetters(rand, a.name)),
    linkQueries: pick(links, 500).map((l) => threeLetters(rand, l.path.slice(1))),
    audienceTyping: pick(audiences, 100).flatMap((a) => typing(String(a.effective_name))),
    accountTyping: pick(accounts, 100).flatMap((a) => typing(a.name)),
    linkTyping: pick(links, 100).flatMap((l) => typing(l.path.slice(1))),
    sessionWindows: pick(sessions, 500).map((s) => {
      const day = s.session_started_at.slice(0, 10);
      const start = `${day}T00:00:00.000Z`;
      return {
        pageId: s.page_id,
        audienceId: s.audience_id,
        startDate: start,
        endDate: new Date(Date.parse(start) + 86_400_000).toISOString(),
      };
    }),
    analyticsRange: { startDate: new Date(base).toISOString(), endDate: new Date(base + 30 * 86_400_000).toISOString() },
    agentPageId: agentPage.id,
    funnelId,
    siteHost: domain.hostname,
    sitePaths: links.slice(0, 1000).map((l) => l.path),
    siteVisits: links.slice(0, 1000).map((l) => ({ tenantId, pageId: l.page_id, audienceId: l.target_audience_id, linkId: l.id })),
    samplePerson: {
      personId: first.id,
      name: first.name,
      email: first.email,
      domain: first.domain,
      slug: first.slug,
      phoneNumber: first.phone_number,
      linkedinProfileUrl: null,
      createdAt: first.created_at,
      updatedAt: first.updated_at,
    },
  };
}
