import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type ChangeFeed, changeFeed } from '../../src/db/change-feed.js';
import { onPostgres, TEST_DATABASE_URL } from '../helpers.js';

// The change feed's shared sync (src/db/change-feed.ts): a client asking one request after another
// waits a round trip, not the gap that batches a loaded instance's requests; requests asked
// together share one statement.

describe('the change feed sync', { skip: !onPostgres && 'PostgreSQL only' }, () => {
  let feed: ChangeFeed;
  let sent = 0;
  before(async () => {
    feed = changeFeed(TEST_DATABASE_URL, { query: () => sent++ });
    const end = Date.now() + 10_000;
    while (!(await feed.sync())) {
      if (Date.now() > end) assert.fail('the feed did not connect');
      await new Promise((r) => setTimeout(r, 20));
    }
  });
  after(() => feed.close());

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
});
