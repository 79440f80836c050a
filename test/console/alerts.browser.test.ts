import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { buildConsole } from '../../scripts/build-console.js';
import { available, CHROMIUM, skip, until, USER_AGENT } from '../browser.js';
import { type Json, ok, startApp, type TestApp } from '../helpers.js';

// The console's Alerts view (issue 40) in headless Chromium: make an alert in words, send a test
// that a Slack-like receiver gets, pause it, delete it after a confirmation; axe on the view.

const ARTIFACTS = path.resolve('test-artifacts', 'console');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let t: TestApp;
let browser: Browser;
let origin: string;
let slack: http.Server;
let slackUrl: string;
const received: Json[] = [];

before(async () => {
  if (skip) return;
  assert.ok(available, `no browser at ${CHROMIUM}: .ci/run installs Debian's chromium`);
  mkdirSync(ARTIFACTS, { recursive: true });
  await buildConsole();
  slack = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      received.push(JSON.parse(raw) as Json);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((r) => slack.listen(0, '127.0.0.1', r));
  slackUrl = `http://127.0.0.1:${(slack.address() as AddressInfo).port}/services/T01/B01/secret`;
  t = await startApp({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' });
  origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
after(async () => {
  await browser?.close();
  await t?.close();
  await new Promise((r) => slack?.close(r));
});

describe('the Alerts view in a real browser', { skip }, () => {
  test('create in words, send a test, pause, delete after a confirmation', { timeout: 120_000 }, async () => {
    const context = await browser.newContext({ userAgent: USER_AGENT, viewport: { width: 1280, height: 900 } });
    const tab = await context.newPage();
    tab.on('dialog', (d) => void d.accept());
    await tab.goto(`${origin}/console/`);
    await tab.getByLabel('API key').fill(t.key);
    await tab.getByRole('button', { name: 'Sign in' }).click();
    await tab.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Alerts' }).click();
    await tab.getByRole('heading', { name: 'Sales alerts' }).waitFor();
    await tab.getByRole('button', { name: 'New alert' }).click();
    await tab.getByLabel('Alert name').fill('Acme <b>on site</b>');
    await tab.getByLabel('Slack webhook address').fill('ftp://nowhere');
    await tab.getByRole('button', { name: 'Create alert' }).click();
    // The API's refusal is said beside the field it names.
    await tab.locator('.field-error', { hasText: 'https' }).waitFor();
    await tab.getByLabel('Slack webhook address').fill(slackUrl);
    await tab.getByLabel('Tell me when').selectOption({ label: 'Someone fills a form' });
    await tab.getByRole('button', { name: 'Create alert' }).click();
    const row = tab.locator('tbody tr', { hasText: 'Acme <b>on site</b>' });
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /Someone fills a form.*active/);
    assert.equal(await row.locator('b').count(), 0, 'a stored name is text');
    const [alert] = ok(await t.req('GET', '/v0/alerts')).items as Json[];
    // The URL is a secret (issue 45): shown masked, its last characters only.
    assert.deepEqual([alert.when.event, alert.channel.webhookUrl], ['form.submitted', slackUrl.replace('/T01/B01/secret', '/T…/…/ret')]);

    if ((await tab.evaluate('typeof window.axe')) === 'undefined') await tab.evaluate(AXE);
    const violations = (await tab.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) =>
      r.violations.map((v) => ({ id: v.id, impact: v.impact })))`)) as { impact: string }[];
    assert.deepEqual(
      violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'),
      [],
    );
    await tab.screenshot({ path: path.join(ARTIFACTS, 'alerts.png'), fullPage: true });

    await tab.getByRole('button', { name: 'Send a test to Acme <b>on site</b>' }).click();
    await until('the test message', async () => (received.length > 0 ? true : undefined));
    assert.match(String(received[0]?.text), /Test message from the alert "Acme &lt;b&gt;on site&lt;\/b&gt;"/);

    await tab.getByRole('button', { name: 'Pause Acme <b>on site</b>' }).click();
    await row.getByText('paused').waitFor();
    assert.equal(ok(await t.req('GET', `/v0/alerts/${alert.alertId}`)).active, false);
    await tab.getByRole('button', { name: 'Delete Acme <b>on site</b>' }).click();
    await tab.getByText('No alerts yet.').waitFor();
    assert.equal((await t.req('GET', `/v0/alerts/${alert.alertId}`)).status, 404);
    await context.close();
  });
});
