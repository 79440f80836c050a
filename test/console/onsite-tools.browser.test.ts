// Runs once (scripts/test.mjs): the console in a browser; its API is tested on both databases.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page as Tab } from 'playwright-core';
import { buildConsole } from '../../scripts/build-console.js';
import { available, CHROMIUM, skip, until } from '../browser.js';
import { type Json, ok, startApp, type TestApp } from '../helpers.js';
import { openConsole } from './console-tab.js';

// Issue 48 §5 end to end, nothing stood in: the console asks the real token endpoints
// (`POST /v0/sites/{site_id}/pick-tokens`, `POST /v0/experiences/{experience_id}/preview-tokens`)
// and opens the customer's page (http://shop-x.localhost:PORT, another origin), which runs the
// service's own `/_pam/site.js`. A click in the pick overlay posts the selector back to the console,
// which fills the change with it; the preview shows the experience's changes filled for the chosen
// UTM value and company, and measures nothing.

let t: TestApp;
let browser: Browser;
let api: string;
let shop: http.Server;
let shopOrigin: string;
let site: Json;

const SHOP_BODY = `<main><h1 class="title">Original title</h1><p class="lead">Plans from $9.</p>
<ul class="plans"><li>Starter</li><li>Team</li><li>Enterprise</li></ul></main>`;

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

before(async () => {
  if (skip) return;
  assert.ok(available, `no browser at ${CHROMIUM}`);
  await buildConsole();
  // The script posts a pick to the origin of PUBLIC_BASE_URL (the console's), so it is the service's own.
  const probe = http.createServer();
  const apiPort = await listen(probe);
  await new Promise((r) => probe.close(r));
  api = `http://127.0.0.1:${apiPort}`;
  t = await startApp({ PUBLIC_BASE_URL: api });
  await t.app.listen({ port: apiPort, host: '127.0.0.1' });
  shop = http.createServer((_req, res) => {
    const head = `<meta charset="utf-8"><title>Shop X</title><script src="${api}/_pam/site.js?site=${site.siteKey}" data-timeout="3000"></script>`;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(`<!doctype html><html lang="en"><head>${head}</head><body>${SHOP_BODY}</body></html>`);
  });
  shopOrigin = `http://shop-x.localhost:${await listen(shop)}`;
  site = ok(await t.req('POST', '/v0/sites', { name: 'Shop X', origins: [shopOrigin] }), 201);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
after(async () => {
  await browser?.close();
  await t?.close();
  await new Promise((r) => (shop ? shop.close(r) : r(undefined)));
});

const overlayShown = (tab: Tab) =>
  until('the pick overlay', async () =>
    (await tab.evaluate('[...document.body.children].some((e) => e.style.outline.includes("2px"))')) ? true : undefined,
  );

describe("the console's pick and preview with the real token endpoints and site script", { skip }, () => {
  test('pick posts a selector back to the console; preview shows the changes for the chosen visitor, unmeasured', {
    timeout: 180_000,
  }, async () => {
    // A draft whose rules this browser would never match: a preview forces it anyway.
    const experience = ok(
      await t.req('POST', '/v0/experiences', {
        siteId: site.siteId,
        name: 'Pricing for CRM teams',
        status: 'draft',
        urlMatch: { type: 'exact', value: '/pricing' },
        rules: { match: 'all', conditions: [{ field: 'company.industry', operator: 'equals', value: 'Robotics' }] },
        changes: [{ selector: 'h1.title', action: 'text', value: 'Built for {{utm.term | everyone}} at {{company.name | your company}}' }],
      }),
      201,
    );
    const { context, tab, errors } = await openConsole(browser, api, t.key);
    await tab.goto(`${api}/console/#/experiences/${experience.experienceId}`);
    await tab.getByRole('heading', { name: 'Pricing for CRM teams' }).waitFor();
    const change = tab.locator('[data-change="0"]');
    const selectorField = change.getByLabel('Element (CSS selector)');
    assert.equal(await selectorField.inputValue(), 'h1.title');

    // Pick: the console asks a token, opens the page with it; the service's script checks it and shows the overlay.
    const tokenAsked = tab.waitForResponse(
      (r) => r.url() === `${api}/v0/sites/${site.siteId}/pick-tokens` && r.request().method() === 'POST',
    );
    const opened = context.waitForEvent('page');
    const checked = context.waitForEvent('response', (r) => r.url().startsWith(`${api}/_pam/pick?`));
    await change.getByRole('button', { name: 'Pick an element for change 1' }).click();
    assert.equal((await tokenAsked).status(), 201);
    const shopTab = await opened;
    await shopTab.waitForURL(/pam_pick=/);
    const pickUrl = new URL(shopTab.url());
    assert.equal(`${pickUrl.origin}${pickUrl.pathname}`, `${shopOrigin}/pricing`);
    await shopTab.waitForLoadState('load');
    assert.equal((await checked).status(), 200, 'the script checked the token with the service');
    await overlayShown(shopTab);
    assert.equal(await shopTab.locator('h1').textContent(), 'Original title', 'a pick changes nothing');
    await shopTab.locator('li', { hasText: 'Team' }).click();
    const picked = await until('the picked selector in the console', async () => {
      const value = await selectorField.inputValue();
      return value !== 'h1.title' ? value : undefined;
    });
    // Short, and names that one element of the customer's page.
    assert.ok(picked.length < 60, picked);
    assert.equal(await shopTab.evaluate(`document.querySelectorAll(${JSON.stringify(picked)}).length`), 1);
    assert.equal(await shopTab.evaluate(`document.querySelector(${JSON.stringify(picked)}).textContent`), 'Team');
    // The click went to the overlay, not to the page: the console listens no more after the first pick.
    await shopTab.locator('p.lead').click();
    await shopTab.waitForTimeout(300);
    assert.equal(await selectorField.inputValue(), picked);
    await shopTab.close();
    await tab.getByRole('button', { name: 'Save', exact: true }).click();
    await until('the picked selector saved', async () => {
      const saved = ok(await t.req('GET', `/v0/experiences/${experience.experienceId}`));
      return (saved.changes as Json[])[0]?.selector === picked ? true : undefined;
    });

    // Preview: the token for the chosen visitor, then the page with it, in a tab with no way back.
    await tab.getByLabel('UTM term').fill('CRM teams');
    await tab.getByLabel("Company's name").fill('Acme Robots');
    // Passed on to the service as sent; only the body is kept, to be read here.
    const previewBodies: unknown[] = [];
    await context.route(`${api}/v0/experiences/*/preview-tokens`, async (route) => {
      previewBodies.push(route.request().postDataJSON());
      await route.continue();
    });
    const previewAsked = tab.waitForResponse(
      (r) => r.url() === `${api}/v0/experiences/${experience.experienceId}/preview-tokens` && r.request().method() === 'POST',
    );
    const previewOpened = context.waitForEvent('page');
    const reported = context.waitForEvent('response', (r) => r.url() === `${api}/_pam/x`);
    await tab.getByRole('button', { name: 'Preview', exact: true }).click();
    const asked = await previewAsked;
    assert.equal(asked.status(), 201);
    assert.deepEqual(previewBodies[0], { utm: { term: 'CRM teams' }, company: { name: 'Acme Robots' } });
    const previewTab = await previewOpened;
    await previewTab.waitForURL(/pam_preview=/);
    const previewUrl = new URL(previewTab.url());
    assert.equal(`${previewUrl.origin}${previewUrl.pathname}`, `${shopOrigin}/pricing`);
    assert.equal(await previewTab.evaluate('window.opener'), null);
    // The change on the element picked, its tokens filled with the chosen values.
    await until('the previewed change', async () =>
      (await previewTab.locator('li').nth(1).textContent()) === 'Built for CRM teams at Acme Robots' ? true : undefined,
    );
    assert.equal(await previewTab.locator('h1').textContent(), 'Original title');
    // The script reports the view as any other (an answer in time, which 3 s leaves a loaded machine); the service measures nothing of a preview.
    assert.equal((await reported).status(), 204);
    const analytics = ok(await t.req('GET', `/v0/experiences/${experience.experienceId}/analytics`));
    assert.deepEqual(analytics.totals, { views: 0, visitors: 0, clicks: 0, conversions: 0 });
    await previewTab.close();

    // The same page without the token: the draft is nobody's.
    const visitor = await context.newPage();
    await visitor.goto(`${shopOrigin}/pricing`);
    await visitor.waitForLoadState('load');
    assert.equal(await visitor.locator('li').nth(1).textContent(), 'Team');
    assert.deepEqual(errors, []);
    await context.close();
  });
});
