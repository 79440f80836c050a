import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { available, CHROMIUM, skip, until, USER_AGENT } from '../browser.js';
import { ok, startApp, type Json, type TestApp } from '../helpers.js';

// Issue 48 §4 end to end in Chromium: a page of another origin (http://shop-x.localhost:PORT) loads
// the site script from the service; decide applies the experience and the script's reports reach
// the door: the view, a click on the changed element, the conversionUrl's visit the same day.

let t: TestApp;
let browser: Browser;
let api: string;
let shop: http.Server;
let shopOrigin: string;
let siteKey = '';

async function listen(server: http.Server, port = 0): Promise<number> {
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

before(async () => {
  if (skip) return;
  assert.ok(available, `no browser at ${CHROMIUM}`);
  const probe = http.createServer();
  const apiPort = await listen(probe);
  await new Promise((done) => probe.close(done));
  api = `http://127.0.0.1:${apiPort}`;
  t = await startApp({ PUBLIC_BASE_URL: api, DECIDE_RATE_PER_MINUTE: '100000', COLLECT_RATE_PER_MINUTE: '100000' });
  await t.app.listen({ port: apiPort, host: '127.0.0.1' });
  shop = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://shop').pathname;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(
      `<!doctype html><html><head><meta charset="utf-8"><title>Shop</title><script src="${api}/_pam/site.js?site=${siteKey}" data-timeout="3000"></script></head>` +
        `<body><h1 class="title">Original title</h1><a class="cta" href="/thanks">Go</a><p>${path}</p></body></html>`,
    );
  });
  shopOrigin = `http://shop-x.localhost:${await listen(shop)}`;
  // The browser's own user agent as well as the context's: headless Chromium sends an unloading
  // page's beacons (the click's, when the link is followed at once) with its HeadlessChrome name,
  // which the door rightly drops as a bot's. A real Chrome sends them as the page's.
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', `--user-agent=${USER_AGENT}`] });
});
after(async () => {
  await browser?.close();
  await new Promise((done) => shop?.close(done));
  await t?.close();
});

describe('measured like served pages', { skip }, () => {
  test('the view, the click on the changed element and the conversion page reach the analytics', { timeout: 120_000 }, async () => {
    const site = ok(await t.req('POST', '/v0/sites', { name: 'Shop', origins: [shopOrigin] }), 201);
    siteKey = site.siteKey;
    const experience = ok(
      await t.req('POST', '/v0/experiences', {
        siteId: site.siteId,
        name: 'Pricing title',
        status: 'live',
        urlMatch: { type: 'exact', value: '/pricing' },
        conversionUrl: '/thanks',
        changes: [{ selector: 'h1.title', action: 'text', value: 'Made for you' }],
      }),
      201,
    );
    const context = await browser.newContext({ userAgent: USER_AGENT });
    const tab = await context.newPage();
    await tab.goto(`${shopOrigin}/pricing`);
    await tab.locator('h1.title', { hasText: 'Made for you' }).waitFor();
    await tab.click('h1.title');
    // The link leads to the conversion page, where the script asks again and reports its token.
    await tab.click('a.cta');
    await tab.waitForURL(`${shopOrigin}/thanks`);
    const analytics = async (): Promise<Json> => ok(await t.req('GET', `/v0/experiences/${experience.experienceId}/analytics`));
    const want = { views: 1, visitors: 1, clicks: 1, conversions: 1 };
    let seen = '';
    const reached = async () => {
      seen = JSON.stringify((await analytics()).totals);
      return seen === JSON.stringify(want) ? true : undefined;
    };
    await until('the reports', reached).catch((err: Error) => assert.fail(`${err.message}; the totals read ${seen}`));
    assert.deepEqual((await analytics()).arms, [{ arm: 'personalised', views: 1, visitors: 1, conversions: 1, conversionRate: 1 }]);
    assert.deepEqual(await context.cookies(), []);
    await context.close();
  });
});
