import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page as Tab } from 'playwright-core';
import { buildConsole } from '../../scripts/build-console.js';
import { fileUrlSecret } from '../../src/assets/files.js';
import { viewTokens } from '../../src/site/token.js';
import type { VisitClaims } from '../../src/visits/index.js';
import { available, CHROMIUM, skip, until } from '../browser.js';
import { type Json, ok, startApp, type TestApp } from '../helpers.js';
import { fallbackHost } from '../site/serve-helpers.js';
import { artifactsDir, openConsole, pageUntil, viewChecker } from './console-tab.js';

// Issue 49 in the console: visits reported through the real collector (clicks in cells, reach,
// scroll, web vitals), then the page's view: the click map's cells over the preview, each
// section's reached share as the API answers it, a filter that changes the request, and the web
// vitals with Google's thresholds.

const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

let t: TestApp;
let browser: Browser;
let origin: string;
let page: Json;
let empty: Json;
let audience: Json;
let nextAddress = 1;

async function collect(sign: (extra?: Partial<VisitClaims>) => string, host: string, fields: Json): Promise<void> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/_pam/collect',
    remoteAddress: `198.51.100.${nextAddress++}`,
    headers: { host, 'content-type': 'text/plain', 'user-agent': BROWSER },
    payload: JSON.stringify({ token: sign(), visibleMs: 0, scroll: 0, clicks: 0, questions: 0, conversions: 0, ...fields }),
  });
  assert.equal(res.statusCode, 204, res.body);
}

before(async () => {
  if (skip) return;
  assert.ok(available, `no browser at ${CHROMIUM}`);
  await buildConsole();
  t = await startApp();
  origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const content = (headings: string[]) => ({
    headline: 'Maps',
    subheadline: '',
    sections: headings.map((heading) => ({ heading, body: `${heading} and more words. `.repeat(20) })),
  });
  page = ok(
    await t.req('POST', '/v0/pages', {
      name: 'Mapped',
      title: 'Mapped',
      pageContext: 'ctx',
      pageType: 'inbound',
      content: content(['Why', 'How', 'Price']),
    }),
    201,
  );
  empty = ok(
    await t.req('POST', '/v0/pages', {
      name: 'Unvisited',
      title: 'Unvisited',
      pageContext: 'ctx',
      pageType: 'inbound',
      content: content(['One']),
    }),
    201,
  );
  audience = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, { customName: 'Buyers' }), 201);
  const link = ok(
    await t.req('POST', '/v0/page_links', { path: '/mapped', target: { targetType: 'audience', audienceId: audience.audienceId } }),
    201,
  );
  const tokens = viewTokens(await fileUrlSecret(t.app.db, t.app.config.fileUrlSecret));
  const sign = () =>
    tokens.sign(
      {
        tenantId: t.tenantId,
        pageId: page.pageId,
        audienceId: audience.audienceId,
        versionId: audience.publishedVersion.versionId,
        linkId: link.pageLinkId,
      },
      Date.now() - 60_000,
    ).token;
  const host = await fallbackHost(t);
  // Three desktop visits and one on a phone: clicks in cells of sections 0 and 1, reach and scroll, vitals.
  await collect(sign, host, {
    viewport: 'desktop',
    clicks: 4,
    scroll: 70,
    cells: [
      [0, 'action', 3, 4, 3, 1],
      [1, 'link', 10, 10, 1, 0],
    ],
    reached: [0, 1],
    vitals: { lcp: 1200, inp: 120, cls: 0.05, fcp: 900, ttfb: 300 },
  });
  await collect(sign, host, {
    viewport: 'desktop',
    clicks: 1,
    scroll: 30,
    cells: [[0, 'other', 19, 0, 1, 0]],
    reached: [0],
    vitals: { lcp: 3000, fcp: 2000, ttfb: 900 },
  });
  await collect(sign, host, { viewport: 'desktop', scroll: 100, reached: [0, 1, 2], vitals: { lcp: 2000, cls: 0.3 } });
  await collect(sign, host, {
    viewport: 'mobile',
    clicks: 2,
    scroll: 100,
    cells: [[2, 'form', 5, 15, 2, 0]],
    reached: [0, 1, 2],
    vitals: { lcp: 5000, inp: 600, fcp: 3100, ttfb: 2000 },
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
after(async () => {
  await browser?.close();
  await t?.close();
});

const cellsDrawn = (tab: Tab) => tab.evaluate("document.querySelectorAll('[data-map-layer] [data-cell]').length") as Promise<number>;
const cellsOf = (map: Json) => (map.sections as Json[]).reduce((n, s) => n + s.cells.length, 0);

describe("the console's click and scroll maps and web vitals", { skip }, () => {
  test('the maps over the preview, reach as the API says, a filter, the vitals', { timeout: 120_000 }, async () => {
    const check = viewChecker(artifactsDir('maps'));
    const { context, tab, errors } = await openConsole(browser, origin, t.key);
    const requests: string[] = [];
    tab.on('request', (r) => {
      if (r.url().includes('/heatmap')) requests.push(r.url());
    });
    await tab.goto(`${origin}/console/#/pages/${page.pageId}`);

    const all = ok(await t.req('GET', `/v0/pages/${page.pageId}/heatmap?type=scroll`));
    assert.equal(all.visits, 4);
    // The cells are drawn over the sections of the preview, each in its own box.
    await pageUntil(tab, `document.querySelectorAll('[data-map-layer] [data-cell]').length === ${cellsOf(all)}`);
    assert.equal(await tab.locator('[data-map-section]').count(), 3);
    const cell = tab.locator('[data-map-section="0"] [data-cell="3,4"]');
    assert.equal(await cell.getAttribute('data-clicks'), '3');
    // Drawn where the measuring script cut it: 3/20 across and 4/20 down the section's box.
    const [box, sectionBox] = await Promise.all([cell.boundingBox(), tab.locator('[data-map-section="0"]').boundingBox()]);
    assert.ok(box && sectionBox && sectionBox.height > 0);
    assert.ok(Math.abs(box.x - sectionBox.x - (sectionBox.width * 3) / 20) < 1.5);
    assert.ok(Math.abs(box.y - sectionBox.y - (sectionBox.height * 4) / 20) < 1.5);
    // The frame is the page's preview: its sections are the ones the overlay is drawn on.
    const frame = tab.frameLocator('iframe.map-page');
    assert.equal(await frame.locator('[data-pam-section]').count(), 3);

    // Each section's reach, as the API answers it.
    for (const s of all.sections as Json[]) {
      const expected = `${Math.round((s.reached / all.visits) * 100)}% of visits reached this section`;
      assert.equal(await tab.locator(`[data-reach-section="${s.index}"] [data-reached]`).textContent(), expected);
    }
    assert.equal(await tab.locator('[data-reach-section="1"] [data-reached]').textContent(), '75% of visits reached this section');
    assert.match((await tab.locator('[data-depth-curve]').getAttribute('aria-label')) ?? '', /^Scroll depth: 100 % reached 0 %, /);

    // The web vitals, with their thresholds named, as the analytics answer them.
    const analytics = ok(await t.req('GET', `/v0/pages/${page.pageId}/analytics`));
    const lcp = tab.locator('[data-vital="lcp"]');
    assert.equal(await lcp.locator('[data-thresholds]').textContent(), 'good ≤ 2.5 s, poor > 4 s');
    assert.equal(await tab.locator('[data-vital="inp"] [data-thresholds]').textContent(), 'good ≤ 200 ms, poor > 500 ms');
    assert.equal(await tab.locator('[data-vital="cls"] [data-thresholds]').textContent(), 'good ≤ 0.1, poor > 0.25');
    assert.equal(await tab.locator('[data-vital="fcp"] [data-thresholds]').textContent(), 'good ≤ 1.8 s, poor > 3 s');
    assert.equal(await tab.locator('[data-vital="ttfb"] [data-thresholds]').textContent(), 'good ≤ 0.8 s, poor > 1.8 s');
    const v = analytics.webVitals.lcp;
    assert.equal(v.visits, 4);
    const cells = await lcp.locator('td').allTextContents();
    assert.equal(cells[1], String(v.visits));
    assert.deepEqual(
      cells.slice(2, 5),
      [v.good, v.needsImprovement, v.poor].map((x: number) => `${Math.round(x * 100)} %`),
    );
    assert.match(cells[0] ?? '', new RegExp(`^${Math.round(v.p75 / 10) / 100} s `));
    assert.equal(await tab.locator('[data-average-scroll]').textContent(), `${Math.round(analytics.averageScrollDepth)} %`);
    await check(tab, 'page-maps');

    // The viewport filter asks the API for that viewport's visits, and the map follows.
    requests.length = 0;
    await tab.locator('select[name="mapViewport"]').selectOption('mobile');
    await until('a request for mobile visits', async () =>
      requests.some((u) => new URL(u).searchParams.get('viewport') === 'mobile') ? true : undefined,
    );
    const mobile = ok(await t.req('GET', `/v0/pages/${page.pageId}/heatmap?type=scroll&viewport=mobile`));
    assert.equal(mobile.visits, 1);
    await pageUntil(tab, `document.querySelector('[data-map-visits]')?.textContent.startsWith('1 visit;')`);
    await pageUntil(tab, `document.querySelectorAll('[data-map-layer] [data-cell]').length === ${cellsOf(mobile)}`);
    assert.equal(await cellsDrawn(tab), 1);
    assert.equal(await tab.locator('[data-map-section="2"] [data-cell="5,15"]').count(), 1);
    assert.equal(await tab.locator('[data-reach-section="0"] [data-reached]').textContent(), '100% of visits reached this section');
    // The frame is laid out at the phone's width.
    assert.equal(Math.round((await tab.locator('iframe.map-page').boundingBox())?.width ?? 0), 375);

    // An audience and one of its versions: the request names both, the map is that version's.
    requests.length = 0;
    await tab.locator('select[name="mapViewport"]').selectOption('');
    await tab.locator('select[name="mapAudience"]').selectOption({ label: 'Buyers' });
    const versionId = audience.publishedVersion.versionId as string;
    await tab.locator(`select[name="mapVersion"] option[value="${versionId}"]`).waitFor({ state: 'attached' });
    await tab.locator('select[name="mapVersion"]').selectOption(versionId);
    await until('a request for the version', async () =>
      requests.some((u) => {
        const q = new URL(u).searchParams;
        return q.get('versionId') === versionId && q.get('audienceId') === audience.audienceId && !q.has('viewport');
      })
        ? true
        : undefined,
    );
    const byVersion = ok(
      await t.req('GET', `/v0/pages/${page.pageId}/heatmap?type=scroll&audienceId=${audience.audienceId}&versionId=${versionId}`),
    );
    assert.equal(byVersion.visits, 4);
    await pageUntil(tab, `document.querySelector('[data-map-visits]')?.textContent.includes('drawn over Buyers v1,')`);
    await pageUntil(tab, `document.querySelectorAll('[data-map-layer] [data-cell]').length === ${cellsOf(byVersion)}`);

    // Rage clicks: their own request, their own cells.
    requests.length = 0;
    await tab.locator('select[name="mapType"]').selectOption('rage');
    await until('a request for rage clicks', async () =>
      requests.some((u) => new URL(u).searchParams.get('type') === 'rage') ? true : undefined,
    );
    await pageUntil(tab, `document.querySelectorAll('[data-map-layer] [data-cell]').length === 1`);
    assert.equal(await tab.locator('[data-map-section="0"] [data-cell="3,4"]').getAttribute('data-clicks'), '1');
    await check(tab, 'page-maps-rage');

    // A page without visits says so instead of drawing an empty map.
    await tab.goto(`${origin}/console/#/pages/${empty.pageId}`);
    await tab.locator('[data-maps-empty]').waitFor();
    assert.equal(await tab.locator('[data-vital="lcp"] td').first().textContent(), 'No visits');
    await check(tab, 'page-maps-empty');
    assert.deepEqual(errors, []);
    await context.close();
  });
});
