import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { freshDatabase, onPostgres, type Json, type TestDatabase } from './helpers.js';
import { startServer, type ServerProcess } from './server-process.js';

// Several stateless instances on one PostgreSQL database: what one writes, the other serves,
// uniqueness holds across them, and pagination holds while the other writes.
describe('two server processes on one PostgreSQL database', { skip: !onPostgres && 'PostgreSQL only' }, () => {
  const KEY = 'multi-instance-bootstrap-key-0123456789';
  let database: TestDatabase;
  let a: ServerProcess;
  let b: ServerProcess;
  let sqlClient: pg.Client;

  const call = async (server: ServerProcess, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { 'x-api-key': KEY, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };

  before(async () => {
    database = await freshDatabase();
    // Both start at once on an empty schema: migrations and bootstrap race, and must not fail.
    [a, b] = await Promise.all([
      startServer({ DATABASE_URL: database.url, BOOTSTRAP_API_KEY: KEY }),
      startServer({ DATABASE_URL: database.url, BOOTSTRAP_API_KEY: KEY }),
    ]);
    sqlClient = new pg.Client({ connectionString: database.url });
    await sqlClient.connect();
  });

  after(async () => {
    await Promise.all([a?.kill(), b?.kill()]);
    await sqlClient?.end();
    await database?.drop();
  });

  test('bootstrap made one default tenant with the key', async () => {
    const { rows } = await sqlClient.query(`select count(*)::int as n from tenants where name = 'default'`);
    assert.equal(rows[0].n, 1);
    assert.equal((await call(a, 'GET', '/v0/persons')).status, 200);
    assert.equal((await call(b, 'GET', '/v0/persons')).status, 200);
  });

  test("creates through both instances are all kept, and each serves the other's writes", async () => {
    const created = await Promise.all(
      Array.from({ length: 60 }, (_, i) => call(i % 2 ? a : b, 'POST', '/v0/persons', { name: 'Same Name', domain: `d${i}.example.com` })),
    );
    assert.deepEqual(
      created.map((r) => (r.status === 201 ? 201 : `${r.status} ${JSON.stringify(r.body)}`)),
      created.map(() => 201),
    );
    const ids = created.map((r) => r.body.personId as string);
    assert.equal(new Set(ids).size, 60);
    // Slugs are unique across instances even for one shared name.
    assert.equal(new Set(created.map((r) => r.body.slug as string)).size, 60);
    for (const [i, id] of ids.entries()) {
      const res = await call(i % 2 ? b : a, 'GET', `/v0/persons/${id}`);
      assert.equal(res.status, 200);
      assert.equal(res.body.domain, `d${i}.example.com`);
    }
  });

  test('one idempotency key sent through both instances at once creates one entry', async () => {
    const person = (await call(a, 'POST', '/v0/persons', { name: 'Idem Potent' })).body;
    const body = { source: 'crm', type: 'note-added', payload: { n: 1 }, idempotencyKey: 'same-key' };
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call(i % 2 ? a : b, 'POST', `/v0/persons/${person.personId}/logs`, body)),
    );
    const ok = results.filter((r) => r.status === 201);
    assert.ok(ok.length > 0);
    // A request that cannot see the winner yet may be told to retry; nothing else is acceptable.
    for (const r of results)
      assert.ok(r.status === 201 || (r.status === 409 && r.body.code === 'idempotency_key_in_progress'), JSON.stringify(r));
    assert.equal(new Set(ok.map((r) => r.body.personLogId)).size, 1);
    const { rows } = await sqlClient.query('select count(*)::int as n from person_logs where owner_id = $1', [person.personId]);
    assert.equal(rows[0].n, 1);
  });

  test('a list walked through one instance while the other writes has no duplicate and no skip', async () => {
    const before = new Set<string>();
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const page = await call(a, 'GET', `/v0/persons?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
      for (const p of page.body.items) before.add(p.personId);
      cursor = page.body.nextCursor;
    }
    let writing = true;
    const writer = (async () => {
      let n = 0;
      while (writing) {
        assert.equal((await call(b, 'POST', '/v0/persons', { name: `Writer ${n++}` })).status, 201);
      }
      return n;
    })();
    const seen: string[] = [];
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const page = await call(a, 'GET', `/v0/persons?limit=7${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(page.status, 200);
      seen.push(...page.body.items.map((p: { personId: string }) => p.personId));
      cursor = page.body.nextCursor;
    }
    writing = false;
    const written = await writer;
    assert.ok(written > 0, 'the writer wrote nothing during the walk');
    assert.equal(new Set(seen).size, seen.length, 'a person was listed twice');
    for (const id of before) assert.ok(seen.includes(id), `person ${id} was skipped`);
  });
});
