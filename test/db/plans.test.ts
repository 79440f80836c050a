import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CompiledQuery, sql, type Kysely, type LogEvent } from 'kysely';
import { searchAccounts } from '../../src/accounts/repository.js';
import { forBulkWork, loadConfig } from '../../src/config.js';
import { openDatabase, type Db } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { Database } from '../../src/db/types.js';
import { findLog } from '../../src/logs/repository.js';
import { getPerson, listPersons, searchPersons } from '../../src/persons/repository.js';
import { findPage, getPage, listPages } from '../../src/pages/repository.js';
import { getAudience, listAudiences } from '../../src/audiences/repository.js';
import { searchAudiences } from '../../src/audiences/search.js';
import { readPageSegments } from '../../src/site/serve/choose.js';
import { listSessions } from '../../src/visits/repository.js';
import { findTopic, listEntries, listTopics } from '../../src/topics/repository.js';
import { searchPageLinks } from '../../src/page-links/repository.js';
import { getAsset, listAssets } from '../../src/assets/repository.js';
import { urlSigner } from '../../src/assets/files.js';
import { newId } from '../../src/ids.js';
import { freshDatabase, onPostgres, type TestDatabase } from '../helpers.js';
import { NOT_COLLECTED } from '../../src/visits/repository.js';
import { getSiteAnalytics } from '../../src/analytics/repository.js';
import { funnelResults } from '../../src/funnels/results.js';
import { applySessionChange, type RolledSession } from '../../src/visits/rollups.js';

// The real repository queries, captured as they run, then EXPLAINed over tables big enough that
// a planner would rather use an index: none may fall back to a sequential scan of a big table.
const BIG_TABLES = [
  'persons',
  'accounts',
  'person_logs',
  'account_logs',
  'api_keys',
  'idempotency_keys',
  'pages',
  'audiences',
  'audience_versions',
  'audience_sessions',
  'files',
  'assets',
  'topics',
  'topic_entries',
  'page_links',
  'search_postings',
];
const TENANTS = 40;
const PER_TENANT = 300;

let database: TestDatabase;
let db: Db;
const tenantIds: string[] = [];
let somePerson = { tenantId: '', id: '' };
let someLog = { tenantId: '', ownerId: '', id: '' };

/** Every query the database runs while `capturing` is set (Kysely's log sees prepared queries too). */
let captured: CompiledQuery[] | undefined;
const capture = (event: LogEvent) => {
  if (event.level === 'query') captured?.push(event.query);
};

/** `explained`: which captured statements to explain (a transaction's own statements have no plan). */
async function plansOf(
  run: (k: Kysely<Database>) => Promise<unknown>,
  explained: (q: CompiledQuery) => boolean = () => true,
): Promise<string[]> {
  const queries: CompiledQuery[] = [];
  captured = queries;
  try {
    await run(db.kysely);
  } finally {
    captured = undefined;
  }
  assert.ok(queries.length > 0, 'no query was captured');
  const plans: string[] = [];
  for (const q of queries.filter(explained)) {
    const explain = onPostgres ? `explain ${q.sql}` : `explain query plan ${q.sql}`;
    const result = await db.kysely.executeQuery<Record<string, unknown>>(CompiledQuery.raw(explain, [...q.parameters]));
    plans.push(result.rows.map((r) => String(r['QUERY PLAN'] ?? r.detail)).join('\n'));
    if (process.env.SHOW_PLANS) console.log(`${q.sql}\n${plans.at(-1)}\n`);
  }
  return plans;
}

function assertNoFullScan(plans: string[]): void {
  for (const plan of plans) {
    for (const table of BIG_TABLES) {
      const scan = onPostgres ? new RegExp(`Seq Scan on ${table}\\b`) : new RegExp(`(^|\\n)\\s*SCAN ${table}(\\s|$)`);
      assert.doesNotMatch(plan, scan, `sequential scan of ${table}:\n${plan}`);
    }
  }
}

before(async () => {
  database = await freshDatabase();
  const config = loadConfig({ DATABASE_URL: database.url }).database;
  // A bulk load and VACUUM ANALYZE, not service traffic: a slow machine must not trip the service's 2.5 s limit.
  db = openDatabase(forBulkWork(config), capture);
  await migrateToLatest(db);
  const k = db.kysely;
  const ts = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
  for (let t = 0; t < TENANTS; t++) {
    const tenantId = newId('tenant');
    tenantIds.push(tenantId);
    await k
      .insertInto('tenants')
      .values({ id: tenantId, name: `Tenant ${t}`, slug: `tenant-${t}`, created_at: ts(t) })
      .execute();
    const persons = Array.from({ length: PER_TENANT }, (_, i) => {
      const domain = `${['acme', 'globex', 'initech', 'umbrella'][i % 4]}${i}.example.com`;
      return {
        id: newId('person'),
        tenant_id: tenantId,
        name: `Person ${i}`,
        email: null,
        domain,
        domain_lc: domain,
        slug: `person-${i}`,
        phone_number: null,
        linkedin_profile_url: null,
        created_at: ts(i),
        updated_at: ts(i),
      };
    });
    const accounts = Array.from({ length: PER_TENANT }, (_, i) => {
      const name = `${['Acme', 'Globex', 'Initech', 'Umbrella'][i % 4]} ${i}`;
      const domain = `${name.split(' ')[0]!.toLowerCase()}${i}.example.com`;
      return {
        id: newId('account'),
        tenant_id: tenantId,
        name,
        name_lc: name.toLowerCase(),
        domain,
        domain_lc: domain,
        created_at: ts(i),
        updated_at: ts(i),
        latest_activity_at: ts(i),
      };
    });
    for (let i = 0; i < PER_TENANT; i += 100) {
      await k
        .insertInto('persons')
        .values(persons.slice(i, i + 100))
        .execute();
      await k
        .insertInto('accounts')
        .values(accounts.slice(i, i + 100))
        .execute();
    }
    const logs = persons.map((p, i) => ({
      id: newId('personlog'),
      tenant_id: tenantId,
      owner_id: p.id,
      source: 'crm',
      type: 'note',
      payload: '{}',
      idempotency_key: null,
      created_at: ts(i),
      updated_at: null,
      deleted_at: null,
    }));
    for (let i = 0; i < logs.length; i += 100)
      await k
        .insertInto('person_logs')
        .values(logs.slice(i, i + 100))
        .execute();
    await seedPagesAudiencesSessions(k, tenantId, ts);
    await seedIssue5(k, tenantId, ts);
    somePerson = { tenantId, id: persons[7]!.id };
    someLog = { tenantId, ownerId: logs[7]!.owner_id, id: logs[7]!.id };
  }
  if (onPostgres) {
    // Only this file's tables: a bare VACUUM ANALYZE would visit every schema of the database.
    const tables = await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = current_schema()`.execute(k);
    await sql.raw(`vacuum analyze ${tables.rows.map((t) => `"${t.name}"`).join(', ')}`).execute(k);
  } else {
    await sql`analyze`.execute(k);
  }
});

const PAGES = 100;
const AUDIENCES_PER_PAGE = 4;
const SESSIONS_PER_AUDIENCE = 2;
let somePage = { tenantId: '', id: '', audienceId: '' };

async function seedPagesAudiencesSessions(k: Kysely<Database>, tenantId: string, ts: (i: number) => string) {
  for (let p = 0; p < PAGES; p++) {
    const pageId = newId('page');
    const pageName = `${['Spring', 'Summer', 'Autumn', 'Winter'][p % 4]} launch ${p}`;
    await k
      .insertInto('pages')
      .values({
        id: pageId,
        tenant_id: tenantId,
        name: pageName,
        name_lc: pageName.toLowerCase(),
        title: pageName,
        page_context: 'ctx',
        page_type: 'inbound',
        status: 'draft',
        flags: '[]',
        brand_id: '',
        header_action_id: null,
        actions: '[]',
        action_card_widgets: '[]',
        footer_links: '[]',
        scripts: '[]',
        metadata: null,
        audience_seq: AUDIENCES_PER_PAGE,
        archived_at: null,
        deleted_at: null,
        created_at: ts(p),
        updated_at: ts(p),
      })
      .execute();
    const audiences = [];
    const versions = [];
    const sessions = [];
    for (let a = 0; a < AUDIENCES_PER_PAGE; a++) {
      const audienceId = newId('audience');
      const versionId = newId('version');
      const name = `${['Acme', 'Globex', 'Initech', 'Umbrella'][a % 4]} buyer ${a}`;
      audiences.push({
        id: audienceId,
        tenant_id: tenantId,
        page_id: pageId,
        number: a + 1,
        custom_name: null,
        computed_name: name,
        effective_name: name,
        effective_name_lc: name.toLowerCase(),
        page_deleted: 0,
        person_id: null,
        person_route_key: null,
        home_page: 0,
        flags: '[]',
        action_form_id_override: null,
        action_form_instructions_override: null,
        action_url_override: null,
        metadata_override: null,
        version_seq: 1,
        latest_version_id: versionId,
        published_version_id: versionId,
        archived_at: null,
        created_at: ts(a),
        updated_at: ts(a),
      });
      versions.push({
        id: versionId,
        tenant_id: tenantId,
        audience_id: audienceId,
        version_number: 1,
        status: 'published' as const,
        is_new_page_agent: 0,
        supplementary_context: null,
        origin: 'generated' as const,
        queue_duration_ms: null,
        created_at: ts(a),
        became_draft_at: null,
        queued_at: null,
        published_at: ts(a),
        cancelled_at: null,
        obsolete_at: null,
        archived_at: null,
        agent_attempts: 0,
      });
      for (let v = 0; v < SESSIONS_PER_AUDIENCE; v++) {
        sessions.push({
          id: newId('session'),
          tenant_id: tenantId,
          page_id: pageId,
          audience_id: audienceId,
          analytics_session_id: `s${v}`,
          page_title: pageName,
          page_url: 'https://example.com',
          session_started_at: ts(a * 3600 + v),
          session_ended_at: ts(a * 3600 + v + 60),
          time_spent_seconds: 60,
          max_scroll_depth_percentage: 50,
          total_clicks_count: 1,
          questions_asked_count: 0,
          is_bounce: 0,
          has_form_submit: 0,
          has_conversion: 0,
          form_submission_id: '',
          form_submission_identifier: '',
          form_submission_email: '',
          form_submission_phone: '',
          utm_campaign: '',
          utm_content: '',
          utm_medium: '',
          utm_source: '',
          utm_term: '',
          created_at: ts(a),
          ...NOT_COLLECTED,
        });
      }
    }
    await k.insertInto('audiences').values(audiences).execute();
    await k.insertInto('audience_versions').values(versions).execute();
    await k.insertInto('audience_sessions').values(sessions).execute();
    somePage = { tenantId, id: pageId, audienceId: audiences[3]!.id };
  }
}

let someTopic = { tenantId: '', id: '' };
let someAsset = { tenantId: '', id: '' };

async function seedIssue5(k: Kysely<Database>, tenantId: string, ts: (i: number) => string) {
  const domainId = newId('domain');
  await k
    .insertInto('tenant_domains')
    .values({
      id: domainId,
      tenant_id: tenantId,
      hostname: `${tenantId}.pages.localhost`,
      is_fallback: 1,
      created_at: ts(0),
      status: 'verified',
    })
    .execute();
  const links = [];
  for (const [i, page] of (await k.selectFrom('pages').select('id').where('tenant_id', '=', tenantId).execute()).entries()) {
    for (let j = 0; j < 3; j++) {
      links.push({
        id: newId('pagelink'),
        tenant_id: tenantId,
        tenant_domain_id: domainId,
        path: `/campaign-${i}/visitor-${j}`,
        path_lc: `/campaign-${i}/visitor-${j}`,
        target_type: 'page' as const,
        target_audience_id: null,
        target_page_id: page.id,
        page_id: page.id,
        created_at: ts(i * 3 + j),
        updated_at: ts(i * 3 + j),
        deleted_at: null,
      });
    }
  }
  await k.insertInto('page_links').values(links).execute();
  const topics = Array.from({ length: 20 }, (_, i) => ({
    id: newId('topic'),
    tenant_id: tenantId,
    title: `Topic ${i}`,
    purpose: null,
    sort_order: i,
    is_default: i === 0 ? 1 : 0,
    created_at: ts(i),
    updated_at: ts(i),
  }));
  await k.insertInto('topics').values(topics).execute();
  await k
    .insertInto('topic_entries')
    .values(
      topics.flatMap((t) =>
        Array.from({ length: 20 }, (_, i) => ({
          id: newId('entry'),
          tenant_id: tenantId,
          topic_id: t.id,
          sort_order: i,
          content_type: 'text',
          content: `entry ${i}`,
          created_at: ts(i),
          updated_at: ts(i),
        })),
      ),
    )
    .execute();
  const files = Array.from({ length: 50 }, (_, i) => ({
    id: newId('file'),
    tenant_id: tenantId,
    content_type: 'image/png' as const,
    size_bytes: 100,
    sha256: 'x',
    width: 1,
    height: 1,
    preview_content_type: null,
    store: 'disk' as const,
    created_at: ts(i),
    deleted_at: null,
  }));
  await k.insertInto('files').values(files).execute();
  const assets = files.map((f, i) => ({
    id: newId('asset'),
    tenant_id: tenantId,
    name: `Asset ${i}`,
    purpose: '',
    tags: '[]',
    ai_description: null,
    parent_asset_id: null,
    hidden: 0,
    file_id: f.id,
    lifecycle_state: 'active' as const,
    created_at: ts(i),
    updated_at: ts(i),
    trashed_at: null,
    deleted_at: null,
  }));
  await k.insertInto('assets').values(assets).execute();
  someTopic = { tenantId, id: topics[3]!.id };
  someAsset = { tenantId, id: assets[3]!.id };
}

after(async () => {
  await db?.close();
  await database?.drop();
});

test('get person uses the primary key', async () => {
  assertNoFullScan(await plansOf((k) => getPerson(k, somePerson.tenantId, somePerson.id)));
});

test('list persons, first page and deep page, uses the list index', async () => {
  const tenantId = tenantIds[3]!;
  assertNoFullScan(await plansOf((k) => listPersons(k, tenantId, { limit: 20 })));
  const first = await listPersons(db.kysely, tenantId, { limit: 100 });
  assert.ok(first.nextCursor);
  assertNoFullScan(await plansOf((k) => listPersons(k, tenantId, { limit: 20, cursor: first.nextCursor! })));
});

test('account search uses the substring index, with and without filters', async () => {
  const tenantId = tenantIds[5]!;
  for (const query of [
    { query: 'acm' },
    { query: 'globex1' },
    { query: 'example' },
    {},
    { includeEmptyOnly: 'true' as const },
    { query: 'init', includeEmptyOnly: 'true' as const },
  ]) {
    const plans = await plansOf((k) => searchAccounts(k, tenantId, { ...query, limit: 20 }));
    assertNoFullScan(plans);
    // SQLite always asks the FTS5 trigram table; PostgreSQL's planner picks the trigram indexes
    // when they are selective, and the tenant's list index when most of its rows match anyway.
    const mustUseSubstringIndex = onPostgres ? query.query === 'globex1' : 'query' in query;
    if (mustUseSubstringIndex) {
      const substringIndex = onPostgres ? /accounts_(name|domain)_lc_trgm/ : /VIRTUAL TABLE/;
      assert.match(plans.join('\n'), substringIndex, `no substring index behind the search:\n${plans.join('\n---\n')}`);
    }
  }
  const found = await searchAccounts(db.kysely, tenantId, { query: 'acm', limit: 100 });
  assert.equal(found.totalCount, PER_TENANT / 4);
});

test('a log is read by its primary key', async () => {
  assertNoFullScan(await plansOf((k) => findLog(k, 'person', someLog.tenantId, someLog.ownerId, someLog.id)));
});

test('pages: list and get use the list index and the audience count index', async () => {
  assertNoFullScan(await plansOf((k) => listPages(k, somePage.tenantId, { limit: 20 })));
  assertNoFullScan(await plansOf((k) => getPage(k, somePage.tenantId, somePage.id)));
});

test('audiences: the list of a page and one audience are read by index, versions by primary key', async () => {
  const page = (await findPage(db.kysely, somePage.tenantId, somePage.id))!;
  assertNoFullScan(await plansOf((k) => listAudiences(k, page, { limit: 20 })));
  assertNoFullScan(await plansOf((k) => getAudience(k, page, somePage.audienceId)));
});

test("a page's segments ask whether the tenant reads a company by their own index, never by a walk over its audiences", async () => {
  const plans = await plansOf((k) => readPageSegments(k, somePage.tenantId, somePage.id));
  assertNoFullScan(plans);
  // Issue 50: the tenant's every audience was read to test its rules, on every miss of the memo.
  assert.match(plans[0] ?? '', /audiences_company_rules_idx/);
  assert.doesNotMatch(plans[0] ?? '', /audiences_tenant_created_idx/);
});

test('audience search uses the substring index', async () => {
  for (const query of ['acm', 'initech buyer 2', 'winter', 'bu', '']) {
    const plans = await plansOf((k) => searchAudiences(k, somePage.tenantId, { query, limit: 20 }));
    assertNoFullScan(plans);
    if (!onPostgres && query.length >= 3) assert.match(plans.join('\n'), /VIRTUAL TABLE/);
  }
  const found = await searchAudiences(db.kysely, somePage.tenantId, { query: 'acme buyer', limit: 5 });
  assert.equal(found.totalCount, PAGES); // one Acme audience per page
});

test('audience sessions: by page, by audience, by date range', async () => {
  const page = (await findPage(db.kysely, somePage.tenantId, somePage.id))!;
  const day = { startDate: '2026-01-01T00:00:00.000Z', endDate: '2026-01-02T00:00:00.000Z' };
  for (const query of [{}, day, { ...day, audienceId: somePage.audienceId }, { audienceId: somePage.audienceId }]) {
    assertNoFullScan(await plansOf((k) => listSessions(k, page, { ...query, limit: 20 })));
  }
});

test('topics and their entries are read by the list indexes', async () => {
  assertNoFullScan(await plansOf((k) => listTopics(k, someTopic.tenantId, { limit: 20 })));
  const topic = (await findTopic(db.kysely, someTopic.tenantId, someTopic.id))!;
  assertNoFullScan(await plansOf((k) => listEntries(k, topic, { limit: 20 })));
});

test('page link search uses the substring index and the domain list index', async () => {
  const page = (await findPage(db.kysely, somePage.tenantId, somePage.id))!;
  for (const query of [{ query: 'campaign-7' }, { query: 'visitor' }, {}, { pageId: page.id }, { targetType: 'page' as const }]) {
    assertNoFullScan(await plansOf((k) => searchPageLinks(k, somePage.tenantId, { ...query, limit: 20 })));
  }
  const found = await searchPageLinks(db.kysely, somePage.tenantId, { query: 'visitor-1', limit: 1 });
  assert.equal(found.totalCount, PAGES);
});

test('an asset is read by primary key with its file', async () => {
  const signer = urlSigner('http://localhost', 'x'.repeat(32));
  assertNoFullScan(await plansOf((k) => getAsset(k, someAsset.tenantId, someAsset.id, signer)));
});

test("the assets list and one asset's variants use their list indexes", async () => {
  const signer = urlSigner('http://localhost', 'x'.repeat(32));
  assertNoFullScan(await plansOf((k) => listAssets(k, someAsset.tenantId, { limit: 20 }, signer)));
  assertNoFullScan(await plansOf((k) => listAssets(k, someAsset.tenantId, { limit: 20, parentAssetId: someAsset.id }, signer)));
});

test("person search walks one tenant's persons by the list index, never the table", async () => {
  const tenantId = tenantIds[0]!;
  assertNoFullScan(await plansOf((k) => searchPersons(k, tenantId, { query: 'acme', limit: 20 })));
});

test("the site answer reads the site's rollups and the pages' indexes; a funnel reads its steps' occurrences by index", async () => {
  const { tenantId } = somePage;
  // Whole days from the daily rows, a half hour before them from the sessions, and each hour of the series.
  const range = { startDate: '2025-12-31T23:30:00.000Z', endDate: '2026-01-03T00:00:00.000Z' };
  for (const groupBy of [undefined, 'country' as const]) {
    assertNoFullScan(await plansOf((k) => getSiteAnalytics(k, tenantId, { ...range, interval: 'hour', groupBy })));
  }
  const at = '2026-01-01T00:00:00.000Z';
  const steps = [
    { name: 'Landed', kind: 'path', target: '/welcome', pageId: null },
    { name: 'Demo', kind: 'action', target: 'demo', pageId: null },
  ];
  const funnel = {
    id: newId('funnel'),
    tenant_id: tenantId,
    name: 'F',
    steps: JSON.stringify(steps),
    window_hours: 24,
    created_at: at,
    updated_at: at,
  };
  // On PostgreSQL the funnel runs in a transaction of its own, which sets its planner (results.ts).
  const statements = (q: CompiledQuery) => /^\s*(with|select)\b/i.test(q.sql);
  assertNoFullScan(await plansOf((k) => funnelResults(k, funnel, { ...range, groupBy: 'channel' }), statements));
});

test("a report moves each of the site's daily rows by its whole key, never by a walk over the tenant's rows", {
  skip: onPostgres && "PostgreSQL's reports go through pam_collect",
}, async () => {
  const { tenantId } = somePage;
  const session: RolledSession = {
    tenant_id: tenantId,
    page_id: somePage.id,
    audience_id: somePage.audienceId,
    session_started_at: '2026-01-02T10:00:00.000Z',
    time_spent_seconds: 3,
    max_scroll_depth_percentage: 40,
    total_clicks_count: 1,
    questions_asked_count: 0,
    is_bounce: 0,
    has_form_submit: 0,
    has_conversion: 0,
    utm_source: '',
    utm_medium: '',
    utm_campaign: '',
    channel: 'direct',
    channel_group: 'Direct',
    referrer_host: '',
    device_type: 'desktop',
    browser: 'Chrome',
    os: 'Linux',
    country: 'DE',
    first_of_day_page: 1,
    first_of_day_site: 1,
  };
  const updates = (q: CompiledQuery) => /^\s*update\s+analytics_site_days\b/i.test(q.sql);
  const plans = await plansOf((k) => k.transaction().execute((trx) => applySessionChange(trx, undefined, session)), updates);
  assert.ok(plans.length > 0, 'no update of analytics_site_days');
  for (const plan of plans) {
    const searches = plan.split('\n').filter((line) => /analytics_site_days/.test(line));
    assert.ok(searches.length > 0, plan);
    for (const line of searches) assert.match(line, /tenant_id=\? AND dimension=\? AND day=\? AND value=\?/, plan);
  }
});
