import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Kysely } from 'kysely';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type Db } from '../../src/db/connection.js';
import { migrateDatabase } from '../../src/db/migrate.js';
import * as migration from '../../src/db/migrations/2026_12_07_0069_outbox_consumers.js';
import * as positionInInsert from '../../src/db/migrations/2026_12_10_0072_event_position_in_insert.js';
import { consume, type EventHandler } from '../../src/events/consumers.js';
import { emit } from '../../src/events/outbox.js';
import { newId } from '../../src/ids.js';
import { freshDatabase, type TestDatabase } from '../helpers.js';

// Migration 0069 (issue 47 §3): the events a database holds when it is upgraded keep their fate.
// Those the webhook fan-out had done are no consumer's work; those it had not are both consumers'
// (the webhooks' and the alerts', which rode on it); every event made after them comes after them.

let database: TestDatabase;
let db: Db;
before(async () => {
  database = await freshDatabase();
  const config = loadConfig({ DATABASE_URL: database.url }).database;
  await migrateDatabase(config);
  db = openDatabase(config);
});
after(async () => {
  await db?.close();
  await database?.drop();
});

test('events not fanned out before the upgrade reach both consumers, once, before any newer event', async () => {
  const raw = db.kysely as unknown as Kysely<unknown>;
  // 0072 rests on 0069's tables: undone first, done again after.
  await positionInInsert.down(raw);
  await migration.down(raw);
  const tenant = newId('tenant');
  await db.kysely
    .insertInto('tenants')
    .values({ id: tenant, name: 'T', slug: `t-${tenant.slice(-6)}`, created_at: new Date().toISOString() })
    .execute();
  const old = (fanned: number) => ({
    id: newId('event'),
    tenant_id: tenant,
    type: 'person.created',
    payload: '{}',
    created_at: new Date().toISOString(),
    fanned_out: fanned,
    fan_lease_until: null,
  });
  const done = [old(1), old(1)];
  const waiting = [old(0), old(0), old(0)];
  // As the service wrote them before 0069: no position column yet.
  await db.kysely
    .insertInto('events')
    .values([done[0], waiting[0], done[1], waiting[1], waiting[2]] as typeof done)
    .execute();
  await migration.up(raw);
  await positionInInsert.up(raw);
  const newer = await emit(db.kysely, tenant, 'person.created', { after: true });
  for (const name of ['webhooks', 'alerts'] as const) {
    const seen: string[] = [];
    const into: EventHandler = async (_trx, events) => {
      seen.push(...events.map((e) => e.id));
    };
    while ((await consume(db.kysely, name, into, 2)) > 0);
    assert.deepEqual(seen, [...waiting.map((e) => e.id).sort(), newer], name);
  }
});
