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

test('a transaction whose statement timed out never lends its connection again: no later query runs inside it', {
  skip: !onPostgres && 'PostgreSQL only',
}, async () => {
  await sql`create table if not exists pool_wait_rows (id int primary key, n int not null)`.execute(db.kysely);
  await sql`insert into pool_wait_rows values (1, 0) on conflict do nothing`.execute(db.kysely);
  const failed = db.kysely.transaction().execute(async (trx) => {
    await sql`update pool_wait_rows set n = n + 1 where id = 1`.execute(trx);
    // Past the 2.5 s limit; the ROLLBACK that follows waits behind it and times out in turn.
    await sql`select pg_sleep(5)`.execute(trx);
  });
  await assert.rejects(failed, (err: unknown) => isUnavailable(err));
  // With one connection in the pool, this would be the same one, still inside that transaction.
  const { rows } = await sql<{ xid: string | null }>`select pg_current_xact_id_if_assigned()::text as xid`.execute(db.kysely);
  assert.equal(rows[0]?.xid, null, 'not inside the failed transaction');
  // The row lock is freed once the server has finished the statement: an update gets through.
  const updated = await sql`update pool_wait_rows set n = n + 10 where id = 1`.execute(db.kysely);
  assert.equal(Number(updated.numAffectedRows), 1);
  const { rows: after } = await sql<{ n: number }>`select n from pool_wait_rows where id = 1`.execute(db.kysely);
  assert.equal(after[0]?.n, 10, 'the failed transaction wrote nothing');
});
