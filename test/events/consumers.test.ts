import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { Db } from '../../src/db/connection.js';
import { type Consumer, consume, consumerBacklog, ensureConsumers, type EventHandler } from '../../src/events/consumers.js';
import { emit } from '../../src/events/outbox.js';
import { newId } from '../../src/ids.js';
import { onPostgres, type TwoHandles, twoHandles } from '../helpers.js';
import { until } from '../until.js';

// One outbox, many consumers (issue 47 §3, events/consumers.ts): each consumer reads every event
// once, in order, from its own cursor; two instances never consume one event twice; on PostgreSQL a
// transaction still running delays no event committed after it, and loses none of its own.

let handles: TwoHandles;
let db: Db;
/** A second, independent handle on the same database: what another instance would see. */
let other: Db;
let tenant: string;

before(async () => {
  handles = await twoHandles();
  ({ db, other } = handles);
  await ensureConsumers(db.kysely);
  tenant = newId('tenant');
  await db.kysely
    .insertInto('tenants')
    .values({ id: tenant, name: 'T', slug: `t-${tenant.slice(-6)}`, created_at: new Date().toISOString() })
    .execute();
});
after(async () => {
  await handles?.close();
});

const ignore: EventHandler = async () => {};
/** Every consumer past every event so far: each test counts from there. */
beforeEach(async () => {
  for (const name of ['webhooks', 'alerts'] as const) while ((await consume(db.kysely, name, ignore, 1000)) > 0);
});

const emitted = async (count: number, handle = db) => {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(await emit(handle.kysely, tenant, 'person.created', { i }));
  return ids;
};
const into =
  (seen: string[]): EventHandler =>
  async (_trx, events) => {
    seen.push(...events.map((e) => e.id));
  };
/** Rounds of `batch` until none is left, as a consumer's loop runs them. */
async function drain(name: Consumer, handle: EventHandler, batch = 100, from = db): Promise<number[]> {
  const counts: number[] = [];
  for (;;) {
    const n = await consume(from.kysely, name, handle, batch);
    if (n === 0) return counts;
    counts.push(n);
  }
}

describe('the outbox’s consumers', () => {
  test('each reads every event once, in the order they were made, from a cursor of its own', async () => {
    const ids = await emitted(5);
    const webhooks: string[] = [];
    const alerts: string[] = [];
    assert.deepEqual(await drain('webhooks', into(webhooks), 2), [2, 2, 1]);
    assert.deepEqual(webhooks, ids);
    // The other consumer has moved nothing yet: it reads the same five.
    assert.deepEqual(await drain('alerts', into(alerts), 10), [5]);
    assert.deepEqual(alerts, ids);
    const [next] = await emitted(1);
    assert.deepEqual(await drain('webhooks', into(webhooks)), [1]);
    assert.deepEqual(await drain('alerts', into(alerts)), [1]);
    assert.equal(webhooks.at(-1), next);
    assert.equal(alerts.at(-1), next);
  });

  test('a handler that fails moves no cursor and leaves nothing: the batch comes again', async () => {
    const ids = await emitted(3);
    const failing: EventHandler = async (trx, events) => {
      await trx
        .insertInto('tenants')
        .values({ id: newId('tenant'), name: 'half', slug: `half-${events.length}`, created_at: new Date().toISOString() })
        .execute();
      throw new Error('the handler failed');
    };
    await assert.rejects(consume(db.kysely, 'webhooks', failing, 10), /the handler failed/);
    assert.equal((await db.kysely.selectFrom('tenants').select('id').where('name', '=', 'half').execute()).length, 0);
    const seen: string[] = [];
    assert.deepEqual(await drain('webhooks', into(seen)), [3]);
    assert.deepEqual(seen, ids);
  });

  test('two instances consuming at once consume each event exactly once', async () => {
    const ids = await emitted(60);
    const seen: string[] = [];
    const slow: EventHandler = async (trx, events) => {
      await new Promise((r) => setTimeout(r, 5));
      await into(seen)(trx, events);
    };
    // SQLite's other instance is another process (better-sqlite3 waits for a lock synchronously, so a
    // second handle in this process would wait for itself): here, one handle's transactions in turn.
    const second = onPostgres ? other : db;
    await Promise.all([drain('webhooks', slow, 7, db), drain('webhooks', slow, 7, second), drain('webhooks', slow, 5, db)]);
    // An instance that found the cursor held may have stopped early: a last round picks up the rest.
    await drain('webhooks', slow, 7, second);
    assert.equal(seen.length, ids.length, 'no event twice');
    assert.deepEqual(new Set(seen), new Set(ids));
  });

  test('a consumer added later starts at the oldest event kept', async () => {
    const [id] = await emitted(1);
    // As a new name in CONSUMERS gets its row at start-up: a cursor before every event.
    await db.kysely.deleteFrom('outbox_consumers').where('name', '=', 'alerts').execute();
    await db.kysely.deleteFrom('outbox_consumed_ahead').where('consumer', '=', 'alerts').execute();
    await ensureConsumers(db.kysely);
    const seen: string[] = [];
    await drain('alerts', into(seen), 1000);
    assert.ok(seen.includes(id as string));
    const all = await db.kysely.selectFrom('events').select('id').execute();
    assert.equal(seen.length, all.length, 'every kept event, once');
  });

  test('SQLite numbers events on after every event is pruned, so no cursor is passed again', { skip: onPostgres }, async () => {
    await emitted(2);
    const before = await db.kysely
      .selectFrom('events')
      .select((eb) => eb.fn.max('position').as('p'))
      .executeTakeFirstOrThrow();
    await db.kysely.deleteFrom('events').execute();
    const [id] = await emitted(1);
    const row = await db.kysely
      .selectFrom('events')
      .select('position')
      .where('id', '=', id as string)
      .executeTakeFirstOrThrow();
    assert.ok(row.position > Number(before.p), `${row.position} after ${before.p}`);
    const seen: string[] = [];
    await drain('webhooks', into(seen));
    assert.deepEqual(seen, [id]);
  });

  test('SQLite: an event inserted without a position still gets the next one, after the newest pruned', { skip: onPostgres }, async () => {
    const newest = (await emitted(2)).at(-1);
    const top = await db.kysely
      .selectFrom('events')
      .select('position')
      .where('id', '=', newest as string)
      .executeTakeFirstOrThrow();
    await db.kysely
      .deleteFrom('events')
      .where('id', '=', newest as string)
      .execute();
    const id = newId('event');
    await db.kysely
      .insertInto('events')
      .values({
        id,
        tenant_id: tenant,
        type: 'person.created',
        payload: '{}',
        created_at: new Date().toISOString(),
        fanned_out: 0,
        fan_lease_until: null,
      })
      .execute();
    const row = await db.kysely.selectFrom('events').select('position').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.position, top.position + 1);
    const [next] = await emitted(1);
    const nextRow = await db.kysely
      .selectFrom('events')
      .select('position')
      .where('id', '=', next as string)
      .executeTakeFirstOrThrow();
    assert.equal(nextRow.position, top.position + 2);
  });

  test('PostgreSQL: an event committed while an older transaction runs is consumed at once; the older one’s, when it commits', {
    skip: !onPostgres,
  }, async () => {
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    let olderId = '';
    let started = () => {};
    const begun = new Promise<void>((r) => (started = r));
    // Another instance's transaction: its event is written first, and commits last.
    const older = other.kysely.transaction().execute(async (trx) => {
      olderId = await emit(trx, tenant, 'person.created', { older: true });
      started();
      await held;
    });
    await begun;
    const [newer] = await emitted(1);
    const seen: string[] = [];
    assert.equal(await consume(db.kysely, 'webhooks', into(seen), 100), 1);
    assert.deepEqual(seen, [newer], 'the newer event is not held back');
    assert.equal(await consume(db.kysely, 'webhooks', into(seen), 100), 0, 'nor consumed twice');
    // Read ahead of the cursor is read: the metrics' backlog does not count it while the cursor
    // waits. (Asserted once the older transaction has ended, so that a failure cannot hang the file.)
    const backlog = await consumerBacklog(db.kysely, 'webhooks');
    release();
    await older;
    assert.deepEqual(backlog, { pending: 0, oldestAt: null });
    await drain('webhooks', into(seen));
    assert.deepEqual(seen, [newer, olderId], 'the older event is consumed once it commits');
    assert.equal(await consume(db.kysely, 'webhooks', into(seen), 100), 0);
    // The cursor passes both once no transaction older than them runs anywhere on the server (other
    // databases' too: a test run's other files may hold it back a while), and nothing is left
    // noted as read ahead; consumed again, nothing.
    const newerEvent = await db.kysely
      .selectFrom('events')
      .select('position')
      .where('id', '=', newer as string)
      .executeTakeFirstOrThrow();
    await until(
      'the cursor past both events',
      async () => {
        await consume(db.kysely, 'webhooks', into(seen), 100);
        const cursor = await db.kysely.selectFrom('outbox_consumers').selectAll().where('name', '=', 'webhooks').executeTakeFirstOrThrow();
        return cursor.position >= newerEvent.position ? true : undefined;
      },
      60_000,
    );
    assert.equal((await db.kysely.selectFrom('outbox_consumed_ahead').selectAll().where('consumer', '=', 'webhooks').execute()).length, 0);
    assert.deepEqual(seen, [newer, olderId]);
  });
});
