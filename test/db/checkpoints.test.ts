import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { Kysely } from 'kysely';
import { groupCommitSqlite } from '../../src/db/sqlite.js';
import { onPostgres } from '../helpers.js';

// SQLite's WAL is checkpointed by a worker thread, not in a COMMIT on the event loop (db/checkpoints.ts).
// SQLite starts the WAL over only when a write begins after every frame was copied, which the group
// committer's next write would always beat: these cases pin down that the WAL still starts over,
// and that what was written is in the database file once the handle is closed.

interface Tables {
  blobs: { id: number; body: Buffer };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pam-checkpoints-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function open(name: string) {
  const file = path.join(dir, name);
  const db = new Kysely<Tables>({ dialect: groupCommitSqlite(file).dialect });
  return { file, db };
}

const walBytes = (file: string) => (fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0);

test('the WAL starts over while writes go on, and a closed handle leaves every row in the file', { skip: onPostgres }, async () => {
  // Two handles in one process share the worker: the first is closed while the second is open, and
  // the worker must go on checkpointing the file still open.
  const first = open('first.sqlite');
  const { file, db } = open('second.sqlite');
  for (const handle of [first.db, db]) {
    await handle.schema
      .createTable('blobs')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('body', 'blob')
      .execute();
  }
  await first.db.destroy();
  // Rounds of 10 concurrent transactions of 8 KB (2 pages) each, back to back until at least 32 MB
  // are written and 20 of the worker's passes (100 ms each) have gone by: the group committer's
  // next write follows each commit at once, as under load.
  const body = Buffer.alloc(8 * 1024, 7);
  const least = 32 * 1024 * 1024;
  const started = Date.now();
  let transactions = 0;
  let largest = 0;
  while (transactions * body.length < least || Date.now() - started < 2_000) {
    await Promise.all(
      Array.from({ length: 10 }, () =>
        db.transaction().execute((trx) => trx.insertInto('blobs').values({ id: transactions++, body }).execute()),
      ),
    );
    largest = Math.max(largest, walBytes(file));
  }
  // Without a restart the WAL would hold every frame written. With it, about 1,000 frames (4 MB)
  // and what is written in up to two of the worker's passes: a pass that finds the WAL just under
  // 1,000 frames holds nothing back, so it grows until the pass after. A machine writing 55 MB a
  // second reaches 17 MB so, which is why the run spans 20 passes and not only 32 MB.
  const written = transactions * body.length;
  assert.ok(largest < written / 2, `the WAL reached ${largest} bytes of ${written} written`);
  await db.destroy();

  // The writer's close is the last connection's: it copies what is left and removes the WAL.
  assert.equal(walBytes(file), 0);
  const plain = new Database(file, { readonly: true });
  try {
    assert.deepEqual(plain.prepare('select count(*) as n, sum(length(body)) as bytes from blobs').get(), {
      n: transactions,
      bytes: transactions * body.length,
    });
  } finally {
    plain.close();
  }
});
