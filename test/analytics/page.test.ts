import type { Kysely } from 'kysely';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fileUrlSecret } from '../../src/assets/files.js';
import * as analyticsMigration from '../../src/db/migrations/2026_11_24_0013_analytics.js';
import * as visitorRollups from '../../src/db/migrations/2026_11_27_0022_visitor_rollups.js';
import { viewTokens, type ViewTokens } from '../../src/site/token.js';
import { expectProblem, startApp, type Json, type TestApp } from '../helpers.js';
import { addListed, analytics, assertMetrics, newAudience, newPage, ok, postSession, wall, zero } from './helpers.js';

// GET /v0/pages/{page_id}/analytics through HTTP: bounds, defaults, time zones, grouping, and a
// visit updated by the collector after it was first counted.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const DAY = 86_400_000;
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

describe('bounds of the query', () => {
  let pageId: string;
  before(async () => {
    pageId = await newPage(t, 'Bounds');
  });

  test('a range of exactly 400 days is answered; a millisecond more is 400 at /endDate', async () => {
    const start = Date.UTC(2025, 0, 1);
    const body = ok(await analytics(t, pageId, { startDate: iso(start), endDate: iso(start + 400 * DAY) }));
    assert.equal(body.series.length, 400);
    expectProblem(await analytics(t, pageId, { startDate: iso(start), endDate: iso(start + 400 * DAY + 1) }), 400, 'validation_failed', [
      '/endDate',
    ]);
  });

  test('startDate alone more than 400 days before the default end is 400 at /startDate', async () => {
    expectProblem(await analytics(t, pageId, { startDate: iso(Date.now() - 402 * DAY) }), 400, 'validation_failed', ['/startDate']);
    ok(await analytics(t, pageId, { startDate: iso(Date.now() - 398 * DAY) }));
  });

  test('2,000 hourly buckets are answered; 2,001 are 400 at /interval', async () => {
    const start = Date.UTC(2026, 0, 1);
    const body = ok(await analytics(t, pageId, { startDate: iso(start), endDate: iso(start + 2000 * HOUR), interval: 'hour' }));
    assert.equal(body.series.length, 2000);
    expectProblem(
      await analytics(t, pageId, { startDate: iso(start), endDate: iso(start + 2000 * HOUR + 1), interval: 'hour' }),
      400,
      'validation_failed',
      ['/interval'],
    );
    // A start inside an hour adds the bucket it falls in.
    expectProblem(
      await analytics(t, pageId, { startDate: iso(start - 1), endDate: iso(start + 2000 * HOUR), interval: 'hour' }),
      400,
      'validation_failed',
      ['/interval'],
    );
  });

  test('start after end is 400 at /startDate; start equal to end is an empty range', async () => {
    expectProblem(
      await analytics(t, pageId, { startDate: '2026-01-02T00:00:00Z', endDate: '2026-01-01T23:59:59.999Z' }),
      400,
      'validation_failed',
      ['/startDate'],
    );
    const empty = ok(await analytics(t, pageId, { startDate: '2026-01-02T00:00:00Z', endDate: '2026-01-02T00:00:00Z' }));
    assert.deepEqual(empty.series, []);
    assertMetrics(empty.totals, zero());
  });

  test('malformed and unknown values are 400 naming the field', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ startDate: 'yesterday' }, '/startDate'],
      [{ endDate: '2026-01-01' }, '/endDate'],
      [{ interval: 'month' }, '/interval'],
      [{ groupBy: 'utmTerm' }, '/groupBy'],
      [{ timeZone: 'Mars/Olympus_Mons' }, '/timeZone'],
      [{ timeZone: '+01:00' }, '/timeZone'],
      [{ timeZone: '' }, '/timeZone'],
      [{ timeZone: `Europe/${'x'.repeat(58)}` }, '/timeZone'],
      [{ limit: '5' }, '/limit'],
    ];
    for (const [query, path] of cases) {
      expectProblem(await analytics(t, pageId, query), 400, 'validation_failed', [path]);
    }
  });

  test('an unknown page, another tenant page, and an audience of another page are 404', async () => {
    expectProblem(await analytics(t, 'page_01h0000000000000000000000a'), 404, 'not_found');
    const other = await t.newTenant('Other');
    const theirs = await newPage(t, 'Theirs', other.key);
    expectProblem(await analytics(t, theirs), 404, 'not_found');
    const elsewhere = await newAudience(t, await newPage(t, 'Elsewhere'));
    expectProblem(await analytics(t, pageId, { audienceId: elsewhere }), 404, 'not_found');
    expectProblem(await analytics(t, pageId, {}, 'pak_nope'), 401, 'unauthorized');
  });

  test('defaults: the last 30 days by day in UTC, ending at the next midnight', async () => {
    const before = Date.now();
    const body = ok(await analytics(t, pageId));
    const end = Math.floor(before / DAY) * DAY + DAY;
    assert.equal(body.interval, 'day');
    assert.equal(body.timeZone, 'UTC');
    assert.equal(body.endDate, iso(end));
    assert.equal(body.startDate, iso(end - 30 * DAY));
    assert.equal(body.series.length, 30);
    assert.equal(body.series[0].start, body.startDate);
    assert.equal(body.groups, undefined);
    // Nothing measured: rates and averages are null, counts and sums 0.
    assert.deepEqual(body.series[29], {
      start: iso(end - DAY),
      visits: 0,
      visitors: 0,
      bounces: 0,
      bounceRate: null,
      timeSpentSeconds: 0,
      avgTimeSpentSeconds: null,
      avgMaxScrollDepthPercentage: null,
      clicks: 0,
      questionsAsked: 0,
      formSubmits: 0,
      conversions: 0,
      conversionRate: null,
    });
  });
});

describe('time zones', () => {
  test('Europe/Berlin across the spring change: a day of 23 hours, sessions in their local day', async () => {
    const pageId = await newPage(t, 'Berlin');
    const audienceId = await newAudience(t, pageId);
    // Local midnights: 28 March 00:00+01 = 27T23:00Z, 29 March 00:00+01 = 28T23:00Z, 30 March 00:00+02 = 29T22:00Z.
    const starts = ['2026-03-28T22:59:59.999Z', '2026-03-28T23:00:00.000Z', '2026-03-29T21:59:59.999Z', '2026-03-29T22:00:00.000Z'];
    for (const start of starts) await postSession(t, pageId, { audienceId, start });
    const body = ok(
      await analytics(t, pageId, {
        startDate: '2026-03-28T00:00:00+01:00',
        endDate: '2026-03-31T00:00:00+02:00',
        timeZone: 'Europe/Berlin',
      }),
    );
    assert.deepEqual(
      body.series.map((p: Json) => [p.start, p.visits]),
      [
        ['2026-03-27T23:00:00.000Z', 1],
        ['2026-03-28T23:00:00.000Z', 2],
        ['2026-03-29T22:00:00.000Z', 1],
      ],
    );
    // By the hour, the skipped local hour 02:00 is no bucket: 23 buckets that day.
    const hours = ok(
      await analytics(t, pageId, {
        startDate: '2026-03-29T00:00:00+01:00',
        endDate: '2026-03-30T00:00:00+02:00',
        timeZone: 'Europe/Berlin',
        interval: 'hour',
      }),
    );
    assert.equal(hours.series.length, 23);
    assert.ok(hours.series.every((p: Json) => wall(Date.parse(p.start), 'Europe/Berlin').minute === 0));
    assert.ok(!hours.series.some((p: Json) => wall(Date.parse(p.start), 'Europe/Berlin').hour === 2));
    assert.equal(hours.totals.visits, 2);
  });

  test('America/New_York across the autumn change: 25-hour day, the repeated 01:00 is two hourly buckets', async () => {
    const pageId = await newPage(t, 'New York');
    const audienceId = await newAudience(t, pageId);
    // 1 November 2026: 01:00 EDT = 05:00Z and 01:00 EST = 06:00Z.
    await postSession(t, pageId, { audienceId, start: '2026-11-01T05:30:00.000Z', clicks: 2 });
    await postSession(t, pageId, { audienceId, start: '2026-11-01T06:30:00.000Z', clicks: 3 });
    await postSession(t, pageId, { audienceId, start: '2026-11-02T04:59:59.000Z', clicks: 4 });
    const zone = 'America/New_York';
    const days = ok(await analytics(t, pageId, { startDate: '2026-11-01T04:00:00Z', endDate: '2026-11-03T05:00:00Z', timeZone: zone }));
    assert.deepEqual(
      days.series.map((p: Json) => [p.start, p.visits, p.clicks]),
      [
        ['2026-11-01T04:00:00.000Z', 3, 9],
        ['2026-11-02T05:00:00.000Z', 0, 0],
      ],
    );
    const hours = ok(
      await analytics(t, pageId, { startDate: '2026-11-01T04:00:00Z', endDate: '2026-11-01T08:00:00Z', timeZone: zone, interval: 'hour' }),
    );
    assert.deepEqual(
      hours.series.map((p: Json) => [p.start, wall(Date.parse(p.start), zone).hour, p.visits]),
      [
        ['2026-11-01T04:00:00.000Z', 0, 0],
        ['2026-11-01T05:00:00.000Z', 1, 1],
        ['2026-11-01T06:00:00.000Z', 1, 1],
        ['2026-11-01T07:00:00.000Z', 2, 0],
      ],
    );
    // Weeks start on Monday's local midnight.
    const weeks = ok(
      await analytics(t, pageId, { startDate: '2026-10-28T00:00:00Z', endDate: '2026-11-10T00:00:00Z', timeZone: zone, interval: 'week' }),
    );
    assert.deepEqual(
      weeks.series.map((p: Json) => [p.start, p.visits]),
      [
        // 1 November 2026 is a Sunday: all three fall in the week of Monday 26 October.
        ['2026-10-26T04:00:00.000Z', 3],
        ['2026-11-02T05:00:00.000Z', 0],
        ['2026-11-09T05:00:00.000Z', 0],
      ],
    );
  });

  test('a zone half an hour off UTC (Asia/Kolkata): buckets at local midnight, hours cut by them read from the sessions', async () => {
    const pageId = await newPage(t, 'Kolkata');
    const audienceId = await newAudience(t, pageId);
    // Local midnight of 2 March = 1 March 18:30Z.
    for (const start of ['2026-03-01T18:00:00.000Z', '2026-03-01T18:29:59.999Z', '2026-03-01T18:30:00.000Z', '2026-03-01T18:59:00.000Z']) {
      await postSession(t, pageId, { audienceId, start });
    }
    const body = ok(
      await analytics(t, pageId, {
        startDate: '2026-03-01T00:00:00+05:30',
        endDate: '2026-03-03T00:00:00+05:30',
        timeZone: 'Asia/Kolkata',
      }),
    );
    assert.deepEqual(
      body.series.map((p: Json) => [p.start, p.visits]),
      [
        ['2026-02-28T18:30:00.000Z', 2],
        ['2026-03-01T18:30:00.000Z', 2],
      ],
    );
  });

  test('range bounds inside an hour count only the sessions inside them', async () => {
    const pageId = await newPage(t, 'Edges');
    const audienceId = await newAudience(t, pageId);
    for (const start of [
      '2026-05-01T10:14:59.999Z',
      '2026-05-01T10:15:00.000Z',
      '2026-05-01T10:59:00.000Z',
      '2026-05-01T12:44:59.999Z',
      '2026-05-01T12:45:00.000Z',
    ]) {
      await postSession(t, pageId, { audienceId, start });
    }
    const body = ok(await analytics(t, pageId, { startDate: '2026-05-01T10:15:00Z', endDate: '2026-05-01T12:45:00Z', interval: 'hour' }));
    assert.deepEqual(
      body.series.map((p: Json) => [p.start, p.visits]),
      [
        ['2026-05-01T10:00:00.000Z', 2],
        ['2026-05-01T11:00:00.000Z', 0],
        ['2026-05-01T12:00:00.000Z', 1],
      ],
    );
    assert.equal(body.totals.visits, 3);
  });
});

describe('grouping', () => {
  test('by audience: the label is the effectiveName; top 50 by visits, then by key', async () => {
    const pageId = await newPage(t, 'Groups');
    const audiences: string[] = [];
    for (let i = 0; i < 52; i++) audiences.push(await newAudience(t, pageId, i === 0 ? { customName: 'Most visited' } : {}));
    const start = '2026-06-01T12:00:00.000Z';
    for (const [i, audienceId] of audiences.entries()) {
      await postSession(t, pageId, { audienceId, start, conversion: i % 2 === 0 });
      if (i === 0) {
        await postSession(t, pageId, { audienceId, start });
        await postSession(t, pageId, { audienceId, start });
      }
    }
    const range = { startDate: '2026-06-01T00:00:00Z', endDate: '2026-06-02T00:00:00Z' };
    const body = ok(await analytics(t, pageId, { ...range, groupBy: 'audience' }));
    assert.equal(body.groups.length, 50);
    assert.equal(body.groups[0].key, audiences[0]);
    assert.equal(body.groups[0].label, 'Most visited');
    assert.equal(body.groups[0].visits, 3);
    const rest = [...audiences.slice(1)].sort().slice(0, 49);
    assert.deepEqual(
      body.groups.slice(1).map((g: Json) => g.key),
      rest,
    );
    const names = new Map(
      (ok(await t.req('GET', `/v0/pages/${pageId}/audiences?limit=100`)).items as Json[]).map((a) => [a.audienceId, a.effectiveName]),
    );
    assert.ok(body.groups.every((g: Json) => g.label === names.get(g.key)));
    assert.equal(body.totals.visits, 54);

    const one = ok(await analytics(t, pageId, { ...range, groupBy: 'audience', audienceId: audiences[1] }));
    assert.deepEqual(
      one.groups.map((g: Json) => g.key),
      [audiences[1]],
    );
    assert.equal(one.totals.visits, 1);
  });

  test('by UTM source, medium and campaign: "" for sessions without one', async () => {
    const pageId = await newPage(t, 'UTM');
    const a = await newAudience(t, pageId);
    const b = await newAudience(t, pageId);
    const start = '2026-06-03T09:00:00.000Z';
    await postSession(t, pageId, { audienceId: a, start, utmSource: 'news', utmMedium: 'email', utmCampaign: 'spring' });
    await postSession(t, pageId, { audienceId: b, start, utmSource: 'news', utmMedium: 'social' });
    await postSession(t, pageId, { audienceId: a, start, utmSource: '=cmd', utmCampaign: 'spring' });
    await postSession(t, pageId, { audienceId: b, start });
    const range = { startDate: '2026-06-03T00:00:00Z', endDate: '2026-06-04T00:00:00Z' };
    const keys = async (groupBy: string, extra: Json = {}) =>
      (ok(await analytics(t, pageId, { ...range, groupBy, ...extra })).groups as Json[]).map((g) => [g.key, g.label, g.visits]);
    assert.deepEqual(await keys('utmSource'), [
      ['news', 'news', 2],
      ['', '', 1],
      ['=cmd', '=cmd', 1],
    ]);
    assert.deepEqual(await keys('utmMedium'), [
      ['', '', 2],
      ['email', 'email', 1],
      ['social', 'social', 1],
    ]);
    assert.deepEqual(await keys('utmCampaign'), [
      ['', '', 2],
      ['spring', 'spring', 2],
    ]);
    assert.deepEqual(await keys('utmSource', { audienceId: b }), [
      ['', '', 1],
      ['news', 'news', 1],
    ]);
    // Without visits in the range there is no group at all.
    assert.deepEqual(
      ok(await analytics(t, pageId, { startDate: '2027-01-01T00:00:00Z', endDate: '2027-01-02T00:00:00Z', groupBy: 'utmSource' })).groups,
      [],
    );
  });
});

describe('visits measured by the collector', () => {
  let tokens: ViewTokens;
  let host: string;
  before(async () => {
    tokens = viewTokens(await fileUrlSecret(t.app.db, t.app.config.fileUrlSecret));
    host = (ok(await t.req('GET', '/v0/tenant_domains')).items as Json[]).find((d) => d.isFallback).hostname;
  });

  const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
  let address = 1;
  const send = (body: Json) =>
    t.app.inject({
      method: 'POST',
      url: '/_pam/collect',
      remoteAddress: `198.51.100.${address++}`,
      headers: { host, 'content-type': 'text/plain;charset=UTF-8', 'user-agent': BROWSER },
      payload: JSON.stringify(body),
    });

  test('a visit updated after it was first counted is counted once, with its final values (and its final UTM source)', async () => {
    const pageId = await newPage(t, 'Collected');
    const audienceId = await newAudience(t, pageId);
    const link = ok(await t.req('POST', '/v0/page_links', { path: '/collected', target: { targetType: 'audience', audienceId } }), 201);
    const { token } = tokens.sign({ tenantId: t.tenantId, pageId, audienceId, linkId: link.pageLinkId }, Date.now() - 60_000);
    const report = (fields: Json) => ({ token, visibleMs: 0, scroll: 0, clicks: 0, questions: 0, conversions: 0, ...fields });
    assert.equal((await send(report({ visibleMs: 1000, scroll: 10 }))).statusCode, 204);
    const range = { startDate: iso(Date.now() - DAY), endDate: iso(Date.now() + DAY), interval: 'hour', groupBy: 'utmSource' };
    const first = ok(await analytics(t, pageId, range));
    assert.equal(first.totals.visits, 1);
    assert.equal(first.totals.bounces, 1);
    assert.equal(first.totals.timeSpentSeconds, 1);

    assert.equal((await send(report({ visibleMs: 20_000, scroll: 80, clicks: 3, conversions: 1, utmSource: 'late' }))).statusCode, 204);
    const [session] = (ok(await t.req('GET', `/v0/pages/${pageId}/audience_sessions`)).items as Json[]) ?? [];
    const final = ok(await analytics(t, pageId, range));
    const expected = zero();
    addListed(expected, session);
    assertMetrics(final.totals, expected, 'totals');
    assert.equal(final.totals.visits, 1);
    assert.equal(final.totals.clicks, 3);
    assert.equal(final.totals.conversions, 1);
    assert.equal(final.totals.avgMaxScrollDepthPercentage, 80);
    assert.deepEqual(
      final.groups.map((g: Json) => [g.key, g.visits]),
      [['late', 1]],
    );
    assert.equal(
      final.series.reduce((n: number, p: Json) => n + p.visits, 0),
      1,
    );
  });
});

describe('the migration', () => {
  test('fills the rollups from the sessions stored before it (down, then up again, gives the same answer)', async () => {
    const pageId = await newPage(t, 'Backfill');
    const a = await newAudience(t, pageId);
    for (let i = 0; i < 20; i++) {
      await postSession(t, pageId, {
        audienceId: a,
        start: iso(Date.UTC(2026, 6, 1) + i * 5 * HOUR),
        clicks: i,
        utmSource: i % 3 ? 'x' : '',
      });
    }
    const query = { startDate: '2026-07-01T00:00:00Z', endDate: '2026-07-06T00:00:00Z', groupBy: 'utmSource' };
    const before = ok(await analytics(t, pageId, query));
    // The migration's own functions, in one transaction (the migrator's lock is shared by every test file on the server).
    await t.app.db.transaction().execute(async (trx) => {
      const db = trx as unknown as Kysely<unknown>;
      // Migration 0022 reshaped the hourly rollup since: undone first and done again last.
      await visitorRollups.down(db);
      await analyticsMigration.down(db);
      await analyticsMigration.up(db);
      await visitorRollups.up(db);
    });
    const rows = await t.app.db
      .selectFrom('analytics_hours_utm')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.ok(Number(rows.n) > 0);
    const again = ok(await analytics(t, pageId, query));
    assert.deepEqual(again, before);
    assert.equal(again.totals.visits, 20);
    assert.equal(again.totals.clicks, 190);
  });
});
