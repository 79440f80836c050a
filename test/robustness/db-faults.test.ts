import assert from 'node:assert/strict';
import { after, describe, test, type TestContext } from 'node:test';
import { freshDatabase, onPostgres, type Json, type TestDatabase } from '../helpers.js';
import { startServer, type ServerProcess } from '../server-process.js';
import { call, show, sleep, walk, type Answer } from './api.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

// Database faults (issue 8), PostgreSQL only: a TCP proxy sits between a real server process and
// PostgreSQL, so the database can be cut off from the service (connections reset and refused) or
// made unreachable (packets dropped) and brought back, without stopping the PostgreSQL server that
// other test files share. While the database is gone, every /v0 request is answered 503 `unavailable`
// with Retry-After, soon (2.5 s to open a connection, 2.5 s for a query, and once the database stops
// answering, requests waiting for a connection are refused at once), never 500 and never a hang;
// /healthz is 503; once it is back, the same process serves again by itself.

const KEY = 'robustness-db-faults-bootstrap-key-0123456789';
/** A connection attempt and a query that each time out (2.5 s, src/db/connection.ts), plus a second of slack. */
const UNAVAILABLE_WITHIN_MS = 6000;
/** Requests still unanswered after this long count as hung (well past the bound, to report them as such). */
const HANG_MS = 15_000;
/** Back to serving within this long after the database returns. */
const RECOVERY_MS = 5000;

interface Setup {
  server: ServerProcess;
  proxy: TcpProxy;
  database: TestDatabase;
}

const cleanups: (() => Promise<void>)[] = [];

/** A fresh schema, a proxy in front of PostgreSQL, and a server process connected through the proxy. */
async function setup(): Promise<Setup> {
  const database = await freshDatabase();
  cleanups.push(() => database.drop());
  const real = new URL(database.url);
  const proxy = await startTcpProxy(real.hostname, Number(real.port || 5432));
  cleanups.push(() => proxy.close());
  const proxied = new URL(database.url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(proxy.port);
  const server = await startServer({ DATABASE_URL: proxied.toString(), BOOTSTRAP_API_KEY: KEY, DATABASE_POOL_SIZE: '5' });
  // Killed first (cleanups run last-in first-out), while its database still exists.
  cleanups.push(async () => void (await server.kill('SIGKILL')));
  return { server, proxy, database };
}

/** Numbers the requests, so every create is new (no domain or idempotency key is used twice). */
let seq = 0;

/** The requests of every kind sent while the database is away: reads, creates, updates, searches, lists. */
function mixedRequests(base: string, personId: string, n: number): (() => Promise<Answer>)[] {
  const kinds: ((i: number) => Promise<Answer>)[] = [
    () => call(base, KEY, 'GET', `/v0/persons/${personId}`, undefined, { timeoutMs: HANG_MS }),
    (i) => call(base, KEY, 'POST', '/v0/persons', { name: `During fault ${i}`, domain: `fault${i}.example.com` }, { timeoutMs: HANG_MS }),
    (i) => call(base, KEY, 'PATCH', `/v0/persons/${personId}`, { name: `Patched during fault ${i}` }, { timeoutMs: HANG_MS }),
    () => call(base, KEY, 'GET', '/v0/persons', undefined, { timeoutMs: HANG_MS }),
    () => call(base, KEY, 'GET', '/v0/accounts/search?query=fault', undefined, { timeoutMs: HANG_MS }),
    (i) => call(base, KEY, 'POST', '/v0/accounts', { name: `Fault ${i}`, domain: `fault${i}.example.org` }, { timeoutMs: HANG_MS }),
    (i) =>
      call(
        base,
        KEY,
        'POST',
        `/v0/persons/${personId}/logs`,
        { source: 'faults', type: 'note', payload: { i }, idempotencyKey: `fault-${i}` },
        { timeoutMs: HANG_MS },
      ),
    () => call(base, KEY, 'GET', '/v0/pages', undefined, { timeoutMs: HANG_MS }),
  ];
  return Array.from({ length: n }, (_, i) => () => kinds[i % kinds.length]!(seq++));
}

/** What an answer was: its status and code, or how it failed to be one. */
async function outcome(send: () => Promise<Answer>): Promise<{ res?: Answer; failure?: string; ms: number }> {
  const started = performance.now();
  try {
    return { res: await send(), ms: performance.now() - started };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    const ms = performance.now() - started;
    return {
      failure: e.name === 'TimeoutError' ? `no answer after ${Math.round(ms)} ms (hung)` : `socket error: ${e.cause?.code ?? e.message}`,
      ms,
    };
  }
}

/** 503 problem+json `unavailable` with Retry-After, soon. */
function problemIfNotUnavailable(o: { res?: Answer; failure?: string; ms: number }, what: string): string | undefined {
  if (!o.res) return `${what}: ${o.failure}`;
  const r = o.res;
  const ok =
    r.status === 503 &&
    String(r.headers.get('content-type')).startsWith('application/problem+json') &&
    r.body?.code === 'unavailable' &&
    r.body?.status === 503 &&
    typeof r.body?.requestId === 'string' &&
    r.headers.get('retry-after') === '5' &&
    o.ms < UNAVAILABLE_WITHIN_MS;
  return ok ? undefined : `${what}: ${show(r)} (retry-after ${r.headers.get('retry-after')}) after ${Math.round(o.ms)} ms`;
}

/** Every request answered 503 `unavailable` with Retry-After within the bound; /healthz 503 too. */
async function expectUnavailable(t: TestContext, server: ServerProcess, personId: string, label: string): Promise<void> {
  const base = server.url;
  const requests = mixedRequests(base, personId, 12); // more than the pool's 5 connections
  const health = () =>
    fetch(`${base}/healthz`, { signal: AbortSignal.timeout(HANG_MS) }).then(async (r) => ({
      status: r.status,
      headers: r.headers,
      text: await r.text(),
      body: undefined as Json,
      ms: 0,
    }));
  const [healthz, ...results] = await Promise.all([outcome(health), ...requests.map(outcome)]);
  expectAlive(server);
  const wrong = results.map((o, i) => problemIfNotUnavailable(o, `request ${i}`)).filter((w) => w !== undefined);
  assert.deepEqual(
    wrong,
    [],
    `${label}: every request must be answered 503 unavailable with Retry-After within ${UNAVAILABLE_WITHIN_MS} ms`,
  );
  assert.ok(healthz!.res, `${label}: /healthz: ${healthz!.failure}`);
  assert.equal(healthz!.res.status, 503, `${label}: /healthz answered ${show(healthz!.res)}`);
  assert.ok(healthz!.ms < UNAVAILABLE_WITHIN_MS, `${label}: /healthz took ${Math.round(healthz!.ms)} ms`);
  t.diagnostic(
    `${label}: ${results.length} requests answered 503 in ${Math.round(Math.min(...results.map((o) => o.ms)))}-${Math.round(Math.max(...results.map((o) => o.ms)))} ms; /healthz 503 in ${Math.round(healthz!.ms)} ms`,
  );
}

/** Polls until a read succeeds; every answer on the way is 200 or 503 unavailable. Returns the ms it took. */
async function expectRecovery(server: ServerProcess, personId: string): Promise<number> {
  const base = server.url;
  const started = performance.now();
  for (;;) {
    const o = await outcome(() => call(base, KEY, 'GET', `/v0/persons/${personId}`, undefined, { timeoutMs: HANG_MS }));
    if (o.res?.status === 200) return performance.now() - started;
    expectAlive(server);
    const wrong = problemIfNotUnavailable(o, 'while recovering');
    assert.equal(wrong, undefined);
    assert.ok(
      performance.now() - started < RECOVERY_MS,
      `not serving ${RECOVERY_MS} ms after the database returned: ${o.res ? show(o.res) : o.failure}`,
    );
    await sleep(100);
  }
}

/** The server process is still running (a database fault must not crash it). */
function expectAlive(server: ServerProcess): void {
  const gone = server.child.exitCode ?? server.child.signalCode;
  assert.equal(gone, null, `the server process exited (${gone}); its stderr ends with:\n${server.stderr().slice(-3000)}`);
}

/** The errors of the requests that failed with a 5xx, as the server logged them (for failure messages). */
function serverErrors(server: ServerProcess): string {
  const messages = new Map<string, number>();
  for (const line of server.stdout().split('\n')) {
    try {
      const entry = JSON.parse(line) as { msg?: string; err?: { type?: string; message?: string; code?: string } };
      if (entry.msg !== 'request failed') continue;
      const what = `${entry.err?.type}: ${entry.err?.message} (code ${entry.err?.code})`;
      messages.set(what, (messages.get(what) ?? 0) + 1);
    } catch {
      // not a log line
    }
  }
  return [...messages].map(([m, n]) => `${n} x ${m}`).join('; ') || 'nothing';
}

/** After recovery: every kind of request succeeds, many times over (no broken connection left in the pool). */
async function expectServing(base: string, personId: string): Promise<Json[]> {
  const created: Json[] = [];
  for (let round = 0; round < 4; round++) {
    const results = await Promise.all([
      call(base, KEY, 'GET', `/v0/persons/${personId}`),
      call(base, KEY, 'POST', '/v0/persons', { name: `After restore ${round}`, domain: `after${round}.example.com` }),
      call(base, KEY, 'GET', '/v0/persons'),
      call(base, KEY, 'GET', '/v0/accounts/search?query=after'),
      call(base, KEY, 'POST', '/v0/accounts', { name: `After ${round}`, domain: `after${round}.example.org` }),
      call(base, KEY, 'GET', '/v0/pages'),
      call(base, KEY, 'GET', `/v0/persons/${personId}`),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      [200, 201, 200, 200, 201, 200, 200],
      results.map(show).join('\n'),
    );
    created.push(results[1]!.body);
  }
  const health = await fetch(`${base}/healthz`);
  assert.equal(health.status, 200);
  assert.deepEqual(await health.json(), { status: 'ok' });
  return created;
}

async function seedPerson(base: string): Promise<Json> {
  const res = await call(base, KEY, 'POST', '/v0/persons', { name: 'Before the fault', domain: 'before.example.com' });
  assert.equal(res.status, 201, show(res));
  // Fill the pool with open connections (more concurrent requests than its size).
  const warm = await Promise.all(Array.from({ length: 12 }, () => call(base, KEY, 'GET', `/v0/persons/${res.body.personId}`)));
  assert.deepEqual(
    warm.map((r) => r.status),
    warm.map(() => 200),
  );
  return res.body;
}

/** Nothing answered 503 was written: the persons are the one before the fault, untouched, and those created after it. */
async function expectNothingWrittenDuringFault(base: string, before: Json, after: Json[]): Promise<void> {
  const listed = await walk(base, KEY, '/v0/persons');
  assert.deepEqual(listed.items.map((p) => p.personId).sort(), [before.personId, ...after.map((p) => p.personId)].sort());
  assert.deepEqual(listed.totalCounts, [1 + after.length]);
  assert.deepEqual((await call(base, KEY, 'GET', `/v0/persons/${before.personId}`)).body, before);
  const accounts = await walk(base, KEY, '/v0/accounts/search');
  assert.deepEqual(accounts.items.map((a) => a.name).sort(), ['After 0', 'After 1', 'After 2', 'After 3']);
}

describe('database faults: 503 unavailable while PostgreSQL is gone, recovery without a restart', {
  skip: !onPostgres && 'PostgreSQL only',
}, () => {
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  });

  test('connections reset and refused: 503 unavailable with Retry-After within 6 s, /healthz 503; restored: serving again, same process', {
    timeout: 60_000,
  }, async (t) => {
    const { server, proxy } = await setup();
    const base = server.url;
    const person = await seedPerson(base);
    assert.ok(proxy.open() > 0);

    await proxy.cut();
    await expectUnavailable(t, server, person.personId, 'just cut');
    await sleep(1000);
    await expectUnavailable(t, server, person.personId, 'still cut, 1 s later');
    const acceptedWhileDown = proxy.accepted();

    await proxy.restore();
    const recoveredMs = await expectRecovery(server, person.personId);
    t.diagnostic(`serving again ${Math.round(recoveredMs)} ms after the database returned`);
    const created = await expectServing(base, person.personId);
    // The same process, which reconnected on its own.
    assert.equal(server.child.exitCode, null);
    assert.equal(server.child.signalCode, null);
    assert.ok(proxy.accepted() > acceptedWhileDown);
    await expectNothingWrittenDuringFault(base, person, created);
  });

  test('in flight when the database goes away: every request is answered 2xx or 503 unavailable, never 500, never a hang', {
    timeout: 60_000,
  }, async (t) => {
    const { server, proxy } = await setup();
    const base = server.url;
    const person = await seedPerson(base);

    type Phase = 'up' | 'down' | 'restored';
    let phase: Phase = 'up';
    let running = true;
    const seen: { phase: Phase; status: number | string; ms: number; text: string; retryAfter: string | null }[] = [];
    const client = async (c: number) => {
      for (let i = 0; running; i++) {
        const send = mixedRequests(base, person.personId, 8)[(c + i) % 8]!;
        const at = phase;
        const o = await outcome(send);
        seen.push({
          phase: at,
          status: o.res?.status ?? o.failure!,
          ms: o.ms,
          text: o.res?.text.slice(0, 200) ?? '',
          retryAfter: o.res?.headers.get('retry-after') ?? null,
        });
        // Continuous traffic, not a busy loop: test files share the machine (and a dead server refuses at once).
        await sleep(o.res ? 5 : 100);
      }
    };
    const clients = Array.from({ length: 8 }, (_, c) => client(c));
    let recoveredMs: number;
    try {
      await sleep(1000);
      phase = 'down';
      await proxy.cut();
      await sleep(3000);
      await proxy.restore();
      phase = 'restored';
      recoveredMs = await expectRecovery(server, person.personId);
      await sleep(1000);
    } finally {
      running = false;
      await Promise.all(clients);
    }

    const count = (p: Phase, f: (s: (typeof seen)[number]) => boolean) => seen.filter((s) => s.phase === p && f(s)).length;
    t.diagnostic(
      `${seen.length} requests: up ${count('up', () => true)}, down ${count('down', () => true)} (${count('down', (s) => s.status === 503)} x 503), ` +
        `restored ${count('restored', () => true)} (${count('restored', (s) => s.status === 503)} x 503); serving again ${Math.round(recoveredMs)} ms after the return`,
    );
    const is2xx = (s: number | string) => typeof s === 'number' && s >= 200 && s < 300;
    const wrong = seen.filter(
      (s) =>
        !(is2xx(s.status) || (s.status === 503 && /"code":"unavailable"/.test(s.text) && s.retryAfter === '5')) ||
        s.ms >= UNAVAILABLE_WITHIN_MS,
    );
    assert.deepEqual(
      wrong.map((s) => `${s.phase}: ${s.status} after ${Math.round(s.ms)} ms ${s.text}`),
      [],
      `the server logged: ${serverErrors(server)}`,
    );
    assert.ok(count('up', (s) => is2xx(s.status)) > 0);
    assert.ok(count('down', (s) => s.status === 503) > 0, 'no request was refused while the database was down');
    assert.ok(count('restored', (s) => is2xx(s.status)) > 0);
    await expectServing(base, person.personId);
  });

  test('unreachable (packets dropped, nothing answers): 503 unavailable within 6 s, not a hang; reachable again: serving again', {
    timeout: 60_000,
  }, async (t) => {
    const { server, proxy } = await setup();
    const base = server.url;
    const person = await seedPerson(base);
    assert.ok(proxy.open() > 0);

    proxy.blackhole();
    try {
      await expectUnavailable(t, server, person.personId, 'unreachable');
    } finally {
      await proxy.restore();
    }
    const recoveredMs = await expectRecovery(server, person.personId);
    t.diagnostic(`serving again ${Math.round(recoveredMs)} ms after the database became reachable`);
    await expectServing(base, person.personId);
    assert.equal(server.child.exitCode, null);
  });
});
