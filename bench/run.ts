/**
 * `npm run bench -- [--scale small|full] [--backend sqlite|postgres|both] [--duration S] [--only NAME] [--out DIR] [--connections N] [--hold FILE]`
 *
 * Results go to stdout, to `<out>/<date>-<backend>-<scale>.json` (default bench/results), and, for
 * a run of every scenario without `--out`, into the "Current figures" table of BENCHMARKS.md.
 *
 * For each backend: fill a fresh database (bench/seed.ts), start the built server pinned to one
 * core, and drive each scenario from a load process pinned to the other core (bench/load.ts),
 * after a warm-up. Every scenario is reported beside `ceiling` (a bare node:http server answering
 * a Person-sized body) measured in the same run, so the ratios mean something on a noisy machine.
 * Each scenario's load keeps 50 requests in flight; `--connections 1` measures one client's
 * latency instead (a person typing into a search box alone on the service).
 * `BENCH_NODE_ARGS` adds options to the service's node, to profile it under load, for example
 * `BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'`. `BENCH_HEAP_DIR=<dir>` has the service
 * write a heap snapshot there after each scenario it ran, named by backend, order and scenario, to
 * see what grows from one to the next (bench/heap-summary.ts compares two).
 *
 * `--hold FILE` seeds and starts the service as a run does, writes the service and its scenarios'
 * loads to FILE, and keeps it running until interrupted: bench/alternate.ts then loads two held
 * services (two commits, each from its own checkout) in turn, to compare their CPU a request.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { forBulkWork, loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import type { Database } from '../src/db/types.js';
import { encodeCursor } from '../src/http/pagination.js';
import { viewTokens } from '../src/site/token.js';
import type { LoadResult, LoadSpec } from './load.js';
import { currentSection, replaceCurrent } from './current.js';
import { formatRow, HEADER, type Run, type ScenarioResult } from './report.js';
import {
  alternatingRounds,
  cpuSeconds,
  freePort,
  load,
  peakRss,
  pinned,
  ROOT,
  SERVER_CPU,
  startOptions,
  waitFor,
  visitEach,
  waitIdle,
  warmedRound,
} from './processes.js';
import { seed, type Scale, type Seeded } from './seed.js';

interface Options {
  scale: Scale;
  backends: ('sqlite' | 'postgres')[];
  duration: number;
  only: string[];
  /** Clients at once in each scenario's measured load: 50, or `--connections` (1: one typist's latency). */
  connections: number;
  out: string;
  markdown: boolean;
  /** `--hold FILE`: seed, start the service, describe it and its scenarios' loads in FILE, and wait (alternate.ts). */
  hold: string | undefined;
}

function parseArgs(argv: string[]): Options {
  const get = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i === -1 ? undefined : argv[i + 1];
  };
  const scale = (get('scale') ?? 'small') as Scale;
  if (!['tiny', 'small', 'full'].includes(scale)) throw new Error('--scale must be small or full');
  const backend = get('backend') ?? 'sqlite';
  if (!['sqlite', 'postgres', 'both'].includes(backend)) throw new Error('--backend must be sqlite, postgres or both');
  if (get('hold') !== undefined && backend === 'both') throw new Error('--hold holds one service: give --backend sqlite or postgres');
  const connections = Number(get('connections') ?? 50);
  if (!Number.isInteger(connections) || connections < 1 || connections > 1000) throw new Error('--connections must be 1 to 1000');
  return {
    scale,
    backends: backend === 'both' ? ['sqlite', 'postgres'] : [backend as 'sqlite' | 'postgres'],
    duration: Number(get('duration') ?? 10),
    only: (get('only') ?? '').split(',').filter(Boolean),
    connections,
    out: get('out') ?? path.join(ROOT, 'bench', 'results'),
    // The current table is every scenario from one run at 50 connections: a run with its own output
    // directory (the smoke test, a quick look), of some scenarios only, or at other connections
    // leaves BENCHMARKS.md alone.
    markdown: get('out') === undefined && get('only') === undefined && get('connections') === undefined && get('hold') === undefined,
    hold: get('hold'),
  };
}

interface Scenario {
  name: string;
  /**
   * Which server answers: the service, the same service with its metrics on (a second process over
   * the same database), the bare ceiling, or Prism mocking the service's OpenAPI document.
   */
  target: 'service' | 'metered' | 'ceiling' | 'prism';
  spec(data: Seeded, deepCursor: string, site: SiteLoad): Omit<LoadSpec, 'url' | 'connections' | 'duration'>;
}

const q = encodeURIComponent;
const SEARCHED = ['audiences', 'accounts', 'page_links'] as const;
/** A search box's requests while real values are typed, a prefix at a time (bench/seed.ts). */
const typing =
  (resource: (typeof SEARCHED)[number]): Scenario['spec'] =>
  (d) => ({
    method: 'GET',
    headers: { 'x-api-key': d.key },
    paths: { audiences: d.audienceTyping, accounts: d.accountTyping, page_links: d.linkTyping }[resource].map(
      (s) => `/v0/${resource}/search?query=${q(s)}`,
    ),
  });
/** The deals are created from day 10 to day 45 of the seeded visits (bench/seed-deals.ts). */
const pipelineEnd = (d: Seeded) => new Date(Date.parse(d.analyticsRange.startDate) + 60 * 86_400_000).toISOString();
const SCENARIOS: Scenario[] = [
  { name: 'ceiling', target: 'ceiling', spec: () => ({ method: 'GET', headers: {}, paths: ['/'] }) },
  {
    name: 'get-person',
    target: 'service',
    spec: (d) => ({ method: 'GET', headers: { 'x-api-key': d.key }, paths: d.personIds.map((id) => `/v0/persons/${id}`) }),
  },
  {
    // The same requests to the service with METRICS_TOKEN set (issue 18: metrics cost at most 5%).
    name: 'get-person-metrics',
    target: 'metered',
    spec: (d) => ({ method: 'GET', headers: { 'x-api-key': d.key }, paths: d.personIds.map((id) => `/v0/persons/${id}`) }),
  },
  {
    name: 'get-audience',
    target: 'service',
    spec: (d) => ({
      method: 'GET',
      headers: { 'x-api-key': d.key },
      paths: d.audiences.map((a) => `/v0/pages/${a.pageId}/audiences/${a.audienceId}`),
    }),
  },
  { name: 'list-pages-first', target: 'service', spec: (d) => ({ method: 'GET', headers: { 'x-api-key': d.key }, paths: ['/v0/pages'] }) },
  {
    name: 'list-persons-deep',
    target: 'service',
    spec: (d, cursor) => ({ method: 'GET', headers: { 'x-api-key': d.deepKey }, paths: [`/v0/persons?cursor=${cursor}`] }),
  },
  {
    name: 'search-audiences',
    target: 'service',
    spec: (d) => ({
      method: 'GET',
      headers: { 'x-api-key': d.key },
      paths: d.audienceQueries.map((s) => `/v0/audiences/search?query=${q(s)}`),
    }),
  },
  {
    name: 'search-accounts',
    target: 'service',
    spec: (d) => ({
      method: 'GET',
      headers: { 'x-api-key': d.key },
      paths: d.accountQueries.map((s) => `/v0/accounts/search?query=${q(s)}`),
    }),
  },
  {
    name: 'search-page-links',
    target: 'service',
    spec: (d) => ({
      method: 'GET',
      headers: { 'x-api-key': d.key },
      paths: d.linkQueries.map((s) => `/v0/page_links/search?query=${q(s)}`),
    }),
  },
  // The search routes without a text: the same rows, page and exact total, no matching. What a
  // search of the same route costs at the least.
  ...(['accounts', 'page_links'] as const).map(
    (resource): Scenario => ({
      name: `list-${resource.replace('_', '-')}`,
      target: 'service',
      spec: (d) => ({ method: 'GET', headers: { 'x-api-key': d.key }, paths: [`/v0/${resource}/search`] }),
    }),
  ),
  // Issue 18: the same searches as a search box sends them while a real value is typed.
  ...SEARCHED.map(
    (resource): Scenario => ({ name: `search-${resource.replace('_', '-')}-typing`, target: 'service', spec: typing(resource) }),
  ),
  {
    name: 'list-sessions-range',
    target: 'service',
    spec: (d) => ({
      method: 'GET',
      headers: { 'x-api-key': d.key },
      paths: d.sessionWindows.map(
        (w) => `/v0/pages/${w.pageId}/audience_sessions?startDate=${q(w.startDate)}&endDate=${q(w.endDate)}&audienceId=${w.audienceId}`,
      ),
    }),
  },
  {
    name: 'analytics-page-30d',
    target: 'service',
    spec: (d) => ({
      method: 'GET',
      headers: { 'x-api-key': d.key },
      paths: d.pageIds.map(
        (id) => `/v0/pages/${id}/analytics?startDate=${q(d.analyticsRange.startDate)}&endDate=${q(d.analyticsRange.endDate)}&interval=day`,
      ),
    }),
  },
  {
    // Issue 28: a page's analytics split by channel (hourly rollup keyed by the visit classes), compared with the period before.
    name: 'analytics-page-groupby-channel',
    target: 'service',
    spec: (d) => ({
      method: 'GET',
      headers: { 'x-api-key': d.key },
      paths: d.pageIds.map(
        (id) =>
          `/v0/pages/${id}/analytics?startDate=${q(d.analyticsRange.startDate)}&endDate=${q(d.analyticsRange.endDate)}&interval=day&groupBy=channel&compare=previous_period`,
      ),
    }),
  },
  {
    // Issue 28: the site-wide answer over every page of the tenant, by country.
    name: 'analytics-site',
    target: 'service',
    spec: (d) => ({
      method: 'GET',
      headers: { 'x-api-key': d.key },
      paths: [
        `/v0/analytics/site?startDate=${q(d.analyticsRange.startDate)}&endDate=${q(d.analyticsRange.endDate)}&interval=day&groupBy=country`,
      ],
    }),
  },
  {
    name: 'analytics-overview',
    target: 'service',
    spec: (d) => ({
      method: 'GET',
      headers: { 'x-api-key': d.key },
      paths: [`/v0/analytics/pages?startDate=${q(d.analyticsRange.startDate)}&endDate=${q(d.analyticsRange.endDate)}`],
    }),
  },
  // Issue 28: a funnel's results over the 30 days of a million visits (its occurrences: one visit in ten).
  {
    name: 'funnel-results',
    target: 'service',
    spec: (d) => ({
      method: 'GET',
      headers: { 'x-api-key': d.key },
      paths: [
        `/v0/funnels/${d.funnelId}/results?startDate=${q(d.analyticsRange.startDate)}&endDate=${q(d.analyticsRange.endDate)}`,
        `/v0/funnels/${d.funnelId}/results?startDate=${q(d.analyticsRange.startDate)}&endDate=${q(d.analyticsRange.endDate)}&groupBy=audience`,
      ],
    }),
  },
  // Issue 40: the influenced pipeline over the million visits and 10,000 deals (full scale): the
  // models, groupings and windows a dashboard asks for (each answer kept 10 s), and a cold variant
  // whose every request names a window not asked before in the run.
  {
    name: 'pipeline',
    target: 'service',
    spec: (d) => ({
      method: 'GET',
      headers: { 'x-api-key': d.key },
      paths: ['any', 'first', 'last'].flatMap((model) =>
        ['page', 'audience'].flatMap((groupBy) =>
          [30, 60, 90].map(
            (windowDays) =>
              `/v0/analytics/pipeline?startDate=${q(d.analyticsRange.startDate)}&endDate=${q(pipelineEnd(d))}&model=${model}&groupBy=${groupBy}&windowDays=${windowDays}`,
          ),
        ),
      ),
    }),
  },
  {
    name: 'pipeline-cold',
    target: 'service',
    spec: (d) => ({
      method: 'GET',
      headers: { 'x-api-key': d.key },
      paths: Array.from(
        { length: 365 },
        (_, i) => `/v0/analytics/pipeline?startDate=${q(d.analyticsRange.startDate)}&endDate=${q(pipelineEnd(d))}&windowDays=${i + 1}`,
      ),
    }),
  },
  // Issue 49: the linear model over the same range, by the groupings a revenue report reads
  // (pages, channel groups, campaigns) and the dashboard's windows; each answer kept 10 s.
  {
    name: 'pipeline-linear',
    target: 'service',
    spec: (d) => ({
      method: 'GET',
      headers: { 'x-api-key': d.key },
      paths: ['page', 'channelGroup', 'utmCampaign'].flatMap((groupBy) =>
        [30, 60, 90].map(
          (windowDays) =>
            `/v0/analytics/pipeline?startDate=${q(d.analyticsRange.startDate)}&endDate=${q(pipelineEnd(d))}&model=linear&groupBy=${groupBy}&windowDays=${windowDays}`,
        ),
      ),
    }),
  },
  // Issue 49: each page's click map, rage map and scroll map over the analytics range, on desktop and mobile.
  {
    name: 'heatmap',
    target: 'service',
    spec: (d) => ({
      method: 'GET',
      headers: { 'x-api-key': d.key },
      paths: d.pageIds.flatMap((id) =>
        ['click', 'rage', 'scroll'].flatMap((type) =>
          ['desktop', 'mobile'].map(
            (viewport) =>
              `/v0/pages/${id}/heatmap?type=${type}&viewport=${viewport}&startDate=${q(d.analyticsRange.startDate)}&endDate=${q(d.analyticsRange.endDate)}`,
          ),
        ),
      ),
    }),
  },
  {
    name: 'create-person',
    target: 'service',
    spec: (d) => ({
      method: 'POST',
      headers: { 'x-api-key': d.key },
      paths: ['/v0/persons'],
      body: JSON.stringify({ name: 'Load Person {n}', domain: 'load.example.com', phoneNumber: '+14155550100' }),
    }),
  },
  {
    name: 'create-person-log',
    target: 'service',
    spec: (d) => ({
      method: 'POST',
      headers: { 'x-api-key': d.key },
      paths: d.personIds.slice(0, 500).map((id) => `/v0/persons/${id}/logs`),
      body: JSON.stringify({ source: 'crm', type: 'note-added', payload: { text: 'Called back' }, idempotencyKey: 'bench-{n}' }),
    }),
  },
  {
    name: 'patch-page',
    target: 'service',
    spec: (d) => ({
      method: 'PATCH',
      headers: { 'x-api-key': d.key, 'content-type': 'application/json' },
      paths: d.pageIds.map((id) => `/v0/pages/${id}`),
      body: JSON.stringify({ name: 'Renamed page {n}' }),
    }),
  },
  // The visitor plane, on the tenant's fallback domain: documents of audience links, their
  // revalidation, and the collector's reports.
  {
    name: 'serve-page',
    target: 'service',
    spec: (d) => ({ method: 'GET', headers: { host: d.siteHost }, paths: d.sitePaths }),
  },
  {
    name: 'serve-page-304',
    target: 'service',
    spec: (d, _cursor, site) => ({
      method: 'GET',
      headers: { host: d.siteHost, 'if-none-match': site.etag },
      paths: [d.sitePaths[0] ?? '/'],
      expectedStatus: 304,
    }),
  },
  {
    name: 'collect',
    target: 'service',
    spec: (d, _cursor, site) => ({
      method: 'POST',
      headers: { host: d.siteHost },
      paths: ['/_pam/collect'],
      bodies: site.reports,
      bodyType: 'text/plain',
    }),
  },
  // serve-page again, every page of its links in a running 50/50 holdout (started before, concluded
  // after): the cost of assigning an arm per visitor (issue 27: at least 0.9 of serve-page).
  {
    name: 'serve-page-experiment',
    target: 'service',
    spec: (d) => ({ method: 'GET', headers: { host: d.siteHost }, paths: d.sitePaths }),
  },
  // serve-page again, through links to the page (not an audience's) of pages with 10 segments each (50 at full scale),
  // visitors spread over them by utm_source, one in 11 matching none (issue 39: at least 0.9 of
  // serve-page). Its paths are made when it starts (startSegments).
  {
    name: 'serve-page-segments',
    target: 'service',
    spec: (d) => ({ method: 'GET', headers: { host: d.siteHost }, paths: d.sitePaths }),
  },
  // Issue 48: the site script's decision for a customer's page on its own origin, over a site of
  // five live experiences (rules, tokens, a holdout), pages matching one, two or none. Its paths
  // are made when it starts (startOnsite). Target: at least 0.4 of the ceiling, p99 under 20 ms.
  {
    name: 'decide',
    target: 'service',
    spec: () => ({ method: 'GET', headers: { origin: ONSITE_ORIGIN, 'user-agent': 'Mozilla/5.0 (bench) Chrome/131.0' }, paths: [] }),
  },
  // The page agent (template generator) regenerating a page of `agentAudiences` audiences, with
  // get-person measured under the same load: see agentScenario.
  {
    name: 'agent-template',
    target: 'service',
    spec: (d) => ({ method: 'GET', headers: { 'x-api-key': d.key }, paths: d.personIds.map((id) => `/v0/persons/${id}`) }),
  },
  {
    name: 'peer-prism',
    target: 'prism',
    spec: (d) => ({ method: 'GET', headers: { 'x-api-key': d.key }, paths: d.personIds.map((id) => `/v0/persons/${id}`) }),
  },
];

/** What the visitor-plane scenarios need from the running service: a document's ETag, and signed reports. */
interface SiteLoad {
  etag: string;
  reports: string[];
}

/**
 * The metered service's metrics. fetch keeps its connection alive between the reads, and the
 * service may close it (idle) just as the next read reuses it: a reset before any answer is tried
 * again on a new connection.
 */
async function metricsText(port: number): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`, {
        headers: { authorization: `Bearer ${BENCH_SECRET}`, connection: 'close' },
      });
      return await res.text();
    } catch (err) {
      if (attempt === 3) throw err;
    }
  }
}

/** Every statement the metered service has run so far: the sum of its query counter's series. */
/** The sum of a metric's samples, as the metered process exposes them now. */
async function metricTotal(port: number, name: string): Promise<number> {
  const text = await metricsText(port);
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(name)) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

const statementsRun = (port: number) => metricTotal(port, 'pam_db_query_duration_seconds_count');

/**
 * A scenario's statements a request: its requests again, against the metered process (the same
 * service over the same database, with its metrics on), warmed as long as the timed run, then counted for two.
 * Background work (housekeeping, the webhook poller) runs a few statements a second meanwhile:
 * counted too, it adds a few thousandths at these rates. The outcome memo's misses a request are
 * logged beside (issue 50: a miss reads the database), and the documents rendered a request (a
 * miss of the document cache, bounded in bytes).
 */
async function countStatements(
  pid: number,
  port: number,
  base: Omit<LoadSpec, 'duration'>,
  warmSeconds: number,
  label: string,
): Promise<number> {
  const url = `http://127.0.0.1:${port}`;
  await waitIdle(pid);
  // As long as the timed run, after every served path once: the counts are a warmed run's (a served
  // path's first request renders it), whatever the rate.
  await visitEach(port, base);
  await load({ ...base, url, duration: warmSeconds });
  await waitIdle(pid);
  const before = await statementsRun(port);
  const missesBefore = await metricTotal(port, 'pam_site_outcome_memo_misses_total');
  const rendersBefore = await metricTotal(port, 'pam_site_document_cache_misses_total');
  const counted = await load({ ...base, url, duration: 2 });
  const misses = (await metricTotal(port, 'pam_site_outcome_memo_misses_total')) - missesBefore;
  const renders = (await metricTotal(port, 'pam_site_document_cache_misses_total')) - rendersBefore;
  const requests = Math.max(1, counted.requests);
  if (base.headers.host)
    console.log(
      `# ${label}: ${(misses / requests).toFixed(3)} outcome memo misses and ${(renders / requests).toFixed(3)} renders a request ` +
        `(${misses} and ${renders} in ${requests})`,
    );
  return ((await statementsRun(port)) - before) / requests;
}

/** The view tokens' secret, given to the benchmarked service so the harness can sign reports as its documents do. */
const BENCH_SECRET = 'bench-secret-0123456789-0123456789-abcdef';

async function prepareSite(data: Seeded, port: number): Promise<SiteLoad> {
  const path = data.sitePaths[0];
  if (!path) return { etag: '', reports: [] };
  const etag = await new Promise<string>((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, headers: { host: data.siteHost } }, (res) => {
        res.resume();
        if (res.statusCode !== 200) reject(new Error(`${path} on ${data.siteHost} answered ${res.statusCode}`));
        resolve(String(res.headers.etag ?? ''));
      })
      .on('error', reject);
  });
  const tokens = viewTokens(BENCH_SECRET);
  // A visit a minute old, reporting a steady state: each report is a real update of its session.
  const reports = data.siteVisits.slice(0, 500).map((visit) =>
    JSON.stringify({
      token: tokens.sign(visit, Date.now() - 60_000).token,
      visibleMs: 30_000,
      scroll: 60,
      clicks: 2,
      questions: 0,
      conversions: 0,
      // What the script sends since issue 28: the referrer is read only at a visit's first report.
      referrer: 'https://www.google.com/',
      // And since issue 49: the clicks' cells (as many clicks as the count rose by at the first
      // report, capped to the rise after it), the sections reached and the visit's web vitals.
      viewport: 'desktop',
      cells: [
        [0, 'action', 3, 4, 1, 0],
        [1, 'link', 10, 12, 1, 0],
      ],
      reached: [0, 1],
      vitals: { lcp: 1200, inp: 80, cls: 0.02, fcp: 900, ttfb: 200 },
    }),
  );
  return { etag, reports };
}

/** A running 50/50 holdout on every page the site paths lead to; their ids, to conclude them after. */
async function startHoldouts(data: Seeded, port: number): Promise<{ pageId: string; experimentId: string }[]> {
  const api = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${port}${url}`, {
      method,
      headers: { 'x-api-key': data.key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { experimentId: string };
  };
  const started = [];
  for (const pageId of new Set(data.siteVisits.map((v) => v.pageId))) {
    const arms = [
      { key: 'control', weight: 50 },
      { key: 'personalised', weight: 50 },
    ];
    const { experimentId } = await api('POST', `/v0/pages/${pageId}/experiments`, { name: 'Bench holdout', kind: 'holdout', arms });
    await api('POST', `/v0/pages/${pageId}/experiments/${experimentId}/start`);
    started.push({ pageId, experimentId });
  }
  return started;
}

/**
 * Segment audiences (utm.source equals s0, s1…, priorities 0, 1…) on each of the first 20 pages of
 * serve-page's links, and a link to each page: the paths are those links with every source and
 * none. Ten a page, and at full scale the 50 a page may have at most (the integrity issue's cap;
 * issue 50: a large tenant's page). Made through the API, once per backend's service (a second
 * call finds them made).
 */
const SEGMENT_PAGES = 20;
const SEGMENTS: Record<Scale, number> = { tiny: 10, small: 10, full: 50 };
async function startSegments(data: Seeded, port: number, scale: Scale): Promise<string[]> {
  const api = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`http://127.0.0.1:${port}${url}`, {
      method,
      headers: { 'x-api-key': data.key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!res.ok && res.status !== 409) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  };
  const segments = SEGMENTS[scale];
  const paths: string[] = [];
  const pages = [...new Set(data.siteVisits.map((v) => v.pageId))].slice(0, SEGMENT_PAGES);
  for (const [i, pageId] of pages.entries()) {
    const path = `/bench-segments-${i}`;
    for (let k = 0; k < segments; k++) {
      const rules = { match: 'all', conditions: [{ field: 'utm.source', operator: 'equals', value: `s${k}` }] };
      await api('POST', `/v0/pages/${pageId}/audiences`, { customName: `Source s${k}`, priority: k, rules });
    }
    await api('POST', '/v0/page_links', { path, target: { targetType: 'page', pageId } });
    paths.push(path, ...Array.from({ length: segments }, (_, k) => `${path}?utm_source=s${k}`));
  }
  return paths;
}

/** The customer's origin of the decide scenario's site. */
const ONSITE_ORIGIN = 'https://shop.bench.example';

/**
 * A site with five live experiences made through the API (once per service: a second call makes
 * another site over the same database, which only the first's key is asked of), and decide's
 * paths: pages of each experience with and without a matching source, and pages of none.
 */
async function startOnsite(data: Seeded, port: number): Promise<string[]> {
  const api = async (url: string, body: unknown) => {
    const res = await fetch(`http://127.0.0.1:${port}${url}`, {
      method: 'POST',
      headers: { 'x-api-key': data.key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`POST ${url}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { siteId: string; siteKey: string };
  };
  const site = await api('/v0/sites', { name: 'Bench shop', origins: [ONSITE_ORIGIN] });
  const experiences = [
    { urlMatch: { type: 'prefix', value: '/pricing' }, priority: 5 },
    {
      urlMatch: { type: 'glob', value: '/product/*' },
      rules: { match: 'all', conditions: [{ field: 'utm.source', operator: 'equals', value: 'ads' }] },
    },
    { urlMatch: { type: 'exact', value: '/' }, holdoutPercent: 20 },
    {
      urlMatch: { type: 'prefix', value: '/blog' },
      rules: { match: 'any', conditions: [{ field: 'visitor.device', operator: 'equals', value: 'mobile' }] },
    },
    { urlMatch: { type: 'prefix', value: '/pricing' }, priority: 1, conversionUrl: '/thanks' },
  ];
  for (const [i, fields] of experiences.entries()) {
    await api('/v0/experiences', {
      siteId: site.siteId,
      name: `Bench experience ${i}`,
      status: 'live',
      ...fields,
      changes: [
        { selector: i === 4 ? '.footer' : 'h1', action: 'text', value: 'Built for {{utm.term | teams}}' },
        {
          selector: `a.cta-${i}`,
          action: 'attribute',
          attribute: 'href',
          value: `https://shop.bench.example/signup?plan={{utm.term | basic}}`,
        },
      ],
    });
  }
  const pages = [
    '/pricing',
    '/pricing/team?utm_term=robots',
    '/product/widget?utm_source=ads',
    '/product/widget',
    '/',
    '/blog/post',
    '/about',
  ];
  return pages.map((page) => `/_pam/decide?site=${site.siteKey}&url=${q(`${ONSITE_ORIGIN}${page}`)}&ref=${q('https://www.google.com/')}`);
}

async function concludeHoldouts(data: Seeded, port: number, holdouts: { pageId: string; experimentId: string }[]): Promise<void> {
  for (const { pageId, experimentId } of holdouts) {
    await fetch(`http://127.0.0.1:${port}/v0/pages/${pageId}/experiments/${experimentId}/conclude`, {
      method: 'POST',
      headers: { 'x-api-key': data.key, 'content-type': 'application/json' },
      body: JSON.stringify({ winner: 'personalised' }),
    });
  }
}

const HEAP_DIR = process.env.BENCH_HEAP_DIR;
const heapOptions = () => (HEAP_DIR ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${path.resolve(HEAP_DIR)}`] : []);

/**
 * Asks the service for a heap snapshot (`heapOptions`) and waits for it: the snapshot holds the
 * service's only thread, so once the file is there and the service answers again, it is whole.
 */
async function heapSnapshot(pid: number, port: number, name: string): Promise<void> {
  if (!HEAP_DIR) return;
  const dir = path.resolve(HEAP_DIR);
  const target = path.join(dir, `${name}-${pid}.heapsnapshot`);
  const before = new Set(fs.readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  const deadline = Date.now() + 600_000;
  for (;;) {
    await new Promise((r) => setTimeout(r, 1000));
    const file = fs.readdirSync(dir).find((f) => !before.has(f) && f.startsWith('Heap.') && f.endsWith('.heapsnapshot'));
    if (file && fs.statSync(path.join(dir, file)).size > 0) {
      await waitFor(`http://127.0.0.1:${port}/healthz`, 600_000);
      fs.renameSync(path.join(dir, file), target);
      console.log(`# heap snapshot: ${target}`);
      return;
    }
    if (Date.now() > deadline) throw new Error(`no heap snapshot of ${name} in 10 minutes`);
  }
}

/**
 * How long the agent scenario may take before the run stops as hung: long enough for a slow agent
 * to be measured, not ended. PostgreSQL's took over 10 minutes for 10,000 audiences (session 54),
 * and the run that stopped there wrote no table.
 */
const AGENT_LIMIT_MS = 30 * 60_000;

/**
 * `agent-template`: POST /v0/pages/{page_id}/regenerate on the page of `agentAudiences` audiences,
 * timed from the request until the last new version is published (read from the database every
 * 100 ms), while get-person runs against the same service in 2-second rounds until then. Two rows:
 * the versions published per second (`errors`: versions not published), and get-person meanwhile.
 */
async function agentScenario(
  data: Seeded,
  getPerson: Omit<LoadSpec, 'duration'>,
  databaseUrl: string,
  pid: number,
  ceilingRps: number | null,
): Promise<ScenarioResult[]> {
  const db = watchDatabase(databaseUrl);
  try {
    const regenerated = (status: string) =>
      db.kysely
        .selectFrom('audience_versions as v')
        .innerJoin('audiences as a', 'a.id', 'v.audience_id')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('a.page_id', '=', data.agentPageId)
        .where('v.version_number', '=', 2)
        .where('v.status', '=', status as 'published')
        .executeTakeFirstOrThrow()
        .then((r) => Number(r.n));
    const { n: total } = await db.kysely
      .selectFrom('audiences')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('page_id', '=', data.agentPageId)
      .where('archived_at', 'is', null)
      .executeTakeFirstOrThrow();
    const { tenant_id: tenantId } = await db.kysely
      .selectFrom('pages')
      .select('tenant_id')
      .where('id', '=', data.agentPageId)
      .executeTakeFirstOrThrow();
    // Whether the tenant has versions left for the agent: one probe of the agent's partial index (its
    // literal condition, so SQLite can use it). Counting the page's published versions every poll
    // read all 10,000 audiences at full scale, twice a poll, on a core the service or the load needed.
    const working = () =>
      db.kysely
        .selectFrom('audience_versions')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where(sql<boolean>`status in ('queued', 'processing')`)
        .limit(1)
        .executeTakeFirst()
        .then((row) => row !== undefined);
    const started = Date.now();
    let answered = false;
    const request = fetch(`${getPerson.url}/v0/pages/${data.agentPageId}/regenerate`, {
      method: 'POST',
      headers: { ...getPerson.headers, 'content-type': 'application/json', 'idempotency-key': `bench-agent-${started}` },
      body: '{}',
    }).then(async (res) => {
      if (res.status !== 202) throw new Error(`regenerate answered ${res.status}: ${await res.text()}`);
      answered = true;
    });
    // A failed regenerate (or watcher) ends the rounds, and is thrown where `done` is awaited.
    // Unobserved until then, it was an unhandled rejection: the harness died and left its services running.
    let failed = false;
    let finishedAt = 0;
    let cancelled = 0;
    const watcher = (async () => {
      for (;;) {
        await new Promise((r) => setTimeout(r, 100));
        if (failed) return;
        if (Date.now() - started > AGENT_LIMIT_MS) throw new Error(`agent-template: still working after 30 minutes, of ${total}`);
        if (answered && !(await working())) break;
      }
      finishedAt = Date.now();
      const published = await regenerated('published');
      cancelled = await regenerated('cancelled');
      if (published + cancelled < Number(total)) {
        throw new Error(`agent-template: nothing left queued, but ${published} of ${total} published and ${cancelled} cancelled`);
      }
    })();
    const done = Promise.all([request, watcher]);
    done.catch(() => {
      failed = true;
    });
    const rounds: LoadResult[] = [];
    const [, peak] = await peakRss(
      pid,
      (async () => {
        do rounds.push(await load({ ...getPerson, duration: 2 }));
        while (finishedAt === 0 && !failed);
      })(),
    );
    await done;
    const seconds = (finishedAt - started) / 1000;
    const requests = rounds.reduce((n, r) => n + r.requests, 0);
    const rps = rounds.reduce((n, r) => n + r.rps, 0) / rounds.length;
    return [
      {
        name: 'agent-template',
        requests: Number(total),
        rps: Number(total) / seconds,
        p50: 0,
        p99: 0,
        p999: 0,
        errors: cancelled,
        non2xx: 0,
        peakRssBytes: peak,
        ratioToCeiling: null,
      },
      {
        name: 'agent-get-person',
        requests,
        rps,
        p50: Math.max(...rounds.map((r) => r.p50)),
        p99: Math.max(...rounds.map((r) => r.p99)),
        p999: Math.max(...rounds.map((r) => r.p999)),
        errors: rounds.reduce((n, r) => n + r.errors, 0),
        non2xx: rounds.reduce((n, r) => n + r.non2xx, 0),
        peakRssBytes: peak,
        ratioToCeiling: ceilingRps ? rps / ceilingRps : null,
      },
    ];
  } finally {
    await db.close();
  }
}

/**
 * The harness's own reads of the service's database while the service runs. On SQLite, a plain
 * read-only connection, each read its own transaction: `openDatabase` would open a writer and start
 * a second checkpoint worker on the service's file, whose passes find the service's own busy (a
 * pass's lock is one per file), and its reader keeps a snapshot for the rest of a loop turn.
 */
function watchDatabase(databaseUrl: string): { kysely: Kysely<Database>; close(): Promise<void> } {
  const config = loadConfig({ DATABASE_URL: databaseUrl }).database;
  if (config.kind === 'postgres') return openDatabase(config);
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: new SQLite(config.path, { readonly: true }) }) });
  return { kysely, close: () => kysely.destroy() };
}

/** The metered twin's background writers, off (see where it starts). */
const METER_ONLY = { AGENT: 'false', WEBHOOK_DISPATCHER: 'false', ALERT_SENDER: 'false' } as const;

async function prepareDatabase(backend: 'sqlite' | 'postgres'): Promise<{ url: string; drop(): Promise<void> }> {
  if (backend === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pam-bench-'));
    return { url: path.join(dir, 'bench.sqlite'), drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
  const base = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  await client.query('create extension if not exists pg_trgm');
  await client.query(`create schema ${schema}`);
  await client.end();
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema},public`);
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop schema ${schema} cascade`);
      await c.end();
    },
  };
}

async function maintenance(url: string, deepTenantId: string): Promise<{ created_at: string; id: string }> {
  const deepest = `select created_at, id from persons where tenant_id = $1 order by created_at desc, id desc limit 1 offset 199999`;
  const oldest = `select created_at, id from persons where tenant_id = $1 order by created_at, id limit 1`;
  if (!/^postgres(ql)?:/.test(url)) {
    const sqlite = new SQLite(url);
    try {
      const toSqlite = (text: string) => text.replace('$1', '?');
      const row = (sqlite.prepare(toSqlite(deepest)).get(deepTenantId) ?? sqlite.prepare(toSqlite(oldest)).get(deepTenantId)) as {
        created_at: string;
        id: string;
      };
      sqlite.exec('analyze');
      return row;
    } finally {
      sqlite.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const found = (await client.query(deepest, [deepTenantId])).rows[0] ?? (await client.query(oldest, [deepTenantId])).rows[0];
    // Only the benchmark's own schema: a bare VACUUM ANALYZE would visit every schema of the database.
    const tables = await client.query<{ name: string }>('select tablename as name from pg_tables where schemaname = current_schema()');
    await client.query(`vacuum analyze ${tables.rows.map((t) => `"${t.name}"`).join(', ')}`);
    return { created_at: (found.created_at as Date).toISOString(), id: found.id as string };
  } finally {
    await client.end();
  }
}

/** What `--hold` writes: a seeded service left running, and each of its scenarios' load (bench/alternate.ts reads it). */
export interface Held {
  backend: 'sqlite' | 'postgres';
  commit: string;
  scale: Scale;
  pid: number;
  url: string;
  scenarios: Record<string, Omit<LoadSpec, 'url' | 'connections' | 'duration'>>;
}

/**
 * The loads of the service's scenarios that leave its state as they found it: not the agent's
 * (it publishes versions) nor serve-page-experiment (its holdouts would change serve-page's pages).
 * Segments and the site script's experiences are made first, as a run makes them.
 */
async function hold(
  file: string,
  backend: Held['backend'],
  data: Seeded,
  pid: number,
  port: number,
  wanted: Scenario[],
  deepCursor: string,
  site: SiteLoad,
  scale: Scale,
): Promise<void> {
  const scenarios: Held['scenarios'] = {};
  for (const scenario of wanted) {
    if (scenario.target !== 'service' || ['agent-template', 'serve-page-experiment'].includes(scenario.name)) continue;
    const spec = scenario.spec(data, deepCursor, site);
    if (scenario.name === 'serve-page-segments') spec.paths = await startSegments(data, port, scale);
    if (scenario.name === 'decide') spec.paths = await startOnsite(data, port);
    scenarios[scenario.name] = spec;
  }
  const commit = execFileSync('git', ['describe', '--always', '--dirty'], { cwd: ROOT, encoding: 'utf8' }).trim();
  const held: Held = { backend, commit, scale, pid, url: `http://127.0.0.1:${port}`, scenarios };
  fs.writeFileSync(file, JSON.stringify(held));
}

async function runBackend(backend: 'sqlite' | 'postgres', options: Options, log: (line: string) => void): Promise<Run> {
  const wanted = SCENARIOS.filter((s) => options.only.length === 0 || options.only.includes(s.name) || s.name === 'ceiling');
  const needsData = wanted.some((s) => s.target !== 'ceiling');
  const database = await prepareDatabase(backend);
  const processes: ChildProcess[] = [];
  // An interrupted run (Ctrl-C) still removes its database and its processes.
  const interrupted = () => {
    for (const p of processes) p.kill('SIGTERM');
    void database.drop().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    let data: Seeded = {
      key: '',
      deepKey: '',
      deepTenantId: '',
      personIds: [],
      audiences: [],
      pageIds: [],
      analyticsRange: { startDate: '', endDate: '' },
      audienceQueries: [],
      accountQueries: [],
      linkQueries: [],
      audienceTyping: [],
      accountTyping: [],
      linkTyping: [],
      sessionWindows: [],
      samplePerson: {},
      siteHost: '',
      sitePaths: [],
      siteVisits: [],
      agentPageId: '',
      funnelId: '',
    };
    let deepCursor = '';
    if (needsData) {
      const started = Date.now();
      // A bulk load: no time limit on a statement (the service keeps its own).
      const config = loadConfig({ DATABASE_URL: database.url }).database;
      const db = openDatabase(forBulkWork(config));
      await migrateToLatest(db);
      data = await seed(db.kysely, options.scale);
      await db.close();
      // The cursor after 10,000 pages of 20 on the deep tenant, read once before the timed run; then
      // fresh planner statistics. Both take longer than the service's query timeout allows, so they
      // run on a connection of their own.
      const last = await maintenance(database.url, data.deepTenantId);
      deepCursor = encodeCursor('persons', null, [last.created_at, last.id]);
      log(`# ${backend}: seeded ${options.scale} scale in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }

    const ceilingPort = await freePort();
    const ceiling = pinned(SERVER_CPU, process.execPath, ['bench/ceiling.mjs', String(ceilingPort), JSON.stringify(data.samplePerson)]);
    processes.push(ceiling);
    const start = startOptions();
    const startService = (port: number, extra: NodeJS.ProcessEnv = {}) =>
      pinned(
        SERVER_CPU,
        process.execPath,
        [...start.args, ...heapOptions(), ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean), 'dist/server.js'],
        {
          ...start.env,
          DATABASE_URL: database.url,
          PORT: String(port),
          HOST: '127.0.0.1',
          LOG_LEVEL: 'warn',
          BOOTSTRAP_API_KEY: '',
          ADMIN_TOKEN: '',
          // The benchmark measures the service, not its rate limits.
          RATE_LIMIT_PER_SECOND: '10000000',
          COLLECT_RATE_PER_MINUTE: '1000000',
          DECIDE_RATE_PER_MINUTE: '10000000',
          DECIDE_SITE_RATE_PER_MINUTE: '100000000',
          FILE_URL_SECRET: BENCH_SECRET,
          ...extra,
        },
      );
    const servicePort = await freePort();
    const service = needsData ? startService(servicePort) : undefined;
    if (service) processes.push(service);
    const meteredPort = await freePort();
    // The metered process also counts each scenario's statements a request (its query counter).
    // It is a meter, not a second worker: its agent and its event consumers (the webhook
    // dispatcher, the alert sender) are off. On SQLite they took the file's write lock from the
    // measured service, whose writer then waited in `begin immediate` with its event loop held
    // (SQLite's busy handler sleeps in the calling thread): up to 216 ms at a time, and
    // agent-get-person's p99 of 1.2–1.9 s (docs/benchmarks-history.md, session 50).
    // A held service is alone on its core: no metered twin running background work beside it.
    const metered =
      !options.hold && wanted.some((s) => s.target === 'metered' || s.target === 'service')
        ? startService(meteredPort, { METRICS_TOKEN: BENCH_SECRET, ...METER_ONLY })
        : undefined;
    if (metered) processes.push(metered);
    await waitFor(`http://127.0.0.1:${ceilingPort}/`);
    if (service) await waitFor(`http://127.0.0.1:${servicePort}/healthz`);
    if (metered) await waitFor(`http://127.0.0.1:${meteredPort}/healthz`);

    let prism: ChildProcess | undefined;
    let prismPort = 0;
    if (wanted.some((s) => s.target === 'prism')) {
      const bin = path.join(ROOT, 'bench', 'node_modules', '.bin', 'prism');
      if (!fs.existsSync(bin)) {
        log('# peer-prism skipped: run `npm --prefix bench install` first');
      } else {
        const spec = path.join(os.tmpdir(), `pam-openapi-${process.pid}.json`);
        fs.writeFileSync(spec, await (await fetch(`http://127.0.0.1:${servicePort}/openapi.json`)).text());
        prismPort = await freePort();
        prism = pinned(SERVER_CPU, bin, ['mock', spec, '-p', String(prismPort), '-h', '127.0.0.1', '--errors', 'false']);
        processes.push(prism);
        await waitFor(`http://127.0.0.1:${prismPort}/v0/persons/x`, 120_000);
      }
    }

    const site =
      service && wanted.some((s) => ['serve-page-304', 'collect'].includes(s.name))
        ? await prepareSite(data, servicePort)
        : { etag: '', reports: [] };
    if (options.hold && service) {
      await hold(options.hold, backend, data, service.pid!, servicePort, wanted, deepCursor, site, options.scale);
      log(`# ${backend}: holding the service (pid ${service.pid}, port ${servicePort}), described in ${options.hold}; Ctrl-C ends it`);
      await new Promise(() => {}); // until SIGINT or SIGTERM: `interrupted` removes the database and the processes
    }
    const results: ScenarioResult[] = [];
    let ceilingRps: number | null = null;
    // serve-page-segments' paths, kept for its alternating rounds against serve-page after the scenarios.
    let keptSegmentPaths: string[] | undefined;
    // Named by backend, order and scenario (and the process, heapSnapshot adds), so a listing sorts as the run went.
    const snapshotName = (scenario: string) => `${backend}-${String(results.length).padStart(2, '0')}-${scenario}`;
    for (const scenario of wanted) {
      const [child, port] = {
        ceiling: [ceiling, ceilingPort] as const,
        prism: [prism, prismPort] as const,
        metered: [metered, meteredPort] as const,
        service: [service, servicePort] as const,
      }[scenario.target];
      if (!child) continue;
      const segmentPaths = scenario.name === 'serve-page-segments' ? await startSegments(data, port, options.scale) : undefined;
      if (segmentPaths) keptSegmentPaths = segmentPaths;
      const decidePaths = scenario.name === 'decide' ? await startOnsite(data, port) : undefined;
      const base = {
        ...scenario.spec(data, deepCursor, site),
        ...(segmentPaths ? { paths: segmentPaths } : {}),
        ...(decidePaths ? { paths: decidePaths } : {}),
        url: `http://127.0.0.1:${port}`,
        connections: options.connections,
      };
      if (scenario.name === 'agent-template') {
        await waitIdle(child.pid!);
        for (const row of await agentScenario(data, base, database.url, child.pid!, ceilingRps)) {
          results.push(row);
          log(formatRow(backend, row));
        }
        await heapSnapshot(child.pid!, port, snapshotName(scenario.name));
        continue;
      }
      const holdouts = scenario.name === 'serve-page-experiment' ? await startHoldouts(data, port) : [];
      await waitIdle(child.pid!);
      await visitEach(port, base);
      await load({ ...base, duration: Math.min(3, Math.max(1, options.duration / 3)) }); // warm-up
      await waitIdle(child.pid!);
      const counting = scenario.target === 'metered' ? await statementsRun(meteredPort) : undefined;
      const cpuBefore = cpuSeconds(child.pid!);
      const [result, peak] = await peakRss(child.pid!, load({ ...base, duration: options.duration }));
      const cpuPerRequest = (cpuSeconds(child.pid!) - cpuBefore) / Math.max(1, result.requests);
      if (scenario.name === 'ceiling') ceilingRps = result.rps;
      let statementsPerRequest: number | null = null;
      if (counting !== undefined) statementsPerRequest = ((await statementsRun(meteredPort)) - counting) / Math.max(1, result.requests);
      else if (scenario.target === 'service' && metered)
        statementsPerRequest = await countStatements(metered.pid!, meteredPort, base, options.duration, `${backend} ${scenario.name}`);
      const row: ScenarioResult = {
        name: scenario.name,
        ...result,
        peakRssBytes: peak,
        ratioToCeiling: ceilingRps ? result.rps / ceilingRps : null,
        statementsPerRequest,
        cpuPerRequest,
      };
      results.push(row);
      // Steadier than requests a second between runs: it does not pay for waking an idle core.
      log(`# ${backend} ${scenario.name}: ${(cpuPerRequest * 1e6).toFixed(1)} µs of the process's CPU a request`);
      log(formatRow(backend, row));
      await concludeHoldouts(data, port, holdouts);
      if (scenario.target !== 'ceiling' && scenario.target !== 'prism') await heapSnapshot(child.pid!, port, snapshotName(scenario.name));
    }
    let metricsCost: Run['metricsCost'];
    if (service && metered && results.some((r) => r.name === 'get-person') && results.some((r) => r.name === 'get-person-metrics')) {
      // One run of each is at the mercy of whatever else the machine does meanwhile: the cost is
      // measured again in alternating rounds, and the medians compared.
      const spec = SCENARIOS.find((s) => s.name === 'get-person')!.spec(data, deepCursor, site);
      const rounds = await alternatingRounds(async (which) => {
        const [child, port] = which === 'off' ? [service, servicePort] : [metered, meteredPort];
        await waitIdle(child.pid!);
        const before = cpuSeconds(child.pid!);
        const result = await load({
          ...spec,
          url: `http://127.0.0.1:${port}`,
          connections: 50,
          duration: Math.max(2, options.duration / 3),
        });
        return { rps: result.rps, cpu: (cpuSeconds(child.pid!) - before) / Math.max(1, result.requests) };
      });
      const { off, on } = rounds;
      metricsCost = { throughput: 1 - on.rps / off.rps, cpu: on.cpu / off.cpu - 1 };
      log(
        `# ${backend}: metrics on, 6 alternating rounds: get-person ${((1 - on.rps / off.rps) * 100).toFixed(1)}% less throughput ` +
          `(${off.rps.toFixed(0)} → ${on.rps.toFixed(0)} req/s), ${((on.cpu / off.cpu - 1) * 100).toFixed(1)}% more server CPU a request ` +
          `(${(off.cpu * 1e6).toFixed(1)} → ${(on.cpu * 1e6).toFixed(1)} µs); target: at most 5%`,
      );
    }
    let experimentRatio: Run['experimentRatio'];
    if (service && results.some((r) => r.name === 'serve-page') && results.some((r) => r.name === 'serve-page-experiment')) {
      // serve-page with and without running holdouts, alternating: each round starts from the same
      // state (holdouts started, or concluded for personalised) and is warmed until every path has
      // been served in it, so neither side pays the other's renderings.
      const spec = {
        ...SCENARIOS.find((s) => s.name === 'serve-page-experiment')!.spec(data, deepCursor, site),
        url: `http://127.0.0.1:${servicePort}`,
        connections: 50,
      };
      const rounds = await alternatingRounds(async (which) => {
        const holdouts = which === 'on' ? await startHoldouts(data, servicePort) : [];
        const measured = await warmedRound(service.pid!, spec, Math.max(2, options.duration / 3));
        await concludeHoldouts(data, servicePort, holdouts);
        return measured;
      });
      experimentRatio = rounds.on.rps / rounds.off.rps;
      log(
        `# ${backend}: holdouts running, 6 alternating rounds: serve-page ${rounds.off.rps.toFixed(0)} → ${rounds.on.rps.toFixed(0)} req/s ` +
          `(${experimentRatio.toFixed(2)} ×); target: at least 0.9 ×`,
      );
    }
    let segmentsRatio: Run['segmentsRatio'];
    if (service && keptSegmentPaths && results.some((r) => r.name === 'serve-page')) {
      // serve-page and serve-page-segments in turn on the one service (issue 50: segments at least
      // 0.9 × serve-page in alternating rounds), each warmed before it is measured: one run of each,
      // minutes apart, is at the mercy of whatever else the machine did meanwhile.
      const plain = {
        ...SCENARIOS.find((s) => s.name === 'serve-page')!.spec(data, deepCursor, site),
        url: `http://127.0.0.1:${servicePort}`,
        connections: 50,
      };
      const segmented = { ...plain, paths: keptSegmentPaths };
      const rounds = await alternatingRounds((which) =>
        warmedRound(service.pid!, which === 'on' ? segmented : plain, Math.max(2, options.duration / 3)),
      );
      segmentsRatio = rounds.on.rps / rounds.off.rps;
      log(
        `# ${backend}: segments, 6 alternating rounds: serve-page ${rounds.off.rps.toFixed(0)} → serve-page-segments ` +
          `${rounds.on.rps.toFixed(0)} req/s (${segmentsRatio.toFixed(2)} ×), ${(rounds.off.cpu * 1e6).toFixed(1)} → ` +
          `${(rounds.on.cpu * 1e6).toFixed(1)} µs of CPU a request; target: at least 0.9 ×`,
      );
    }
    return { backend, results, metricsCost, experimentRatio, segmentsRatio };
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    // Each process is given time to exit cleanly (a profiled service writes its profile on exit).
    await Promise.all(
      processes.map(
        (p) =>
          new Promise<void>((resolve) => {
            if (p.exitCode !== null || p.signalCode !== null) return resolve();
            const forced = setTimeout(() => p.kill('SIGKILL'), 10_000);
            p.once('exit', () => {
              clearTimeout(forced);
              resolve();
            });
            p.kill('SIGTERM');
          }),
      ),
    );
    await database.drop();
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const startedAt = new Date();
  const options = parseArgs(argv);
  // The service is measured as it runs in production: compiled.
  if (options.only.length === 0 || options.only.some((name) => name !== 'ceiling')) {
    execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
  }
  fs.mkdirSync(options.out, { recursive: true });
  console.log(
    `# ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} cores; scale ${options.scale}, ${options.duration} s per scenario`,
  );
  console.log(HEADER);
  const runs: Run[] = [];
  for (const backend of options.backends) {
    const run = await runBackend(backend, options, (line) => console.log(line));
    runs.push(run);
    const { results } = run;
    const file = path.join(options.out, `${new Date().toISOString().slice(0, 10)}-${backend}-${options.scale}.json`);
    fs.writeFileSync(
      file,
      JSON.stringify(
        { date: new Date().toISOString(), cpu: os.cpus()[0]?.model, backend, scale: options.scale, duration: options.duration, results },
        null,
        2,
      ),
    );
    console.log(`# wrote ${path.relative(ROOT, file)}`);
  }
  if (options.markdown) {
    const file = path.join(ROOT, 'BENCHMARKS.md');
    const section = currentSection(
      {
        date: startedAt,
        machine: `${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} cores, Node ${process.versions.node}`,
        scale: options.scale,
        durationSeconds: options.duration,
        command: `npm run bench${argv.length ? ` -- ${argv.join(' ')}` : ''}`,
      },
      runs,
      // agent-template reports two rows: the versions a second, and get-person meanwhile.
      SCENARIOS.flatMap((s) => (s.name === 'agent-template' ? [s.name, 'agent-get-person'] : [s.name])),
    );
    fs.writeFileSync(file, replaceCurrent(fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Benchmarks\n', section));
    // Aligned as Biome formats Markdown, so that the lint passes on the file as written.
    execFileSync(path.join(ROOT, 'node_modules', '.bin', 'biome'), ['format', '--write', file], { cwd: ROOT, stdio: 'inherit' });
    console.log('# wrote the current figures into BENCHMARKS.md');
  } else {
    console.log('# BENCHMARKS.md left as it is: its table is written by a run of every scenario without --out');
  }
}

await main();
