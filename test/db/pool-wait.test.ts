import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type Db } from '../../src/db/connection.js';
import { isUnavailable } from '../../src/db/errors.js';
import { freshDatabase, onPostgres, type TestDatabase } from '../helpers.js';

// A query that runs past its 2.5 s limit (a loaded machine, a lock held long) fails alone: the
// database still answers, so requests queued for a connection meanwhile keep their turn. Only an
// unreachable database refuses the queue at once (test/robustness/db-faults.test.ts).

let database: TestDatabase;
let db: Db;

before(async () => {
  if (!onPostgres) return;
  database = await freshDatabase();
  db = openDatabase(loadConfig({ DATABASE_URL: database.url, DATABASE_POOL_SIZE: '1' }).database);
});
after(async () => {
  await db?.close();
  await database?.drop();
});

test('a query past its time limit fails alone; the requests queued behind it are served', {
  skip: !onPostgres && 'PostgreSQL only',
}, async () => {
  const slow = sql`select pg_sleep(4)`.execute(db.kysely);
  // Queued behind the one connection, which the slow query holds until its limit.
  const queued = Array.from({ length: 4 }, (_, i) => sql<{ n: number }>`select ${i}::int as n`.execute(db.kysely));
  await assert.rejects(slow, (err: unknown) => isUnavailable(err));
  const answers = await Promise.allSettled(queued);
  assert.deepEqual(
    answers.map((a) => (a.status === 'fulfilled' ? a.value.rows[0]?.n : `refused: ${String(a.reason)}`)),
    [0, 1, 2, 3],
  );
  // And later requests find the database as it is: up.
  const later = await sql<{ n: number }>`select 7::int as n`.execute(db.kysely);
  assert.equal(later.rows[0]?.n, 7);
});
