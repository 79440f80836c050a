import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { seedLayoutsPage } from '../../bench/web-vitals.js';
import { available, CHROMIUM, skip, USER_AGENT } from '../browser.js';
import { startApp, type Json, type TestApp, toRes } from '../helpers.js';

// Issue 38: a page using every layout in real headless Chromium, at 1280 and 390 px: axe finds no
// serious or critical violation, image and text stack on a narrow screen, and the video's player
// is asked for only after the click (until then every request stays on the page's domain).

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let t: TestApp;
let browser: Browser;
let origin: string;
let path: string;
before(async () => {
  if (skip) return;
  assert.ok(available, `no browser at ${CHROMIUM}: .ci/run installs Debian's chromium`);
  t = await startApp({ FILE_STORE: 'database' });
  const { port } = new URL(await t.app.listen({ port: 0, host: '127.0.0.1' }));
  const fallback = ((await t.req('GET', '/v0/tenant_domains')).body.items as Json[]).find((d) => d.isFallback).hostname;
  origin = `http://${fallback}:${port}`;
  path = await seedLayoutsPage(async (method, url, body, headers = {}) => {
    const binary = Buffer.isBuffer(body);
    const res = toRes(
      await t.app.inject({
        method: method as 'GET',
        url,
        headers: { 'x-api-key': t.key, ...(body !== undefined && !binary ? { 'content-type': 'application/json' } : {}), ...headers },
        ...(body !== undefined ? { payload: binary ? body : JSON.stringify(body) } : {}),
      }),
    );
    return { status: res.status, body: res.body };
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
after(async () => {
  await browser?.close();
  await t?.close();
});

type Box = { x: number; y: number; width: number; height: number };

describe('every layout in a real browser', { skip }, () => {
  for (const width of [1280, 390]) {
    test(`${width} px: no serious or critical axe violation; image and text ${width < 700 ? 'stacked' : 'side by side'}`, {
      timeout: 90_000,
    }, async () => {
      const context = await browser.newContext({ userAgent: USER_AGENT, viewport: { width, height: 900 } });
      try {
        const tab = await context.newPage();
        const offDomain: string[] = [];
        // Nothing leaves the machine: a request to another host is recorded, and refused.
        await context.route('**/*', (route) => {
          if (new URL(route.request().url()).origin === origin) return route.continue();
          offDomain.push(route.request().url());
          return route.abort();
        });
        await tab.goto(`${origin}${path}`, { waitUntil: 'load' });
        await tab.evaluate(AXE);
        const violations = (await tab.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((result) =>
          result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) })))`)) as {
          id: string;
          impact: string;
        }[];
        const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
        assert.deepEqual(serious, [], `axe at ${width} px`);
        const img = (await tab.locator('.l-side .l-img').boundingBox()) as Box;
        const text = (await tab.locator('.l-side .l-text').boundingBox()) as Box;
        if (width < 700) assert.ok(text.y >= img.y + img.height - 1, 'stacked: the text under the image');
        else
          assert.ok(Math.abs(text.y - img.y) < img.height && text.x + text.width <= img.x + 1, 'side by side: the text left of the image');
        // The FAQ opens as details do.
        await tab.getByText('How long does setup take?').click();
        assert.equal(await tab.locator('details').first().getAttribute('open'), '');
        assert.deepEqual(offDomain, [], 'nothing off the page domain before the click');
        await tab.getByRole('link', { name: /Play video/ }).click();
        const frame = tab.locator('.video iframe');
        await frame.waitFor();
        assert.equal(await frame.getAttribute('src'), 'https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ?autoplay=1');
        assert.equal(await frame.getAttribute('title'), 'See it in two minutes');
        await tab.waitForTimeout(300);
        assert.ok(offDomain.length > 0, 'the player is asked for after the click');
        for (const url of offDomain) assert.equal(new URL(url).hostname, 'www.youtube-nocookie.com', url);
      } finally {
        await context.close();
      }
    });
  }
});
