import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { startApp, type Json, type TestApp } from '../helpers.js';
import { addListed, analytics, assertMetrics, listAll, newAudience, newPage, ok, postSession, type Sums, wall, zero } from './helpers.js';

// On random sessions and random queries (zones with and without daylight saving, and half-hour
// offsets; ranges around Europe/Berlin's and America/New_York's spring changes), the analytics
// equal what the listed sessions add up to, bucket by bucket and group by group. The buckets'
// starts are checked against the zone's wall clock as Intl reads it.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Asia/Kathmandu', 'Australia/Adelaide'];
// 2026-03-25 .. 2026-04-04: both spring changes (New York 8 March is outside; Berlin 29 March inside),
// and New York's is covered by the second window.
const WINDOWS = [Date.UTC(2026, 2, 25), Date.UTC(2026, 2, 4)];
const SPAN = 10 * 86_400_000;

const session = fc.record({
  audience: fc.nat({ max: 2 }),
  offset: fc.nat({ max: SPAN - 1 }),
  seconds: fc.oneof(fc.nat({ max: 3600 }), fc.double({ min: 0, max: 500, noNaN: true })),
  scroll: fc.double({ min: 0, max: 100, noNaN: true }),
  clicks: fc.nat({ max: 40 }),
  questions: fc.nat({ max: 5 }),
  bounce: fc.boolean(),
  form: fc.boolean(),
  conversion: fc.boolean(),
  utmSource: fc.constantFrom('', 'news', 'ads', '+x'),
});
const query = fc.record({
  zone: fc.constantFrom(...ZONES),
  interval: fc.constantFrom('hour', 'day', 'week'),
  from: fc.nat({ max: SPAN }),
  length: fc.nat({ max: SPAN }),
  groupBy: fc.constantFrom(undefined, 'audience', 'utmSource'),
  oneAudience: fc.boolean(),
});

function checkStarts(starts: number[], zone: string, interval: string, start: number, end: number) {
  for (const [i, s] of starts.entries()) {
    const w = wall(s, zone);
    assert.equal(w.minute, 0, `bucket ${i} starts on a local hour`);
    if (interval !== 'hour') assert.equal(w.hour, 0, `bucket ${i} starts at local midnight`);
    if (interval === 'week') assert.equal(w.weekday, 'Mon');
    if (i > 0) {
      const prev = starts[i - 1] ?? 0;
      assert.ok(s > prev);
      if (interval === 'day') assert.notEqual(wall(prev, zone).date, w.date);
      if (interval === 'hour') assert.ok(s - prev <= 3_600_000);
    }
  }
  if (starts.length > 0) {
    assert.ok((starts[0] ?? 0) <= start && (starts.length === 1 || start < (starts[1] ?? 0)));
    assert.ok((starts[starts.length - 1] ?? 0) < end);
  }
}

test('analytics equal the listed sessions, for random data and queries', async () => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(session, { minLength: 0, maxLength: 25 }),
      fc.array(query, { minLength: 3, maxLength: 3 }),
      async (sessions, queries) => {
        const base = WINDOWS[run++ % WINDOWS.length] ?? 0;
        const pageId = await newPage(t, `Random ${run}`);
        const audiences = [await newAudience(t, pageId), await newAudience(t, pageId), await newAudience(t, pageId)];
        for (const s of sessions) {
          await postSession(t, pageId, {
            ...s,
            audienceId: audiences[s.audience] ?? '',
            start: new Date(base + s.offset).toISOString(),
          });
        }
        for (const q of queries) {
          const start = base + q.from;
          const end = Math.min(base + SPAN, start + q.length);
          const audienceId = q.oneAudience ? audiences[0] : undefined;
          const filters = { startDate: new Date(start).toISOString(), endDate: new Date(end).toISOString(), audienceId };
          const body = ok(await analytics(t, pageId, { ...filters, interval: q.interval, timeZone: q.zone, groupBy: q.groupBy }));
          const listed = await listAll(t, pageId, filters);
          const starts = (body.series as Json[]).map((p) => Date.parse(p.start));
          checkStarts(starts, q.zone, q.interval, start, end);
          if (start === end) assert.equal(starts.length, 0);

          const series = starts.map(() => zero());
          const totals = zero();
          const groups = new Map<string, Sums>();
          for (const s of listed) {
            const at = Date.parse(s.sessionStartedAt);
            let i = starts.length - 1;
            while (i > 0 && (starts[i] ?? 0) > at) i--;
            addListed(series[i] ?? zero(), s);
            addListed(totals, s);
            const key = q.groupBy === 'audience' ? s.audienceId : s.utmSource;
            const g = groups.get(key) ?? zero();
            groups.set(key, g);
            addListed(g, s);
          }
          assertMetrics(body.totals, totals, 'totals');
          for (const [i, p] of (body.series as Json[]).entries()) assertMetrics(p, series[i] ?? zero(), `bucket ${p.start}`);
          if (q.groupBy === undefined) {
            assert.equal(body.groups, undefined);
          } else {
            const expected = [...groups.entries()].sort(([ka, a], [kb, b]) => b.visits - a.visits || (ka < kb ? -1 : ka > kb ? 1 : 0));
            assert.deepEqual(
              (body.groups as Json[]).map((g) => g.key),
              expected.map(([k]) => k),
            );
            for (const [i, g] of (body.groups as Json[]).entries()) assertMetrics(g, expected[i]?.[1] ?? zero(), `group ${g.key}`);
          }
        }
      },
    ),
    { numRuns: 30, seed: Number(process.env.FC_SEED ?? 20261124) },
  );
});
