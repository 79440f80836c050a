import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fileUrlSecret } from '../../src/assets/files.js';
import { viewTokens, type ViewTokens } from '../../src/site/token.js';
import type { VisitClaims } from '../../src/visits/index.js';
import { type Json, ok, startApp, type TestApp } from '../helpers.js';

// Issue 49 through HTTP: reports with clicks, reach, scroll and web vitals go to the collector; the
// heatmap, the page and site analytics and a scroll goal answer from what it kept.

let t: TestApp;
let tokens: ViewTokens;
let host: string;
let page: Json;
let audience: Json;
let other: Json;
let link: Json;

const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
let nextAddress = 1;

before(async () => {
  t = await startApp();
  tokens = viewTokens(await fileUrlSecret(t.app.db, t.app.config.fileUrlSecret));
  host = (ok(await t.req('GET', '/v0/tenant_domains')).items as Json[]).find((d) => d.isFallback).hostname;
  page = ok(
    await t.req('POST', '/v0/pages', {
      name: 'Maps',
      title: 'Maps',
      pageContext: 'ctx',
      pageType: 'inbound',
      content: {
        headline: 'Hello',
        subheadline: '',
        sections: [
          { heading: 'Why', body: 'Because.' },
          { heading: 'Questions', body: '', layout: 'faq', items: [{ title: 'Q?', body: 'A.' }] },
          { heading: 'More', body: 'Yes.' },
        ],
      },
    }),
    201,
  );
  audience = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, {}), 201);
  other = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, {}), 201);
  link = ok(
    await t.req('POST', '/v0/page_links', { path: '/maps', target: { targetType: 'audience', audienceId: audience.audienceId } }),
    201,
  );
});
after(async () => {
  await t.close();
});

function sign(extra: Partial<VisitClaims> = {}) {
  return tokens.sign(
    { tenantId: t.tenantId, pageId: page.pageId, audienceId: audience.audienceId, linkId: link.pageLinkId, ...extra },
    Date.now() - 60_000,
  );
}

async function send(body: Json): Promise<number> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/_pam/collect',
    remoteAddress: `198.51.100.${nextAddress++}`,
    headers: { host, 'content-type': 'text/plain', 'user-agent': BROWSER },
    payload: JSON.stringify(body),
  });
  return res.statusCode;
}

const report = (token: string, fields: Json = {}) => ({
  token,
  visibleMs: 0,
  scroll: 0,
  clicks: 0,
  questions: 0,
  conversions: 0,
  ...fields,
});
const heatmap = (query = '') => t.req('GET', `/v0/pages/${page.pageId}/heatmap${query ? `?${query}` : ''}`);

describe('the collector takes maps and vitals', () => {
  test('a report with cells, reach, viewport and vitals out of bounds is a 400 naming the field', async () => {
    const { token } = sign();
    const bad: [Json, RegExp][] = [
      [{ viewport: 'watch' }, /\/viewport/],
      [{ cells: [[0, 'link', 20, 0, 1, 0]] }, /\/cells\/0\/2/],
      [{ cells: [[0, 'link', 0, -1, 1, 0]] }, /\/cells\/0\/3/],
      [{ cells: [[50, 'link', 0, 0, 1, 0]] }, /\/cells\/0\/0/],
      [{ cells: [[0, 'button', 0, 0, 1, 0]] }, /\/cells\/0\/1/],
      [{ cells: Array.from({ length: 65 }, () => [0, 'link', 0, 0, 1, 0]) }, /\/cells/],
      [{ reached: [50] }, /\/reached\/0/],
      [{ vitals: { lcp: -1 } }, /\/vitals\/lcp/],
      [{ vitals: { cls: 101 } }, /\/vitals\/cls/],
      [{ vitals: { inp: 3_600_001 } }, /\/vitals\/inp/],
      [{ vitals: { fid: 3 } }, /\/vitals/],
    ];
    for (const [fields, field] of bad) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/_pam/collect',
        remoteAddress: `198.51.100.${nextAddress++}`,
        headers: { host, 'content-type': 'text/plain', 'user-agent': BROWSER },
        payload: JSON.stringify(report(token, fields)),
      });
      assert.equal(res.statusCode, 400, JSON.stringify(fields));
      assert.match(res.body, field);
    }
    // Just inside every bound.
    const inside = {
      viewport: 'mobile',
      cells: [[49, 'other', 19, 19, 0, 0]],
      reached: [0, 49],
      vitals: { lcp: 3_600_000, inp: 0, cls: 100, fcp: 0, ttfb: 0 },
    };
    assert.equal(await send(report(sign({ pageId: page.pageId }).token, inside)), 204);
  });
});

describe('GET /v0/pages/{page_id}/heatmap', () => {
  let version: Json;
  before(async () => {
    const versions = `/v0/pages/${page.pageId}/audiences/${audience.audienceId}/versions`;
    version = ok(
      await t.req('POST', versions, {
        content: {
          headline: 'V',
          subheadline: '',
          sections: [
            { heading: 'Only', body: 'x' },
            { heading: 'Two', body: 'y' },
          ],
        },
      }),
      201,
    );
    // Visit A (desktop): 5 clicks reported over two reports, 3 of them in one cell of section 0, one rage click; reaches 0 and 1; scrolls to 72.
    const a = sign({ versionId: version.versionId }).token;
    assert.equal(
      await send(
        report(a, {
          viewport: 'desktop',
          clicks: 3,
          scroll: 40,
          cells: [[0, 'link', 3, 4, 3, 1]],
          reached: [0],
          vitals: { lcp: 1200, ttfb: 300, fcp: 900 },
        }),
      ),
      204,
    );
    assert.equal(
      await send(
        report(a, {
          viewport: 'desktop',
          clicks: 5,
          scroll: 72,
          cells: [
            [1, 'faq', 10, 0, 1, 0],
            [0, 'other', 19, 19, 1, 0],
          ],
          reached: [0, 1],
          vitals: { lcp: 2600, cls: 0.05, inp: 120 },
        }),
      ),
      204,
    );
    // The same report again (a replay): the session's clicks did not rise, so the cells add nothing.
    assert.equal(
      await send(report(a, { viewport: 'desktop', clicks: 5, scroll: 72, cells: [[0, 'link', 3, 4, 3, 1]], reached: [0, 1] })),
      204,
    );
    // Visit B (mobile, no version): says 10 clicks in a cell but only 2 happened; scrolls all the way.
    const b = sign().token;
    assert.equal(
      await send(
        report(b, {
          viewport: 'mobile',
          clicks: 2,
          scroll: 100,
          cells: [[0, 'action', 0, 0, 10, 5]],
          reached: [0, 1, 2],
          vitals: { lcp: 5000, cls: 0.3, inp: 600, fcp: 3100, ttfb: 2000 },
        }),
      ),
      204,
    );
    // Visit C (tablet, another audience): no vitals at all, no scroll.
    const c = sign({ audienceId: other.audienceId }).token;
    assert.equal(await send(report(c, { viewport: 'tablet' })), 204);
    // Visit D: an old script's report without a viewport counts in no map.
    assert.equal(await send(report(sign().token, { scroll: 50, clicks: 1 })), 204);
  });

  test("click: cells add up to each section, per filters; the sections are the content's", async () => {
    const all = ok(await heatmap());
    assert.equal(all.visits, 4);
    assert.deepEqual(
      all.sections.map((s: Json) => [s.index, s.layout, s.heading]),
      [
        [0, 'text', 'Why'],
        [1, 'faq', 'Questions'],
        [2, 'text', 'More'],
      ],
    );
    for (const s of all.sections)
      assert.equal(
        s.clicks,
        s.cells.reduce((sum: number, c: Json) => sum + c.clicks, 0),
      );
    const [s0, s1, s2] = all.sections;
    assert.deepEqual(s0.cells, [
      { x: 0, y: 0, clicks: 2 },
      { x: 3, y: 4, clicks: 3 },
      { x: 19, y: 19, clicks: 1 },
    ]);
    assert.equal(s0.clicks, 6);
    assert.deepEqual(s1.cells, [{ x: 10, y: 0, clicks: 1 }]);
    assert.equal(s2.clicks, 0);
    assert.deepEqual(
      all.sections.map((s: Json) => s.reached),
      // The inside-bounds visit reached section 0 (and 49, no section of this content).
      [3, 2, 1],
    );
    assert.equal(all.scroll, undefined);

    const mobile = ok(await heatmap('viewport=mobile'));
    // B, and the inside-bounds visit.
    assert.equal(mobile.visits, 2);
    assert.deepEqual(mobile.sections[0].cells, [{ x: 0, y: 0, clicks: 2 }]);
    const tablet = ok(await heatmap(`viewport=tablet&audienceId=${other.audienceId}`));
    assert.equal(tablet.visits, 1);
    assert.equal(tablet.sections[0].clicks, 0);
    const byAudience = ok(await heatmap(`audienceId=${audience.audienceId}`));
    assert.equal(byAudience.visits, 3);

    const byVersion = ok(await heatmap(`versionId=${version.versionId}`));
    assert.equal(byVersion.visits, 1);
    assert.deepEqual(
      byVersion.sections.map((s: Json) => [s.index, s.heading, s.clicks, s.reached]),
      [
        [0, 'Only', 4],
        [1, 'Two', 1],
      ].map(([i, h, c]) => [i, h, c, 1]),
    );
  });

  test('rage: the rage clicks per cell, at most one per click counted', async () => {
    const rage = ok(await heatmap('type=rage'));
    assert.deepEqual(rage.sections[0].cells, [
      { x: 0, y: 0, clicks: 2 },
      { x: 3, y: 4, clicks: 1 },
    ]);
    assert.equal(rage.sections[0].clicks, 3);
    assert.equal(rage.sections[1].clicks, 0);
  });

  test('scroll: visits that reached at least each depth, 0 to 100 by 5', async () => {
    const scroll = ok(await heatmap('type=scroll'));
    assert.equal(scroll.scroll.length, 21);
    assert.deepEqual(scroll.scroll[0], { depth: 0, visits: 4 });
    const at = (d: number) => scroll.scroll.find((p: Json) => p.depth === d).visits;
    assert.equal(at(5), 2);
    assert.equal(at(70), 2);
    assert.equal(at(75), 1);
    assert.equal(at(100), 1);
    for (let i = 1; i < scroll.scroll.length; i++) assert.ok(scroll.scroll[i].visits <= scroll.scroll[i - 1].visits);
  });

  test('a range of whole UTC days: before the visits, nothing; empty range, nothing', async () => {
    const past = ok(await heatmap('startDate=2020-01-01T00:00:00Z&endDate=2020-02-01T00:00:00Z'));
    assert.equal(past.visits, 0);
    assert.equal(past.sections[0].clicks, 0);
    const now = new Date().toISOString();
    assert.equal(ok(await heatmap(`startDate=${now}&endDate=${now}`)).visits, 0);
  });

  test('bad parameters are 4xx naming the field', async () => {
    const cases: [string, number, RegExp][] = [
      ['type=hover', 400, /type/],
      ['viewport=watch', 400, /viewport/],
      ['startDate=yesterday', 400, /startDate/],
      ['startDate=2026-02-01T00:00:00Z&endDate=2026-01-01T00:00:00Z', 400, /startDate/],
      ['startDate=2024-01-01T00:00:00Z&endDate=2026-01-01T00:00:00Z', 400, /endDate/],
      ['color=red', 400, /color/],
      ['audienceId=audience_nope', 404, /Audience/],
      ['versionId=version_nope', 404, /Version/],
    ];
    for (const [query, status, field] of cases) {
      const res = await heatmap(query);
      assert.equal(res.status, status, query);
      assert.match(JSON.stringify(res.body), field, query);
    }
    assert.equal((await t.req('GET', '/v0/pages/page_nope/heatmap')).status, 404);
    // Just inside the range bound: 400 days.
    assert.equal((await heatmap('startDate=2025-01-01T00:00:00Z&endDate=2026-02-05T00:00:00Z')).status, 200);
  });

  test("page and site analytics: averageScrollDepth and web vitals by Google's thresholds", async () => {
    const analytics = ok(await t.req('GET', `/v0/pages/${page.pageId}/analytics`));
    // The visits' deepest scrolls (the inside-bounds visit too): the mean of the sessions' own.
    assert.equal(analytics.averageScrollDepth, analytics.totals.avgMaxScrollDepthPercentage);
    assert.ok(analytics.averageScrollDepth > 0);
    const v = analytics.webVitals;
    // LCP: 3,600,000 (inside-bounds visit), 2,600 (A's latest), 5,000 (B).
    assert.equal(v.lcp.visits, 3);
    assert.deepEqual([v.lcp.good, v.lcp.needsImprovement, v.lcp.poor], [0, 0.333333, 0.666667]);
    assert.equal(v.lcp.p75, 3_600_000);
    // CLS: 100 (inside), 0.05, 0.3.
    assert.equal(v.cls.visits, 3);
    assert.deepEqual([v.cls.good, v.cls.needsImprovement, v.cls.poor], [0.333333, 0, 0.666667]);
    // INP 0, 120 good; 600 poor: p75 is the bucket holding the third of three.
    assert.deepEqual([v.inp.visits, v.inp.good, v.inp.poor, v.inp.p75], [3, 0.666667, 0.333333, 600]);
    // TTFB 0, 300, 2000: p75 lands on 2000 (ceil(0.75 × 3) = 3rd).
    assert.equal(v.ttfb.p75, 2000);
    assert.equal(v.fcp.visits, 3);
    const site = ok(await t.req('GET', '/v0/analytics/site'));
    assert.equal(site.webVitals.lcp.visits, 3);
    assert.equal(site.averageScrollDepth, site.totals.avgMaxScrollDepthPercentage);
    const empty = ok(await t.req('GET', `/v0/pages/${page.pageId}/analytics?startDate=2020-01-01T00:00:00Z&endDate=2020-01-02T00:00:00Z`));
    assert.deepEqual(empty.webVitals.lcp, { p75: null, visits: 0, good: null, needsImprovement: null, poor: null });
    assert.equal(empty.averageScrollDepth, null);
  });
});

describe('scroll goals', () => {
  test('completes once per visit that scrolled at least the threshold on a matching path', async () => {
    const goal = ok(await t.req('POST', '/v0/goals', { name: 'Read half', kind: 'scroll', threshold: 50, pathPattern: '/MA*' }), 201);
    assert.equal(goal.threshold, 50);
    assert.equal(goal.pathPattern, '/MA*');
    assert.equal(goal.path, null);
    const elsewhere = ok(
      await t.req('POST', '/v0/goals', { name: 'Elsewhere', kind: 'scroll', threshold: 1, pathPattern: '/other/*' }),
      201,
    );
    const deep = ok(await t.req('POST', '/v0/goals', { name: 'All the way', kind: 'scroll', threshold: 100, pathPattern: '*' }), 201);
    const analytics = ok(await t.req('GET', `/v0/pages/${page.pageId}/analytics`));
    const of = (id: string) => analytics.goals.find((g: Json) => g.goalId === id);
    // Visits at 72, 100 and 50 (the old script's) on /maps; twice reported, once counted.
    assert.equal(of(goal.goalId).completions, 3);
    assert.equal(of(elsewhere.goalId).completions, 0);
    assert.equal(of(deep.goalId).completions, 1);
  });

  test('bounds and fields: threshold 1 to 100, required for scroll and only for it', async () => {
    const make = (body: Json) => t.req('POST', '/v0/goals', { name: 'g', ...body });
    for (const [body, status, field] of [
      [{ kind: 'scroll', threshold: 0, pathPattern: '/a' }, 400, /threshold/],
      [{ kind: 'scroll', threshold: 101, pathPattern: '/a' }, 400, /threshold/],
      [{ kind: 'scroll', threshold: 50.5, pathPattern: '/a' }, 400, /threshold/],
      [{ kind: 'scroll', pathPattern: '/a' }, 400, /threshold/],
      [{ kind: 'scroll', threshold: 50 }, 400, /pathPattern/],
      [{ kind: 'scroll', threshold: 50, pathPattern: 'no-slash' }, 400, /pathPattern/],
      [{ kind: 'path', path: '/a', threshold: 50 }, 400, /threshold/],
      [{ kind: 'path', pathPattern: '/a*' }, 400, /pathPattern/],
    ] as [Json, number, RegExp][]) {
      const res = await make(body);
      assert.equal(res.status, status, JSON.stringify(body));
      assert.match(JSON.stringify(res.body), field, JSON.stringify(body));
    }
    assert.equal((await make({ kind: 'scroll', threshold: 1, pathPattern: '/a' })).status, 201);
    const g = ok(await make({ kind: 'scroll', threshold: 100, pathPattern: '*' }), 201);
    // Changing the kind clears the scroll fields; back to scroll needs them again.
    const changed = ok(await t.req('PATCH', `/v0/goals/${g.goalId}`, { kind: 'event', eventName: 'x' }));
    assert.deepEqual([changed.threshold, changed.pathPattern], [null, null]);
    assert.equal((await t.req('PATCH', `/v0/goals/${g.goalId}`, { kind: 'scroll', pathPattern: '/b' })).status, 400);
    const back = ok(await t.req('PATCH', `/v0/goals/${g.goalId}`, { kind: 'scroll', pathPattern: '/b', threshold: 20 }));
    assert.deepEqual([back.threshold, back.pathPattern], [20, '/b']);
    const funnel = await t.req('POST', '/v0/funnels', {
      name: 'f',
      steps: [
        { kind: 'scroll', path: '/a' },
        { kind: 'path', path: '/b' },
      ],
    });
    assert.equal(funnel.status, 400);
    assert.match(JSON.stringify(funnel.body), /steps\/0\/kind/);
  });
});
