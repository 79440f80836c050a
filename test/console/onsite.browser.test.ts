import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type Browser, type BrowserContext, chromium, type Page as Tab } from 'playwright-core';
import { buildConsole } from '../../scripts/build-console.js';
import { available, CHROMIUM, skip, until } from '../browser.js';
import { type Json, ok, startApp, type TestApp } from '../helpers.js';
import { artifactsDir, openConsole, pageUntil, stepper } from './console-tab.js';

// Issue 48's console in Chromium: a site added with its origins (a refused one said under its own
// field), its snippet shown and copied, "Not seen yet" then "Installed"; an experience made with
// the segments' rule builder and a changes editor (the API's refusals at their change's field),
// edited and deleted; "Pick an element" against a page on another origin (shop-x.localhost) whose
// answer is taken only from the site's origin with the right token; "Preview" opening the page
// with its token; results. Pick and preview tokens and analytics are other parts of the issue:
// when this service has no route for them, their answers are given by the test (the contract's
// shapes) and what the console does with a 404 is checked instead where it matters.

let t: TestApp;
let browser: Browser;
let origin: string;
let shop: http.Server;
let shopOrigin: string;
const DIR = artifactsDir('onsite');

/** The customer's site: a pricing page whose own stand-in for the pick overlay answers a click. */
const SHOP_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop X</title></head><body>
<main><h1 id="hero">Pricing for everyone</h1><p class="lead">Plans from $9.</p></main>
<script>
  const token = new URLSearchParams(location.search).get('pam_pick');
  document.addEventListener('click', (e) => {
    if (!token || !window.opener) return;
    e.preventDefault();
    window.opener.postMessage({ type: 'pam:pick', token, selector: e.target.id ? '#' + e.target.id : 'main p.lead' }, '*');
  });
</script></body></html>`;

before(async () => {
  if (skip) return;
  assert.ok(available, `no browser at ${CHROMIUM}`);
  await buildConsole();
  shop = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(SHOP_PAGE));
  await new Promise<void>((r) => shop.listen(0, '127.0.0.1', r));
  shopOrigin = `http://shop-x.localhost:${(shop.address() as AddressInfo).port}`;
  t = await startApp();
  origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
after(async () => {
  await browser?.close();
  await t?.close();
  await new Promise((r) => shop?.close(r));
});

/** Whether this service has the endpoint (another part of the issue may not be merged yet): anything but a 404. */
const serves = async (method: 'GET' | 'POST', url: string): Promise<boolean> =>
  (await t.req(method, url, method === 'POST' ? {} : undefined)).status !== 404;

/** Answers `pattern` with `answer` in this context when the service has no route for it; the bodies sent are kept. */
async function standIn(context: BrowserContext, pattern: string, status: number, answer: Json): Promise<Json[]> {
  const sent: Json[] = [];
  await context.route(`${origin}${pattern}`, async (route) => {
    sent.push(JSON.parse(route.request().postData() ?? '{}') as Json);
    await route.fulfill({ status, contentType: 'application/json', body: JSON.stringify(answer) });
  });
  return sent;
}

const nav = (tab: Tab, name: string) => tab.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();

describe("issue 48's Sites and Experiences views in a real browser", { skip }, () => {
  test('a site: refused origin at its field, snippet copied, installed, origins edited, deleted', { timeout: 120_000 }, async () => {
    const { context, tab, errors } = await openConsole(browser, origin, t.key);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
    const { check } = stepper(DIR);
    await nav(tab, 'Sites');
    await tab.getByText('No sites yet.').waitFor();
    await tab.getByRole('button', { name: 'Add a site' }).click();
    await tab.getByLabel('Site name').fill('Shop <b>X</b>');
    await tab.getByRole('textbox', { name: 'Origin 1' }).fill(shopOrigin);
    await tab.getByRole('button', { name: 'Add another origin' }).click();
    await tab.getByRole('textbox', { name: 'Origin 2' }).fill('http://www.example.com');
    await tab.getByRole('button', { name: 'Add site' }).click();
    // The API's refusal of the second origin is said under that origin, and only there.
    const second = tab.getByRole('textbox', { name: 'Origin 2' });
    await until('the origin refused', async () => ((await second.getAttribute('aria-invalid')) === 'true' ? true : undefined));
    assert.equal(await tab.getByRole('textbox', { name: 'Origin 1' }).getAttribute('aria-invalid'), null);
    await check(tab, 'site-refused-origin');
    await tab.getByRole('button', { name: 'Remove http://www.example.com' }).click();
    await tab.getByRole('button', { name: 'Add site' }).click();
    await tab.locator('[data-notice]', { hasText: 'Added Shop <b>X</b>' }).waitFor();
    const [site] = ok(await t.req('GET', '/v0/sites')).items as Json[];
    assert.deepEqual(site.origins, [shopOrigin]);
    const card = tab.locator(`[data-site="${site.siteId}"]`);
    assert.equal(await card.locator('b').count(), 0, 'a stored name is text');
    await card.locator('[data-installed="no"]', { hasText: 'Not seen yet' }).waitFor();
    // The snippet is shown as text and copied exactly.
    assert.equal(await card.locator(`[data-snippet="${site.siteId}"]`).textContent(), site.snippet);
    await card.getByRole('button', { name: 'Copy snippet' }).click();
    await card.getByText('Copied').waitFor();
    assert.equal(await tab.evaluate('navigator.clipboard.readText()'), site.snippet);
    await check(tab, 'sites');

    // Once the script has run on one of the origins, the card says so.
    const { touchSiteSeen } = await import('../../src/onsite/index.js');
    await touchSiteSeen(t.app.db, site.siteId, Date.now());
    await tab.reload();
    await card.locator('[data-installed="yes"]', { hasText: 'Installed, last seen' }).waitFor();

    await card.getByRole('button', { name: 'Edit Shop <b>X</b>' }).click();
    await card.getByRole('button', { name: 'Add another origin' }).click();
    await card.getByRole('textbox', { name: 'Origin 2' }).fill('https://www.shop-x.example');
    await card.getByRole('button', { name: 'Save' }).click();
    await tab.locator('[data-notice]', { hasText: 'Saved Shop <b>X</b>.' }).waitFor();
    assert.deepEqual(ok(await t.req('GET', `/v0/sites/${site.siteId}`)).origins, [shopOrigin, 'https://www.shop-x.example']);

    await tab.getByRole('button', { name: 'Delete Shop <b>X</b>' }).click();
    await tab.getByText('No sites yet.').waitFor();
    assert.equal((await t.req('GET', `/v0/sites/${site.siteId}`)).status, 404);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('an experience: rules, changes refused at their fields, pick, preview, results, edit, delete', { timeout: 180_000 }, async () => {
    const site = ok(await t.req('POST', '/v0/sites', { name: 'Shop X', origins: [shopOrigin] }), 201);
    const { context, tab, errors } = await openConsole(browser, origin, t.key);
    const { check } = stepper(DIR);
    await nav(tab, 'Experiences');
    await tab.getByText('No experiences on Shop X yet.').waitFor();
    await tab.getByRole('button', { name: 'New experience' }).click();
    await tab.getByLabel('Experience name').fill('Pricing for <i>LinkedIn</i>');
    await tab.getByLabel('Path', { exact: true }).fill('/pricing');
    await tab.getByLabel('whose', { exact: true }).selectOption({ label: 'UTM source' });
    await tab.getByLabel('value', { exact: true }).fill('linkedin');
    await tab.getByLabel('Holdout (%)').fill('20');
    const first = tab.locator('[data-change="0"]');
    await first.getByLabel('Element (CSS selector)').fill('h1[');
    await first.getByLabel('New text').fill('Pricing for {{utm.term | your team}}');
    await tab.getByRole('button', { name: 'Add change' }).click();
    const link = tab.locator('[data-change="1"]');
    await link.getByLabel('Element (CSS selector)').fill('a.cta');
    await link.getByLabel('What to do').selectOption({ label: 'Set an attribute' });
    await link.getByLabel('New value').fill('javascript:alert(1)');
    await tab.getByRole('button', { name: 'Create experience' }).click();
    // Each refusal beside its own change's field.
    const invalid = (scope: ReturnType<Tab['locator']>, label: string) =>
      until(`${label} refused`, async () => ((await scope.getByLabel(label).getAttribute('aria-invalid')) === 'true' ? true : undefined));
    await invalid(first, 'Element (CSS selector)');
    await invalid(link, 'New value');
    await check(tab, 'experience-refused');

    // "Pick an element": the page opens on the site with a one-time token; only its answer counts.
    const pickSent = (await serves('POST', `/v0/sites/${site.siteId}/pick-tokens`))
      ? undefined
      : await standIn(context, '/v0/sites/*/pick-tokens', 201, {
          token: 'pick_test_token',
          expiresAt: new Date(Date.now() + 600_000).toISOString(),
        });
    const opened = context.waitForEvent('page');
    await first.getByRole('button', { name: 'Pick an element for change 1' }).click();
    const shopTab = await opened;
    await shopTab.waitForURL(/pam_pick=/);
    const url = new URL(shopTab.url());
    assert.equal(`${url.origin}${url.pathname}`, `${shopOrigin}/pricing`);
    const token = url.searchParams.get('pam_pick') ?? '';
    assert.ok(token, 'the page has its pick token');
    if (pickSent) assert.equal(token, 'pick_test_token');
    // Another origin (the console itself) and another token are not listened to.
    await tab.evaluate(`window.postMessage({ type: 'pam:pick', token: ${JSON.stringify(token)}, selector: '#from-elsewhere' }, '*')`);
    await shopTab.evaluate(`window.opener.postMessage({ type: 'pam:pick', token: 'another', selector: '#wrong-token' }, '*')`);
    await shopTab.waitForTimeout(200);
    assert.equal(await first.getByLabel('Element (CSS selector)').inputValue(), 'h1[');
    await shopTab.locator('#hero').click();
    await until('the picked selector', async () =>
      (await first.getByLabel('Element (CSS selector)').inputValue()) === '#hero' ? true : undefined,
    );
    await shopTab.close();
    await link.getByLabel('New value').fill('/signup?from=linkedin');
    // A section inserted after the element, written with the page editor's section fields.
    await tab.getByRole('button', { name: 'Add change' }).click();
    const section = tab.locator('[data-change="2"]');
    await section.getByLabel('Element (CSS selector)').fill('main p.lead');
    await section.getByLabel('What to do').selectOption({ label: 'Insert a section next to it' });
    await section.getByLabel('Section heading').fill('Why teams switch');
    await section.getByLabel('Section text').fill('Set up in **a day**.');
    await check(tab, 'experience-new');
    await tab.getByRole('button', { name: 'Create experience' }).click();
    await tab.getByRole('heading', { name: 'Pricing for <i>LinkedIn</i>' }).waitFor();
    const [made] = ok(await t.req('GET', `/v0/experiences?siteId=${site.siteId}`)).items as Json[];
    assert.deepEqual(made.urlMatch, { type: 'exact', value: '/pricing' });
    assert.deepEqual(made.rules, { match: 'all', conditions: [{ field: 'utm.source', operator: 'equals', value: 'linkedin' }] });
    assert.equal(made.holdoutPercent, 20);
    assert.deepEqual(
      (made.changes as Json[]).map((c) => [c.selector, c.action]),
      [
        ['#hero', 'text'],
        ['a.cta', 'attribute'],
        ['main p.lead', 'section'],
      ],
    );
    assert.equal((made.changes as Json[])[0]?.value, 'Pricing for {{utm.term | your team}}');
    assert.equal((made.changes as Json[])[2]?.placement, 'after');

    // Results: the analytics endpoint's answer, or, without it, a plain note rather than a failure.
    if (await serves('GET', `/v0/experiences/${made.experienceId}/analytics`)) await tab.locator('[data-results]').first().waitFor();
    else {
      await tab.locator('[data-results="missing"]').waitFor();
      await standIn(context, '/v0/experiences/*/analytics*', 200, {
        totals: { views: 120, visitors: 100, clicks: 14, conversions: 9 },
        arms: [
          { arm: 'personalised', views: 96, visitors: 80, conversions: 8, conversionRate: 0.1 },
          { arm: 'holdout', views: 24, visitors: 20, conversions: 1, conversionRate: 0.05 },
        ],
        decision: 'collecting',
        pValue: 0.42,
        lift: { estimate: 1, low: -0.5, high: 2.5 },
      });
      await tab.getByLabel('Range').selectOption({ label: 'Last 7 days' });
      await tab.locator('[data-arm="holdout"]', { hasText: '5.0%' }).waitFor();
      await tab.locator('[data-decision="collecting"]').waitFor();
    }
    await check(tab, 'experience');

    // Preview: a token for the chosen visitor, then the page with it, without a way back to the console.
    const previewSent = (await serves('POST', `/v0/experiences/${made.experienceId}/preview-tokens`))
      ? undefined
      : await standIn(context, '/v0/experiences/*/preview-tokens', 201, {
          token: 'preview_test_token',
          expiresAt: new Date().toISOString(),
        });
    await tab.getByLabel('UTM term').fill('crm');
    await tab.getByLabel("Company's name").fill('Acme');
    const previewOpened = context.waitForEvent('page');
    await tab.getByRole('button', { name: 'Preview', exact: true }).click();
    const previewTab = await previewOpened;
    await previewTab.waitForURL(/pam_preview=/);
    const previewUrl = new URL(previewTab.url());
    assert.equal(`${previewUrl.origin}${previewUrl.pathname}`, `${shopOrigin}/pricing`);
    assert.equal(await previewTab.evaluate('window.opener'), null);
    if (previewSent) {
      assert.equal(previewUrl.searchParams.get('pam_preview'), 'preview_test_token');
      assert.deepEqual(previewSent, [{ utm: { term: 'crm' }, company: { name: 'Acme' } }]);
    }
    await previewTab.close();

    // Edit: live, and a refusal on save still at its field.
    await tab.getByLabel('Status').selectOption('live');
    const edited = tab.locator('[data-change="0"]');
    await edited.getByLabel('Element (CSS selector)').fill('');
    await tab.getByRole('button', { name: 'Save', exact: true }).click();
    await invalid(edited, 'Element (CSS selector)');
    await edited.getByLabel('Element (CSS selector)').fill('#hero');
    await tab.getByRole('button', { name: 'Save', exact: true }).click();
    await tab.locator('h1 .badge', { hasText: 'live' }).waitFor();
    assert.equal(ok(await t.req('GET', `/v0/experiences/${made.experienceId}`)).status, 'live');

    await nav(tab, 'Experiences');
    const row = tab.locator(`[data-experience="${made.experienceId}"]`);
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /live.*\/pricing.*3 changes.*20%/);
    assert.equal(await row.locator('i').count(), 0, 'a stored name is text');
    await check(tab, 'experiences');
    await row.getByRole('link').click();
    await tab.getByRole('button', { name: 'Delete the experience Pricing for <i>LinkedIn</i>' }).click();
    await tab.getByText('No experiences on Shop X yet.').waitFor();
    assert.equal((await t.req('GET', `/v0/experiences/${made.experienceId}`)).status, 404);
    await pageUntil(tab, `location.hash === '#/sites/${site.siteId}/experiences'`);
    assert.deepEqual(errors, []);
    await context.close();
  });
});
