// Runs once (scripts/test.mjs): the console in a browser; its API is tested on both databases.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { buildConsole } from '../../scripts/build-console.js';
import { available, CHROMIUM, skip, until, USER_AGENT } from '../browser.js';
import { type Json, ok, startApp, type TestApp } from '../helpers.js';
import { fakeCrm, type FakeCrm } from './helpers.js';

// The console's Integrations view (issue 40) in headless Chromium: connect HubSpot (played by a
// test server), see the sync's status and counts, sync now, pause after a confirmation, resume.

const ARTIFACTS = path.resolve('test-artifacts', 'console');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const TOKEN = 'pat-na1-console-browser-token';

let t: TestApp;
let crm: FakeCrm;
let browser: Browser;
let origin: string;

before(async () => {
  if (skip) return;
  assert.ok(available, `no browser at ${CHROMIUM}: .ci/run installs Debian's chromium`);
  mkdirSync(ARTIFACTS, { recursive: true });
  await buildConsole();
  crm = await fakeCrm();
  crm.handle = (seen) => {
    if (seen.headers.authorization !== `Bearer ${TOKEN}`) return { status: 401, body: { message: 'bad token' } };
    if (seen.method === 'GET' && seen.path === '/crm/v3/properties/contacts') return { body: { results: [{ name: 'email' }] } };
    if (seen.method === 'POST' && seen.path === '/crm/v3/objects/deals/search') return { body: { total: 0, results: [] } };
    return undefined;
  };
  t = await startApp({ HUBSPOT_API_URL: crm.url, CRM_SYNC_SECONDS: '3600' }, { crmSync: { pollMs: 50 } });
  origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
after(async () => {
  await browser?.close();
  await t?.close();
  await crm?.close();
});

const searches = () => crm.seen.filter((s) => s.path === '/crm/v3/objects/deals/search').length;

describe('the Integrations view in a real browser', { skip }, () => {
  test('connect HubSpot, see the sync, sync now, pause after a confirmation, resume', { timeout: 120_000 }, async () => {
    const context = await browser.newContext({ userAgent: USER_AGENT, viewport: { width: 1280, height: 900 } });
    const tab = await context.newPage();
    const dialogs: string[] = [];
    tab.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.accept();
    });
    await tab.goto(`${origin}/console/`);
    await tab.getByLabel('API key').fill(t.key);
    await tab.getByRole('button', { name: 'Sign in' }).click();
    await tab.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Integrations' }).click();
    await tab.getByText('No CRM connected.').waitFor();
    await tab.getByRole('button', { name: 'Connect a CRM' }).click();
    await tab.getByLabel('Private app access token').fill(TOKEN);
    await tab.getByRole('button', { name: 'Connect', exact: true }).click();

    const row = tab.locator('tbody tr', { hasText: 'HubSpot' });
    await row.waitFor();
    const [integration] = ok(await t.req('GET', '/v0/integrations')).items as Json[];
    assert.equal(integration.provider, 'hubspot');
    assert.doesNotMatch(await tab.content(), new RegExp(TOKEN), 'the token is never shown again');
    // The first sync runs in the background; the view shows it once reloaded.
    await until('the first sync', async () => (searches() > 0 ? true : undefined));

    if ((await tab.evaluate('typeof window.axe')) === 'undefined') await tab.evaluate(AXE);
    const violations = (await tab.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) =>
      r.violations.map((v) => ({ id: v.id, impact: v.impact })))`)) as { impact: string }[];
    assert.deepEqual(
      violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'),
      [],
    );

    const before = searches();
    await tab.getByRole('button', { name: 'Sync HubSpot now' }).click();
    await until('a sync asked for now', async () => (searches() > before ? true : undefined));
    await until('its time shown', async () =>
      ok(await t.req('GET', `/v0/integrations/${integration.integrationId}`)).lastSyncAt ? true : undefined,
    );

    await tab.getByRole('button', { name: 'Pause HubSpot' }).click();
    await row.getByText('paused').waitFor();
    assert.equal(dialogs.length, 1, 'pausing asks first');
    assert.equal(ok(await t.req('GET', `/v0/integrations/${integration.integrationId}`)).status, 'paused');
    assert.equal(await tab.getByRole('button', { name: 'Sync HubSpot now' }).count(), 0, 'a paused integration is not synced');
    await tab.screenshot({ path: path.join(ARTIFACTS, 'integrations.png'), fullPage: true });

    await tab.getByRole('button', { name: 'Resume HubSpot' }).click();
    await row.getByText('active').waitFor();
    assert.equal(ok(await t.req('GET', `/v0/integrations/${integration.integrationId}`)).status, 'active');
    await context.close();
  });
});
