import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import type { Kysely } from 'kysely';
import * as siteRollups from '../../src/db/migrations/2026_11_28_0027_site_rollups.js';
import { startApp, type Json, type TestApp } from '../helpers.js';
import { addListed, assertMetrics, newAudience, newPage, ok, postSession, qs, type Sums, zero } from './helpers.js';

// The site answer (`GET /v0/analytics/site`) reads rollups of its own (migration 0027): per hour
// for the series, per day and value for the groups, deleted pages' rows taken out at read time.
// On random sessions over three pages of a tenant of its own (one of them deleted) and random
// queries, it equals what the live pages' listed sessions add up to, bucket by bucket and group by
// group, in any zone, over ranges cut anywhere.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Adelaide'];
const BASE = Date.UTC(2026, 2, 25);
const SPAN = 6 * 86_400_000;
// Some values name a channel group of their own (linkedin + paid_social: Paid Social; email: Email).
const VALUES = ['', 'news', 'ads', 'linkedin', 'paid_social', 'email'];

const session = fc.record({
  page: fc.nat({ max: 2 }),
  offset: fc.nat({ max: SPAN - 1 }),
  seconds: fc.oneof(fc.nat({ max: 3600 }), fc.double({ min: 0, max: 500, noNaN: true })),
  scroll: fc.double({ min: 0, max: 100, noNaN: true }),
  clicks: fc.nat({ max: 40 }),
  bounce: fc.boolean(),
  conversion: fc.boolean(),
  utmSource: fc.constantFrom(...VALUES),
  utmMedium: fc.constantFrom(...VALUES),
  utmCampaign: fc.constantFrom(...VALUES),
});
type SessionCase = typeof session extends fc.Arbitrary<infer T> ? T : never;
const GROUP_BYS = ['utmSource', 'utmMedium', 'utmCampaign', 'channel', 'channelGroup', 'deviceType'] as const;
const query = fc.record({
  zone: fc.constantFrom(...ZONES),
  interval: fc.constantFrom('hour', 'day', 'week'),
  from: fc.nat({ max: SPAN }),
  length: fc.nat({ max: SPAN }),
  groupBy: fc.constantFrom(undefined, ...GROUP_BYS),
  // Whole UTC days, as the console asks, half the time.
  whole: fc.boolean(),
});

/** What a listed session is in a grouping (sessions posted through the API: channels from their UTM values, no device). */
const groupOf = (s: Json, groupBy: (typeof GROUP_BYS)[number]) => (groupBy === 'deviceType' ? '' : String(s[groupBy]));

async function listed(pageId: string, key: string, startDate: string, endDate: string): Promise<Json[]> {
  const items: Json[] = [];
  let cursor: string | undefined;
  do {
    const body = ok(
      await t.req('GET', `/v0/pages/${pageId}/audience_sessions${qs({ startDate, endDate, limit: 100, cursor })}`, undefined, { key }),
    );
    items.push(...body.items);
    cursor = body.nextCursor ?? undefined;
  } while (cursor);
  return items;
}

/** A tenant of its own with three pages, the sessions posted on them, and then its last page deleted. */
async function site(sessions: SessionCase[]) {
  const { key } = await t.newTenant('Site');
  const pages = [await newPage(t, 'One', key), await newPage(t, 'Two', key), await newPage(t, 'Gone', key)];
  const audiences = [];
  for (const pageId of pages) audiences.push(await newAudience(t, pageId, {}, key));
  for (const s of sessions) {
    await postSession(
      t,
      pages[s.page] ?? '',
      { ...s, audienceId: audiences[s.page] ?? '', start: new Date(BASE + s.offset).toISOString() },
      key,
    );
  }
  assert.equal((await t.req('DELETE', `/v0/pages/${pages[2]}`, undefined, { key })).status, 204);
  return { key, live: pages.slice(0, 2) };
}

test("the site answer equals what the live pages' listed sessions add up to, for random data and queries", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(session, { maxLength: 30 }), fc.array(query, { minLength: 3, maxLength: 3 }), async (sessions, queries) => {
      const { key, live } = await site(sessions);
      // The console's usual question, every run: whole UTC days by day, read a row per day.
      const wholeUtcDays = { zone: 'UTC', interval: 'day', from: 0, length: SPAN, groupBy: 'utmSource', whole: true } as const;
      for (const q of [...queries, wholeUtcDays]) {
        const day = 86_400_000;
        const start = q.whole ? BASE + Math.floor(q.from / day) * day : BASE + q.from;
        const end = q.whole ? Math.min(BASE + SPAN, start + Math.ceil(q.length / day) * day) : Math.min(BASE + SPAN, start + q.length);
        const [startDate, endDate] = [new Date(start).toISOString(), new Date(end).toISOString()];
        const body = ok(
          await t.req(
            'GET',
            `/v0/analytics/site${qs({ startDate, endDate, interval: q.interval, timeZone: q.zone, groupBy: q.groupBy })}`,
            undefined,
            { key },
          ),
        );
        const starts = (body.series as Json[]).map((p) => Date.parse(p.start));
        const series = starts.map(() => zero());
        const totals = zero();
        const groups = new Map<string, Sums>();
        for (const pageId of live) {
          for (const s of await listed(pageId, key, startDate, endDate)) {
            const at = Date.parse(s.sessionStartedAt);
            let i = starts.length - 1;
            while (i > 0 && (starts[i] ?? 0) > at) i--;
            addListed(series[i] ?? zero(), s);
            addListed(totals, s);
            if (q.groupBy === undefined) continue;
            const k = groupOf(s, q.groupBy);
            const g = groups.get(k) ?? zero();
            groups.set(k, g);
            addListed(g, s);
          }
        }
        assertMetrics(body.totals, totals, 'totals');
        // Sessions posted through the API have no visitor key: each is a visitor of its own.
        assert.equal(body.totals.visitors, totals.visits);
        for (const [i, p] of (body.series as Json[]).entries()) assertMetrics(p, series[i] ?? zero(), `bucket ${p.start}`);
        if (q.groupBy === undefined) {
          assert.equal(body.groups, undefined);
          continue;
        }
        const expected = [...groups.entries()].sort(([ka, a], [kb, b]) => b.visits - a.visits || (ka < kb ? -1 : ka > kb ? 1 : 0));
        assert.deepEqual(
          (body.groups as Json[]).map((g) => g.key),
          expected.map(([k]) => k),
        );
        for (const [i, g] of (body.groups as Json[]).entries()) assertMetrics(g, expected[i]?.[1] ?? zero(), `group ${g.key}`);
      }
    }),
    { numRuns: 12, seed: Number(process.env.FC_SEED ?? 20261128) },
  );
});

test('the migration fills the site rollups from the sessions (down, then up again, gives the same answer)', async () => {
  const { key } = await t.newTenant('Migrated');
  const pageId = await newPage(t, 'Migrated', key);
  const audienceId = await newAudience(t, pageId, {}, key);
  for (let i = 0; i < 12; i++) {
    await postSession(
      t,
      pageId,
      {
        audienceId,
        start: new Date(BASE + i * 7 * 3_600_000).toISOString(),
        clicks: i,
        utmSource: i % 3 ? 'x' : '',
        utmCampaign: `c${i % 2}`,
      },
      key,
    );
  }
  const query = qs({
    startDate: new Date(BASE).toISOString(),
    endDate: new Date(BASE + 4 * 86_400_000).toISOString(),
    groupBy: 'utmSource',
  });
  const before = ok(await t.req('GET', `/v0/analytics/site${query}`, undefined, { key }));
  assert.equal(before.totals.visits, 12);
  assert.equal(before.totals.clicks, 66);
  assert.deepEqual(
    (before.groups as Json[]).map((g) => [g.key, g.visits]),
    [
      ['x', 8],
      ['', 4],
    ],
  );
  // The migration's own functions, in one transaction (the migrator's lock is shared by every test file on the server).
  await t.app.db.transaction().execute(async (trx) => {
    const db = trx as unknown as Kysely<unknown>;
    await siteRollups.down(db);
    await siteRollups.up(db);
  });
  assert.deepEqual(ok(await t.req('GET', `/v0/analytics/site${query}`, undefined, { key })), before);
});
