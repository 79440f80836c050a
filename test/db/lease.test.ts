import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { sql } from 'kysely';
import type { Db } from '../../src/db/connection.js';
import { claimLeases, releaseLease } from '../../src/db/lease.js';
import { newId } from '../../src/ids.js';
import { onPostgres, type TwoHandles, twoHandles } from '../helpers.js';

// The lease claim shared by background jobs (db/lease.ts), on the events table: one claimer wins
// each row, a running lease keeps it, an ended one frees it, and only the holder may complete it.

let handles: TwoHandles;
let db: Db;
/** A second, independent handle on the same database: what another process would see. */
let other: Db;
const tenants: string[] = [];

before(async () => {
  handles = await twoHandles();
  ({ db, other } = handles);
  for (let i = 0; i < 3; i++) {
    const id = newId('tenant');
    await db.kysely
      .insertInto('tenants')
      .values({ id, name: `T${i}`, slug: `t${i}-${id.slice(-6)}`, created_at: new Date().toISOString() })
      .execute();
    tenants.push(id);
  }
});
after(async () => {
  await handles?.close();
});
beforeEach(async () => {
  await db.kysely.deleteFrom('events').execute();
});

const T0 = Date.parse('2026-11-22T12:00:00.000Z');
const iso = (ms: number) => new Date(T0 + ms).toISOString();

/** Events created 1 ms apart, in order; `fanned` ones are not due. */
async function events(count: number, options: { tenant?: (i: number) => string; fanned?: (i: number) => boolean } = {}) {
  const rows = Array.from({ length: count }, (_, i) => ({
    id: newId('event'),
    tenant_id: options.tenant?.(i) ?? (tenants[0] as string),
    type: 'person.created',
    payload: '{}',
    created_at: iso(i),
    fanned_out: options.fanned?.(i) ? 1 : 0,
    fan_lease_until: null,
  }));
  await db.kysely.insertInto('events').values(rows).execute();
  return rows.map((r) => r.id);
}

const claim = (handle: Db, limit: number, now: number, until = now + 60_000) =>
  claimLeases(handle.kysely, {
    table: 'events',
    lease: 'fan_lease_until',
    due: (eb) => eb('fanned_out', '=', 0),
    orderBy: 'created_at',
    limit,
    now: iso(now),
    until: iso(until),
    returning: ['id', 'fan_lease_until'],
  });

test('the due rows are claimed oldest first, up to the limit, each with the new lease end', async () => {
  const ids = await events(6, { fanned: (i) => i === 0 });
  const claimed = await claim(db, 3, 10_000);
  assert.deepEqual(claimed.map((r) => r.id).sort(), ids.slice(1, 4).sort());
  for (const row of claimed) assert.equal(row.fan_lease_until, iso(70_000));
  assert.deepEqual(await claim(db, 0, 10_000), [], 'a limit of 0 claims nothing');
});

test('concurrent claimers never win one row twice; round after round they take every row once', async () => {
  const ids = await events(40);
  // Two connections on PostgreSQL; on SQLite, where two handles in one process would wait on each
  // other's write lock, one (other processes on the file are the crash and multi-instance tests').
  const handles = onPostgres ? [db, other] : [db];
  const won: string[] = [];
  for (let round = 0; round < 20; round++) {
    const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => claim(handles[i % handles.length] as Db, 7, 10_000)));
    const taken = claims.flat().map((r) => r.id);
    if (taken.length === 0) break;
    won.push(...taken);
  }
  assert.equal(new Set(won).size, won.length, 'no row was won twice');
  assert.deepEqual(won.sort(), ids.sort());
});

test('a running lease keeps its rows; once it ended they can be claimed again', async () => {
  await events(2);
  assert.equal((await claim(db, 10, 10_000, 20_000)).length, 2);
  assert.equal((await claim(db, 10, 19_999)).length, 0, 'before the lease ends');
  const again = await claim(other, 10, 20_001, 90_000);
  assert.equal(again.length, 2, 'after the lease ended');
  for (const row of again) assert.equal(row.fan_lease_until, iso(90_000));
});

test('only the holder releases: its changes are written and the lease cleared; a stale token changes nothing', async () => {
  const [id] = (await events(1)) as [string];
  await claim(db, 1, 10_000, 20_000);
  await claim(other, 1, 30_000, 40_000); // the first lease ended and another claimer took the row
  const held = { table: 'events', lease: 'fan_lease_until', id } as const;
  assert.equal(await releaseLease(db.kysely, { ...held, until: iso(20_000) }, { fanned_out: 1 }), false);
  let row = await db.kysely.selectFrom('events').select(['fanned_out', 'fan_lease_until']).where('id', '=', id).executeTakeFirst();
  assert.deepEqual(row, { fanned_out: 0, fan_lease_until: iso(40_000) });
  assert.equal(await releaseLease(db.kysely, { ...held, until: iso(40_000) }, { fanned_out: 1 }), true);
  row = await db.kysely.selectFrom('events').select(['fanned_out', 'fan_lease_until']).where('id', '=', id).executeTakeFirst();
  assert.deepEqual(row, { fanned_out: 1, fan_lease_until: null });
});

test('released without changes, a row is free for the next claim at once', async () => {
  const [id] = (await events(1)) as [string];
  await claim(db, 1, 10_000, 20_000);
  assert.equal(await releaseLease(db.kysely, { table: 'events', lease: 'fan_lease_until', id, until: iso(20_000) }), true);
  assert.equal((await claim(other, 1, 10_001)).length, 1);
});

test('the order may be any expression: one row per tenant first (round robin), on both dialects', async () => {
  await events(9, { tenant: (i) => tenants[i % 3] as string });
  const claimed = await claimLeases(db.kysely, {
    table: 'events',
    lease: 'fan_lease_until',
    due: (eb) => eb('fanned_out', '=', 0),
    orderBy: sql`row_number() over (partition by tenant_id order by created_at)`,
    limit: 3,
    now: iso(10_000),
    until: iso(20_000),
    returning: ['tenant_id', 'created_at'],
  });
  assert.deepEqual(claimed.map((r) => r.tenant_id).sort(), [...tenants].sort());
  assert.deepEqual(claimed.map((r) => r.created_at).sort(), [iso(0), iso(1), iso(2)]);
});

test('in turns across tenants: the same rows as a rank over the whole queue, held and not-due rows skipped', async () => {
  // Uneven queues (tenant 0 has most), some rows held by a running lease, some not due.
  const ids = await events(60, {
    tenant: (i) => tenants[i % 7 === 0 ? 1 : i % 11 === 0 ? 2 : 0] as string,
    fanned: (i) => i % 13 === 5,
  });
  await db.kysely
    .updateTable('events')
    .set({ fan_lease_until: iso(50_000) })
    .where(
      'id',
      'in',
      ids.filter((_, i) => i % 5 === 1),
    )
    .execute();
  for (const limit of [1, 2, 3, 7, 40]) {
    const now = iso(10_000);
    const expected = await db.kysely
      .selectFrom((eb) =>
        eb
          .selectFrom('events')
          .select(['id', sql<number>`row_number() over (partition by tenant_id order by created_at, id)`.as('turn'), 'created_at'])
          .where('fanned_out', '=', 0)
          .where((w) => w.or([w('fan_lease_until', 'is', null), w('fan_lease_until', '<', now)]))
          .as('ranked'),
      )
      .select('id')
      .orderBy('turn')
      .orderBy('created_at')
      .orderBy('id')
      .limit(limit)
      .execute();
    const claimed = await claimLeases(db.kysely, {
      table: 'events',
      lease: 'fan_lease_until',
      due: (eb) => eb('fanned_out', '=', 0),
      orderBy: { across: 'tenant_id', within: ['created_at', 'id'] },
      limit,
      now,
      until: iso(20_000),
      returning: ['id'],
    });
    assert.equal(claimed.length, Math.min(limit, expected.length));
    assert.deepEqual(claimed.map((r) => r.id).sort(), expected.map((r) => r.id).sort(), `limit ${limit}`);
    // Given back, so the next limit sees the same queue.
    await db.kysely
      .updateTable('events')
      .set({ fan_lease_until: null })
      .where(
        'id',
        'in',
        claimed.map((r) => r.id),
      )
      .execute();
  }
});
