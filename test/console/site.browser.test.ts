import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { buildConsole } from '../../scripts/build-console.js';
import { available, CHROMIUM, skip, USER_AGENT } from '../browser.js';
import { type Json, ok, startApp, type TestApp } from '../helpers.js';
import { fallbackHost, link, publishedPage, unique, visit } from '../site/serve-helpers.js';
import { pageUntil, viewChecker } from './console-tab.js';

// Issue 28's site dashboard in Chromium: funnels as bars with the drop between steps, the top
// pages, goals, the site totals and realtime list when the service has them; axe-core on the view.

const ARTIFACTS = path.resolve('test-artifacts', 'console');

let t: TestApp;
let browser: Browser;
let origin: string;
let funnelId = '';
let pageId = '';
let segmentId = '';

async function report(host: string, url: string, extra: Json = {}): Promise<void> {
  const served = await visit(t, host, url, { headers: { 'user-agent': USER_AGENT } });
  assert.equal(served.statusCode, 200);
  const token = JSON.parse(/id="pam-view">([^<]*)</.exec(served.body)?.[1] ?? '{}').token;
  const res = await visit(t, host, '/_pam/collect', {
    method: 'POST',
    headers: { 'content-type': 'text/plain', 'user-agent': USER_AGENT },
    payload: JSON.stringify({ token, visibleMs: 1000, scroll: 10, clicks: 0, questions: 0, conversions: 0, ...extra }),
  });
  assert.equal(res.statusCode, 204, res.body);
}

before(async () => {
  if (skip) return;
  assert.ok(available, `no browser at ${CHROMIUM}`);
  mkdirSync(ARTIFACTS, { recursive: true });
  await buildConsole();
  t = await startApp();
  origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const host = await fallbackHost(t);
  const page = await publishedPage(t, { name: 'Spring <b>offer</b>' });
  pageId = page.pageId;
  const path = unique('site');
  await link(t, path, { targetType: 'page_routing', pageId });
  for (let i = 0; i < 3; i++) {
    const person = ok(await t.req('POST', '/v0/persons', { name: `Visitor ${i}` }), 201);
    ok(await t.req('POST', `/v0/pages/${pageId}/audiences`, { personId: person.personId, personRouteKey: `v${i}` }), 201);
    // Three visitors land, two track a signup (49 each): a drop of one at the second step.
    await report(host, `${path}/v${i}`, i < 2 ? { events: [['signup', 1, 49]] } : {});
  }
  // A visit matched to a segment (issue 39): the realtime list names the segment.
  const segmented = await publishedPage(t, { name: 'Segmented' });
  const segmentPath = unique('seg');
  await link(t, segmentPath, { targetType: 'page', pageId: segmented.pageId });
  const rules = { match: 'all', conditions: [{ field: 'utm.source', operator: 'equals', value: 'linkedin' }] };
  segmentId = ok(
    await t.req('POST', `/v0/pages/${segmented.pageId}/audiences`, { customName: 'LinkedIn <b>ads</b>', rules, priority: 1 }),
    201,
  ).audienceId;
  await report(host, `${segmentPath}?utm_source=linkedin`);
  ok(await t.req('POST', '/v0/goals', { name: 'Signup', kind: 'event', eventName: 'signup', currency: 'EUR' }), 201);
  funnelId = ok(
    await t.req('POST', '/v0/funnels', {
      name: 'Landing to signup',
      steps: [
        { kind: 'path', path, name: 'Landed' },
        { kind: 'event', eventName: 'signup', name: 'Signed up' },
      ],
    }),
    201,
  ).funnelId;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
after(async () => {
  await browser?.close();
  await t?.close();
});

describe('the site dashboard', { skip }, () => {
  test('funnels as bars with their drop, top pages, and no serious axe violation', { timeout: 120_000 }, async () => {
    const context = await browser.newContext({ userAgent: USER_AGENT, viewport: { width: 1280, height: 900 } });
    const tab = await context.newPage();
    assert.equal((await tab.goto(`${origin}/console/`))?.status(), 200);
    await tab.getByLabel('API key').fill(t.key);
    await tab.getByRole('button', { name: 'Sign in' }).click();
    await tab.getByRole('button', { name: 'Sign out' }).waitFor();
    await tab.getByRole('link', { name: 'Site', exact: true }).click();
    await pageUntil(tab, `!document.body.textContent.includes('Loading…') && document.querySelector('[data-funnel]')`);

    const steps = await tab.locator(`[data-funnel="${funnelId}"] li`).allTextContents();
    assert.equal(steps.length, 2);
    assert.match(steps[0] ?? '', /Landed.*3 visitors \(100\.0%\)/);
    assert.match(steps[1] ?? '', /Signed up.*2 visitors \(66\.7%\).*1 dropped \(33\.3%\)/);
    const widths = await tab
      .locator(`[data-funnel="${funnelId}"] .bar`)
      .evaluateAll((bars) => bars.map((b) => (b as unknown as { style: { width: string } }).style.width));
    assert.equal(widths[0], '100%');
    assert.match(widths[1] ?? '', /^66\.66/);
    // The page's name is text, never markup.
    assert.equal(await tab.locator('table', { hasText: 'Top pages' }).locator('a').first().textContent(), 'Spring <b>offer</b>');

    // The site totals and the realtime list: shown when the service answers them, an alert otherwise.
    const siteAnswers = (await t.req('GET', '/v0/analytics/site?compare=previous_period')).status === 200;
    if (siteAnswers) {
      assert.equal(await tab.locator('[data-kpi]').count(), 4);
      assert.match((await tab.locator('[data-goal]').first().textContent()) ?? '', /Signup.*2.*2.*€98/);
    } else {
      assert.ok((await tab.getByRole('alert').count()) >= 1, 'a missing endpoint is said, not hidden');
    }
    // Realtime names a segment a visit matched, as text; a person's visit is named by the person alone.
    if ((await t.req('GET', '/v0/analytics/realtime')).status === 200) {
      await pageUntil(tab, `document.querySelector('[data-segment]')`);
      const shown = tab.locator(`[data-audience="${segmentId}"]`);
      assert.equal((await shown.textContent())?.trim(), '· LinkedIn <b>ads</b> (segment)');
      assert.equal(await shown.locator('b').count(), 0, 'the name is text, never markup');
      assert.equal(await tab.locator('.realtime li', { hasText: 'Visitor 0' }).locator('[data-audience]').count(), 0);
    }
    await viewChecker(ARTIFACTS)(tab, 'site');
    await context.close();
  });
});
