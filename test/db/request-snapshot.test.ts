import assert from 'node:assert/strict';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import { ok, onPostgres, startApp, type TestApp } from '../helpers.js';

// SQLite's reads of one turn of the event loop share a snapshot (src/db/sqlite.ts). A request
// must still see every commit made before it arrived, in any process: a snapshot a timer's read
// began earlier in the same turn would not hold one made by another instance meanwhile, which its
// client may already have been told of. PostgreSQL reads each statement afresh.

let t: TestApp;
let other: Database.Database;
before(async () => {
  if (onPostgres) return;
  // No background loop: this test plays the timer's read itself, and the other connection's write
  // (synchronous, as another process's) must not wait for this process's group commit.
  t = await startApp({ WEBHOOK_DISPATCHER: 'false', ALERT_SENDER: 'false', AGENT: 'false' });
  const { database } = t.app.config;
  assert.ok(database.kind === 'sqlite');
  other = new Database(database.path);
});
after(async () => {
  other?.close();
  await t?.close();
});

test('a request sees a commit made after a read of its turn began the snapshot', { skip: onPostgres }, async () => {
  const person = ok(await t.req('POST', '/v0/persons', { name: 'Before', email: 'before@example.com' }), 201);
  const rename = other.prepare('update persons set name = ? where id = ?');
  let busy = 0;
  for (let round = 1; round <= 3; round++) {
    // Each round in a turn of its own, as a timer's would be, before any request of that turn.
    await new Promise((resolve) => setImmediate(resolve));
    // A read outside any request, as a background loop's: it begins the turn's snapshot.
    await t.app.db.selectFrom('persons').select('name').where('id', '=', person.personId).execute();
    // Another process commits, and its client asks this instance, all in the same turn. (The write
    // cannot wait: this process's writer must first finish a group it may have begun.)
    if (!renamed(() => rename.run(`Elsewhere ${round}`, person.personId))) {
      assert.ok(++busy < 100, 'the database stayed locked by this process for 100 tries');
      await new Promise((resolve) => setTimeout(resolve, 20));
      round--;
      continue;
    }
    assert.equal(ok(await t.req('GET', `/v0/persons/${person.personId}`)).name, `Elsewhere ${round}`);
  }
});

test('a request sees a commit made after a request of the turn before began the snapshot', { skip: onPostgres }, async () => {
  // A request that arrives after the poll (here: in an immediate, as the injections of a test or
  // of the MCP server may) begins a snapshot whose end waits for the next turn's immediates. The
  // next poll then comes first: a commit reported to a client there, and that client's request in
  // the same poll, must not be answered from the snapshot of the turn before.
  const person = ok(await t.req('POST', '/v0/persons', { name: 'Before', email: 'turns@example.com' }), 201);
  const rename = other.prepare('update persons set name = ? where id = ?');
  const fd = fs.openSync(fileURLToPath(import.meta.url), 'r');
  try {
    let busy = 0;
    for (let round = 1; round <= 3; round++) {
      const name = await new Promise<string>((resolve, reject) => {
        setImmediate(() => {
          // In the check phase: the request arrives and its read begins the snapshot.
          t.req('GET', `/v0/persons/${person.personId}`).then(() => {
            // One thread-pool read, done while this turn is held, so that its callback runs in
            // the next poll, before the immediates queued in this one.
            fs.read(fd, Buffer.alloc(1), 0, 1, 0, () => {
              // The next poll: another process commits, and its client asks this instance.
              if (!renamed(() => rename.run(`Next turn ${round}`, person.personId))) return resolve('');
              t.req('GET', `/v0/persons/${person.personId}`).then((res) => resolve(ok(res).name as string), reject);
            });
            const until = performance.now() + 20;
            while (performance.now() < until);
          }, reject);
        });
      });
      if (name === '') {
        assert.ok(++busy < 100, 'the database stayed locked by this process for 100 tries');
        await new Promise((resolve) => setTimeout(resolve, 20));
        round--;
        continue;
      }
      assert.equal(name, `Next turn ${round}`);
    }
  } finally {
    fs.closeSync(fd);
  }
});

/** Runs `write`, false if the database was locked by this process's writer. */
function renamed(write: () => unknown): boolean {
  try {
    write();
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === 'SQLITE_BUSY') return false;
    throw err;
  }
}
