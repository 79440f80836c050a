import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, mock, test } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import pg from 'pg';
import { type Report, type SeenClasses, type VisitClaims, visitStore, type VisitStore } from '../../src/visits/index.js';
import { type Json, ok, startApp, TEST_INTEGRATIONS_SECRET, type TestApp } from '../helpers.js';

// The collector is written once in TypeScript (src/visits/) and once in SQL (collect.sql.ts, the
// PostgreSQL one-statement path). Random report sequences go to SQLite through the TypeScript
// store and to PostgreSQL through its own store (the function, or the transaction when the function
// hands a report back), at the same instants; every table a report writes must then hold the same
// rows on both. It needs both databases at once, so the test runner runs it once (its PostgreSQL pass).

const SEQUENCES = Number(process.env.PARITY_SEQUENCES ?? 2000);
/**
 * Tenants taking reports at once, in step: nothing a report reads or writes is shared between
 * tenants, and the shared PostgreSQL server's round trips overlap (under a minute in all).
 */
const LANES = 6;
const PG_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const SEED = Number(process.env.PARITY_SEED ?? Math.floor(Math.random() * 2 ** 31));
const ORIGIN = 'https://www.parity.example';
const IDLE_SECONDS = 1800;
/** The tables a report writes, and the columns that differ by construction (made ids, the outbox's delivery state and order). */
const TABLES: Record<string, string[]> = {
  audience_sessions: [],
  visit_events: [],
  analytics_hours_utm: [],
  analytics_days: [],
  analytics_site_hours: [],
  analytics_site_days: [],
  // An event's place in the outbox is a transaction id on PostgreSQL, a count on SQLite (migration 0069).
  events: ['id', 'fanned_out', 'fan_lease_until', 'position'],
  // The moved row's writer (a transaction id) is kept on PostgreSQL only, for its change feed (migration 0071).
  change_counters: ['writer'],
  visit_maps: [],
  heatmap_cells: [],
  heatmap_sections: [],
  heatmap_depths: [],
  web_vital_days: [],
};

interface Side {
  t: TestApp;
  store: VisitStore;
  /** The seeded rows' ids, in the order they were made: the same order on both sides. */
  ids: string[];
  /** Per lane (a tenant of its own), the links a visit may come through. */
  lanes: Target[][];
  drop: () => Promise<void>;
}
interface Target {
  tenantId: string;
  pageId: string;
  audienceId: string;
  linkId: string;
  personId: string | null;
}

/** A PostgreSQL schema of this file's, or why there is none. */
async function postgresSchema(): Promise<{ url: string; drop: () => Promise<void> } | string> {
  const schema = `parity_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
    await admin.query(`create schema ${schema}`);
  } catch (err) {
    return (err as Error).message;
  } finally {
    await admin.end().catch(() => {});
  }
  const url = new URL(PG_URL);
  // Thousands of commits: durability is not what this test is about, and the disk is shared.
  url.searchParams.set('options', `-c search_path=${schema},public -c synchronous_commit=off`);
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`drop schema ${schema} cascade`);
      await client.end();
    },
  };
}

/** The same tenants, each with the same pages, audiences, links, persons and account, on a side, made through the API. */
async function seed(t: TestApp): Promise<Pick<Side, 'ids' | 'lanes'>> {
  const ids: string[] = [];
  const lanes: Target[][] = [];
  for (let lane = 0; lane < LANES; lane++) {
    const tenant = lane === 0 ? { key: t.key, tenantId: t.tenantId } : await t.newTenant(`Lane ${lane}`);
    ids.push(tenant.tenantId);
    lanes.push(await seedTenant(t, tenant, ids));
  }
  // What seeding wrote there is not the reports'.
  await sql`delete from events`.execute(t.app.db);
  await sql`delete from change_counters`.execute(t.app.db);
  return { ids, lanes };
}

async function seedTenant(t: TestApp, tenant: { key: string; tenantId: string }, ids: string[]): Promise<Target[]> {
  const req = (method: string, url: string, body?: unknown) => t.req(method, url, body, { key: tenant.key });
  const made = (res: Json, key: string) => {
    ids.push(res[key]);
    return res[key] as string;
  };
  made(ok(await req('POST', '/v0/accounts', { name: 'Acme Corp', domain: 'acme.example' }), 201), 'accountId');
  const ada = made(ok(await req('POST', '/v0/persons', { name: 'Ada', domain: 'acme.example' }), 201), 'personId');
  const bob = made(ok(await req('POST', '/v0/persons', { name: 'Bob' }), 201), 'personId');
  const targets: Target[] = [];
  for (const [p, people] of [
    [0, [null, ada, bob]],
    [1, [null]],
    [2, [null]],
  ] as const) {
    const pageId = made(
      ok(await req('POST', '/v0/pages', { name: `P${p}`, title: `Page ${p}`, pageContext: 'ctx', pageType: 'inbound' }), 201),
      'pageId',
    );
    for (const [a, personId] of people.entries()) {
      const audienceId = made(ok(await req('POST', `/v0/pages/${pageId}/audiences`, personId ? { personId } : {}), 201), 'audienceId');
      const link = { path: `/p${p}a${a}`, target: { targetType: 'audience', audienceId } };
      const linkId = made(ok(await req('POST', '/v0/page_links', link), 201), 'pageLinkId');
      targets.push({ tenantId: tenant.tenantId, pageId, audienceId, linkId, personId });
    }
    // The last page is deleted: its reports are `gone` and write nothing.
    if (p === 2) ok(await req('DELETE', `/v0/pages/${pageId}`), 204);
  }
  return targets;
}

const name = (prefix: string, n: number) => fc.integer({ min: 0, max: n - 1 }).map((i) => `${prefix}${i}`);
const reportArb = fc.record({
  gpc: fc.boolean().map((b) => b && Math.random() < 0.2),
  report: fc.record(
    {
      visibleMs: fc.oneof(fc.nat({ max: 20_000 }), fc.nat({ max: 2 ** 31 - 1 })),
      scroll: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 100 }), fc.double({ min: 0, max: 100, noNaN: true })),
      clicks: fc.oneof(fc.nat({ max: 30 }), fc.nat({ max: 2 ** 31 - 1 })),
      questions: fc.nat({ max: 8 }),
      conversions: fc.nat({ max: 2 }),
      utmSource: fc.constantFrom('', 'news', 'google', 'x y'),
      utmMedium: fc.constantFrom('', 'email', 'cpc'),
      utmCampaign: fc.constantFrom('', 'spring'),
      utmTerm: fc.constantFrom('', 'shoes'),
      utmContent: fc.constantFrom('', 'hero'),
      events: fc.array(
        fc.tuple(name('e', 20), fc.nat({ max: 1500 }), fc.oneof(fc.nat({ max: 100 }), fc.double({ min: 0, max: 1e15, noNaN: true }))),
        {
          maxLength: 8,
        },
      ),
      actions: fc.array(fc.tuple(name('a', 20), fc.nat({ max: 1200 })), { maxLength: 8 }),
      left: fc.boolean(),
      // Maps and vitals (issue 49): a viewport that may change between reports, cells beyond the clicks' rise, values on bucket bounds.
      viewport: fc.constantFrom('mobile', 'tablet', 'desktop'),
      cells: fc.array(
        fc.tuple(
          fc.nat({ max: 4 }),
          fc.constantFrom('action', 'link', 'image', 'faq', 'form', 'other'),
          fc.nat({ max: 19 }),
          fc.nat({ max: 19 }),
          fc.oneof(fc.nat({ max: 5 }), fc.nat({ max: 2 ** 31 - 1 })),
          fc.nat({ max: 3 }),
        ),
        { maxLength: 6 },
      ),
      reached: fc.array(fc.nat({ max: 49 }), { maxLength: 6 }),
      vitals: fc.record(
        {
          lcp: fc.oneof(fc.constantFrom(0, 2500, 2500.4, 2500.5, 4000, 999.5), fc.double({ min: 0, max: 3_600_000, noNaN: true })),
          inp: fc.oneof(fc.constantFrom(200, 500, 1000), fc.nat({ max: 40_000 })),
          cls: fc.oneof(fc.constantFrom(0, 0.1, 0.25, 1.0005), fc.double({ min: 0, max: 100, noNaN: true })),
          fcp: fc.double({ min: 0, max: 60_000, noNaN: true }),
          ttfb: fc.nat({ max: 5000 }),
        },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: ['visibleMs', 'scroll', 'clicks', 'questions', 'conversions'] },
  ),
});
const sequenceArb = fc.record({
  target: fc.nat({ max: 5 }),
  servedAgo: fc.nat({ max: 120_000 }),
  path: fc.option(fc.constant('/routed/key'), { nil: undefined }),
  versionId: fc.option(fc.constantFrom('version_a', 'version_b'), { nil: undefined }),
  experiment: fc.option(
    fc.record({ experimentId: fc.constant('exp_parity'), arm: fc.constantFrom('a', 'b'), unit: fc.constantFrom('u1', 'u2') }),
    {
      nil: undefined,
    },
  ),
  seen: fc.record({
    visitor: fc.nat({ max: 5 }),
    referrer_host: fc.constantFrom('', 'news.example', 'google.com'),
    channel: fc.constantFrom('direct', 'referral', 'search', 'paid'),
    channel_group: fc.constantFrom('Direct', 'Referral', 'Organic Search'),
    device_type: fc.constantFrom('desktop', 'mobile'),
    browser: fc.constantFrom('Chrome', 'Firefox'),
    os: fc.constantFrom('Linux', 'iOS'),
    country: fc.constantFrom('', 'DE', 'US'),
  }),
  reports: fc.array(reportArb, { minLength: 1, maxLength: 3 }),
});
/** How far the clock moves between steps: seconds apart, or minutes (about three days in all: first visits of a day come and go). */
const stepArb = fc.oneof(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 0, max: 900_000 }));

let lite: Side | undefined;
let postgres: Side | undefined;
let unreachable: string | undefined;
/**
 * It uses both databases in either pass, so scripts/test.mjs's SQLite pass leaves it to the
 * PostgreSQL pass (which CI requires) rather than run the same minute twice.
 */
const otherPass = process.env.TEST_PASS === 'sqlite' ? 'it runs in the PostgreSQL pass, with both databases' : false;

before(async () => {
  if (otherPass) return;
  const schema = await postgresSchema();
  if (typeof schema === 'string') {
    unreachable = schema;
    return;
  }
  // In memory where the system has it (as synchronous_commit=off above): thousands of commits.
  const dir = fs.mkdtempSync(path.join(fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'pam-parity-'));
  // The end-of-visit sweep would announce ends on its own clock: not within this test.
  const quiet = { sessionEndsEveryMs: 3_600_000 };
  const env = { SESSION_IDLE_SECONDS: String(IDLE_SECONDS), DATABASE_POOL_SIZE: String(LANES + 2) };
  const tl = await startApp({ ...env, DATABASE_URL: path.join(dir, 'parity.sqlite') }, quiet);
  const tp = await startApp({ ...env, DATABASE_URL: schema.url, INTEGRATIONS_SECRET: TEST_INTEGRATIONS_SECRET }, quiet);
  lite = { t: tl, store: visitStore(tl.app.db), ...(await seed(tl)), drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  postgres = { t: tp, store: visitStore(tp.app.db), ...(await seed(tp)), drop: schema.drop };
});
after(async () => {
  // Closed on the test's clock, then the real one is back (see the test's clock).
  for (const side of [lite, postgres]) {
    await side?.t.close();
    await side?.drop();
  }
  mock.timers.reset();
});

type Row = Record<string, unknown>;

/** A side's rows of `table`, its ids named as SQLite's, in one order. */
async function rowsOf(side: Side, table: string, rename: Map<string, string>): Promise<Row[]> {
  const { rows } = await sql<Row>`select * from ${sql.table(table)}`.execute(side.t.app.db);
  const skip = new Set(TABLES[table]);
  const value = (v: unknown): unknown => {
    if (v instanceof Date) return v.toISOString();
    if (typeof v === 'bigint') return Number(v);
    if (typeof v === 'string' && /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(v)) return Number(v);
    if (typeof v === 'string' && (v.startsWith('{') || v.startsWith('['))) return canonical(JSON.parse(v));
    if (typeof v === 'string') return v.replace(/[a-z]+_[0-9a-z]{26}/g, (id) => rename.get(id) ?? id);
    return v;
  };
  const canonical = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(canonical);
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, canonical((v as Row)[k])]),
      );
    }
    return value(v);
  };
  return rows
    .map((row) => {
      const kept: Row = {};
      for (const key of Object.keys(row).sort()) if (!skip.has(key)) kept[key] = canonical(row[key]);
      // SQLite may leave `end_due_at` a lower bound (`end_due_follows`): the end falls due the idle time after the last report.
      if (table === 'audience_sessions' && kept.end_due_follows === 1) {
        kept.end_due_at = new Date(Date.parse(String(kept.session_ended_at)) + IDLE_SECONDS * 1000).toISOString();
        kept.end_due_follows = 0;
      }
      return kept;
    })
    .sort((a, b) => (orderOf(a) < orderOf(b) ? -1 : orderOf(a) > orderOf(b) ? 1 : 0));
}

/** A row's place in its table's order: its fractions rounded, as sums of them may differ in the last digits. */
const orderOf = (row: Row) =>
  JSON.stringify(row, (_k, v) => (typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(6)) : v));

/**
 * Whether two rows hold the same: fractions to 1e-9 of their size (a rollup adds a visit's time in
 * another order in SQL than in TypeScript), everything else exactly.
 */
function same(a: Row | undefined, b: Row | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const keys = Object.keys(a);
  if (keys.join() !== Object.keys(b).join()) return false;
  return keys.every((k) => {
    const [x, y] = [a[k], b[k]];
    if (typeof x === 'number' && typeof y === 'number') return Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(x), Math.abs(y));
    return JSON.stringify(x) === JSON.stringify(y);
  });
}

test(`${SEQUENCES} random report sequences leave the same rows on SQLite (TypeScript) and PostgreSQL (collect.sql)`, {
  skip: otherPass,
}, async (ctx) => {
  if (unreachable !== undefined) {
    const why = `the parity test needs PostgreSQL at ${PG_URL.replace(/\/\/[^@]*@/, '//***@')}: ${unreachable}`;
    // In CI a skipped parity test would let the two collectors drift unseen.
    if (process.env.CI === 'true') assert.fail(why);
    ctx.skip(`SKIPPED (not in CI): ${why}`);
    return;
  }
  assert.ok(lite && postgres);
  const sides = [lite, postgres];
  const sequences = fc.sample(sequenceArb, { numRuns: SEQUENCES, seed: SEED });
  type Step = { sequence: (typeof sequences)[number]; visitId: string; report: (typeof sequences)[number]['reports'][number] };
  // Each lane's reports one after the other, a visit's in order; the lanes side by side.
  const lanes: Step[][] = Array.from({ length: LANES }, () => []);
  for (const [i, sequence] of sequences.entries()) {
    const visitId = `visit${String(i).padStart(6, '0')}`;
    for (const report of sequence.reports) lanes[i % LANES]?.push({ sequence, visitId, report });
  }
  const steps = Math.max(...lanes.map((l) => l.length));
  const moves = fc.sample(stepArb, { numRuns: steps, seed: SEED });
  // Forward from the real clock, and only forward: the apps' background loops measure their gaps
  // on it (jobs/loop.ts), and a clock that went back would have them sleep that long.
  let clock = Date.now();
  mock.timers.enable({ apis: ['Date'], now: clock });
  const issued = new Map<string, number>();
  const record = async (side: Side, lane: number, { sequence, visitId, report }: Step) => {
    const target = side.lanes[lane]?.[sequence.target] as Target;
    const issuedAt = issued.get(visitId) ?? clock - sequence.servedAgo;
    issued.set(visitId, issuedAt);
    const claims: VisitClaims = {
      ...target,
      visitId,
      issuedAt,
      ...(sequence.path ? { path: sequence.path } : {}),
      ...sequence.experiment,
      ...(sequence.versionId ? { versionId: sequence.versionId } : {}),
    };
    const seen: SeenClasses = { ...sequence.seen, visitor: `visitor${sequence.seen.visitor}` };
    await side.store.record({
      claims,
      report: { token: 't', ...report.report } as Report,
      origin: ORIGIN,
      gpc: report.gpc,
      idleSeconds: IDLE_SECONDS,
      seer: async () => async (personId) => ({ ...seen, ...(personId ? { visitor: `person:${personId}` } : {}) }),
    });
  };
  for (let step = 0; step < steps; step++) {
    clock += moves[step] ?? 0;
    mock.timers.setTime(clock);
    // SQLite works in this process while PostgreSQL answers over its sockets.
    await Promise.all(
      lanes.flatMap((reports, lane) => {
        const at = reports[step];
        return at ? sides.map((side) => record(side, lane, at)) : [];
      }),
    );
  }
  const rename = new Map(postgres.ids.map((id, i) => [id, lite?.ids[i] as string]));
  const sessions = async (side: Side) =>
    (await sql<{ id: string; visit_id: string }>`select id, visit_id from audience_sessions`.execute(side.t.app.db)).rows;
  const liteSessions = new Map((await sessions(lite)).map((s) => [s.visit_id, s.id]));
  for (const s of await sessions(postgres)) rename.set(s.id, liteSessions.get(s.visit_id) ?? s.id);
  assert.ok(liteSessions.size > SEQUENCES / 2, `${liteSessions.size} sessions`);
  for (const table of Object.keys(TABLES)) {
    const [expected, actual] = [await rowsOf(lite, table, new Map()), await rowsOf(postgres, table, rename)];
    const first = expected.findIndex((row, i) => !same(row, actual[i]));
    assert.ok(
      first === -1 && expected.length === actual.length,
      `${table} differs (seed ${SEED}): ${expected.length} rows on SQLite, ${actual.length} on PostgreSQL; first difference:\n` +
        `SQLite:     ${JSON.stringify(expected[first])}\nPostgreSQL: ${JSON.stringify(actual[first])}`,
    );
  }
});
