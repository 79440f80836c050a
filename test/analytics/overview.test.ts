import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, startApp, type Json, type TestApp } from '../helpers.js';
import { addListed, assertMetrics, listAll, newAudience, newPage, ok, postSession, qs, zero } from './helpers.js';

// GET /v0/analytics/pages: totals per page over a range, sorted, keyset-paginated.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const overview = (query: Record<string, string | number | undefined> = {}, key?: string) =>
  t.req('GET', `/v0/analytics/pages${qs(query)}`, undefined, key ? { key } : {});
const RANGE = { startDate: '2026-02-01T00:00:00Z', endDate: '2026-02-08T00:00:00Z' };

async function allPages(query: Record<string, string | number | undefined>): Promise<Json[]> {
  const items: Json[] = [];
  let cursor: string | undefined;
  do {
    const body = ok(await overview({ ...query, cursor }));
    items.push(...body.items);
    cursor = body.nextCursor ?? undefined;
  } while (cursor);
  return items;
}

describe('the pages overview', () => {
  const pages: string[] = [];
  before(async () => {
    // Page i gets i + 1 visits in the range (some of them cut by the range's edges) and i % 3 conversions.
    for (let i = 0; i < 7; i++) {
      const pageId = await newPage(t, `Overview ${i}`);
      pages.push(pageId);
      const audienceId = await newAudience(t, pageId);
      for (let v = 0; v <= i; v++) {
        const start = new Date(Date.parse(RANGE.startDate) + v * 20 * 3_600_000 + i * 60_000).toISOString();
        await postSession(t, pageId, { audienceId, start, conversion: v < i % 3, clicks: v });
      }
      // Outside the range: just before it and at its end.
      await postSession(t, pageId, { audienceId, start: '2026-01-31T23:59:59.999Z' });
      await postSession(t, pageId, { audienceId, start: RANGE.endDate });
    }
    await newPage(t, 'No visits');
  });

  test('each page with visits, its totals equal to its listed sessions, most visited first', async () => {
    const items = await allPages({ ...RANGE, limit: 3 });
    assert.deepEqual(
      items.map((p) => p.pageId),
      [...pages].reverse(),
    );
    for (const item of items) {
      const sums = zero();
      for (const s of await listAll(t, item.pageId, RANGE)) addListed(sums, s);
      assertMetrics(item, sums, item.pageName);
      assert.match(item.pageName, /^Overview \d$/);
    }
    const first = ok(await overview({ ...RANGE, limit: 3 }));
    assert.equal(first.totalCount, 7);
    assert.equal(first.hasMore, true);
  });

  test('ranges cut inside hours and days count only the sessions inside them', async () => {
    const query = { startDate: '2026-02-01T00:03:30Z', endDate: '2026-02-04T19:02:00Z' };
    const items = await allPages({ ...query, limit: 100 });
    for (const pageId of pages) {
      const sums = zero();
      for (const s of await listAll(t, pageId, query)) addListed(sums, s);
      const item = items.find((p) => p.pageId === pageId);
      if (sums.visits === 0) assert.equal(item, undefined);
      else assertMetrics(item, sums, pageId);
    }
  });

  test('sort=conversions: most conversions first, ties by page id', async () => {
    const items = await allPages({ ...RANGE, sort: 'conversions', limit: 2 });
    const expected = pages.map((id, i) => ({ id, c: i % 3 })).sort((a, b) => b.c - a.c || (a.id < b.id ? -1 : 1));
    assert.deepEqual(
      items.map((p) => [p.pageId, p.conversions]),
      expected.map((e) => [e.id, e.c]),
    );
  });

  test('a new session shows at once, a deleted page leaves, an empty range lists nothing', async () => {
    const pageId = await newPage(t, 'Late');
    const audienceId = await newAudience(t, pageId);
    const before = ok(await overview({ ...RANGE, limit: 100 }));
    await postSession(t, pageId, { audienceId, start: '2026-02-03T12:00:00Z' });
    const afterOne = ok(await overview({ ...RANGE, limit: 100 }));
    assert.equal(afterOne.totalCount, before.totalCount + 1);
    assert.equal(afterOne.items.find((p: Json) => p.pageId === pageId).visits, 1);
    assert.equal((await t.req('DELETE', `/v0/pages/${pageId}`)).status, 204);
    const afterDelete = ok(await overview({ ...RANGE, limit: 100 }));
    assert.equal(afterDelete.totalCount, before.totalCount);
    assert.equal(
      afterDelete.items.find((p: Json) => p.pageId === pageId),
      undefined,
    );
    const empty = ok(await overview({ startDate: RANGE.startDate, endDate: RANGE.startDate }));
    assert.deepEqual(empty, { items: [], hasMore: false, nextCursor: null, totalCount: 0 });
  });

  test('another tenant sees none of these pages', async () => {
    const other = await t.newTenant('Other');
    const body = ok(await overview(RANGE, other.key));
    assert.equal(body.totalCount, 0);
  });

  test('bounds: limit 1-100, 400 days, sort, cursors of other filters', async () => {
    ok(await overview({ ...RANGE, limit: 1 }));
    ok(await overview({ ...RANGE, limit: 100 }));
    expectProblem(await overview({ ...RANGE, limit: 0 }), 400, 'validation_failed', ['/limit']);
    expectProblem(await overview({ ...RANGE, limit: 101 }), 400, 'validation_failed', ['/limit']);
    expectProblem(await overview({ ...RANGE, sort: 'clicks' }), 400, 'validation_failed', ['/sort']);
    expectProblem(await overview({ ...RANGE, timeZone: 'UTC' }), 400, 'validation_failed');
    ok(await overview({ startDate: '2025-01-01T00:00:00Z', endDate: '2026-02-05T00:00:00Z' }));
    expectProblem(await overview({ startDate: '2025-01-01T00:00:00Z', endDate: '2026-02-05T00:00:00.001Z' }), 400, 'validation_failed', [
      '/endDate',
    ]);
    expectProblem(await overview({ startDate: RANGE.endDate, endDate: RANGE.startDate }), 400, 'validation_failed', ['/startDate']);
    const cursor = ok(await overview({ ...RANGE, limit: 1 })).nextCursor;
    expectProblem(await overview({ ...RANGE, limit: 1, sort: 'conversions', cursor }), 400, 'validation_failed', ['/cursor']);
    expectProblem(await overview({ startDate: '2026-02-02T00:00:00Z', endDate: RANGE.endDate, cursor }), 400, 'validation_failed', [
      '/cursor',
    ]);
    expectProblem(await overview({ ...RANGE, cursor: 'garbage' }), 400, 'validation_failed', ['/cursor']);
  });

  test('defaults: the last 30 days up to the next midnight, UTC', async () => {
    const pageId = await newPage(t, 'Recent');
    const audienceId = await newAudience(t, pageId);
    await postSession(t, pageId, { audienceId, start: new Date(Date.now() - 60_000).toISOString() });
    await postSession(t, pageId, { audienceId, start: new Date(Date.now() - 31 * 86_400_000).toISOString() });
    const body = ok(await overview());
    assert.equal(body.items.find((p: Json) => p.pageId === pageId)?.visits, 1);
  });
});
