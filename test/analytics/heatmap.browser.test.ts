import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { available, CHROMIUM, skip, until, USER_AGENT } from '../browser.js';
import { startApp, type Json, type TestApp, ok } from '../helpers.js';
import { fallbackHost } from '../site/serve-helpers.js';

// Issue 49 in real headless Chromium: clicks in a section's cells, a rage click, the deepest scroll
// and the web vitals of a visit, as the heatmap, the analytics and a scroll goal answer them.

let t: TestApp;
let browser: Browser;
let origin: string;
before(async () => {
  if (skip) return;
  assert.ok(available, `no browser at ${CHROMIUM}`);
  t = await startApp();
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  origin = `http://${await fallbackHost(t)}:${new URL(address).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
after(async () => {
  await browser?.close();
  await t?.close();
});

describe('maps and vitals measured in a real browser', { skip }, () => {
  test('cells, a rage click, the deepest scroll and web vitals', { timeout: 120_000 }, async () => {
    const long = Array.from({ length: 12 }, (_, i) => `Paragraph ${i} of a long section about spring.`).join('\n\n');
    const page = ok(
      await t.req('POST', '/v0/pages', {
        name: 'Mapped',
        title: 'Mapped',
        pageContext: 'ctx',
        pageType: 'inbound',
        status: 'published',
        content: {
          headline: 'Hello',
          subheadline: '',
          sections: [
            { heading: 'First', body: long },
            { heading: 'Second', body: long },
            { heading: 'Third', body: long },
          ],
        },
      }),
      201,
    );
    const audience = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, {}), 201);
    ok(
      await t.req('POST', '/v0/page_links', { path: '/mapped', target: { targetType: 'audience', audienceId: audience.audienceId } }),
      201,
    );
    const goal = ok(await t.req('POST', '/v0/goals', { name: 'Read it all', kind: 'scroll', threshold: 90, pathPattern: '/map*' }), 201);

    const context = await browser.newContext({ userAgent: USER_AGENT, viewport: { width: 1280, height: 800 } });
    const tab = await context.newPage();
    assert.equal((await tab.goto(`${origin}/mapped`))?.status(), 200);
    // The renderer marks the content's sections, not the headline.
    assert.deepEqual(
      await tab.evaluate(
        "[...document.querySelectorAll('[data-pam-section]')].map((s) => s.dataset.pamSection + ':' + s.dataset.pamLayout)",
      ),
      ['0:text', '1:text', '2:text'],
    );
    // web-vitals is loaded once the page is.
    // A locator, not waitForFunction: its polling evaluates in the page, where the CSP forbids eval.
    await tab.locator('script[src="/_pam/wv.js"]').waitFor({ state: 'attached' });

    // One click a quarter across and half down the second section: cell (5, 10). Then three at one
    // spot three quarters across and a quarter down within a second: cell (15, 5), one rage click.
    const section = tab.locator('[data-pam-section="1"]');
    await section.scrollIntoViewIfNeeded();
    const box = await section.boundingBox();
    assert.ok(box);
    const at = (fx: number, fy: number) => [box.x + box.width * fx, box.y + box.height * fy] as const;
    const [x1, y1] = at(0.26, 0.51);
    await tab.mouse.click(x1, y1);
    await tab.waitForTimeout(1200);
    const [x2, y2] = at(0.76, 0.26);
    for (let i = 0; i < 3; i++) await tab.mouse.click(x2, y2);

    // All the way down, then hidden: the report carries everything, web vitals included.
    await tab.evaluate('window.scrollTo(0, document.body.scrollHeight)');
    await tab.waitForTimeout(800);
    // Hidden while the page lives: headless Chromium sends an unloading page's beacons with its own
    // HeadlessChrome user agent, which the collector rightly takes for a bot.
    await tab.evaluate(
      "Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true }); document.dispatchEvent(new Event('visibilitychange', { bubbles: true }))",
    );

    // What it last read is in the failure: a click map that never came tells nothing otherwise.
    let last: Json;
    const map = await until('the click map', async () => {
      last = ok(await t.req('GET', `/v0/pages/${page.pageId}/heatmap?viewport=desktop`));
      // The clicks may come in the 15 s report, ahead of the hidden one that says every section was reached.
      const reachedAll = last.sections.every((s: Json) => s.reached === 1);
      return last.visits === 1 && last.sections[1].clicks === 4 && reachedAll ? last : undefined;
    }).catch((err: Error) => {
      throw new Error(`${err.message}; last read: ${JSON.stringify(last)}`);
    });
    assert.deepEqual(map.sections[1].cells, [
      { x: 15, y: 5, clicks: 3 },
      { x: 5, y: 10, clicks: 1 },
    ]);
    assert.equal(map.sections[0].clicks, 0);
    assert.deepEqual(
      map.sections.map((s: Json) => s.reached),
      [1, 1, 1],
    );
    const rage = ok(await t.req('GET', `/v0/pages/${page.pageId}/heatmap?type=rage`));
    assert.deepEqual(rage.sections[1].cells, [{ x: 15, y: 5, clicks: 1 }]);
    const scroll = ok(await t.req('GET', `/v0/pages/${page.pageId}/heatmap?type=scroll`));
    assert.deepEqual(scroll.scroll.at(-1), { depth: 100, visits: 1 });
    assert.equal(ok(await t.req('GET', `/v0/pages/${page.pageId}/heatmap?viewport=mobile`)).visits, 0);

    await context.close();
    const analytics = await until('the web vitals', async () => {
      const a = ok(await t.req('GET', `/v0/pages/${page.pageId}/analytics`));
      return a.webVitals.ttfb.visits === 1 && a.webVitals.fcp.visits === 1 && a.webVitals.lcp.visits === 1 ? a : undefined;
    });
    assert.equal(analytics.averageScrollDepth, 100);
    for (const m of ['lcp', 'fcp', 'ttfb']) {
      const v = analytics.webVitals[m];
      assert.ok(v.p75 !== null && v.p75 >= 0, `${m}: ${JSON.stringify(v)}`);
      assert.equal(v.good + v.needsImprovement + v.poor, 1);
    }
    const goals = analytics.goals as Json[];
    assert.equal(goals.find((g) => g.goalId === goal.goalId).completions, 1);
  });
});
