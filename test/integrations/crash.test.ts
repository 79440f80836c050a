import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { freshDatabase, onPostgres, type Json, type TestDatabase } from '../helpers.js';
import { callServer, startServer, startsAndWork, type ServerProcess, waitFor } from '../server-process.js';
import { type HubDeal, searchDeals } from './fake-hubspot.js';
import type { Answer } from './helpers.js';

// Issue 40: the CRM sync is a lease-claimed job that survives kill -9 and resumes from its cursor,
// and runs in one instance at a time. Real server processes sync from a HubSpot test server that
// answers each deals search slowly, a page of 100 at a time; the first is killed with SIGKILL while
// it waits on a page, then the service starts again (on PostgreSQL, two instances of it).

const KEY = 'crm-crash-bootstrap-key-0123456789abcdef';
const call = (server: ServerProcess, method: string, path: string, body?: unknown) => callServer(server, KEY, method, path, body);
const TOKEN = 'pat-na1-11111111-crash-hubspot-token';
const DEALS = 700;
/** Each deals search is answered this late: the kill lands while one is held. */
const HOLD_MS = 600;
/** Pages answered before the kill; the next one is in flight when it comes. */
const PAGES_BEFORE_KILL = 3;
/** Longer than a sync's lease (src/integrations/hold.ts) and shorter than a CRM call's timeout. */
const LONG_HOLD_MS = 17_000;
const BASE = Date.parse('2026-10-01T00:00:00.000Z');

/** Three deals a second: pages end inside ties, which the sync reads by id (issue 45). */
const deals: HubDeal[] = Array.from({ length: DEALS }, (_, i) => ({
  id: String(5000 + i),
  modified: BASE + Math.floor(i / 3) * 1000,
}));
const modifiedOf = new Map(deals.map((d) => [d.id, d.modified]));

interface Search {
  /** The first filter: `EQ` reads an instant's tie by id, `GT` what comes after it. */
  filter: { operator: string; value: number } | undefined;
  after: string | undefined;
  ids: string[];
  answered: boolean;
}

interface FakeHubSpot {
  url: string;
  searches: Search[];
  /** Requests read in full and not answered yet. */
  open(): number;
  /** Requests that arrived while another was open: two runs at once. */
  overlaps: string[];
  unexpected: string[];
  /** The next search is held this long instead (once). */
  holdNext: number | undefined;
  close(): Promise<void>;
}

/** HubSpot's deals search (fake-hubspot.ts: filters, one sort, `after` paging) and the associations read, as documented. */
async function fakeHubSpot(): Promise<FakeHubSpot> {
  const searches: Search[] = [];
  const overlaps: string[] = [];
  const unexpected: string[] = [];
  let open = 0;
  const fake = { holdNext: undefined as number | undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const key = `${req.method} ${req.url}`;
      if (open > 0) overlaps.push(`${key} while ${open} open`);
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
      let body: Json;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString());
      } catch {
        body = undefined;
      }
      if (req.headers.authorization !== `Bearer ${TOKEN}` || !String(req.headers['content-type']).startsWith('application/json')) {
        unexpected.push(`${key}: auth or content type`);
        return answer(401, { status: 'error', message: 'Authentication credentials not found.' });
      }
      if (key === 'POST /crm/v4/associations/deals/companies/batch/read') {
        if (!Array.isArray(body?.inputs)) unexpected.push(`${key}: no inputs`);
        return answer(200, { status: 'COMPLETE', results: [] });
      }
      if (key !== 'POST /crm/v3/objects/deals/search') {
        unexpected.push(key);
        return answer(404, { status: 'error', message: 'not found' });
      }
      const first = body?.filterGroups?.[0]?.filters?.[0];
      let answered: Answer;
      try {
        answered = searchDeals(deals, body);
      } catch (err) {
        unexpected.push(`search ${JSON.stringify(body)}: ${err instanceof Error ? err.message : err}`);
        return answer(400, { status: 'error', message: 'bad search' });
      }
      const ids = ((answered.body as Json).results as Json[]).map((r) => r.id as string);
      const search: Search = {
        filter: first === undefined ? undefined : { operator: first.operator, value: Number(first.value) },
        after: body.after,
        ids,
        answered: false,
      };
      searches.push(search);
      const hold = fake.holdNext ?? HOLD_MS;
      fake.holdNext = undefined;
      setTimeout(() => {
        search.answered = !res.destroyed;
        answer(answered.status ?? 200, answered.body);
      }, hold).unref();
    });
    req.on('error', () => {});
    res.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    searches,
    open: () => open,
    overlaps,
    unexpected,
    get holdNext() {
      return fake.holdNext;
    },
    set holdNext(ms) {
      fake.holdNext = ms;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

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

let database: TestDatabase | undefined;
let crm: FakeHubSpot | undefined;
const servers: ServerProcess[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.kill('SIGKILL')));
  await crm?.close();
  await database?.drop();
});

test(
  `killed with SIGKILL mid-sync, started again${onPostgres ? ' as two instances' : ''}: the sync resumes from its cursor, one instance at a time`,
  startsAndWork(3, 120_000),
  async (t) => {
    database = await freshDatabase();
    crm = await fakeHubSpot();
    const fake = crm;
    const env = {
      DATABASE_URL: database.url,
      BOOTSTRAP_API_KEY: KEY,
      HUBSPOT_API_URL: fake.url,
      CRM_SYNC_SECONDS: '3600',
      INTEGRATIONS_SECRET: 'crm-crash-integrations-secret-0123456789abcdef',
      DATABASE_POOL_SIZE: '5',
    };
    const a = await startServer(env);
    servers.push(a);
    const created = await call(a, 'POST', '/v0/integrations', { provider: 'hubspot', accessToken: TOKEN });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const integrationId = created.body.integrationId as string;

    // The kill: pages answered, and the next one asked for and held.
    await waitFor(`${PAGES_BEFORE_KILL} pages answered and the next in flight`, 30_000, () => {
      const answered = fake.searches.filter((s) => s.answered).length;
      return answered >= PAGES_BEFORE_KILL && fake.searches.length > answered && fake.open() > 0;
    });
    assert.equal(await a.kill('SIGKILL'), 'SIGKILL');
    const before = fake.searches.splice(0);
    const answered = before.filter((s) => s.answered);
    assert.equal(answered.length, PAGES_BEFORE_KILL, 'the kill came while a page was in flight');
    assert.ok(!before[before.length - 1]?.answered, 'the last page asked for was never answered');
    // The driver saves a page before it asks for the next: the cursor is at the last answered
    // page's latest instant (a tie there is read again by id, from the start or after its last id).
    const fetchedBefore = new Set(answered.flatMap((s) => s.ids));
    const savedAt = Math.max(...[...fetchedBefore].map((id) => modifiedOf.get(id) ?? 0));
    t.diagnostic(`killed with ${answered.length} pages answered (${fetchedBefore.size} deals), one in flight`);

    // Two instances: the resumed run's first page is held past the lease (15 s), which only its
    // renewals keep from the other instance while it waits.
    if (onPostgres) fake.holdNext = LONG_HOLD_MS;
    const restarted = await Promise.all(onPostgres ? [startServer(env), startServer(env)] : [startServer(env)]);
    servers.push(...restarted);
    const b = restarted[0] as ServerProcess;
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
    assert.deepEqual(fake.overlaps, [], 'two runs called HubSpot at once');
    // Resumed from the saved cursor: the tie at its instant by id, then what comes after it.
    const resumed = fake.searches;
    assert.ok(resumed.length > 0);
    assert.deepEqual(resumed[0]?.filter, { operator: 'EQ', value: savedAt }, 'the first search after the restart reads the saved instant');
    assert.equal(resumed[0]?.after, undefined);
    assert.ok(
      resumed.every((s) => s.answered),
      'no search of the restarted service was cut off',
    );
    const fetchedAfter = resumed.flatMap((s) => s.ids);
    assert.deepEqual(
      fetchedAfter.filter((id) => (modifiedOf.get(id) ?? 0) < savedAt),
      [],
      'nothing before the cursor is read again',
    );
    const again = fetchedAfter.filter((id) => fetchedBefore.has(id));
    assert.ok(
      again.every((id) => modifiedOf.get(id) === savedAt),
      `only the saved instant's deals are read again: ${again}`,
    );
    assert.equal(new Set([...fetchedBefore, ...fetchedAfter]).size, DEALS, 'every deal read');

    // Every deal once in the service, created once, never changed by being read again.
    const listed = await all(b, '/v0/deals?source=hubspot');
    assert.equal(listed.length, DEALS);
    assert.deepEqual(new Set(listed.map((d) => d.externalId)), new Set(deals.map((d) => d.id)));
    const createdEvents = await all(b, '/v0/events?type=deal.created');
    assert.equal(createdEvents.length, DEALS);
    assert.equal(new Set(createdEvents.map((e) => e.payload.data.externalId)).size, DEALS);
    assert.equal((await all(b, '/v0/events?type=deal.updated')).length, 0);
    const counted = (await call(b, 'GET', `/v0/integrations/${integrationId}`)).body;
    assert.equal(counted.counts.dealsSynced, DEALS, 'each deal counted once');
  },
);
