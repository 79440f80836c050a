import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { ok, onPostgres, startApp, type Json, type TestApp } from '../helpers.js';

// A tenant's person and page counts (db/counters.ts) give the lists' totalCount. On PostgreSQL
// each connection adds to a row of its own, so concurrent creators of one tenant do not queue on
// one row's lock; the count is still every committed change, and nothing else.
describe('tenant counters under concurrent writers', () => {
  let t: TestApp;
  const person = (i: number, key?: string) => t.req('POST', '/v0/persons', { name: `Counted ${i}` }, key === undefined ? {} : { key });
  const total = async (path: string, key?: string) =>
    (ok(await t.req('GET', `${path}?limit=1`, undefined, key === undefined ? {} : { key })) as Json).totalCount as number;

  before(async () => {
    t = await startApp({ DATABASE_POOL_SIZE: '10', WEBHOOK_DISPATCHER: 'false' });
  });
  after(async () => t.close());

  test('40 concurrent creations and 10 erasures of persons, 20 creations and 5 deletions of pages: the totals are exact', async () => {
    const other = await t.newTenant('Other counted');
    const created = await Promise.all(Array.from({ length: 40 }, (_, i) => person(i).then((r) => ok(r, 201))));
    await Promise.all(Array.from({ length: 7 }, (_, i) => person(100 + i, other.key).then((r) => ok(r, 201))));
    const erased = await Promise.all(created.slice(0, 10).map((p: Json) => t.req('DELETE', `/v0/persons/${p.personId}`)));
    for (const res of erased) assert.equal(res.status, 204);
    // Erasing one already gone moves nothing.
    assert.equal((await t.req('DELETE', `/v0/persons/${created[0].personId}`)).status, 404);
    assert.equal(await total('/v0/persons'), 30);
    assert.equal(await total('/v0/persons', other.key), 7);

    const page = (i: number) =>
      t.req('POST', '/v0/pages', { name: `Counted ${i}`, title: 'T', pageContext: 'C', pageType: 'inbound' }).then((r) => ok(r, 201));
    const pages = await Promise.all(Array.from({ length: 20 }, (_, i) => page(i)));
    const deleted = await Promise.all(pages.slice(0, 5).map((p: Json) => t.req('DELETE', `/v0/pages/${p.pageId}`)));
    for (const res of deleted) assert.equal(res.status, 204);
    assert.equal(await total('/v0/pages'), 15);
    assert.equal(await total('/v0/pages', other.key), 0);
  });

  test('creators of one tenant do not wait for a transaction that holds one row of its count', { skip: !onPostgres }, async () => {
    const before = await total('/v0/persons');
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked = () => {};
    const isLocked = new Promise<void>((resolve) => {
      locked = resolve;
    });
    // Holds the count's first row, as a creator's transaction does from its upsert to its commit.
    const holder = t.app.db.transaction().execute(async (trx) => {
      await sql`insert into tenant_counters (tenant_id, name, value) values (${t.tenantId}, 'persons', 0) on conflict do nothing`.execute(
        trx,
      );
      await sql`select value from tenant_counters where tenant_id = ${t.tenantId} and name = 'persons' for update`.execute(trx);
      locked();
      await released;
    });
    await isLocked;
    let done = 0;
    const creations = Array.from({ length: 12 }, (_, i) =>
      person(200 + i).then((r) => {
        done++;
        return r;
      }),
    );
    // Only a connection whose own row is the held one waits (one in eight, by its backend's pid).
    const deadline = Date.now() + 10_000;
    while (done < 6 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const doneWhileHeld = done;
    release();
    await holder;
    for (const res of await Promise.all(creations)) ok(res, 201);
    assert.ok(doneWhileHeld >= 6, `${doneWhileHeld} of 12 creations finished while one row was held`);
    assert.equal(await total('/v0/persons'), before + 12);
  });
});
