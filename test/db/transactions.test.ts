import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Db } from '../../src/db/connection.js';
import { newId } from '../../src/ids.js';
import { type TwoHandles, twoHandles } from '../helpers.js';

// What every transaction may rely on, whatever the backend: on SQLite transactions share a group
// commit (db/sqlite.ts), and these cases pin down that sharing changes none of it.

let handles: TwoHandles;
let db: Db;
/** A second, independent handle on the same database: what another process would see. */
let other: Db;

before(async () => {
  handles = await twoHandles();
  ({ db, other } = handles);
});
after(async () => {
  await handles?.close();
});

const tenant = (name: string) => ({
  id: newId('tenant'),
  name,
  slug: `${name.toLowerCase()}-${Math.random().toString(36).slice(2, 8)}`,
  created_at: new Date().toISOString(),
});
const exists = async (handle: Db, id: string) =>
  Boolean(await handle.kysely.selectFrom('tenants').select('id').where('id', '=', id).executeTakeFirst());

test('concurrent transactions that fail roll back alone; the others commit', async () => {
  const rows = Array.from({ length: 60 }, (_, i) => tenant(`Concurrent${i}`));
  const outcomes = await Promise.allSettled(
    rows.map((row, i) =>
      db.kysely.transaction().execute(async (trx) => {
        await trx.insertInto('tenants').values(row).execute();
        if (i % 3 === 0) throw new Error(`refused ${i}`);
        // A second statement after a pause, so the transactions interleave with each other's turns.
        await new Promise((r) => setImmediate(r));
        await trx
          .updateTable('tenants')
          .set({ name: `${row.name}!` })
          .where('id', '=', row.id)
          .execute();
      }),
    ),
  );
  for (const [i, outcome] of outcomes.entries()) assert.equal(outcome.status, i % 3 === 0 ? 'rejected' : 'fulfilled', `transaction ${i}`);
  for (const [i, row] of rows.entries()) {
    const found = await other.kysely.selectFrom('tenants').select('name').where('id', '=', row.id).executeTakeFirst();
    assert.deepEqual(found, i % 3 === 0 ? undefined : { name: `${row.name}!` }, `row ${i}`);
  }
});

test('a committed transaction is visible to another connection as soon as its commit resolves', async () => {
  for (let i = 0; i < 20; i++) {
    const row = tenant(`Visible${i}`);
    await db.kysely.transaction().execute((trx) => trx.insertInto('tenants').values(row).execute());
    assert.ok(await exists(other, row.id), `row ${i} visible to another connection`);
  }
  const alone = tenant('Autocommit');
  await db.kysely.insertInto('tenants').values(alone).execute();
  assert.ok(await exists(other, alone.id), 'a write outside a transaction is committed when it resolves');
});

test('reads outside the transaction never see its uncommitted writes', async () => {
  const row = tenant('Uncommitted');
  let inserted!: () => void;
  let finish!: () => void;
  const wasInserted = new Promise<void>((r) => (inserted = r));
  const mayFinish = new Promise<void>((r) => (finish = r));
  const running = db.kysely.transaction().execute(async (trx) => {
    await trx.insertInto('tenants').values(row).execute();
    inserted();
    await mayFinish;
  });
  await wasInserted;
  assert.equal(await exists(db, row.id), false, 'the same handle, outside the transaction');
  assert.equal(await exists(other, row.id), false, 'another connection');
  finish();
  await running;
  assert.ok(await exists(db, row.id));
  assert.ok(await exists(other, row.id));
});

test('a read after a commit resolved sees the write, even when a read of the same turn came before the commit', async () => {
  for (let i = 0; i < 20; i++) {
    const row = tenant(`SameTurn${i}`);
    let seenBefore: boolean | undefined;
    await db.kysely.transaction().execute(async (trx) => {
      await trx.insertInto('tenants').values(row).execute();
      // Outside the transaction, in the turn whose end commits it (on SQLite this read opens the
      // reader's snapshot of the turn, after the group's commit was scheduled).
      seenBefore = await exists(db, row.id);
    });
    assert.equal(seenBefore, false, `row ${i} not visible before its commit`);
    assert.ok(await exists(db, row.id), `row ${i} visible once its commit resolved`);
    assert.ok(await exists(other, row.id), `row ${i} visible to another connection`);
  }
});

test('a change committed by another connection is read from the next turn on', async () => {
  const row = tenant('Elsewhere');
  assert.equal(await exists(db, row.id), false);
  await other.kysely.insertInto('tenants').values(row).execute();
  await new Promise((r) => setImmediate(r));
  assert.ok(await exists(db, row.id));
});

test('a failed statement inside a transaction leaves the transaction usable for the caller to roll back', async () => {
  const row = tenant('Duplicate');
  await db.kysely.insertInto('tenants').values(row).execute();
  const fresh = tenant('AfterDuplicate');
  await assert.rejects(
    db.kysely.transaction().execute(async (trx) => {
      await trx.insertInto('tenants').values(fresh).execute();
      await trx.insertInto('tenants').values(row).execute(); // primary key violation
    }),
  );
  assert.equal(await exists(other, fresh.id), false, 'the whole transaction rolled back');
  const later = tenant('Later');
  await db.kysely.transaction().execute((trx) => trx.insertInto('tenants').values(later).execute());
  assert.ok(await exists(other, later.id), 'the next transaction commits');
});
