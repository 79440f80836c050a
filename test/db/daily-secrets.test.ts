import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { dailySecrets, forgetPastSecrets } from '../../src/db/daily-secrets.js';
import { startApp, type TestApp } from '../helpers.js';

// The daily salt (issue 28): one secret a UTC day on every instance, a new one the next day, and
// yesterday's gone once forgotten. Each instance keeps today's in memory; the clock is the test's.
let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => t.close());

test("a secret per UTC day, the same for two instances, the day's bounds exact, the past forgotten", async () => {
  let now = Date.parse('2031-03-04T00:00:00.000Z');
  const clock = () => now;
  const a = dailySecrets(t.app.db, clock);
  const b = dailySecrets(t.app.db, clock);
  const first = await a.today();
  assert.equal(first.length, 32);
  assert.deepEqual(await b.today(), first, 'the other instance gets the same secret');
  now = Date.parse('2031-03-04T23:59:59.999Z');
  assert.deepEqual(await a.today(), first, 'the last millisecond of the day');
  now = Date.parse('2031-03-05T00:00:00.000Z');
  const second = await a.today();
  assert.notDeepEqual(second, first, 'the next day has its own');
  assert.deepEqual(await b.today(), second);
  // A clock set back (another instance's view of yesterday) finds yesterday's again, not today's.
  now = Date.parse('2031-03-04T12:00:00.000Z');
  assert.deepEqual(await a.today(), first);
  await forgetPastSecrets(t.app.db, Date.parse('2031-03-05T00:00:00.000Z'));
  const kept = await t.app.db.selectFrom('daily_secrets').select('day').where('day', 'like', '2031-%').execute();
  assert.deepEqual(
    kept.map((r) => r.day),
    ['2031-03-05'],
  );
});
