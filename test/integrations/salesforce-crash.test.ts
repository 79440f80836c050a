import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { freshDatabase, onPostgres, type Json, type TestDatabase } from '../helpers.js';
import { callServer, startServer, startsAndWork, type ServerProcess, waitFor } from '../server-process.js';
import { DATA, FakeSalesforce } from './fake-salesforce.js';
import type { Answer } from './helpers.js';

// Issue 45 §9, as crash.test.ts for HubSpot: the Salesforce sync survives kill -9 and resumes by
// keyset (LastModifiedDate, Id). Real server processes sync from a Salesforce test server that
// answers each query batch slowly, 100 opportunities at a time, three modified in each second so
// that batches end inside a second; the first process is killed with SIGKILL while a batch is
// held, then the service starts again (on PostgreSQL, two instances of it).

const KEY = 'crm-sf-crash-bootstrap-key-0123456789abcdef';
const call = (server: ServerProcess, method: string, path: string, body?: unknown) => callServer(server, KEY, method, path, body);
const CLIENT_ID = '3MVG9-crash-consumer-key';
const CLIENT_SECRET = 'crash-consumer-secret-0123456789';
const ACCESS = '00Dxx0000001gPL!crash-access-token';
const OPPORTUNITIES = 700;
/** Each query batch is answered this late: the kill lands while one is held. */
const HOLD_MS = 600;
/** Batches answered before the kill; the next one is in flight when it comes. */
const PAGES_BEFORE_KILL = 3;
/** Longer than a sync's lease (src/integrations/hold.ts) and shorter than a CRM call's timeout. */
const LONG_HOLD_MS = 17_000;
const BASE = Date.parse('2026-10-01T00:00:00.000Z');

const store = new FakeSalesforce();
store.batch = 100;
store.opportunities = Array.from({ length: OPPORTUNITIES }, (_, i) => ({
  Id: `006${String(i).padStart(12, '0')}`,
  LastModifiedDate: new Date(BASE + Math.floor(i / 3) * 1000).toISOString().replace('Z', '+0000'),
}));
const modifiedOf = new Map(store.opportunities.map((o) => [o.Id, Date.parse(o.LastModifiedDate.replace('+0000', 'Z'))]));

interface Read {
  /** The query's SOQL, or undefined for a batch followed through nextRecordsUrl. */
  soql: string | undefined;
  ids: string[];
  answered: boolean;
}

interface FakeServer {
  url: string;
  reads: Read[];
  open(): number;
  overlaps: string[];
  unexpected: string[];
  holdNext: number | undefined;
  close(): Promise<void>;
}

/** Salesforce's token endpoint, the Opportunity describe, and the query API with its batches. */
async function fakeSalesforce(): Promise<FakeServer> {
  const reads: Read[] = [];
  const overlaps: string[] = [];
  const unexpected: string[] = [];
  let open = 0;
  const fake = { holdNext: undefined as number | undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://sf.test');
      const key = `${req.method} ${url.pathname}`;
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
      if (key === 'POST /services/oauth2/token') {
        const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString()));
        const expected = { grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET };
        if (
          JSON.stringify(form) !== JSON.stringify(expected) ||
          !String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')
        ) {
          unexpected.push(`${key}: ${JSON.stringify(form)}`);
          return answer(400, { error: 'invalid_client', error_description: 'invalid client credentials' });
        }
        return answer(200, { access_token: ACCESS, instance_url: 'ignored', token_type: 'Bearer', issued_at: '1', signature: 's' });
      }
      if (req.headers.authorization !== `Bearer ${ACCESS}`) {
        unexpected.push(`${key}: auth`);
        return answer(401, [{ errorCode: 'INVALID_SESSION_ID', message: 'Session expired or invalid' }]);
      }
      if (key === `GET ${DATA}/sobjects/Opportunity/describe`) return answer(200, { name: 'Opportunity', fields: [{ name: 'Id' }] });
      let batch: Answer | undefined;
      let soql: string | undefined;
      if (key === `GET ${DATA}/query`) {
        soql = url.searchParams.get('q') ?? '';
        try {
          batch = store.query(soql);
        } catch (err) {
          unexpected.push(`${soql}: ${err instanceof Error ? err.message : err}`);
          return answer(400, [{ errorCode: 'MALFORMED_QUERY', message: 'unexpected query' }]);
        }
      } else if (req.method === 'GET') batch = store.more(url.pathname);
      if (!batch) {
        unexpected.push(`${key} ${soql ?? ''}`);
        return answer(404, [{ errorCode: 'NOT_FOUND', message: 'The requested resource does not exist' }]);
      }
      const read: Read = { soql, ids: ((batch.body as Json).records as Json[]).map((r) => r.Id as string), answered: false };
      reads.push(read);
      const hold = fake.holdNext ?? HOLD_MS;
      fake.holdNext = undefined;
      setTimeout(() => {
        read.answered = !res.destroyed;
        answer(200, batch.body);
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
let crm: FakeServer | undefined;
const servers: ServerProcess[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.kill('SIGKILL')));
  await crm?.close();
  await database?.drop();
});

test(
  `Salesforce: killed with SIGKILL mid-sync, started again${onPostgres ? ' as two instances' : ''}: the sync resumes by keyset, one instance at a time`,
  startsAndWork(3, 120_000),
  async (t) => {
    database = await freshDatabase();
    crm = await fakeSalesforce();
    const fake = crm;
    const env = {
      DATABASE_URL: database.url,
      BOOTSTRAP_API_KEY: KEY,
      SALESFORCE_LOGIN_URL: fake.url,
      CRM_SYNC_SECONDS: '3600',
      INTEGRATIONS_SECRET: 'crm-sf-crash-integrations-secret-0123456789abcdef',
      DATABASE_POOL_SIZE: '5',
    };
    const a = await startServer(env);
    servers.push(a);
    const created = await call(a, 'POST', '/v0/integrations', {
      provider: 'salesforce',
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      instanceUrl: fake.url,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const integrationId = created.body.integrationId as string;

    // The kill: batches answered, and the next one asked for and held.
    await waitFor(`${PAGES_BEFORE_KILL} batches answered and the next in flight`, 30_000, () => {
      const answered = fake.reads.filter((s) => s.answered).length;
      return answered >= PAGES_BEFORE_KILL && fake.reads.length > answered && fake.open() > 0;
    });
    assert.equal(await a.kill('SIGKILL'), 'SIGKILL');
    const before = fake.reads.splice(0);
    const answered = before.filter((s) => s.answered);
    assert.equal(answered.length, PAGES_BEFORE_KILL, 'the kill came while a batch was in flight');
    assert.ok(!before[before.length - 1]?.answered, 'the last batch asked for was never answered');
    // The driver saves a batch before it asks for the next: the cursor is its last opportunity.
    const lastSaved = answered[answered.length - 1]?.ids.at(-1) as string;
    const savedAt = new Date(modifiedOf.get(lastSaved) ?? 0).toISOString().slice(0, 19);
    const fetchedBefore = new Set(answered.flatMap((s) => s.ids));
    t.diagnostic(`killed with ${answered.length} batches answered (${fetchedBefore.size} opportunities), one in flight`);

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
    await new Promise((r) => setTimeout(r, 3000));

    assert.deepEqual(fake.unexpected, []);
    assert.deepEqual(fake.overlaps, [], 'two runs called Salesforce at once');
    // Resumed by keyset from the saved cursor: nothing read before it comes again.
    const resumed = fake.reads;
    assert.ok(resumed.length > 0);
    assert.ok(
      resumed[0]?.soql?.endsWith(
        ` FROM Opportunity WHERE LastModifiedDate > ${savedAt}Z OR (LastModifiedDate = ${savedAt}Z AND Id > '${lastSaved}') ORDER BY LastModifiedDate ASC, Id ASC`,
      ),
      resumed[0]?.soql,
    );
    assert.ok(
      resumed.every((s) => s.answered),
      'no batch of the restarted service was cut off',
    );
    const fetchedAfter = resumed.flatMap((s) => s.ids);
    assert.deepEqual(
      fetchedAfter.filter((id) => fetchedBefore.has(id)),
      [],
      'nothing read before the kill is read again',
    );
    assert.equal(new Set(fetchedAfter).size, fetchedAfter.length, 'each opportunity read once after the restart: one instance synced');
    assert.equal(fetchedBefore.size + fetchedAfter.length, OPPORTUNITIES, 'every opportunity read');

    const listed = await all(b, '/v0/deals?source=salesforce');
    assert.equal(listed.length, OPPORTUNITIES);
    const createdEvents = await all(b, '/v0/events?type=deal.created');
    assert.equal(createdEvents.length, OPPORTUNITIES);
    assert.equal(new Set(createdEvents.map((e) => e.payload.data.externalId)).size, OPPORTUNITIES);
    assert.equal((await all(b, '/v0/events?type=deal.updated')).length, 0);
    const counted = (await call(b, 'GET', `/v0/integrations/${integrationId}`)).body;
    assert.equal(counted.counts.dealsSynced, OPPORTUNITIES, 'each opportunity counted once');
  },
);
