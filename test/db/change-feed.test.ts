import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { type ChangeFeed, changeFeed } from '../../src/db/change-feed.js';
import { freshDatabase, onPostgres, type TestDatabase } from '../helpers.js';
import { migrateDatabase } from '../../src/db/migrate.js';
import { loadConfig } from '../../src/config.js';
import { noteSiteChange } from '../../src/db/changes.js';
import { openDatabase } from '../../src/db/connection.js';

// The change feed's shared sync (src/db/change-feed.ts): a client asking one request after another
// waits a round trip, not the gap that batches a loaded instance's requests; requests asked
// together share one statement. And what a sync receives: every change committed before it was
// called, whatever the order of transaction ids and commits, and nothing else.

describe('the change feed sync', { skip: !onPostgres && 'PostgreSQL only' }, () => {
  let feed: ChangeFeed;
  let sent = 0;
  let database: TestDatabase;
  before(async () => {
    database = await freshDatabase();
    await migrateDatabase(loadConfig({ DATABASE_URL: database.url }).database);
    feed = changeFeed(database.url, { query: () => sent++ });
    const end = Date.now() + 10_000;
    while (!(await feed.sync())) {
      if (Date.now() > end) assert.fail('the feed did not connect');
      await new Promise((r) => setTimeout(r, 20));
    }
  });
  after(async () => {
    await feed.close();
    await database.drop();
  });

  test('one after another: each sync is sent at once, not after the 16 ms gap', async () => {
    const took: number[] = [];
    for (let i = 0; i < 21; i++) {
      const started = performance.now();
      assert.equal(await feed.sync(), true);
      took.push(performance.now() - started);
    }
    // Waiting out the gap, every sync after the first takes about 16 ms; a round trip, a few. The
    // median, so that a few slow round trips on a loaded machine do not decide.
    const median = took.sort((a, b) => a - b)[10] as number;
    assert.ok(median < 8, `the median sync took ${median.toFixed(1)} ms: ${took.map((t) => t.toFixed(1)).join(', ')}`);
  });

  test('asked together: one statement covers them', async () => {
    await feed.sync();
    const before = sent;
    const all = await Promise.all(Array.from({ length: 120 }, () => feed.sync()));
    assert.ok(all.every(Boolean));
    assert.ok(sent - before <= 3, `${sent - before} syncs sent for 120 asked together`);
  });

  /** A connection writing as the sequence's trigger does (migration 0071). */
  async function writer(): Promise<{ move(tenant: string): Promise<void>; query(text: string): Promise<unknown>; end(): Promise<void> }> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    return {
      move: async (tenant) => {
        await client.query(
          `insert into change_counters (scope, value, writer) values ($1, 1, pg_current_xact_id())
           on conflict (scope) do update set value = change_counters.value + 1, writer = excluded.writer`,
          [`site:${tenant}`],
        );
      },
      query: (text) => client.query(text),
      end: () => client.end(),
    };
  }

  test('a change committed after a sync by a transaction older than it is received by the next', async () => {
    const [older, newer] = [await writer(), await writer()];
    try {
      // The older transaction takes its id first and stays open across the sync.
      await older.query('begin');
      await older.move('t-older');
      assert.equal(await feed.sync(), true);
      const mark = feed.mark();
      // A younger one commits first.
      await newer.move('t-newer#3');
      assert.equal(await feed.sync(), true);
      assert.equal(feed.changedSince('t-newer', mark), true, 'a shard of the tenant moved');
      assert.equal(feed.changedSince('t-older', mark), false, 'not committed yet');
      await older.query('commit');
      assert.equal(await feed.sync(), true);
      assert.equal(feed.changedSince('t-older', mark), true);
      assert.equal(feed.changedSince('t-untouched', mark), false);
      // Rows read again unchanged are no new change.
      const later = feed.mark();
      for (let i = 0; i < 3; i++) assert.equal(await feed.sync(), true);
      assert.equal(feed.changedSince('t-older', later), false);
      assert.equal(feed.changedSince('t-newer', later), false);
      // A rolled-back move is none.
      await older.query('begin');
      await older.move('t-older');
      await older.query('rollback');
      assert.equal(await feed.sync(), true);
      assert.equal(feed.changedSince('t-older', later), false);
    } finally {
      await older.end();
      await newer.end();
    }
  });

  test('a transaction held open past the rows a sync reads: everything kept is forgotten until it ends', async () => {
    const [held, other] = [await writer(), await writer()];
    try {
      assert.equal(await feed.sync(), true);
      const mark = feed.mark();
      await held.query('begin');
      await held.move('t-held');
      for (let i = 0; i < 1001; i++) await other.move(`t-many-${i}`);
      assert.equal(await feed.sync(), true);
      assert.equal(feed.changedSince('t-untouched', mark), true, 'the epoch moved');
      const during = feed.mark();
      assert.equal(await feed.sync(), true);
      assert.equal(feed.changedSince('t-untouched', during), true, 'still too many rows: forgotten again');
      await held.query('commit');
      // Transaction ids are the whole server's: a transaction another test file holds open meanwhile
      // (the suite runs files side by side on one server) holds the snapshot's oldest id back as
      // `held` did, and everything stays forgotten until it ends too. So the syncs are asked again
      // until the server's oldest open transaction is past these rows, for two minutes at most.
      let after = feed.mark();
      for (const end = Date.now() + 120_000; ; ) {
        assert.equal(await feed.sync(), true);
        after = feed.mark();
        await other.move('t-many-0');
        assert.equal(await feed.sync(), true);
        if (!feed.changedSince('t-untouched', after) || Date.now() > end) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(feed.changedSince('t-untouched', after), false, 'back to reading only what moved');
      assert.equal(feed.changedSince('t-many-0', after), true);
    } finally {
      await held.end();
      await other.end();
    }
  });

  test('a change no trigger covers (noteSiteChange) is received too', async () => {
    const db = openDatabase(loadConfig({ DATABASE_URL: database.url }).database);
    try {
      assert.equal(await feed.sync(), true);
      const mark = feed.mark();
      await db.kysely.transaction().execute((trx) => noteSiteChange(trx, 't-noted'));
      assert.equal(await feed.sync(), true);
      assert.equal(feed.changedSince('t-noted', mark), true);
    } finally {
      await db.close();
    }
  });
});
