import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, describe, test } from 'node:test';
import autocannon from 'autocannon';
import { freshDatabase, onPostgres, type Json, type TestDatabase } from '../helpers.js';
import { startServer, type ServerProcess } from '../server-process.js';
import { call, show } from './api.js';

// Load (issue 8): 200 concurrent connections for LOAD_SECONDS (default 60) against a real server
// process on a small seeded dataset, with the benchmark's mixed read/write workload drawn at random
// per request. Zero 5xx, zero socket errors or timeouts (every request valid, so every answer 2xx),
// p99 latency bounded, and the server's memory flat: the mean RSS of the last 10 s within 20% (+30 MB)
// of the mean of the first 10 s after a 5 s warm-up. Rerun longer with LOAD_SECONDS=600.
//
// Latency is judged in the steady state, once all 200 connections have been answered once. Before
// that, a connection waits in the listen queue: a busy Node 20 server (libuv 1.46) accepts one
// connection per event-loop turn, so while the first connections keep it saturated the others are
// accepted slowly (seconds on SQLite, whose queries run on the event loop). A bare node:http server
// doing 1 ms of synchronous work per request shows the same (see the report of this test's author):
// it is the platform, not the service, and it is reported (first answer per connection) rather than
// mixed into the p99.

const KEY = 'robustness-load-bootstrap-key-0123456789';
const CONNECTIONS = 200;
const SECONDS = Number(process.env.LOAD_SECONDS ?? 60);
const WARM_UP_S = 5;
const WINDOW_S = 10;
/**
 * Steady-state p99 bound. Measured on this project's 2-core machines, p99 is 0.2-0.3 s on SQLite and
 * ~0.5 s on PostgreSQL when the test runs alone; `npm test` runs up to four test files at once, and
 * then the server, the load generator (autocannon, in this process), PostgreSQL and the other files'
 * servers share the two cores: PostgreSQL throughput falls to ~300-400 requests/s, so by Little's law
 * 200 connections wait ~0.5-0.7 s on average, and p99 was measured at 1.8-2.4 s. 3 s keeps a margin
 * over that while still failing on what matters: an event loop blocked for seconds, lock convoys,
 * requests starved behind others.
 */
const P99_BOUND_MS = 3000;
const RSS_GROWTH = 1.2;
const RSS_SLACK_MB = 30;

const SEED = { persons: 200, accounts: 50, pages: 20, audiencesPerPage: 2 };

if (!Number.isInteger(SECONDS) || SECONDS < WARM_UP_S + 2 * WINDOW_S) {
  throw new Error(
    `LOAD_SECONDS must be an integer of at least ${WARM_UP_S + 2 * WINDOW_S} (warm-up, then two windows that do not overlap), got "${process.env.LOAD_SECONDS}"`,
  );
}

/** The server process's resident set, in MB, from /proc. */
function rssMb(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Runs `fn` on every item, at most `limit` at a time. */
async function eachLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

interface Dataset {
  persons: Json[];
  accounts: Json[];
  pages: Json[];
  audiences: Json[];
}

/** The small dataset, written through the API. */
async function seed(base: string): Promise<Dataset> {
  const ok = async (method: string, path: string, body: unknown, status = 201) => {
    const res = await call(base, KEY, method, path, body);
    assert.equal(res.status, status, `${method} ${path}: ${show(res)}`);
    return res.body as Json;
  };
  const data: Dataset = { persons: [], accounts: [], pages: [], audiences: [] };
  const domains = Array.from({ length: SEED.accounts }, (_, i) => `company${i}.example.com`);
  await eachLimit(
    Array.from({ length: SEED.accounts }, (_, i) => i),
    10,
    async (i) => {
      data.accounts.push(
        await ok('POST', '/v0/accounts', { name: `Company ${i} ${['Alpha', 'Beta', 'Gamma', 'Delta'][i % 4]}`, domain: domains[i] }),
      );
    },
  );
  await eachLimit(
    Array.from({ length: SEED.persons }, (_, i) => i),
    10,
    async (i) => {
      data.persons.push(
        await ok('POST', '/v0/persons', {
          name: `Seed Person ${i}`,
          domain: domains[i % domains.length],
          email: `seed${i}@company${i % domains.length}.example.com`,
          phoneNumber: `+1415555${String(i).padStart(4, '0')}`,
        }),
      );
    },
  );
  await eachLimit(
    Array.from({ length: SEED.pages }, (_, i) => i),
    10,
    async (i) => {
      const page = await ok('POST', '/v0/pages', {
        name: `Seed page ${i}`,
        title: `Welcome ${i}`,
        pageContext: `Context of seed page ${i}`,
        pageType: ['inbound', 'outbound', 'sales_deck'][i % 3],
        actions: [{ purpose: 'book', buttonTitle: 'Book a demo', actionType: 'link', url: 'https://example.com/demo' }],
      });
      data.pages.push(page);
      for (let j = 0; j < SEED.audiencesPerPage; j++) {
        const body = j === 0 ? { personId: data.persons[(i * 7) % data.persons.length].personId } : { customName: `Audience ${i}-${j}` };
        data.audiences.push(await ok('POST', `/v0/pages/${page.pageId}/audiences`, body));
      }
    },
  );
  return data;
}

type Op = { name: string; weight: number; build: (n: number) => { method: 'GET' | 'POST' | 'PATCH'; path: string; body?: unknown } };

function workload(data: Dataset): Op[] {
  const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)]!;
  const q = (s: string) => encodeURIComponent(s);
  return [
    { name: 'get-person', weight: 25, build: () => ({ method: 'GET', path: `/v0/persons/${pick(data.persons).personId}` }) },
    { name: 'list-persons', weight: 8, build: () => ({ method: 'GET', path: '/v0/persons?limit=20' }) },
    {
      name: 'search-accounts',
      weight: 10,
      build: () => ({
        method: 'GET',
        path: `/v0/accounts/search?query=${q(pick(['company1', 'beta', 'ALPHA', 'example', 'gamma', 'pany4']))}`,
      }),
    },
    { name: 'get-page', weight: 8, build: () => ({ method: 'GET', path: `/v0/pages/${pick(data.pages).pageId}` }) },
    { name: 'list-pages', weight: 4, build: () => ({ method: 'GET', path: '/v0/pages' }) },
    {
      name: 'get-audience',
      weight: 8,
      build: () => {
        const a = pick(data.audiences);
        return { method: 'GET', path: `/v0/pages/${a.pageId}/audiences/${a.audienceId}` };
      },
    },
    {
      name: 'search-audiences',
      weight: 5,
      build: () => ({ method: 'GET', path: `/v0/audiences/search?query=${q(pick(['seed', 'audience', 'person 1', 'page 2']))}` }),
    },
    {
      name: 'create-person',
      weight: 12,
      build: (n) => ({
        method: 'POST',
        path: '/v0/persons',
        body: { name: `Load Person ${n}`, domain: 'load.example.com', phoneNumber: '+14155550100' },
      }),
    },
    {
      name: 'patch-page',
      weight: 6,
      build: (n) => ({ method: 'PATCH', path: `/v0/pages/${pick(data.pages).pageId}`, body: { name: `Renamed page ${n}` } }),
    },
    {
      name: 'patch-person',
      weight: 6,
      build: (n) => ({ method: 'PATCH', path: `/v0/persons/${pick(data.persons).personId}`, body: { email: `load${n}@example.com` } }),
    },
    {
      name: 'create-log',
      weight: 8,
      build: (n) => ({
        method: 'POST',
        path: `/v0/persons/${pick(data.persons).personId}/logs`,
        body: { source: 'load-test', type: 'visit', payload: { n, url: 'https://example.com/x' }, idempotencyKey: `load-${n}` },
      }),
    },
  ];
}

describe(`load: ${CONNECTIONS} connections for ${SECONDS} s, mixed read/write workload`, () => {
  let database: TestDatabase | undefined;
  let server: ServerProcess | undefined;

  after(async () => {
    await server?.kill('SIGKILL');
    await database?.drop();
  });

  test(`zero 5xx, zero socket errors, p99 < ${P99_BOUND_MS} ms, RSS flat (last ${WINDOW_S} s <= first ${WINDOW_S} s x ${RSS_GROWTH} + ${RSS_SLACK_MB} MB)`, {
    timeout: Math.max(120_000, (SECONDS + 60) * 1000),
  }, async (t) => {
    database = await freshDatabase();
    // The default pool size (10) on PostgreSQL: the service as configured out of the box.
    server = await startServer({ DATABASE_URL: database.url, BOOTSTRAP_API_KEY: KEY });
    const pid = server.child.pid!;
    const data = await seed(server.url);
    const ops = workload(data);
    const totalWeight = ops.reduce((s, o) => s + o.weight, 0);
    const draw = () => {
      let r = Math.random() * totalWeight;
      for (const op of ops) {
        r -= op.weight;
        if (r < 0) return op;
      }
      return ops[ops.length - 1]!;
    };

    // Per operation: answers by status, and a few bodies of anything not 2xx (for the failure message).
    const byOp = new Map<string, Map<number, number>>();
    const oddAnswers: string[] = [];
    /** The slowest steady-state answer of each operation, in ms (for the diagnostics). */
    const slowest = new Map<string, number>();
    /** Latencies (ms) of the answers in the steady state: once every connection has been served. */
    const steady: number[] = [];
    /** The first answer on each connection: its latency includes waiting to be accepted. */
    const firstAnswerMs: number[] = [];
    const served = new Set<unknown>();
    let steadyAt: number | undefined;
    let lastOp = '?';
    let n = 0;
    const rss: { at: number; mb: number }[] = [];
    const started = Date.now();
    const seconds = () => (Date.now() - started) / 1000;
    const sampler = setInterval(() => {
      const mb = rssMb(pid);
      if (mb !== undefined) rss.push({ at: seconds(), mb });
    }, 1000);

    let result: autocannon.Result;
    try {
      result = await new Promise<autocannon.Result>((resolve, reject) => {
        const instance = autocannon(
          {
            url: server!.url,
            connections: CONNECTIONS,
            duration: SECONDS,
            // The server's own request timeout (30 s): an answer later than that is a hang.
            timeout: 30,
            requests: [
              {
                setupRequest: (request, context) => {
                  const op = draw();
                  const { method, path, body } = op.build(n++);
                  Object.assign(context, { op: op.name });
                  return {
                    ...request,
                    method,
                    path,
                    headers: { 'x-api-key': KEY, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
                    body: body !== undefined ? JSON.stringify(body) : '',
                  };
                },
                onResponse: (status, body, context) => {
                  const op = (context as { op?: string }).op ?? '?';
                  lastOp = op;
                  const counts = byOp.get(op) ?? new Map<number, number>();
                  counts.set(status, (counts.get(status) ?? 0) + 1);
                  byOp.set(op, counts);
                  if ((status < 200 || status >= 300) && oddAnswers.length < 10)
                    oddAnswers.push(`${op}: ${status} ${String(body).slice(0, 300)}`);
                },
              },
            ],
          },
          (err, res) => (err ? reject(err) : resolve(res)),
        );
        // autocannon emits (client, statusCode, resBytes, responseTime), right after onResponse of the same answer.
        (instance as unknown as NodeJS.EventEmitter).on('response', (client: unknown, _status: number, _bytes: number, ms: number) => {
          if (!served.has(client)) {
            served.add(client);
            firstAnswerMs.push(ms);
            if (served.size === CONNECTIONS) steadyAt = seconds();
            return;
          }
          if (steadyAt === undefined) return;
          steady.push(ms);
          if (ms > (slowest.get(lastOp) ?? 0)) slowest.set(lastOp, ms);
        });
      });
    } finally {
      clearInterval(sampler);
    }

    steady.sort((a, b) => a - b);
    const quantile = (q: number) => steady[Math.min(steady.length - 1, Math.floor(q * steady.length))] ?? NaN;
    const p99 = quantile(0.99);
    const statusSummary = [...byOp].map(([op, counts]) => `${op} ${[...counts].map(([st, c]) => `${st}x${c}`).join(' ')}`).join('; ');
    const first = rss.filter((r) => r.at >= WARM_UP_S && r.at < WARM_UP_S + WINDOW_S).map((r) => r.mb);
    const last = rss.filter((r) => r.at >= SECONDS - WINDOW_S && r.at < SECONDS).map((r) => r.mb);
    t.diagnostic(
      `${onPostgres ? 'PostgreSQL' : 'SQLite'}: ${result.requests.total} requests in ${result.duration} s (${Math.round(result.requests.average)} req/s); ` +
        `2xx ${result['2xx']}, 4xx ${result['4xx']}, 5xx ${result['5xx']}, errors ${result.errors}, timeouts ${result.timeouts}`,
    );
    t.diagnostic(
      `all ${CONNECTIONS} connections served ${steadyAt?.toFixed(1) ?? 'never'} s into the run (first answers on a connection: max ${Math.round(Math.max(...firstAnswerMs))} ms); ` +
        `steady state: ${steady.length} answers, p50 ${Math.round(quantile(0.5))} ms, p99 ${Math.round(p99)} ms, max ${Math.round(steady.at(-1) ?? NaN)} ms ` +
        `(whole run per autocannon: p99 ${result.latency.p99} ms, max ${result.latency.max} ms)`,
    );
    t.diagnostic(`by operation: ${statusSummary}`);
    t.diagnostic(`slowest steady-state answer by operation (ms): ${[...slowest].map(([op, ms]) => `${op} ${Math.round(ms)}`).join(', ')}`);
    t.diagnostic(
      `RSS MB: first window mean ${mean(first).toFixed(1)} (${first.length} samples), last window mean ${mean(last).toFixed(1)} (${last.length} samples), peak ${Math.max(...rss.map((r) => r.mb)).toFixed(1)}`,
    );

    // The server stayed up through it all.
    assert.equal(server.child.exitCode, null, `the server exited: ${server.stderr().slice(-2000)}`);
    assert.ok(result.requests.total > 0);
    assert.equal(result['5xx'], 0, `5xx answers: ${oddAnswers.join('\n')}`);
    assert.equal(result.errors, 0, 'socket errors (connection refused or reset, timeouts)');
    assert.equal(result.timeouts, 0, 'requests unanswered for 30 s');
    // Every request of the workload is valid: anything but 2xx is a fault too.
    assert.equal(result.non2xx, 0, `non-2xx answers: ${oddAnswers.join('\n')}`);
    // All 200 connections were in use for at least half the run, and their answers' p99 is bounded.
    assert.ok(
      steadyAt !== undefined && steadyAt <= SECONDS / 2,
      `all ${CONNECTIONS} connections served only ${steadyAt ?? 'never'} s into a ${SECONDS} s run`,
    );
    assert.ok(p99 < P99_BOUND_MS, `steady-state p99 latency ${Math.round(p99)} ms >= ${P99_BOUND_MS} ms`);

    // Memory flat: enough samples in both windows, and no growth beyond noise.
    assert.ok(
      first.length >= WINDOW_S - 2 && last.length >= WINDOW_S - 2,
      `RSS samples: ${first.length} in the first window, ${last.length} in the last`,
    );
    const bound = mean(first) * RSS_GROWTH + RSS_SLACK_MB;
    assert.ok(
      mean(last) <= bound,
      `RSS grew: last ${WINDOW_S} s mean ${mean(last).toFixed(1)} MB > first ${WINDOW_S} s mean ${mean(first).toFixed(1)} MB x ${RSS_GROWTH} + ${RSS_SLACK_MB} MB = ${bound.toFixed(1)} MB`,
    );

    // The writes answered 201 are all there: the person counter moved by the creates (+ those still in
    // flight when autocannon stopped, at most one per connection).
    const created = byOp.get('create-person')?.get(201) ?? 0;
    const listed = await call(server.url, KEY, 'GET', '/v0/persons?limit=1');
    assert.equal(listed.status, 200, show(listed));
    assert.ok(
      listed.body.totalCount >= SEED.persons + created && listed.body.totalCount <= SEED.persons + created + CONNECTIONS,
      `totalCount ${listed.body.totalCount}, expected ${SEED.persons + created} (+ at most ${CONNECTIONS} in flight at the end)`,
    );
    const health = await fetch(`${server.url}/healthz`);
    assert.equal(health.status, 200);
  });
});
