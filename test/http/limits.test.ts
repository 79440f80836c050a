import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import {
  ADMIN_TOKEN,
  expectProblem,
  freshDatabase,
  ISO_MS,
  startApp,
  type Json,
  type Res,
  type TestApp,
  type TestDatabase,
} from '../helpers.js';
import { freePort, START_MS, startServer, type ServerProcess } from '../server-process.js';

// Issue 8, "Limits and keys": token-bucket rate limits (in memory and in Redis), key scopes,
// expiry and per-key limits (admin API and CLI), lastUsedAt, JSON depth and array limits,
// server timeouts over a real socket, security headers and CORS.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const REDIS_URL = 'redis://127.0.0.1:6379';
const UNKNOWN_PERSON = 'person_01jd0000000000000000000000';
const UNKNOWN_PAGE = 'page_01jd0000000000000000000000';
const LIMIT_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'] as const;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const T = (seconds: number) => ({ timeout: seconds * 1000 });

/** The RateLimit-* headers as numbers; each must be present and a whole number. */
function limits(res: Res): { limit: number; remaining: number; reset: number } {
  const read = (name: string) => {
    const raw = res.headers[name];
    assert.match(String(raw), /^\d+$/, `${name} must be a whole number on a ${res.status}: ${String(raw)}`);
    return Number(raw);
  };
  return { limit: read('ratelimit-limit'), remaining: read('ratelimit-remaining'), reset: read('ratelimit-reset') };
}

function assertNoLimitHeaders(res: Res): void {
  for (const name of [...LIMIT_HEADERS, 'retry-after'])
    assert.equal(res.headers[name], undefined, `${name} on a ${res.status}: ${String(res.headers[name])}`);
}

const adminHeaders = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** POST /admin/tenants/{tenantId}/api_keys (the body may be left out). */
function createKey(t: TestApp, body?: unknown, tenantId = t.tenantId): Promise<Res> {
  return t.req('POST', `/admin/tenants/${tenantId}/api_keys`, body, { key: null, headers: adminHeaders });
}

async function newKey(t: TestApp, body?: unknown): Promise<{ apiKey: string; apiKeyId: string; body: Json }> {
  const res = await createKey(t, body);
  assert.equal(res.status, 201, res.text);
  return { apiKey: res.body.apiKey, apiKeyId: res.body.apiKeyId, body: res.body };
}

async function createPerson(t: TestApp, name = 'Limit Person', key?: string): Promise<string> {
  const res = await t.req('POST', '/v0/persons', { name }, key === undefined ? {} : { key });
  assert.equal(res.status, 201, res.text);
  return res.body.personId as string;
}

async function countPersons(t: TestApp, tenantId = t.tenantId): Promise<number> {
  const row = await t.app.db
    .selectFrom('persons')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function countPersonLogs(t: TestApp, personId: string): Promise<number> {
  const row = await t.app.db
    .selectFrom('person_logs')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('owner_id', '=', personId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

// ---------------------------------------------------------------------------------------------
// Rate limiting: the same cases in memory and in Redis
// ---------------------------------------------------------------------------------------------

const MODES = [
  { name: 'in memory', env: {} as Record<string, string> },
  { name: 'in Redis', env: { REDIS_URL } as Record<string, string> },
];

for (const mode of MODES) {
  describe(`rate limiting ${mode.name} (RATE_LIMIT_PER_SECOND=5, RATE_LIMIT_BURST=10)`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp({ RATE_LIMIT_PER_SECOND: '5', RATE_LIMIT_BURST: '10', ...mode.env });
      // The cases below are about the buckets, not start-up: wait until the limiter meters (see the
      // start-up test below for the first requests after start).
      await limiterMetering(t);
    });
    after(async () => {
      await t?.close();
    });

    test(
      '10 quick requests pass (4xx included), each counting RateLimit-Remaining down; the 11th is 429 rate_limited with Retry-After',
      T(20),
      async () => {
        const { key, tenantId } = await t.newTenant('Bucket Co');
        const as = { key };
        const run = bucketRun(BUCKET);
        const created = await run.expect(201, () => t.req('POST', '/v0/persons', { name: 'Counted Person' }, as));
        const personId = created.body.personId as string;
        await run.expect(200, () => t.req('GET', `/v0/persons/${personId}`, undefined, as));
        expectProblem(await run.expect(404, () => t.req('GET', `/v0/persons/${UNKNOWN_PERSON}`, undefined, as)), 404, 'not_found');
        expectProblem(await run.expect(400, () => t.req('GET', '/v0/persons?limit=0', undefined, as)), 400, 'validation_failed');
        expectProblem(await run.expect(400, () => t.req('POST', '/v0/persons', '{"name":', as)), 400, 'validation_failed');
        expectProblem(
          await run.expect(415, () => t.req('POST', '/v0/persons', 'name=x', { key, headers: { 'content-type': 'text/plain' } })),
          415,
          'unsupported_media_type',
        );
        expectProblem(await run.expect(400, () => t.req('POST', '/v0/persons', {}, as)), 400, 'validation_failed', ['/name']);
        await run.expect(200, () => t.req('PATCH', `/v0/persons/${personId}`, { name: 'Renamed Person' }, as));
        await run.expect(200, () => t.req('GET', '/v0/persons', undefined, as));
        await run.expect(200, () => t.req('GET', '/v0/accounts/search', undefined, as));

        // The 11th (a write) is refused and does nothing.
        const limited = await run.untilLimited(() => t.req('POST', '/v0/persons', { name: 'Refused Person' }, as));
        expectProblem(limited, 429, 'rate_limited');
        assert.match(String(limited.headers['retry-after']), /^\d+$/);
        assert.ok(Number(limited.headers['retry-after']) >= 1);
        assert.equal(limited.headers['retry-after'], '1', 'at 5 tokens/s one token is back within a second');
        assert.deepEqual(limits(limited), { limit: 10, remaining: 0, reset: 2 });
        assert.equal(limited.headers['cache-control'], 'no-store');
        assert.equal(limited.headers['x-content-type-options'], 'nosniff');
        assert.equal(await countPersons(t, tenantId), 1 + run.extra, 'only the first POST (and any the refill allowed) created a person');
      },
    );

    test('after waiting Retry-After (about 1 s), requests pass again: 5 tokens come back a second', T(20), async () => {
      const { key } = await t.newTenant('Refill Co');
      const run = bucketRun(BUCKET);
      for (let i = 0; i < 10; i++) await run.expect(200, () => t.req('GET', '/v0/persons', undefined, { key }));
      const limited = await run.untilLimited(() => t.req('GET', '/v0/persons', undefined, { key }));
      expectProblem(limited, 429, 'rate_limited');
      const limitedAt = performance.now(); // the 429's token count was below 1 at its take, before this

      await sleep(Number(limited.headers['retry-after']) * 1000 + 20);
      const sent = performance.now();
      const again = await t.req('GET', '/v0/persons', undefined, { key });
      const received = performance.now();
      assert.equal(again.status, 200, again.text);
      // Between the two takes: at least `sent - limitedAt`, at most `received - run.limitedSent`.
      // 5 tokens a second: after 1 s, 5 (or 6) tokens back, one taken: 4 left (5 if the timer was late).
      const { limit, remaining } = limits(again);
      assert.equal(limit, 10);
      const low = Math.floor(((sent - limitedAt) / 1000) * 5) - 1;
      const high = Math.min(9, Math.floor(((received - run.limitedSent) / 1000) * 5));
      assert.ok(low >= 4, `waited ${Math.round(sent - limitedAt)} ms`);
      assert.ok(remaining >= low && remaining <= high, `RateLimit-Remaining ${remaining} after a 1 s refill, expected ${low}..${high}`);
    });

    test('a request without a valid key is 401 with no RateLimit headers and takes no token', T(20), async () => {
      const { key } = await t.newTenant('No Token Co');
      // A key exhausted and then revoked is 401, not 429: the key is checked before any bucket.
      const spare = await newKey(t);
      const spareRun = bucketRun(BUCKET);
      for (let i = 0; i < 10; i++) await spareRun.expect(200, () => t.req('GET', '/v0/persons', undefined, { key: spare.apiKey }));
      expectProblem(await spareRun.untilLimited(() => t.req('GET', '/v0/persons', undefined, { key: spare.apiKey })), 429, 'rate_limited');
      const revoked = await t.req('DELETE', `/admin/api_keys/${spare.apiKeyId}`, undefined, { key: null, headers: adminHeaders });
      assert.equal(revoked.status, 204, revoked.text);

      const run = bucketRun(BUCKET);
      await run.expect(200, () => t.req('GET', '/v0/persons', undefined, { key }));
      const bad: Res[] = [
        await t.req('GET', '/v0/persons', undefined, { key: null }),
        await t.req('GET', '/v0/persons', undefined, { key: '' }),
        await t.req('GET', '/v0/persons', undefined, { key: `${key}x` }),
        await t.req('POST', '/v0/persons', { name: 'No Key' }, { key: 'pak_unknownunknownunknownunknownunknownunknown1' }),
        await t.req('GET', '/v0/persons', undefined, { key: spare.apiKey }),
      ];
      for (const res of bad) {
        expectProblem(res, 401, 'unauthorized');
        assertNoLimitHeaders(res);
      }
      // The second take on this bucket: 8 left, as if the five 401s had not happened.
      await run.expect(200, () => t.req('GET', '/v0/persons', undefined, { key }));
    });

    test(
      'with a valid key, an unknown route (404) and a wrong method (405) carry RateLimit headers and take a token; past the burst they are 429',
      T(20),
      async () => {
        const { key } = await t.newTenant('Unrouted Co');
        const run = bucketRun(BUCKET);
        const paths: [string, string, number][] = [
          ['GET', '/v0/nothing-here', 404],
          ['POST', '/v0/nothing/here', 404],
          ['GET', '/nowhere', 404],
          ['DELETE', '/v0/persons', 405],
          ['PUT', `/v0/persons/${UNKNOWN_PERSON}`, 405],
        ];
        for (let i = 0; i < 10; i++) {
          const [method, url, status] = paths[i % paths.length]!;
          const res = await run.expect(status, () => t.req(method, url, undefined, { key }));
          expectProblem(res, status, status === 404 ? 'not_found' : 'method_not_allowed');
        }
        const limited = await run.untilLimited(() => t.req('GET', '/v0/nothing-here', undefined, { key }));
        expectProblem(limited, 429, 'rate_limited');
        assert.match(String(limited.headers['retry-after']), /^\d+$/);

        // Without a valid key they stay a plain 404 and 405: no bucket, no headers, no 401.
        for (const as of [{ key: null }, { key: `${key}x` }]) {
          const missing = await t.req('GET', '/v0/nothing-here', undefined, as);
          expectProblem(missing, 404, 'not_found');
          assertNoLimitHeaders(missing);
          const wrong = await t.req('DELETE', '/v0/persons', undefined, as);
          expectProblem(wrong, 405, 'method_not_allowed');
          assertNoLimitHeaders(wrong);
        }
      },
    );

    test('buckets are per key: another key of the same tenant, and another tenant, are unaffected', T(20), async () => {
      const a = await newKey(t);
      const b = await newKey(t);
      const other = await t.newTenant('Other Bucket Co');
      const run = bucketRun(BUCKET);
      for (let i = 0; i < 10; i++) await run.expect(200, () => t.req('GET', '/v0/persons', undefined, { key: a.apiKey }));
      expectProblem(await run.untilLimited(() => t.req('GET', '/v0/persons', undefined, { key: a.apiKey })), 429, 'rate_limited');

      // A fresh bucket's first take is exact whatever the timing: 10 - 1.
      const sameTenant = await t.req('GET', '/v0/persons', undefined, { key: b.apiKey });
      assert.equal(sameTenant.status, 200, sameTenant.text);
      assert.deepEqual(limits(sameTenant), { limit: 10, remaining: 9, reset: 1 });
      const otherTenant = await t.req('GET', '/v0/persons', undefined, { key: other.key });
      assert.equal(otherTenant.status, 200, otherTenant.text);
      assert.deepEqual(limits(otherTenant), { limit: 10, remaining: 9, reset: 1 });
    });

    test(
      `two server processes ${mode.env.REDIS_URL ? 'with one REDIS_URL share one bucket' : 'without REDIS_URL have a bucket each'}`,
      // Two starts one after the other, each given START_MS on a loaded machine, then the requests.
      T((2 * START_MS) / 1000 + 30),
      async () => {
        let database: TestDatabase | undefined;
        let a: ServerProcess | undefined;
        let b: ServerProcess | undefined;
        const KEY = `limits-shared-${randomBytes(12).toString('hex')}`;
        try {
          database = await freshDatabase();
          // 1 token a second: the counts stay exact across processes unless a request takes a second.
          const shape = { rate: 1, burst: 10 };
          const env = {
            DATABASE_URL: database.url,
            BOOTSTRAP_API_KEY: KEY,
            ADMIN_TOKEN,
            RATE_LIMIT_PER_SECOND: '1',
            RATE_LIMIT_BURST: '10',
            ...mode.env,
          };
          a = await startServer(env);
          b = await startServer(env);
          const call = async (server: ServerProcess, key = KEY): Promise<Res> => {
            const res = await fetch(`${server.url}/v0/persons`, { headers: { 'x-api-key': key } });
            const text = await res.text();
            return { status: res.status, headers: Object.fromEntries(res.headers), body: text ? JSON.parse(text) : undefined, text };
          };
          // Warm both up (routing, the key lookup, the limiter) on another key of the tenant.
          for (const server of [a, b]) expectProblem(await call(server, `${KEY}-wrong`), 401, 'unauthorized');
          const tenants = await fetch(`${a.url}/admin/tenants`, { headers: adminHeaders });
          const tenantId = ((await tenants.json()) as Json).items[0].tenantId as string;
          await serversMetering([a, b], tenantId);

          const run = bucketRun(shape);
          for (let i = 1; i <= 5; i++) await run.expect(200, () => call(a!));
          if (mode.env.REDIS_URL) {
            // The same bucket, seen from the other instance: the count goes on from 5 taken.
            for (let i = 6; i <= 10; i++) await run.expect(200, () => call(b!));
            expectProblem(await run.untilLimited(() => call(b!)), 429, 'rate_limited');
            expectProblem(await run.untilLimited(() => call(a!)), 429, 'rate_limited');
          } else {
            const res = await call(b);
            assert.equal(res.status, 200, res.text);
            assert.deepEqual(limits(res), { limit: 10, remaining: 9, reset: 1 }, 'without Redis each instance has its own bucket');
            for (let i = 6; i <= 10; i++) await run.expect(200, () => call(a!));
            expectProblem(await run.untilLimited(() => call(a!)), 429, 'rate_limited');
            assert.equal((await call(b)).status, 200);
          }
        } finally {
          await Promise.all([a?.kill(), b?.kill()]);
          await database?.drop();
        }
      },
    );
  });
}

const BUCKET = { rate: 5, burst: 10 };

/**
 * Requests on one fresh bucket, in order, with their RateLimit headers checked against the token
 * bucket: after n takes, `burst - n` tokens plus whatever the bucket regained since the first
 * request was sent (`rate` a second). When the run is quicker than one token's refill (the usual
 * case), that is exact: Remaining = burst - n, Reset = ceil(n / rate); a slow machine only widens
 * the upper bound by the whole tokens the elapsed time explains.
 */
function bucketRun({ rate, burst }: { rate: number; burst: number }) {
  let started: number | undefined;
  let taken = 0;
  const run = {
    /** Requests that passed beyond `burst` because the bucket refilled meanwhile (0 when quick). */
    extra: 0,
    /** When the request answered 429 by `untilLimited` was sent. */
    limitedSent: 0,
    regained: () => (started === undefined ? 0 : Math.floor(((performance.now() - started) / 1000) * rate)),
    async expect(status: number, send: () => Promise<Res>): Promise<Res> {
      started ??= performance.now();
      const res = await send();
      taken++;
      assert.equal(res.status, status, `request ${taken}: ${res.text}`);
      const seconds = (performance.now() - started) / 1000;
      const { limit, remaining, reset } = limits(res);
      assert.equal(limit, burst, `RateLimit-Limit of request ${taken}`);
      const low = Math.max(0, burst - taken);
      const high = Math.min(burst - 1, low + Math.floor(seconds * rate));
      assert.ok(
        remaining >= low && remaining <= high,
        `RateLimit-Remaining of request ${taken} (${res.status}): ${remaining}, expected ${low === high ? low : `${low}..${high}`} (${Math.round(seconds * 1000)} ms in)`,
      );
      const resetHigh = Math.ceil(taken / rate);
      const resetLow = Math.max(1, Math.ceil(taken / rate - seconds - 1e-9));
      assert.ok(
        reset >= resetLow && reset <= resetHigh,
        `RateLimit-Reset of request ${taken}: ${reset}, expected ${resetLow === resetHigh ? resetLow : `${resetLow}..${resetHigh}`}`,
      );
      assert.equal(res.headers['retry-after'], undefined, `no Retry-After on allowed request ${taken}`);
      return res;
    },
    /**
     * The next request past the burst must be 429 — unless the bucket regained a token meanwhile,
     * in which case only as many more may pass as the elapsed time explains.
     */
    async untilLimited(send: () => Promise<Res>): Promise<Res> {
      for (;;) {
        run.limitedSent = performance.now();
        const res = await send();
        if (res.status === 429) return res;
        run.extra++;
        assert.ok(
          run.extra <= run.regained(),
          `request ${taken + run.extra} should have been 429 (the bucket could have regained ${run.regained()} token(s) by then), got ${res.status} ${res.text}`,
        );
      }
    },
  };
  return run;
}

/** Waits (up to 5 s) until every server's limiter meters a throwaway key (see the start-up test). */
async function serversMetering(servers: ServerProcess[], tenantId: string): Promise<void> {
  const made = await fetch(`${servers[0]!.url}/admin/tenants/${tenantId}/api_keys`, { method: 'POST', headers: adminHeaders });
  assert.equal(made.status, 201, await made.clone().text());
  const { apiKey } = (await made.json()) as { apiKey: string };
  for (const server of servers) {
    const deadline = Date.now() + 5000;
    for (;;) {
      const res = await fetch(`${server.url}/v0/persons`, { headers: { 'x-api-key': apiKey } });
      await res.arrayBuffer();
      assert.equal(res.status, 200);
      if (Number(res.headers.get('ratelimit-remaining')) < Number(res.headers.get('ratelimit-limit'))) break;
      assert.ok(Date.now() < deadline, `${server.url}: the rate limiter never started metering`);
      await sleep(20);
    }
  }
}

/** Waits (up to 5 s) until a throwaway key's bucket visibly counts down. */
async function limiterMetering(t: TestApp): Promise<void> {
  const { key } = await t.newTenant('Warm-up Co');
  const deadline = Date.now() + 5000;
  for (;;) {
    const res = await t.req('GET', '/v0/persons', undefined, { key });
    assert.equal(res.status, 200, res.text);
    if (limits(res).remaining < limits(res).limit) return;
    assert.ok(Date.now() < deadline, 'the rate limiter never started metering');
    await sleep(20);
  }
}

describe('rate limiting with REDIS_URL, right after start-up', () => {
  test('the first requests after the app is ready are metered too (the 11th of 10/burst is 429)', T(20), async () => {
    const t = await startApp({ RATE_LIMIT_PER_SECOND: '5', RATE_LIMIT_BURST: '10', REDIS_URL });
    try {
      // No waiting for anything: the app is ready, so its limits hold.
      const run = bucketRun(BUCKET);
      for (let i = 0; i < 10; i++) await run.expect(200, () => t.req('GET', '/v0/persons'));
      expectProblem(await run.untilLimited(() => t.req('GET', '/v0/persons')), 429, 'rate_limited');
    } finally {
      await t.close();
    }
  });
});

describe('rate limiting with an unreachable Redis', () => {
  test('requests are not failed nor held (the limiter lets them through)', T(20), async () => {
    const port = await freePort();
    const t = await startApp({ RATE_LIMIT_PER_SECOND: '5', RATE_LIMIT_BURST: '10', REDIS_URL: `redis://127.0.0.1:${port}` });
    try {
      const started = Date.now();
      const res = await t.req('GET', '/v0/persons');
      assert.equal(res.status, 200, res.text);
      assert.equal(limits(res).limit, 10);
      assert.ok(Date.now() - started < 2000, `answered in ${Date.now() - started} ms`);
    } finally {
      await t.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Per-key limits, configured defaults
// ---------------------------------------------------------------------------------------------

describe('per-key rate limits from the admin API', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ RATE_LIMIT_PER_SECOND: '5', RATE_LIMIT_BURST: '10' });
  });
  after(async () => {
    await t?.close();
  });

  test('rateLimitPerSecond 2 and no burst: a bucket of 4 (twice the rate)', T(20), async () => {
    const { apiKey, body } = await newKey(t, { rateLimitPerSecond: 2 });
    assert.equal(body.rateLimitPerSecond, 2);
    assert.equal(body.rateLimitBurst, 4);
    const run = bucketRun({ rate: 2, burst: 4 });
    for (let n = 1; n <= 4; n++) await run.expect(200, () => t.req('GET', '/v0/persons', undefined, { key: apiKey }));
    const limited = await run.untilLimited(() => t.req('GET', '/v0/persons', undefined, { key: apiKey }));
    expectProblem(limited, 429, 'rate_limited');
    assert.equal(limited.headers['retry-after'], '1');
    assert.deepEqual(limits(limited), { limit: 4, remaining: 0, reset: 2 });
  });

  test('rateLimitPerSecond 2 with rateLimitBurst 3: a bucket of 3', T(20), async () => {
    const { apiKey, body } = await newKey(t, { rateLimitPerSecond: 2, rateLimitBurst: 3 });
    assert.equal(body.rateLimitPerSecond, 2);
    assert.equal(body.rateLimitBurst, 3);
    const run = bucketRun({ rate: 2, burst: 3 });
    for (let n = 1; n <= 3; n++) await run.expect(200, () => t.req('GET', '/v0/persons', undefined, { key: apiKey }));
    expectProblem(await run.untilLimited(() => t.req('GET', '/v0/persons', undefined, { key: apiKey })), 429, 'rate_limited');
  });

  test('rateLimitBurst alone: a bucket of that size at the configured rate', T(20), async () => {
    const { apiKey, body } = await newKey(t, { rateLimitBurst: 3 });
    assert.equal(body.rateLimitPerSecond, null);
    assert.equal(body.rateLimitBurst, 3);
    const res = await t.req('GET', '/v0/persons', undefined, { key: apiKey });
    assert.deepEqual(limits(res), { limit: 3, remaining: 2, reset: 1 });
  });

  test('without options the configured rate applies, and the key has both scopes and no expiry', T(20), async () => {
    const res = await createKey(t);
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ['apiKey', 'apiKeyId', 'expiresAt', 'rateLimitBurst', 'rateLimitPerSecond', 'scopes']);
    assert.deepEqual(res.body.scopes, ['read', 'write']);
    assert.equal(res.body.expiresAt, null);
    assert.equal(res.body.rateLimitPerSecond, null);
    assert.equal(res.body.rateLimitBurst, null);
    const used = await t.req('GET', '/v0/persons', undefined, { key: res.body.apiKey });
    assert.deepEqual(limits(used), { limit: 10, remaining: 9, reset: 1 });
    const empty = await createKey(t, {});
    assert.equal(empty.status, 201, empty.text);
    assert.deepEqual(limits(await t.req('GET', '/v0/persons', undefined, { key: empty.body.apiKey })), {
      limit: 10,
      remaining: 9,
      reset: 1,
    });
  });

  test('invalid limits are 400 at their field', T(20), async () => {
    for (const [body, at] of [
      [{ rateLimitPerSecond: 0 }, '/rateLimitPerSecond'],
      [{ rateLimitPerSecond: 1.5 }, '/rateLimitPerSecond'],
      [{ rateLimitPerSecond: '2' }, '/rateLimitPerSecond'],
      [{ rateLimitPerSecond: -1 }, '/rateLimitPerSecond'],
      [{ rateLimitBurst: 0 }, '/rateLimitBurst'],
      [{ rateLimitBurst: 2.5 }, '/rateLimitBurst'],
      [{ rateLimit: 5 }, '/rateLimit'],
    ] as const) {
      expectProblem(await createKey(t, body), 400, 'validation_failed', [at]);
    }
  });

  test('configuration: 100/s with a burst of 200 by default; RATE_LIMIT_PER_SECOND alone gives twice its value', T(30), async () => {
    const defaults = await startApp({ RATE_LIMIT_PER_SECOND: '' });
    try {
      assert.deepEqual(limits(await defaults.req('GET', '/v0/persons')), { limit: 200, remaining: 199, reset: 1 });
    } finally {
      await defaults.close();
    }
    const seven = await startApp({ RATE_LIMIT_PER_SECOND: '7' });
    try {
      assert.deepEqual(limits(await seven.req('GET', '/v0/persons')), { limit: 14, remaining: 13, reset: 1 });
    } finally {
      await seven.close();
    }
    for (const env of [
      { RATE_LIMIT_PER_SECOND: '0' },
      { RATE_LIMIT_PER_SECOND: 'fast' },
      { RATE_LIMIT_BURST: '-1' },
      { REDIS_URL: 'http://127.0.0.1:6379' },
      { CORS_ORIGINS: 'app.example.com' },
    ]) {
      const name = Object.keys(env)[0]!;
      assert.throws(
        () => loadConfig(env),
        (err: Error) => err.name === 'ConfigError' && err.message.includes(name),
        `${JSON.stringify(env)} is refused naming ${name}`,
      );
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Scopes
// ---------------------------------------------------------------------------------------------

describe('API key scopes', () => {
  let t: TestApp;
  let readKey: string;
  let personId: string;
  let pageId: string;
  before(async () => {
    t = await startApp();
    const created = await newKey(t, { scopes: ['read'] });
    assert.deepEqual(created.body.scopes, ['read']);
    readKey = created.apiKey;
    personId = await createPerson(t, 'Scoped Person');
    const page = await t.req('POST', '/v0/pages', { name: 'Scoped Page', title: 'Scoped', pageContext: 'ctx', pageType: 'inbound' });
    assert.equal(page.status, 201, page.text);
    pageId = page.body.pageId;
  });
  after(async () => {
    await t?.close();
  });

  test('a read key can GET (and HEAD)', T(20), async () => {
    for (const url of ['/v0/persons', `/v0/persons/${personId}`, '/v0/accounts/search', `/v0/pages/${pageId}`]) {
      const res = await t.req('GET', url, undefined, { key: readKey });
      assert.equal(res.status, 200, `${url}: ${res.text}`);
    }
    const head = await t.req('HEAD', '/v0/persons', undefined, { key: readKey });
    assert.equal(head.status, 200);
  });

  test('a read key gets 403 forbidden on POST, PATCH and DELETE, with RateLimit headers, and nothing changes', T(20), async () => {
    const before = await countPersons(t);
    const refused: Res[] = [
      await t.req('POST', '/v0/persons', { name: 'Not Allowed' }, { key: readKey }),
      await t.req('POST', `/v0/persons/${personId}/logs`, { source: 'crm', type: 'note', payload: {} }, { key: readKey }),
      await t.req('PATCH', `/v0/persons/${personId}`, { name: 'Not Renamed' }, { key: readKey }),
      await t.req('DELETE', `/v0/pages/${pageId}`, undefined, { key: readKey }),
      // Forbidden before anything is looked up: an unknown page is 403 too, not 404.
      await t.req('DELETE', `/v0/pages/${UNKNOWN_PAGE}`, undefined, { key: readKey }),
      // ...and before the body is validated.
      await t.req('POST', '/v0/persons', { nope: true }, { key: readKey }),
    ];
    for (const res of refused) {
      expectProblem(res, 403, 'forbidden');
      assert.ok(limits(res).limit > 0);
      assert.equal(res.headers['cache-control'], 'no-store');
    }
    assert.equal(await countPersons(t), before);
    assert.equal(await countPersonLogs(t, personId), 0);
    assert.equal((await t.req('GET', `/v0/persons/${personId}`)).body.name, 'Scoped Person');
    assert.equal((await t.req('GET', `/v0/pages/${pageId}`)).status, 200, 'the page was not deleted');
  });

  test('default keys and ["read", "write"] keys can write', T(20), async () => {
    const both = await newKey(t, { scopes: ['read', 'write'] });
    assert.deepEqual(both.body.scopes, ['read', 'write']);
    const plain = await newKey(t);
    assert.deepEqual(plain.body.scopes, ['read', 'write']);
    const other = await createPerson(t, 'Written Person', both.apiKey);
    const patched = await t.req('PATCH', `/v0/persons/${other}`, { name: 'Rewritten Person' }, { key: plain.apiKey });
    assert.equal(patched.status, 200, patched.text);
    const page = await t.req(
      'POST',
      '/v0/pages',
      { name: 'Doomed Page', title: 'Doomed', pageContext: 'ctx', pageType: 'inbound' },
      { key: plain.apiKey },
    );
    assert.equal(page.status, 201, page.text);
    const deleted = await t.req('DELETE', `/v0/pages/${page.body.pageId}`, undefined, { key: both.apiKey });
    assert.equal(deleted.status, 204, deleted.text);
  });

  test('scopes must include read and name only read and write', T(20), async () => {
    for (const [scopes, at] of [
      [['write'], '/scopes'],
      [[], '/scopes'],
      [['read', 'read'], '/scopes'],
      [['admin'], '/scopes/0'],
      ['read', '/scopes'],
    ] as const) {
      expectProblem(await createKey(t, { scopes }), 400, 'validation_failed', [at]);
    }
  });

  test('with a read key, an unknown route is 404 and a wrong method 405, not 403, with RateLimit headers', T(20), async () => {
    for (const [method, url] of [
      ['GET', '/v0/nothing-here'],
      ['POST', '/v0/nothing-here'],
      ['DELETE', '/v0/nothing/here'],
    ] as const) {
      const res = await t.req(method, url, undefined, { key: readKey });
      expectProblem(res, 404, 'not_found');
      limits(res);
    }
    const wrong = await t.req('PUT', `/v0/persons/${personId}`, {}, { key: readKey });
    expectProblem(wrong, 405, 'method_not_allowed');
    limits(wrong);
    assert.ok(String(wrong.headers.allow).includes('GET'), `Allow: ${String(wrong.headers.allow)}`);
    expectProblem(await t.req('PUT', `/v0/persons/${personId}`, { name: 'x' }, { key: readKey }), 405, 'method_not_allowed');
    expectProblem(await t.req('DELETE', '/v0/persons', undefined, { key: readKey }), 405, 'method_not_allowed');
  });
});

// ---------------------------------------------------------------------------------------------
// Expiry, CLI
// ---------------------------------------------------------------------------------------------

describe('API key expiry', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp();
  });
  after(async () => {
    await t?.close();
  });

  test('a key works until its expiresAt, then gets 401 (no RateLimit headers)', T(20), async () => {
    const expiresAt = new Date(Date.now() + 2000).toISOString();
    const { apiKey, body } = await newKey(t, { expiresAt });
    assert.equal(body.expiresAt, expiresAt);
    const ok = await t.req('GET', '/v0/persons', undefined, { key: apiKey });
    assert.equal(ok.status, 200, ok.text);
    await sleep(Date.parse(expiresAt) - Date.now() + 100);
    for (const [method, url, payload] of [
      ['GET', '/v0/persons', undefined],
      ['POST', '/v0/persons', { name: 'Too Late' }],
    ] as const) {
      const res = await t.req(method, url, payload, { key: apiKey });
      expectProblem(res, 401, 'unauthorized');
      assertNoLimitHeaders(res);
    }
  });

  test('expiresAt is normalised to UTC with milliseconds; a past or malformed one is 400 at /expiresAt', T(20), async () => {
    const year = new Date().getUTCFullYear() + 1;
    const { body } = await newKey(t, { expiresAt: `${year}-06-01T12:00:00+02:00` });
    assert.equal(body.expiresAt, `${year}-06-01T10:00:00.000Z`);
    assert.match(body.expiresAt, ISO_MS);
    for (const expiresAt of [
      new Date(Date.now() - 60_000).toISOString(),
      '2020-01-01T00:00:00.000Z',
      'tomorrow',
      '2099-13-01T00:00:00Z',
      12345,
    ]) {
      expectProblem(await createKey(t, { expiresAt }), 400, 'validation_failed', ['/expiresAt']);
    }
  });

  // Eight CLI processes, each starting tsx and the admin area: seconds each on a loaded machine.
  test('the CLI `keys create` sets scopes, expiry and rate, and the key behaves so on the server', T(180), async () => {
    const database = t.app.config.database;
    const DATABASE_URL = database.kind === 'sqlite' ? database.path : database.url;
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const cli = (args: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
          cwd: ROOT,
          env: { ...process.env, DATABASE_URL, LOG_LEVEL: 'warn' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });

    const made = await cli(['keys', 'create', t.tenantId, '--scopes', 'read', '--expires-at', expiresAt, '--rate', '3']);
    assert.equal(made.code, 0, made.stderr);
    const key = JSON.parse(made.stdout) as Json;
    assert.deepEqual(Object.keys(key).sort(), ['apiKey', 'apiKeyId', 'expiresAt', 'rateLimitBurst', 'rateLimitPerSecond', 'scopes']);
    assert.deepEqual(key.scopes, ['read']);
    assert.equal(key.expiresAt, expiresAt);
    assert.equal(key.rateLimitPerSecond, 3);
    assert.equal(key.rateLimitBurst, 6);
    const read = await t.req('GET', '/v0/persons', undefined, { key: key.apiKey });
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(limits(read), { limit: 6, remaining: 5, reset: 1 });
    expectProblem(await t.req('POST', '/v0/persons', { name: 'CLI Read Key' }, { key: key.apiKey }), 403, 'forbidden');

    const burst = await cli(['keys', 'create', t.tenantId, '--rate', '3', '--burst', '5']);
    assert.equal(burst.code, 0, burst.stderr);
    const second = JSON.parse(burst.stdout) as Json;
    assert.deepEqual(second.scopes, ['read', 'write']);
    assert.equal(second.expiresAt, null);
    assert.equal(second.rateLimitBurst, 5);
    assert.equal(limits(await t.req('GET', '/v0/persons', undefined, { key: second.apiKey })).limit, 5);

    for (const args of [
      ['--expires-at', '2020-01-01T00:00:00.000Z'],
      ['--scopes', 'write'],
      ['--scopes', 'admin'],
      ['--rate', 'fast'],
    ]) {
      const refused = await cli(['keys', 'create', t.tenantId, ...args]);
      assert.ok(refused.code !== 0 && refused.code !== null, `${args.join(' ')}: exit ${refused.code}`);
      assert.equal(refused.stdout, '', `${args.join(' ')}: nothing on stdout`);
    }

    const listed = await cli(['keys', 'list', t.tenantId]);
    assert.equal(listed.code, 0, listed.stderr);
    const items = (JSON.parse(listed.stdout) as Json).items as Json[];
    const shown = items.find((k) => k.apiKeyId === key.apiKeyId);
    assert.deepEqual([shown?.scopes, shown?.expiresAt, shown?.rateLimitPerSecond], [['read'], expiresAt, 3]);
    assert.ok(!listed.stdout.includes(key.apiKey), 'the plain key is never listed');
  });
});

// ---------------------------------------------------------------------------------------------
// lastUsedAt
// ---------------------------------------------------------------------------------------------

describe('lastUsedAt', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp();
  });
  after(async () => {
    await t?.close();
  });

  const lastUsed = async (apiKeyId: string) =>
    (await t.app.db.selectFrom('api_keys').select('last_used_at').where('id', '=', apiKeyId).executeTakeFirstOrThrow()).last_used_at;

  test('is recorded after a request, and not rewritten by another request within the minute', T(20), async () => {
    const { apiKey, apiKeyId } = await newKey(t);
    assert.equal(await lastUsed(apiKeyId), null);
    const from = Date.now();
    assert.equal((await t.req('GET', '/v0/persons', undefined, { key: apiKey })).status, 200);
    let first: string | null = null;
    for (let i = 0; i < 40 && first === null; i++) {
      first = await lastUsed(apiKeyId);
      if (first === null) await sleep(50);
    }
    assert.ok(first !== null, 'last_used_at was set within 2 s');
    assert.match(first, ISO_MS);
    assert.ok(Date.parse(first) >= from - 5 && Date.parse(first) <= Date.now(), `${first} lies in the request's time`);

    await sleep(20);
    assert.equal((await t.req('POST', '/v0/persons', { name: 'Second Use' }, { key: apiKey })).status, 201);
    assert.equal((await t.req('GET', '/v0/persons', undefined, { key: apiKey })).status, 200);
    await sleep(300);
    assert.equal(await lastUsed(apiKeyId), first);
  });

  test("the admin API lists a tenant's keys with lastUsedAt, never the key itself", T(20), async () => {
    const { apiKey, apiKeyId } = await newKey(t, { scopes: ['read'], rateLimitPerSecond: 7 });
    const list = async () => {
      const res = await t.req('GET', `/admin/tenants/${t.tenantId}/api_keys`, undefined, { key: null, headers: adminHeaders });
      assert.equal(res.status, 200, res.text);
      return res;
    };
    const before = (await list()).body.items.find((k: Json) => k.apiKeyId === apiKeyId);
    assert.deepEqual(
      { ...before, createdAt: undefined },
      {
        apiKeyId,
        keyPrefix: apiKey.slice(0, 8),
        scopes: ['read'],
        expiresAt: null,
        rateLimitPerSecond: 7,
        rateLimitBurst: 14,
        createdAt: undefined,
        revokedAt: null,
        lastUsedAt: null,
      },
    );
    assert.match(before.createdAt, ISO_MS);
    assert.equal((await t.req('GET', '/v0/persons', undefined, { key: apiKey })).status, 200);
    let used: Json | undefined;
    for (let i = 0; i < 40 && !used?.lastUsedAt; i++) {
      if (i > 0) await sleep(50);
      used = (await list()).body.items.find((k: Json) => k.apiKeyId === apiKeyId);
    }
    assert.match(String(used?.lastUsedAt), ISO_MS);
    const res = await list();
    assert.ok(!res.text.includes(apiKey), 'the plain key never appears');
    assert.equal(res.body.totalCount, res.body.items.length);

    expectProblem(
      await t.req('GET', '/admin/tenants/tenant_01jd0000000000000000000000/api_keys', undefined, { key: null, headers: adminHeaders }),
      404,
      'not_found',
    );
    expectProblem(await t.req('GET', `/admin/tenants/${t.tenantId}/api_keys`, undefined, { key: null }), 401, 'unauthorized');
    expectProblem(
      await t.req('GET', `/admin/tenants/${t.tenantId}/api_keys?limit=0`, undefined, { key: null, headers: adminHeaders }),
      400,
      'validation_failed',
      ['/limit'],
    );
  });

  test('a refused request (401 for an unknown key) records nothing on other keys', T(20), async () => {
    const { apiKeyId } = await newKey(t);
    expectProblem(
      await t.req('GET', '/v0/persons', undefined, { key: 'pak_unknownunknownunknownunknownunknownunknown1' }),
      401,
      'unauthorized',
    );
    await sleep(200);
    assert.equal(await lastUsed(apiKeyId), null);
  });
});

// ---------------------------------------------------------------------------------------------
// JSON limits
// ---------------------------------------------------------------------------------------------

/** `levels` nested objects: {"a":{"a":...{}}}. */
const nestedObjects = (levels: number): string => `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
const logBody = (payload: string) => `{"source":"crm","type":"deep","payload":${payload}}`;

describe('JSON body limits', () => {
  let t: TestApp;
  let personId: string;
  before(async () => {
    t = await startApp();
    personId = await createPerson(t, 'Deep Person');
  });
  after(async () => {
    await t?.close();
  });

  test('a body nested 64 levels deep is accepted (201)', T(20), async () => {
    const payload = nestedObjects(63); // the body's own object is level 1
    const res = await t.req('POST', `/v0/persons/${personId}/logs`, logBody(payload));
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.body.payload, JSON.parse(payload));
    const mixed = `{"a":${'['.repeat(31)}${nestedObjects(31)}${']'.repeat(31)}}`; // 1 + 1 + 31 + 31 = 64
    assert.equal((await t.req('POST', `/v0/persons/${personId}/logs`, logBody(mixed))).status, 201);
  });

  test('65 levels or more is 400 before any work: nothing is created, and an unknown person is 400 too', T(20), async () => {
    const before = await countPersonLogs(t, personId);
    for (const payload of [
      nestedObjects(64),
      `{"a":${'['.repeat(63)}${']'.repeat(63)}}`,
      `{"a":${'['.repeat(200_000)}${']'.repeat(200_000)}}`,
      `{"a":${'['.repeat(200_000)}`, // deep and broken
    ]) {
      const res = await t.req('POST', `/v0/persons/${personId}/logs`, logBody(payload));
      expectProblem(res, 400, 'validation_failed');
    }
    expectProblem(await t.req('POST', `/v0/persons/${UNKNOWN_PERSON}/logs`, logBody(nestedObjects(64))), 400, 'validation_failed');
    expectProblem(await t.req('PATCH', `/v0/persons/${personId}`, `{"name":"x","extra":${nestedObjects(64)}}`), 400, 'validation_failed');
    assert.equal(await countPersonLogs(t, personId), before);
  });

  test('brackets inside strings do not count as nesting', T(20), async () => {
    const text = `${'['.repeat(100)}${'{'.repeat(100)}"\\`;
    const res = await t.req('POST', `/v0/persons/${personId}/logs`, {
      source: 'crm',
      type: 'brackets',
      payload: { s: text, t: `"${'['.repeat(100)}` },
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.payload.s, text);
  });

  test('an array of 10,000 items is accepted; 10,001 is 400 naming the array, and nothing is created', T(20), async () => {
    const ok = await t.req('POST', `/v0/persons/${personId}/logs`, {
      source: 'crm',
      type: 'array',
      payload: { items: new Array(10_000).fill(0) },
    });
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.body.payload.items.length, 10_000);

    const before = await countPersonLogs(t, personId);
    const over = await t.req('POST', `/v0/persons/${personId}/logs`, {
      source: 'crm',
      type: 'array',
      payload: { items: new Array(10_001).fill(0) },
    });
    expectProblem(over, 400, 'validation_failed', ['/payload/items']);
    const deeper = await t.req('POST', `/v0/persons/${personId}/logs`, {
      source: 'crm',
      type: 'array',
      payload: { a: [1, { b: new Array(10_001).fill(0) }] },
    });
    expectProblem(deeper, 400, 'validation_failed', ['/payload/a/1/b']);
    expectProblem(
      await t.req('POST', `/v0/persons/${UNKNOWN_PERSON}/logs`, {
        source: 'crm',
        type: 'array',
        payload: { items: new Array(10_001).fill(0) },
      }),
      400,
      'validation_failed',
      ['/payload/items'],
    );
    expectProblem(await t.req('POST', '/v0/persons', JSON.stringify(new Array(10_001).fill(0))), 400, 'validation_failed', ['']);
    assert.equal(await countPersonLogs(t, personId), before);
  });
});

// ---------------------------------------------------------------------------------------------
// Server timeouts over a real socket
// ---------------------------------------------------------------------------------------------

describe('server timeouts (real socket)', () => {
  let database: TestDatabase;
  let server: ServerProcess;
  let port: number;
  before(async () => {
    database = await freshDatabase();
    server = await startServer({ DATABASE_URL: database.url, BOOTSTRAP_API_KEY: `limits-timeouts-${randomBytes(12).toString('hex')}` });
    port = Number(new URL(server.url).port);
  });
  after(async () => {
    await server?.kill();
    await database?.drop();
  });

  /** Resolves with the ms from now until the server closes `socket`, or `undefined` if still open at `deadlineMs`. */
  const closedWithin = (socket: net.Socket, deadlineMs: number, started = Date.now()) =>
    new Promise<number | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), deadlineMs - (Date.now() - started));
      socket.once('close', () => {
        clearTimeout(timer);
        resolve(Date.now() - started);
      });
    });

  test('a client trickling its request headers one byte a second is cut off within ~12 s', T(25), async () => {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => {});
    socket.on('data', () => {});
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    const started = Date.now();
    const text = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ${'a'.repeat(100)}`;
    let i = 0;
    const trickle = setInterval(() => {
      if (!socket.destroyed && socket.writable) socket.write(text[i++ % text.length]!);
    }, 1000);
    try {
      const closedAfter = await closedWithin(socket, 12_500, started);
      assert.ok(
        closedAfter !== undefined,
        'the connection was still open 12.5 s after it started sending headers (headersTimeout is 10 s)',
      );
      assert.ok(closedAfter >= 9_000, `not cut off before the 10 s allowance: ${closedAfter} ms`);
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
  });

  test('an idle keep-alive connection is closed after ~5 s; one reused sooner still works', T(25), async () => {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => {});
    let received = '';
    let onResponse: (() => void) | undefined;
    socket.on('data', (d: Buffer) => {
      received += d.toString();
      if (/\r\n\r\n\{"status":"ok"\}$/.test(received)) onResponse?.();
    });
    const get = () =>
      new Promise<void>((resolve) => {
        received = '';
        onResponse = resolve;
        socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n');
      });
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    try {
      await get();
      assert.match(received, /^HTTP\/1\.1 200 /);
      await sleep(2_000);
      assert.equal(socket.destroyed, false, 'still open after 2 s idle');
      await get(); // the same connection, reused within the keep-alive window
      assert.match(received, /^HTTP\/1\.1 200 /);
      const idleFrom = Date.now();
      const closedAfter = await closedWithin(socket, 8_000, idleFrom);
      assert.ok(closedAfter !== undefined, 'an idle keep-alive connection was still open after 8 s');
      assert.ok(closedAfter >= 4_500 && closedAfter <= 7_000, `closed after ${closedAfter} ms idle, expected ~5 s`);
    } finally {
      socket.destroy();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Security headers, CORS
// ---------------------------------------------------------------------------------------------

describe('security headers', () => {
  let t: TestApp;
  let personId: string;
  before(async () => {
    t = await startApp();
    personId = await createPerson(t, 'Header Person');
  });
  after(async () => {
    await t?.close();
  });

  test('X-Content-Type-Options: nosniff on every response; Cache-Control: no-store on /v0 responses', T(20), async () => {
    const v0: [string, Res][] = [
      ['200', await t.req('GET', `/v0/persons/${personId}`)],
      ['201', await t.req('POST', '/v0/persons', { name: 'Another Header Person' })],
      ['400', await t.req('GET', '/v0/persons?limit=0')],
      ['401', await t.req('GET', '/v0/persons', undefined, { key: null })],
      ['404', await t.req('GET', `/v0/persons/${UNKNOWN_PERSON}`)],
      ['404 route', await t.req('GET', '/v0/nothing-here')],
      ['405', await t.req('PUT', `/v0/persons/${personId}`, {})],
      ['415', await t.req('POST', '/v0/persons', 'x', { headers: { 'content-type': 'text/plain' } })],
    ];
    for (const [label, res] of v0) {
      assert.equal(res.headers['x-content-type-options'], 'nosniff', label);
      assert.equal(res.headers['cache-control'], 'no-store', label);
    }
    for (const url of ['/healthz', '/openapi.json', '/docs', '/docs/']) {
      const res = await t.req('GET', url, undefined, { key: null });
      assert.equal(res.status, 200, url);
      assert.equal(res.headers['x-content-type-options'], 'nosniff', url);
    }
    const admin = await t.req('GET', '/admin/tenants', undefined, { key: null, headers: adminHeaders });
    assert.equal(admin.headers['x-content-type-options'], 'nosniff');
    assert.equal(admin.headers['cache-control'], 'no-store');
  });

  test('the docs page has a strict Content-Security-Policy', T(20), async () => {
    for (const url of ['/docs', '/docs/']) {
      const res = await t.req('GET', url, undefined, { key: null });
      assert.equal(res.status, 200);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      const csp = String(res.headers['content-security-policy'] ?? '');
      assert.ok(csp.length > 0, `${url}: no Content-Security-Policy`);
      const directives = new Map(
        csp
          .split(';')
          .map((d) => d.trim())
          .filter(Boolean)
          .map((d) => {
            const [name, ...values] = d.split(/\s+/);
            return [name!, values] as const;
          }),
      );
      assert.deepEqual(directives.get('default-src'), ["'self'"], csp);
      assert.deepEqual(directives.get('object-src'), ["'none'"], csp);
      assert.ok(directives.get('script-src')?.includes("'self'"), csp);
      assert.ok(directives.has('frame-ancestors'), csp);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/, csp);
    }
  });

  test('CORS is off by default: no Access-Control-Allow-Origin, not even on a preflight', T(20), async () => {
    const origin = 'https://app.example.com';
    const simple = await t.req('GET', '/v0/persons', undefined, { headers: { origin } });
    assert.equal(simple.status, 200);
    const preflight = await t.req('OPTIONS', '/v0/persons', undefined, {
      key: null,
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key,content-type' },
    });
    for (const res of [simple, preflight]) {
      assert.equal(res.headers['access-control-allow-origin'], undefined);
      assert.equal(res.headers['access-control-allow-methods'], undefined);
      assert.equal(res.headers['access-control-allow-credentials'], undefined);
    }
  });
});

describe('CORS with CORS_ORIGINS=https://app.example.com', () => {
  const ALLOWED = 'https://app.example.com';
  const OTHER = 'https://evil.example.com';
  let t: TestApp;
  let personId: string;
  before(async () => {
    t = await startApp({ CORS_ORIGINS: ALLOWED });
    personId = await createPerson(t, 'Cors Person');
  });
  after(async () => {
    await t?.close();
  });

  const preflight = (origin: string, method: string, url = '/v0/persons') =>
    t.req('OPTIONS', url, undefined, {
      key: null,
      headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'x-api-key,content-type' },
    });

  test(
    'the allowed origin gets Access-Control-Allow-Origin on responses (errors included) and can read the RateLimit headers',
    T(20),
    async () => {
      const ok = await t.req('GET', '/v0/persons', undefined, { headers: { origin: ALLOWED } });
      assert.equal(ok.status, 200);
      assert.equal(ok.headers['access-control-allow-origin'], ALLOWED);
      assert.match(String(ok.headers.vary), /\bOrigin\b/i);
      const exposed = String(ok.headers['access-control-expose-headers'])
        .split(',')
        .map((h) => h.trim().toLowerCase());
      for (const h of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after', 'x-request-id'])
        assert.ok(exposed.includes(h), `exposes ${h}: ${exposed.join(', ')}`);

      const unauthorized = await t.req('GET', '/v0/persons', undefined, { key: null, headers: { origin: ALLOWED } });
      expectProblem(unauthorized, 401, 'unauthorized');
      assert.equal(unauthorized.headers['access-control-allow-origin'], ALLOWED, 'a browser can read the 401');
    },
  );

  test('a preflight from the allowed origin is answered for every method the API uses', T(20), async () => {
    for (const [method, url] of [
      ['POST', '/v0/persons'],
      ['PATCH', `/v0/persons/${personId}`],
      ['DELETE', `/v0/pages/${UNKNOWN_PAGE}`],
      ['GET', '/v0/persons'],
    ] as const) {
      const res = await preflight(ALLOWED, method, url);
      assert.equal(res.status, 204, `${method} ${url}: ${res.status} ${res.text}`);
      assert.equal(res.headers['access-control-allow-origin'], ALLOWED, `${method} ${url}`);
      const methods = String(res.headers['access-control-allow-methods'])
        .split(',')
        .map((m) => m.trim().toUpperCase());
      assert.ok(methods.includes(method), `preflight for ${method} ${url} allows only ${methods.join(', ')}`);
      const headers = String(res.headers['access-control-allow-headers'])
        .split(',')
        .map((h) => h.trim().toLowerCase());
      assert.ok(headers.includes('x-api-key') && headers.includes('content-type'), `allowed headers: ${headers.join(', ')}`);
    }
  });

  test('another origin gets no Access-Control-Allow-Origin, on requests or preflights', T(20), async () => {
    const res = await t.req('GET', '/v0/persons', undefined, { headers: { origin: OTHER } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    const pre = await preflight(OTHER, 'POST');
    assert.equal(pre.headers['access-control-allow-origin'], undefined);
    // Not a prefix or suffix match either.
    for (const origin of ['https://app.example.com.evil.com', 'http://app.example.com', 'https://evilapp.example.com']) {
      assert.equal(
        (await t.req('GET', '/v0/persons', undefined, { headers: { origin } })).headers['access-control-allow-origin'],
        undefined,
        origin,
      );
    }
  });

  test('with CORS on, an unknown route is still 404 and a wrong method still 405', T(20), async () => {
    expectProblem(await t.req('GET', '/v0/nothing-here', undefined, { headers: { origin: ALLOWED } }), 404, 'not_found');
    expectProblem(await t.req('GET', '/nothing-at-all'), 404, 'not_found');
    const wrong = await t.req('PUT', `/v0/persons/${personId}`, {});
    expectProblem(wrong, 405, 'method_not_allowed');
  });
});
