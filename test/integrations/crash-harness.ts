import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, type TestContext } from 'node:test';
import { freshDatabase, onPostgres, type Json, type TestDatabase } from '../helpers.js';
import { callServer, startServer, type ServerProcess, waitFor } from '../server-process.js';

// The kill -9 harness of a CRM sync (issues 40 and 45): real server processes sync from a test
// server of the provider that holds each read of deals a while; the first process is killed with
// SIGKILL while a read is held, then the service starts again (on PostgreSQL, two instances of it)
// and must resume from its cursor, one instance at a time. crash.test.ts (HubSpot) and
// salesforce-crash.test.ts are its two providers: each says how its API is answered and what its
// cursor reads after the restart; the rest is here.

/** Each read of deals is answered this late: the kill lands while one is held. */
const HOLD_MS = 600;
/** Reads answered before the kill; the next one is in flight when it comes. */
export const READS_BEFORE_KILL = 3;
/** Longer than a sync's lease (src/integrations/hold.ts) and shorter than a CRM call's timeout. */
const LONG_HOLD_MS = 17_000;

/** One read of deals the fake answered (or held): the external ids it returns. */
export interface Read {
  ids: string[];
  answered: boolean;
}

/** A request the fake read in full. */
export interface Request {
  method: string;
  url: URL;
  /** `METHOD /path`. */
  key: string;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** What the provider makes of a request: answered at once, or a read of deals, answered after the hold. */
export type Handled<R extends Read> = { now: { status: number; body: unknown } } | { read: R; status?: number; body: unknown };

export interface Provider<R extends Read> {
  /** The integration's provider, also its deals' source. */
  source: 'hubspot' | 'salesforce';
  /** The provider's name, and what a read of its deals is called ("page", "batch") and several. */
  name: string;
  read: string;
  reads: string;
  /** Every deal the fake holds, by external id. */
  ids: readonly string[];
  key: string;
  /** The server's environment that sends the sync to the fake at `url`. */
  env: (url: string) => Record<string, string>;
  /** POST /v0/integrations's body. */
  integration: (url: string) => Json;
  /** Answers one request; `unexpected` takes what the sync should never have sent. */
  handle: (request: Request, unexpected: string[]) => Handled<R>;
}

export interface FakeServer<R extends Read> {
  url: string;
  reads: R[];
  /** Requests read in full and not answered yet. */
  open(): number;
  /** Requests that arrived while another was open: two runs at once. */
  overlaps: string[];
  unexpected: string[];
  /** The next read is held this long instead (once). */
  holdNext: number | undefined;
  close(): Promise<void>;
}

async function fakeServer<R extends Read>(provider: Provider<R>): Promise<FakeServer<R>> {
  const reads: R[] = [];
  const overlaps: string[] = [];
  const unexpected: string[] = [];
  let open = 0;
  let holdNext: number | undefined;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://crm.test');
      const key = `${req.method} ${url.pathname}`;
      if (open > 0) overlaps.push(`${req.method} ${req.url} while ${open} open`);
      open++;
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        open--;
      };
      res.on('close', finish);
      const answer = (status: number, body: unknown) => {
        finish();
        if (!res.destroyed) res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      };
      const request = { method: req.method ?? 'GET', url, key, headers: req.headers, text: Buffer.concat(chunks).toString() };
      const handled = provider.handle(request, unexpected);
      if ('now' in handled) return answer(handled.now.status, handled.now.body);
      reads.push(handled.read);
      const hold = holdNext ?? HOLD_MS;
      holdNext = undefined;
      setTimeout(() => {
        handled.read.answered = !res.destroyed;
        answer(handled.status ?? 200, handled.body);
      }, hold).unref();
    });
    req.on('error', () => {});
    res.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    reads,
    open: () => open,
    overlaps,
    unexpected,
    get holdNext() {
      return holdNext;
    },
    set holdNext(ms) {
      holdNext = ms;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What the provider's test checks of the reads: before the kill (answered ones), and after the restart. */
export interface CursorChecks<R extends Read> {
  resumed: (answered: R[], resumed: R[]) => void;
}

/**
 * Kills a sync mid-read and starts the service again: checks what every provider must do (one run
 * at a time, nothing cut off, every deal read, created once and counted once), and hands the reads
 * before and after to `checks` for what the provider's cursor reads again.
 */
export function crashTest<R extends Read>(provider: Provider<R>, checks: CursorChecks<R>) {
  let database: TestDatabase | undefined;
  let crm: FakeServer<R> | undefined;
  const servers: ServerProcess[] = [];
  after(async () => {
    await Promise.all(servers.map((s) => s.kill('SIGKILL')));
    await crm?.close();
    await database?.drop();
  });
  const call = (server: ServerProcess, method: string, path: string, body?: unknown) =>
    callServer(server, provider.key, method, path, body);

  /** Every item of a keyset-paginated list. */
  async function all(server: ServerProcess, path: string): Promise<Json[]> {
    const items: Json[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await call(server, 'GET', `${path}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(page.status, 200, JSON.stringify(page.body));
      items.push(...page.body.items);
      if (!page.body.hasMore) return items;
      cursor = page.body.nextCursor;
    }
  }

  return async (t: TestContext) => {
    database = await freshDatabase();
    crm = await fakeServer(provider);
    const fake = crm;
    const env = { DATABASE_URL: database.url, BOOTSTRAP_API_KEY: provider.key, CRM_SYNC_SECONDS: '3600', DATABASE_POOL_SIZE: '5' };
    Object.assign(env, provider.env(fake.url));
    const a = await startServer(env);
    servers.push(a);
    const created = await call(a, 'POST', '/v0/integrations', provider.integration(fake.url));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const integrationId = created.body.integrationId as string;

    // The kill: reads answered, and the next one asked for and held.
    await waitFor(`${READS_BEFORE_KILL} ${provider.reads} answered and the next in flight`, 30_000, () => {
      const answered = fake.reads.filter((s) => s.answered).length;
      return answered >= READS_BEFORE_KILL && fake.reads.length > answered && fake.open() > 0;
    });
    assert.equal(await a.kill('SIGKILL'), 'SIGKILL');
    const before = fake.reads.splice(0);
    const answered = before.filter((s) => s.answered);
    assert.equal(answered.length, READS_BEFORE_KILL, `the kill came while a ${provider.read} was in flight`);
    assert.ok(!before[before.length - 1]?.answered, `the last ${provider.read} asked for was never answered`);
    const fetchedBefore = new Set(answered.flatMap((s) => s.ids));
    t.diagnostic(`killed with ${answered.length} ${provider.reads} answered (${fetchedBefore.size} deals), one in flight`);

    // Two instances: the resumed run's first read is held past the lease (15 s), which only its
    // renewals keep from the other instance while it waits.
    if (onPostgres) fake.holdNext = LONG_HOLD_MS;
    // Each started server is kept for the kill at the end, even when the other's start fails.
    const starts = await Promise.allSettled((onPostgres ? [env, env] : [env]).map((e) => startServer(e)));
    for (const s of starts) if (s.status === 'fulfilled') servers.push(s.value);
    for (const s of starts) if (s.status === 'rejected') throw s.reason;
    const b = servers[servers.length - starts.length] as ServerProcess;
    let integration: Json;
    await waitFor(
      'the sync to finish after the restart',
      80_000,
      async () => {
        integration = (await call(b, 'GET', `/v0/integrations/${integrationId}`)).body;
        return integration?.lastSyncAt !== null || integration?.lastError !== null;
      },
      () => JSON.stringify(integration),
    );
    assert.equal(integration.lastError, null, JSON.stringify(integration));
    // Time for a second run, in either instance, to show itself if there were one.
    await new Promise((r) => setTimeout(r, 3000));

    assert.deepEqual(fake.unexpected, []);
    assert.deepEqual(fake.overlaps, [], `two runs called ${provider.name} at once`);
    const resumed = fake.reads;
    assert.ok(resumed.length > 0);
    checks.resumed(answered, resumed);
    assert.ok(
      resumed.every((s) => s.answered),
      `no ${provider.read} of the restarted service was cut off`,
    );
    const fetchedAfter = resumed.flatMap((s) => s.ids);
    assert.equal(new Set([...fetchedBefore, ...fetchedAfter]).size, provider.ids.length, 'every deal read');

    // Every deal once in the service, created once, never changed by being read again.
    const listed = await all(b, `/v0/deals?source=${provider.source}`);
    assert.equal(listed.length, provider.ids.length);
    assert.deepEqual(new Set(listed.map((d) => d.externalId)), new Set(provider.ids));
    const createdEvents = await all(b, '/v0/events?type=deal.created');
    assert.equal(createdEvents.length, provider.ids.length);
    assert.equal(new Set(createdEvents.map((e) => e.payload.data.externalId)).size, provider.ids.length);
    assert.equal((await all(b, '/v0/events?type=deal.updated')).length, 0);
    const counted = (await call(b, 'GET', `/v0/integrations/${integrationId}`)).body;
    assert.equal(counted.counts.dealsSynced, provider.ids.length, 'each deal counted once');
  };
}
