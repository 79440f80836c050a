// Runs once (scripts/test.mjs): the console in a browser; its API is tested on both databases.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { buildConsole } from '../../scripts/build-console.js';
import { newAudience, newPage, postSession } from '../analytics/helpers.js';
import { available, CHROMIUM, skip, until, USER_AGENT } from '../browser.js';
import { ok, startApp, type TestApp } from '../helpers.js';

// Issue 40's pipeline panel on the Site view in Chromium: the deal of an account whose person
// visited a page shows on that page's row, in its currency; axe-core finds nothing serious.

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let t: TestApp;
let browser: Browser;
let origin: string;
let pageId = '';

before(async () => {
  if (skip) return;
  assert.ok(available, `no browser at ${CHROMIUM}`);
  await buildConsole();
  t = await startApp();
  origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
  ok(await t.req('POST', '/v0/accounts', { name: 'Acme', domain: 'acme.com' }), 201);
  const person = ok(await t.req('POST', '/v0/persons', { name: 'Jane Doe', domain: 'acme.com' }), 201);
  pageId = await newPage(t, 'Spring <b>launch</b>');
  const audienceId = await newAudience(t, pageId, { personId: person.personId });
  await postSession(t, pageId, { audienceId, start: new Date(Date.now() - 86_400_000).toISOString() });
  ok(
    await t.req('POST', '/v0/deals', {
      source: 'api',
      externalId: 'd-1',
      name: 'Acme renewal',
      amount: 1234.5,
      currency: 'EUR',
      stage: 'won',
      accountDomain: 'acme.com',
      createdAt: new Date(Date.now() - 1000).toISOString(),
    }),
    201,
  );
  // The browser's own agent too: headless Chromium sends an unloading page's beacons under it (test/onsite/measure.browser.test.ts).
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', `--user-agent=${USER_AGENT}`] });
});
after(async () => {
  await browser?.close();
  await t?.close();
});

describe('the pipeline panel', { skip }, () => {
  test('the page that touched the deal shows it, and no serious axe violation', { timeout: 120_000 }, async () => {
    const context = await browser.newContext({ userAgent: USER_AGENT, viewport: { width: 1280, height: 900 }, locale: 'en-US' });
    const tab = await context.newPage();
    await tab.goto(`${origin}/console/`);
    await tab.getByLabel('API key').fill(t.key);
    await tab.getByRole('button', { name: 'Sign in' }).click();
    await tab.getByRole('button', { name: 'Sign out' }).waitFor();
    await tab.getByRole('link', { name: 'Site', exact: true }).click();
    const row = `[data-pipeline="page"] [data-group="${pageId}"]`;
    await until(row, async () => ((await tab.locator(row).count()) > 0 ? true : undefined));
    const text = (await tab.locator(row).textContent()) ?? '';
    assert.match(text, /^Spring <b>launch<\/b>1€1,234\.501€1,234\.501€1,234\.50$/);
    await tab.getByLabel('Credit').selectOption('first');
    await until('first', async () => ((await tab.locator(row).count()) > 0 ? true : undefined));
    // Issue 49: each model said in a line; time_decay's with the half-life the answer used (90 / 4).
    const meaning = tab.locator('[data-pipeline="page"] [data-model-meaning]');
    assert.match((await meaning.textContent()) ?? '', /first visit/);
    await tab.getByLabel('Credit').selectOption('time_decay');
    await until('the half-life', async () => (/22\.5 days/.test((await meaning.textContent()) ?? '') ? true : undefined));
    await tab.getByLabel('Credit').selectOption('position');
    await until('U-shaped', async () => (/40%/.test((await meaning.textContent()) ?? '') ? true : undefined));
    await until('position', async () => ((await tab.locator(row).count()) > 0 ? true : undefined));
    assert.match((await tab.locator(row).textContent()) ?? '', /1€1,234\.50$/);
    await tab.evaluate(AXE);
    const violations = (await tab.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((result) =>
      result.violations.map((v) => ({ id: v.id, impact: v.impact })))`)) as { impact: string }[];
    assert.deepEqual(
      violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'),
      [],
    );
    await context.close();
  });
});
