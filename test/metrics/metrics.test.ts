import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import { syncBuiltinESMExports } from 'node:module';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { fileUrlSecret } from '../../src/assets/files.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { CACHES } from '../../src/db/caches.js';
import { viewTokens } from '../../src/site/token.js';
import { ok, pageWithAudiences, until, versionsOf } from '../agent/common.js';
import { contentFor, fakeOpenAi, type FakeAnswer } from '../agent/fake-openai.js';
import { onPostgres, startApp, type TestApp } from '../helpers.js';
import { audienceOf, fallbackHost, link, publishedPage, unique, visit } from '../site/serve-helpers.js';

const TOKEN = 'metrics-token-0123456789abcdef';
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

async function scrape(t: TestApp, token: string | null = TOKEN) {
  const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: token === null ? {} : { authorization: `Bearer ${token}` } });
  return { status: res.statusCode, type: String(res.headers['content-type']), text: res.body };
}

/** The value of one series line, by its name and exact labels (in the order prom-client writes them). */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = http.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });

describe('metrics off (the default)', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp();
  });
  after(async () => t.close());

  test('GET /metrics does not exist', async () => {
    assert.equal((await scrape(t)).status, 404);
    assert.equal((await scrape(t, null)).status, 404);
  });
});

describe('METRICS_TOKEN: /metrics on the API host', () => {
  let t: TestApp;
  let host: string;
  before(async () => {
    t = await startApp({ METRICS_TOKEN: TOKEN });
    host = await fallbackHost(t);
  });
  after(async () => t.close());

  test('needs the bearer token; answers the Prometheus text format with it', async () => {
    for (const token of [null, 'wrong-token-0123456789abcdef', `${TOKEN}x`, TOKEN.slice(0, -1)]) {
      const res = await scrape(t, token);
      assert.equal(res.status, 401, String(token));
      assert.doesNotMatch(res.text, /pam_/);
    }
    const apiKeyInstead = await t.app.inject({ method: 'GET', url: '/metrics', headers: { 'x-api-key': t.key } });
    assert.equal(apiKeyInstead.statusCode, 401);
    const res = await scrape(t);
    assert.equal(res.status, 200);
    assert.match(res.type, /^text\/plain; version=0\.0\.4/);
    for (const name of [
      'pam_http_requests_total',
      'pam_http_request_duration_seconds',
      'pam_http_requests_in_flight',
      'pam_db_query_duration_seconds',
      'pam_webhook_events_pending',
      'pam_webhook_deliveries_pending',
      'pam_webhook_oldest_pending_age_seconds',
      'pam_webhook_deliveries_total',
      'pam_collect_reports_total',
      'pam_rate_limit_refusals_total',
      'pam_agent_queue_depth',
      'pam_agent_queue_oldest_age_seconds',
      'pam_agent_generations_total',
      'pam_agent_generation_duration_seconds',
      'pam_site_document_cache_hits_total',
      'pam_site_document_cache_misses_total',
      'pam_site_document_cache_entries',
      'pam_site_document_cache_bytes',
      'pam_site_outcome_memo_hits_total',
      'pam_site_outcome_memo_misses_total',
      'pam_site_outcome_memo_entries',
      'pam_process_cpu_seconds_total',
      'pam_nodejs_eventloop_lag_seconds',
      onPostgres ? 'pam_db_pool_size' : 'pam_sqlite_group_commit_size',
    ]) {
      assert.match(res.text, new RegExp(`^# TYPE ${name} `, 'm'), name);
    }
    assert.equal(value(res.text, 'pam_http_requests_in_flight{plane="api"}'), 1, 'the scrape itself');
    assert.ok(!(await t.req('GET', '/openapi.json', undefined, { key: null })).text.includes('/metrics'), 'not in the document');
  });

  test("metrics: guessing the token's length by timing learns nothing: every token, of any length, is one 32-byte constant-time comparison", async () => {
    // The comparison is watched through node:crypto itself: a comparison skipped for a token of
    // another length (the old early return) would show as a missing call.
    const compared: [number, number][] = [];
    const original = crypto.timingSafeEqual;
    crypto.timingSafeEqual = (a, b) => {
      compared.push([a.byteLength, b.byteLength]);
      return original(a, b);
    };
    syncBuiltinESMExports();
    try {
      const wrong = ['', 'x', TOKEN.slice(0, -1), `${TOKEN}x`, TOKEN.replace(/.$/, '!'), 'é'.repeat(TOKEN.length), 'y'.repeat(4096)];
      for (const token of wrong) {
        compared.length = 0;
        const res = await scrape(t, token === '' ? null : token);
        assert.equal(res.status, 401, `${token.length} characters`);
        assert.equal(res.text, 'A metrics token is needed.\n');
        assert.deepEqual(compared, [[32, 32]], `one comparison of two SHA-256 digests for a token of ${token.length} characters`);
      }
      compared.length = 0;
      assert.equal((await scrape(t)).status, 200);
      assert.deepEqual(compared, [[32, 32]]);
    } finally {
      crypto.timingSafeEqual = original;
      syncBuiltinESMExports();
    }
  });

  test('requests by route template, method and status class, never an id, key or tenant', async () => {
    const person = (await t.req('POST', '/v0/persons', { name: 'Metered', email: 'metered@example.com' })).body;
    for (let i = 0; i < 3; i++) assert.equal((await t.req('GET', `/v0/persons/${person.personId}`)).status, 200);
    assert.equal((await t.req('GET', '/v0/persons/person_missing_one')).status, 404);
    assert.equal((await t.req('GET', '/no/such/route/at/all')).status, 404);

    const { text } = await scrape(t);
    const labels = (cls: string) => `plane="api",route="/v0/persons/:person_id",method="GET",status_class="${cls}"`;
    assert.equal(value(text, `pam_http_requests_total{${labels('2xx')}}`), 3);
    assert.equal(value(text, `pam_http_requests_total{${labels('4xx')}}`), 1);
    assert.equal(value(text, `pam_http_request_duration_seconds_count{${labels('2xx')}}`), 3);
    assert.ok((value(text, `pam_http_request_duration_seconds_sum{${labels('2xx')}}`) ?? -1) > 0);
    // Buckets are cumulative, the last one (+Inf) holding every observation.
    const buckets = [
      ...text.matchAll(new RegExp(`^pam_http_request_duration_seconds_bucket\\{${labels('2xx')},le="([^"]+)"\\} (\\d+)$`, 'gm')),
    ];
    assert.ok(buckets.length > 5);
    assert.deepEqual(buckets.at(-1)?.slice(1), ['+Inf', '3']);
    const counts = buckets.map((m) => Number(m[2]));
    assert.deepEqual(
      counts,
      [...counts].sort((x, y) => x - y),
    );
    assert.equal(value(text, 'pam_http_requests_total{plane="api",route="unmatched",method="GET",status_class="4xx"}'), 1);
    assert.equal(value(text, 'pam_http_requests_total{plane="api",route="/v0/persons",method="POST",status_class="2xx"}'), 1);
    for (const secret of [person.personId, 'person_missing_one', '/no/such', t.key, t.tenantId, 'metered@example.com', host]) {
      assert.ok(!text.includes(secret), `${secret} appears in /metrics`);
    }
  });

  test('database query durations by operation kind', async () => {
    await t.req('PATCH', '/v0/persons/person_nobody', { name: 'x' });
    const { text } = await scrape(t);
    for (const operation of ['select', 'insert']) {
      assert.ok((value(text, `pam_db_query_duration_seconds_count{operation="${operation}",outcome="ok"}`) ?? 0) > 0, operation);
    }
    const kinds = new Set([...text.matchAll(/^pam_db_query_duration_seconds_count\{operation="([^"]+)"/gm)].map((m) => m[1]));
    for (const kind of kinds)
      assert.ok(
        [
          'select',
          'insert',
          'update',
          'delete',
          'merge',
          'with',
          'begin',
          'commit',
          'rollback',
          'savepoint',
          'release',
          'pragma',
          'other',
        ].includes(kind ?? ''),
        String(kind),
      );
    if (onPostgres) {
      assert.ok((value(text, 'pam_db_pool_size') ?? 0) >= 1);
      assert.ok((value(text, 'pam_db_pool_idle') ?? -1) >= 0);
      assert.equal(value(text, 'pam_db_pool_waiting'), 0);
    } else {
      assert.ok((value(text, 'pam_sqlite_group_commit_size_count') ?? 0) >= 1, 'writes were committed');
      assert.ok((value(text, 'pam_sqlite_group_commit_size_sum') ?? 0) >= (value(text, 'pam_sqlite_group_commit_size_count') ?? 0));
    }
  });

  test('a key refused by its rate limit is counted', async () => {
    const tenant = await t.newTenant('Limited');
    const created = await t.req(
      'POST',
      `/admin/tenants/${tenant.tenantId}/api_keys`,
      { rateLimitPerSecond: 1, rateLimitBurst: 1 },
      {
        key: null,
        headers: { authorization: `Bearer ${t.adminToken}` },
      },
    );
    const before = value((await scrape(t)).text, 'pam_rate_limit_refusals_total{plane="api"}') ?? 0;
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await t.req('GET', '/v0/persons', undefined, { key: created.body.apiKey })).status);
    assert.deepEqual(statuses, [200, 429, 429]);
    assert.equal(value((await scrape(t)).text, 'pam_rate_limit_refusals_total{plane="api"}'), before + 2);
  });

  test('visit reports, accepted and refused by reason; visitor requests are the site plane', async () => {
    const tokens = viewTokens(await fileUrlSecret(t.app.db, t.app.config.fileUrlSecret));
    const page = (await t.req('POST', '/v0/pages', { name: 'Metered page', title: 'T', pageContext: 'c', pageType: 'inbound' })).body;
    const audience = (await t.req('POST', `/v0/pages/${page.pageId}/audiences`, {})).body;
    const link = (
      await t.req('POST', '/v0/page_links', { path: '/m', target: { targetType: 'audience', audienceId: audience.audienceId } })
    ).body;
    let address = 1;
    const send = async (body: unknown, userAgent = BROWSER) =>
      (
        await t.app.inject({
          method: 'POST',
          url: '/_pam/collect',
          remoteAddress: `198.51.100.${address++}`,
          headers: { host, 'content-type': 'text/plain', 'user-agent': userAgent },
          payload: typeof body === 'string' ? body : JSON.stringify(body),
        })
      ).statusCode;
    const report = (token: string) => ({ token, visibleMs: 1000, scroll: 10, clicks: 0, questions: 0, conversions: 0 });
    const { token } = tokens.sign({ tenantId: t.tenantId, pageId: page.pageId, audienceId: audience.audienceId, linkId: link.pageLinkId });

    assert.equal(await send(report(token)), 204);
    assert.equal(await send(report('not.a-token')), 400);
    assert.equal(await send('{not json'), 400);
    assert.equal(await send(report(token), 'Googlebot/2.1 (+http://www.google.com/bot.html)'), 204);

    const { text } = await scrape(t);
    assert.equal(value(text, 'pam_collect_reports_total{outcome="accepted",reason=""}'), 1);
    assert.equal(value(text, 'pam_collect_reports_total{outcome="refused",reason="invalid_token"}'), 1);
    assert.equal(value(text, 'pam_collect_reports_total{outcome="refused",reason="invalid_report"}'), 1);
    assert.equal(value(text, 'pam_collect_reports_total{outcome="refused",reason="bot"}'), 1);
    assert.equal(value(text, 'pam_http_requests_total{plane="site",route="/_pam/collect",method="POST",status_class="2xx"}'), 2);
    assert.equal(value(text, 'pam_http_requests_total{plane="site",route="/_pam/collect",method="POST",status_class="4xx"}'), 2);
    assert.equal(
      value(text, 'pam_http_requests_total{plane="api",route="unmatched",method="POST",status_class="2xx"}'),
      undefined,
      'a visitor request is not counted by the API plane',
    );
    assert.ok(!text.includes(token.slice(0, 20)) && !text.includes('198.51.100'), 'neither the token nor an address');
  });
});

describe('the document cache and the outcome memo', () => {
  test('a first visit misses and renders, the next ones hit; entries and bytes held; the memo on both databases', async () => {
    const t = await startApp({ METRICS_TOKEN: TOKEN });
    try {
      const host = await fallbackHost(t);
      const page = await publishedPage(t);
      const audience = await audienceOf(t, page.pageId);
      const path = unique('cached');
      await link(t, path, { targetType: 'audience', audienceId: audience.audienceId });
      const series = (text: string) => ({
        hits: value(text, 'pam_site_document_cache_hits_total') ?? Number.NaN,
        misses: value(text, 'pam_site_document_cache_misses_total') ?? Number.NaN,
        entries: value(text, 'pam_site_document_cache_entries') ?? Number.NaN,
        bytes: value(text, 'pam_site_document_cache_bytes') ?? Number.NaN,
        memoHits: value(text, 'pam_site_outcome_memo_hits_total') ?? Number.NaN,
        memoMisses: value(text, 'pam_site_outcome_memo_misses_total') ?? Number.NaN,
        memoEntries: value(text, 'pam_site_outcome_memo_entries') ?? Number.NaN,
      });
      const before = series((await scrape(t)).text);
      assert.deepEqual(before, { hits: 0, misses: 0, entries: 0, bytes: 0, memoHits: 0, memoMisses: 0, memoEntries: 0 });

      const first = await visit(t, host, path);
      assert.equal(first.statusCode, 200);
      const once = series((await scrape(t)).text);
      assert.equal(once.misses, 1);
      assert.equal(once.hits, 0);
      assert.equal(once.entries, 1);
      assert.ok(once.bytes > 500 && once.bytes < first.body.length + 1000, `bytes ${once.bytes}`);

      assert.equal((await visit(t, host, path)).statusCode, 200);
      const etag = String(first.headers.etag);
      assert.equal((await visit(t, host, path, { headers: { 'if-none-match': etag } })).statusCode, 304);
      const thrice = series((await scrape(t)).text);
      assert.equal(thrice.hits, 2, 'the 200 and the 304 both from the cache');
      assert.equal(thrice.misses, 1);
      assert.equal(thrice.entries, 1);
      assert.equal(thrice.bytes, once.bytes);
      assert.equal(thrice.memoHits + thrice.memoMisses, 3, 'every visit looks in the memo');
      if (onPostgres) {
        // Keyed by the tenant's change sequence (issue 31), which a visit does not move.
        assert.deepEqual([thrice.memoHits, thrice.memoMisses, thrice.memoEntries], [2, 1, 1], 'the memo on PostgreSQL');
      } else {
        assert.ok(thrice.memoMisses >= 1 && thrice.memoEntries >= 0);
      }

      // A change renders a new document: a miss, and a second entry (the old one falls out unused, later).
      const patched = await t.req('PATCH', `/v0/pages/${page.pageId}`, {
        content: { headline: 'A new headline', subheadline: '', sections: [] },
      });
      assert.equal(patched.status, 200, patched.text);
      assert.equal((await visit(t, host, path)).statusCode, 200);
      const changed = series((await scrape(t)).text);
      assert.equal(changed.misses, 2);
      assert.equal(changed.entries, 2);
      assert.ok(changed.bytes > once.bytes);
      const { text } = await scrape(t);
      assert.ok(!text.includes(host) && !text.includes(path), 'neither the host nor the path');
    } finally {
      await t.close();
    }
  });
});

describe('every declared cache', () => {
  test("each cache of src/db/caches.ts shows its bytes and entries; a rendered document moves the documents cache's", async () => {
    const t = await startApp({ METRICS_TOKEN: TOKEN });
    try {
      const host = await fallbackHost(t);
      const page = await publishedPage(t);
      const audience = await audienceOf(t, page.pageId);
      const path = unique('weighed');
      await link(t, path, { targetType: 'audience', audienceId: audience.audienceId });
      const read = (text: string, cache: string) => ({
        bytes: value(text, `pam_cache_bytes{cache="${cache}"}`),
        entries: value(text, `pam_cache_entries{cache="${cache}"}`),
      });
      const before = (await scrape(t)).text;
      for (const cache of Object.keys(CACHES)) {
        const { bytes, entries } = read(before, cache);
        assert.ok(bytes !== undefined && bytes >= 0, `pam_cache_bytes of ${cache}`);
        assert.ok(entries !== undefined && entries >= 0, `pam_cache_entries of ${cache}`);
      }
      assert.equal((await visit(t, host, path)).statusCode, 200);
      const after = (await scrape(t)).text;
      // Caches of this process's other apps (closed, not yet collected) stand still: only this visit moved the sum.
      const documents = [read(before, 'documents'), read(after, 'documents')] as const;
      assert.equal((documents[1].entries ?? 0) - (documents[0].entries ?? 0), 1);
      assert.equal((documents[1].bytes ?? 0) - (documents[0].bytes ?? 0), value(after, 'pam_site_document_cache_bytes'));
      assert.ok((read(after, 'outcomes').entries ?? 0) >= 1 || !onPostgres, 'the outcome memo holds the path (PostgreSQL)');
    } finally {
      await t.close();
    }
  });
});

describe('page agent series', () => {
  test('queue depth and age while generations are held, then generations by outcome and their durations', async () => {
    const holds: (() => void)[] = [];
    const fake = await fakeOpenAi((request): FakeAnswer => {
      const tag = String(request.inputs?.version?.supplementaryContext ?? '');
      if (tag === 'fail') return { status: 500, raw: { error: { message: 'down' } } };
      if (tag === 'hold') return { hold: new Promise<void>((r) => holds.push(r)), content: contentFor('held') };
      return { content: contentFor('you') };
    });
    const t = await startApp(
      {
        METRICS_TOKEN: TOKEN,
        AGENT: 'true',
        AGENT_GENERATOR: 'openai',
        AGENT_OPENAI_BASE_URL: fake.url,
        AGENT_OPENAI_API_KEY: 'sk-test-secret-key-0123456789abcdef',
        AGENT_OPENAI_MODEL: 'test-model-1',
        AGENT_TIMEOUT_MS: '5000',
      },
      { agent: { pollMs: 20, retryBaseMs: 20 } },
    );
    const generations = (text: string, outcome: string) => value(text, `pam_agent_generations_total{outcome="${outcome}"}`);
    try {
      let text = (await scrape(t)).text;
      assert.equal(value(text, 'pam_agent_queue_depth'), 0);
      assert.equal(value(text, 'pam_agent_queue_oldest_age_seconds'), 0);
      for (const outcome of ['published', 'retried', 'failed', 'given_back', 'dropped'])
        assert.equal(generations(text, outcome), 0, outcome);
      assert.equal(value(text, 'pam_agent_generation_duration_seconds_count'), 0);

      // Two generations held by the endpoint: both versions wait, processing.
      const kept = await pageWithAudiences(t, 1, { context: 'hold' });
      const cancelled = await pageWithAudiences(t, 1, { context: 'hold' });
      for (const { page } of [kept, cancelled]) ok(await t.req('POST', `/v0/pages/${page.pageId}/regenerate`, {}), 202);
      await until('both generations to start', async () => holds.length === 2);
      await new Promise((resolve) => setTimeout(resolve, 50));
      text = (await scrape(t)).text;
      assert.equal(value(text, 'pam_agent_queue_depth'), 2);
      const age = value(text, 'pam_agent_queue_oldest_age_seconds') ?? 0;
      assert.ok(age >= 0.05 && age < 60, `age ${age}`);

      // One is cancelled meanwhile: its late answer is dropped; the other is published.
      const [version] = await versionsOf(t, cancelled.audiences[0].audienceId);
      const base = `/v0/pages/${cancelled.page.pageId}/audiences/${cancelled.audiences[0].audienceId}/versions/${version?.id}`;
      assert.equal(ok(await t.req('POST', `${base}/cancel`)).status, 'cancelled');
      for (const release of holds) release();
      await until('both outcomes', async () => {
        text = (await scrape(t)).text;
        return generations(text, 'published') === 1 && generations(text, 'dropped') === 1;
      });
      assert.equal(value(text, 'pam_agent_queue_depth'), 0);
      assert.equal(value(text, 'pam_agent_queue_oldest_age_seconds'), 0);
      assert.equal(value(text, 'pam_agent_generation_duration_seconds_count'), 2);
      const sum = value(text, 'pam_agent_generation_duration_seconds_sum') ?? 0;
      assert.ok(sum >= 0.1 && sum < 30, `sum ${sum}`);

      // An endpoint that keeps failing: three retries, then the version is cancelled.
      const failing = await pageWithAudiences(t, 1, { context: 'fail' });
      ok(await t.req('POST', `/v0/pages/${failing.page.pageId}/regenerate`, {}), 202);
      await until('the failure', async () => {
        text = (await scrape(t)).text;
        return generations(text, 'failed') === 1;
      });
      assert.equal(generations(text, 'retried'), 3);
      assert.equal(generations(text, 'published'), 1);
      assert.equal(value(text, 'pam_agent_generation_duration_seconds_count'), 6);
      assert.equal(value(text, 'pam_agent_queue_depth'), 0);
      assert.doesNotMatch(text, /pam_agent_[^\n]*(version|tenant|page)_?id/i);
    } finally {
      await t.close();
      await fake.close();
    }
  });
});

describe('webhook series', () => {
  test('the backlog while no dispatcher runs, then the outcome of each attempt', async () => {
    const held = await startApp({
      METRICS_TOKEN: TOKEN,
      WEBHOOK_DISPATCHER: 'false',
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE: 'true',
    });
    const answers = [500, 204];
    const receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(answers.shift() ?? 204).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`;
      assert.equal((await held.req('POST', '/v0/webhook_subscriptions', { url, events: ['person.created'] })).status, 201);
      assert.equal((await held.req('POST', '/v0/persons', { name: 'Evented' })).status, 201);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const { text } = await scrape(held);
      assert.ok((value(text, 'pam_webhook_events_pending') ?? 0) >= 1, text.match(/pam_webhook_.*/g)?.join('\n'));
      assert.ok((value(text, 'pam_webhook_oldest_pending_age_seconds') ?? 0) > 0);
      assert.equal(value(text, 'pam_webhook_deliveries_total{outcome="succeeded"}'), undefined);
    } finally {
      await held.close();
    }

    // Its own database again, with a dispatcher and a fast retry: a 500, then a 204.
    const live = await startApp({
      METRICS_TOKEN: TOKEN,
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_RETRY_SCHEDULE: '0.1,0.1',
    });
    try {
      await live.app.listen({ port: 0, host: '127.0.0.1' }); // the dispatcher starts when the app is ready
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`;
      answers.splice(0, answers.length, 500, 204);
      await live.req('POST', '/v0/webhook_subscriptions', { url, events: ['person.created'] });
      await live.req('POST', '/v0/persons', { name: 'Delivered' });
      let text = '';
      // Until the whole backlog is through: an event written after the one delivered (the first
      // attempt's outcome) may still wait for the dispatcher's next fan-out, a moment later.
      const settled = () =>
        value(text, 'pam_webhook_deliveries_total{outcome="succeeded"}') === 1 &&
        value(text, 'pam_webhook_oldest_pending_age_seconds') === 0;
      for (let i = 0; i < 200; i++) {
        text = (await scrape(live)).text;
        if (settled()) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(value(text, 'pam_webhook_deliveries_total{outcome="retrying"}'), 1, text.match(/pam_webhook_.*/g)?.join('\n'));
      assert.equal(value(text, 'pam_webhook_deliveries_total{outcome="succeeded"}'), 1);
      assert.equal(value(text, 'pam_webhook_deliveries_pending'), 0);
      assert.equal(value(text, 'pam_webhook_oldest_pending_age_seconds'), 0);
    } finally {
      await live.close();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });
});

describe('METRICS_PORT: /metrics on a port of its own', () => {
  test('served there without a token, on loopback by default, and absent from the API host', async () => {
    const port = await freePort();
    const t = await startApp({ METRICS_PORT: String(port) });
    try {
      assert.equal(t.app.config.metrics.host, '127.0.0.1');
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      assert.equal(res.status, 200);
      assert.match(await res.text(), /^# TYPE pam_http_requests_total counter$/m);
      assert.equal((await fetch(`http://127.0.0.1:${port}/v0/persons`)).status, 404, 'nothing else is served there');
      assert.equal((await scrape(t)).status, 404, 'not on the API host without METRICS_TOKEN');
    } finally {
      await t.close();
    }
    await assert.rejects(fetch(`http://127.0.0.1:${port}/metrics`), 'the port closes with the app');
  });
});

describe('configuration', () => {
  test('METRICS_TOKEN, METRICS_PORT and METRICS_HOST are checked', () => {
    assert.deepEqual(loadConfig({}).metrics, { token: undefined, port: undefined, host: '127.0.0.1' });
    assert.equal(loadConfig({ METRICS_TOKEN: 'a'.repeat(16) }).metrics.token, 'a'.repeat(16));
    assert.throws(() => loadConfig({ METRICS_TOKEN: 'a'.repeat(15) }), ConfigError);
    assert.throws(() => loadConfig({ METRICS_TOKEN: `${'a'.repeat(16)} b` }), ConfigError);
    assert.equal(loadConfig({ METRICS_PORT: '9464' }).metrics.port, 9464);
    for (const port of ['0', '65536', 'x', '3000']) assert.throws(() => loadConfig({ METRICS_PORT: port }), ConfigError, port);
    assert.equal(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' }).metrics.host, '0.0.0.0');
    assert.throws(() => loadConfig({ METRICS_HOST: 'metrics.example.com' }), ConfigError);
  });
});
