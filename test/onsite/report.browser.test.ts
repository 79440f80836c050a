import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { REPORT_PART } from '../../src/onsite/snippet/report-part.js';
import { available, CHROMIUM, skip, until, USER_AGENT } from '../browser.js';
import { ok, startApp, type Json, type TestApp } from '../helpers.js';
import { claimsOf, experienceOf, signerOf, siteOf } from './measure-helpers.js';

// Issue 48 §4 in Chromium: the site script's measuring part (REPORT_PART) on a page of another
// origin (http://shop-x.localhost:PORT) reports to the API host: a view, the clicks on a changed
// element (not others), pam.conversion(); no cookie, no storage, nothing thrown into the page.

let t: TestApp;
let browser: Browser;
let base: string;
let shop: Server;
let shopOrigin: string;
let page = '';

before(async () => {
  if (skip) return;
  assert.ok(available, `no browser at ${CHROMIUM}`);
  t = await startApp({ COLLECT_RATE_PER_MINUTE: '100000' });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  shop = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page);
  });
  await new Promise<void>((done) => shop.listen(0, '127.0.0.1', done));
  shopOrigin = `http://shop-x.localhost:${(shop.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
after(async () => {
  await browser?.close();
  await new Promise((done) => shop?.close(done));
  await t?.close();
});

describe('the measuring part of the site script', { skip }, () => {
  test('a view, clicks on changed elements only, pam.conversion(), and no trace left', { timeout: 120_000 }, async () => {
    const siteId = await siteOf(t, t.tenantId, [shopOrigin]);
    const experienceId = await experienceOf(t, t.tenantId, siteId, { conversionUrl: '/thanks' });
    const token = (await signerOf(t)).sign(
      claimsOf({ tenantId: t.tenantId, siteId, unit: 'v:browser', experiences: [{ experienceId, arm: 'personalised' }] }),
    );
    const answer = {
      experiences: [
        {
          experienceId,
          arm: 'personalised',
          changes: [
            { selector: '#cta', action: 'text', value: 'Start your trial' },
            { selector: '#anchor', action: 'section', placement: 'after', html: '<button>Inserted</button>' },
            // A selector this browser cannot parse is skipped, never thrown.
            { selector: 'a:unknown-pseudo(', action: 'hide' },
          ],
        },
      ],
      token,
    };
    page = `<!doctype html><html><head><title>Pricing</title><script>
      window.errors = [];
      window.addEventListener('error', function (e) { window.errors.push(String(e.message)); });
      ${REPORT_PART}
      pam.conversion();
      pamReport(${JSON.stringify(base)}, null);
      pamReport(${JSON.stringify(base)}, { experiences: 'nonsense', token: 7 });
    </script></head><body><h1>Pricing</h1><p><a id="cta" href="#go"><span id="inner">Buy</span></a></p><p id="other">Other text</p>
    <p id="anchor">Anchor</p><div data-pam-insert=""></div>
    <script>pamReport(${JSON.stringify(base)}, ${JSON.stringify(answer)});</script></body></html>`;

    const context = await browser.newContext({ userAgent: USER_AGENT });
    const tab = await context.newPage();
    await tab.goto(`${shopOrigin}/pricing`);
    await tab.click('#inner');
    await tab.click('#cta');
    await tab.click('#other');
    // The section as the snippet inserts it: in a shadow root, so a click reaches the page as one on its host.
    await tab.evaluate(`(function () {
      var root = document.querySelector('[data-pam-insert]').attachShadow({ mode: 'open' });
      root.innerHTML = '<button id="inserted">Inserted</button>';
    })()`);
    await tab.locator('[data-pam-insert] >> #inserted').click();
    await tab.click('#anchor');
    const analytics = async (): Promise<Json> => ok(await t.req('GET', `/v0/experiences/${experienceId}/analytics`));
    const want = { views: 1, visitors: 1, clicks: 3, conversions: 1 };
    await until('the reports', async () => {
      const totals = (await analytics()).totals;
      return JSON.stringify(totals) === JSON.stringify(want) ? true : undefined;
    });
    assert.deepEqual(await tab.evaluate('window.errors'), []);
    assert.deepEqual(await context.cookies(), []);
    assert.equal(await tab.evaluate('localStorage.length + sessionStorage.length'), 0);
    // Leaving the page reports the same totals again: nothing more is counted.
    await tab.goto('about:blank');
    await new Promise((done) => setTimeout(done, 300));
    assert.deepEqual((await analytics()).totals, want);
    await context.close();
  });
});
