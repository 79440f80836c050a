import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { buildConsole } from '../../scripts/build-console.js';
import { available, CHROMIUM, skip, until, USER_AGENT } from '../browser.js';
import { ok, startApp, type TestApp } from '../helpers.js';
import { audienceOf, fallbackHost, link, publishedPage, visit } from '../site/serve-helpers.js';
import { pick, viewChecker } from './console-tab.js';

// The console's Leads view (issue 29) in real headless Chromium: leads submitted on served pages,
// newest first, filtered by page, exported as CSV, each linking to its person; axe on the view.

const ARTIFACTS = path.resolve('test-artifacts', 'console');
const check = viewChecker(ARTIFACTS);

let t: TestApp;
let browser: Browser;
let origin: string;
const seed = { springId: '', autumnId: '' };

async function submitLead(pagePath: string, name: string, email: string, address: string): Promise<void> {
  const host = await fallbackHost(t);
  const html = (await visit(t, host, pagePath)).body as string;
  const hidden = (field: string) => new RegExp(`<input type="hidden" name="${field}" value="([^"]*)">`).exec(html)?.[1] ?? '';
  const res = await visit(t, host, '/_pam/forms', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ token: hidden('token'), action: hidden('action'), path: hidden('path'), name, email }).toString(),
    remoteAddress: address,
  });
  assert.equal(res.statusCode, 303);
}

before(async () => {
  if (skip) return;
  assert.ok(available, `no browser at ${CHROMIUM}: .ci/run installs Debian's chromium`);
  mkdirSync(ARTIFACTS, { recursive: true });
  await buildConsole();
  t = await startApp();
  origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const form = { purpose: 'lead', buttonTitle: 'Talk to us', actionType: 'form', url: '' };
  const spring = await publishedPage(t, { name: 'Spring', actions: [form] });
  const autumn = await publishedPage(t, { name: 'Autumn', actions: [form] });
  seed.springId = spring.pageId;
  seed.autumnId = autumn.pageId;
  await link(t, '/spring', { targetType: 'audience', audienceId: (await audienceOf(t, spring.pageId, {})).audienceId });
  await link(t, '/autumn', { targetType: 'audience', audienceId: (await audienceOf(t, autumn.pageId, {})).audienceId });
  await submitLead('/spring', 'Ada Lovelace', 'ada@analytical.example', '198.51.100.1');
  await submitLead('/autumn', 'Grace Hopper', 'grace@navy.example', '198.51.100.2');
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
after(async () => {
  await browser?.close();
  await t?.close();
});

describe('the Leads view in a real browser', { skip }, () => {
  test('newest first, filtered by page, CSV, a link to each person', { timeout: 120_000 }, async () => {
    const context = await browser.newContext({ userAgent: USER_AGENT, acceptDownloads: true, viewport: { width: 1280, height: 900 } });
    const tab = await context.newPage();
    await tab.goto(`${origin}/console/`);
    await tab.getByLabel('API key').fill(t.key);
    await tab.getByRole('button', { name: 'Sign in' }).click();
    await tab.getByRole('button', { name: 'Sign out' }).waitFor();
    await tab.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Leads' }).click();
    await tab.getByRole('heading', { name: 'Leads' }).waitFor();
    await tab.getByRole('link', { name: 'Grace Hopper' }).waitFor();
    const rows = async () => (await tab.locator('tbody tr').allTextContents()).map((r) => r.replace(/\s+/g, ' '));
    const all = await rows();
    assert.equal(all.length, 2);
    assert.match(all[0] ?? '', /Grace Hopper.*Autumn/, 'newest first');
    assert.match(all[1] ?? '', /Ada Lovelace.*Spring/);
    await check(tab, 'leads');

    await pick(tab, 'Page', 'Spring');
    assert.match(
      (await tab.locator('[data-picker="pageId"]').textContent()) ?? '',
      new RegExp(`Spring.*API id: ${seed.springId}`),
      'the name, the id in the hint',
    );
    await tab.getByRole('button', { name: 'Filter' }).click();
    await until('the filtered list', async () => ((await rows()).length === 1 ? true : undefined));
    assert.match((await rows())[0] ?? '', /Ada Lovelace/);

    const [download] = await Promise.all([tab.waitForEvent('download'), tab.getByRole('button', { name: 'Export CSV' }).click()]);
    const csv = readFileSync((await download.path()) ?? '', 'utf8')
      .trim()
      .split('\r\n');
    assert.match(csv[0] ?? '', /^leadId,submittedAt,personId,personName/);
    assert.equal(csv.length, 2, 'the header and the filtered lead');
    assert.match(csv[1] ?? '', /ada@analytical\.example/);

    const leads = ok(await t.req('GET', `/v0/leads?pageId=${seed.springId}`)).items;
    await tab.getByRole('link', { name: 'Ada Lovelace' }).click();
    await tab.getByRole('heading', { name: 'Ada Lovelace', level: 1 }).waitFor();
    assert.ok(tab.url().endsWith(`#/persons/${leads[0].personId}`));
    await context.close();
  });

  test("a lead on another person's link: who filled it, what they typed, and the link's person", { timeout: 120_000 }, async () => {
    const jane = ok(await t.req('POST', '/v0/persons', { name: 'Jane Roe', email: 'jane@acme.example' }), 201);
    const form = { purpose: 'lead', buttonTitle: 'Talk to us', actionType: 'form', url: '' };
    const page = await publishedPage(t, { name: 'Forwarded', actions: [form] });
    await link(t, '/for-jane', {
      targetType: 'audience',
      audienceId: (await audienceOf(t, page.pageId, { personId: jane.personId })).audienceId,
    });
    await submitLead('/for-jane', 'Bob <b>Smith</b>', 'bob@globex.example', '198.51.100.3');
    const [lead] = ok(await t.req('GET', `/v0/leads?pageId=${page.pageId}`)).items;
    assert.equal(lead.viaPersonId, jane.personId);

    const context = await browser.newContext({ userAgent: USER_AGENT, viewport: { width: 1280, height: 900 } });
    const tab = await context.newPage();
    await tab.goto(`${origin}/console/`);
    await tab.getByLabel('API key').fill(t.key);
    await tab.getByRole('button', { name: 'Sign in' }).click();
    await tab.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Leads' }).click();
    await tab.getByRole('link', { name: 'Bob <b>Smith</b>' }).waitFor();
    const row = tab.locator('tbody tr').first();
    const text = (await row.textContent())?.replace(/\s+/g, ' ') ?? '';
    assert.match(text, /Bob <b>Smith<\/b>bob@globex\.example/, 'the person, the name shown as text');
    assert.match(text, /via the link's person/);
    assert.equal(await row.locator('b').count(), 0, 'a typed tag is never markup');
    await check(tab, 'leads-via');
    await row.getByRole('link', { name: "the link's person" }).click();
    await tab.getByRole('heading', { name: 'Jane Roe', level: 1 }).waitFor();
    assert.ok(tab.url().endsWith(`#/persons/${jane.personId}`));
    await context.close();
  });
});
