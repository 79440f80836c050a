// Runs once (scripts/test.mjs): the console in a browser; its API is tested on both databases.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, type BrowserContext, chromium, type Page as Tab } from 'playwright-core';
import { buildConsole } from '../../scripts/build-console.js';
import { createApiKey } from '../../src/admin/repository.js';
import { available, CHROMIUM, skip, until, USER_AGENT } from '../browser.js';
import { startApp, type Json, type TestApp, ok } from '../helpers.js';
import { openPageTab, pageUntil, recordAnswers, shown, viewChecker } from './console-tab.js';

// The console end to end in real headless Chromium (Debian's), against a listening server with
// seeded data: sign in, a page's chart against the API's series, the interval switch, archive and
// restore, the CSV download, a webhook retry; a read-only key; axe-core on every view. Each
// view's screenshot goes to test-artifacts/console/ (gitignored).

const ARTIFACTS = path.resolve('test-artifacts', 'console');
const check = viewChecker(ARTIFACTS);

let t: TestApp;
let browser: Browser;
let origin: string;
let receiver: http.Server;
let received = 0;
let readKey: string;
const seed = { pageId: '', audienceId: '', otherAudienceId: '', subscriptionId: '', personId: '', accountId: '', sessions: 0 };

async function seedData(): Promise<void> {
  const person = ok(await t.req('POST', '/v0/persons', { name: 'Jane Doe', email: 'jane@acme.example', domain: 'acme.example' }), 201);
  seed.personId = person.personId;
  seed.accountId = ok(await t.req('POST', '/v0/accounts', { name: 'Acme Inc', domain: 'acme.example' }), 201).accountId;
  ok(
    await t.req('POST', `/v0/persons/${seed.personId}/logs`, { source: 'crm', type: 'call', payload: { note: 'Asked about pricing' } }),
    201,
  );
  ok(await t.req('POST', `/v0/accounts/${seed.accountId}/logs`, { source: 'crm', type: 'deal', payload: { stage: 'won' } }), 201);
  const page = ok(
    await t.req('POST', '/v0/pages', {
      name: 'Spring',
      title: 'Spring launch',
      pageContext: 'launch',
      pageType: 'inbound',
      content: {
        headline: 'Hello {{person.firstName | there}}',
        subheadline: 'For {{account.name}}',
        sections: [{ heading: 'Why', body: 'Because **spring**.' }],
      },
    }),
    201,
  );
  seed.pageId = page.pageId;
  ok(await t.req('PATCH', `/v0/pages/${seed.pageId}`, { status: 'published' }));
  seed.audienceId = ok(await t.req('POST', `/v0/pages/${seed.pageId}/audiences`, { personId: seed.personId }), 201).audienceId;
  seed.otherAudienceId = ok(await t.req('POST', `/v0/pages/${seed.pageId}/audiences`, {}), 201).audienceId;
  ok(await t.req('POST', '/v0/page_links', { path: '/spring/jane', target: { targetType: 'audience', audienceId: seed.audienceId } }), 201);
  // Visits over the last 20 days, some converting, some with a formula-like UTM source.
  const sources = ['newsletter', 'ads', '=HYPERLINK("x")'];
  for (let i = 0; i < 24; i++) {
    const start = new Date(Date.now() - (i % 20) * 86_400_000 - 3_600_000).toISOString();
    ok(
      await t.req('POST', `/v0/pages/${seed.pageId}/audience_sessions`, {
        audienceId: i % 3 === 0 ? seed.otherAudienceId : seed.audienceId,
        analyticsSessionId: `browser-${i}`,
        pageUrl: 'https://example.com/spring/jane',
        sessionStartedAt: start,
        sessionEndedAt: new Date(Date.parse(start) + 60_000).toISOString(),
        timeSpentSeconds: 30 + i,
        maxScrollDepthPercentage: 50,
        totalClicksCount: i % 4,
        questionsAskedCount: 0,
        isBounce: i % 5 === 0,
        hasFormSubmit: i % 4 === 0,
        hasConversion: i % 4 === 0,
        utmSource: sources[i % 3],
        utmMedium: '',
        utmCampaign: '',
      }),
      201,
    );
    if (i % 3 !== 0) seed.sessions += 1;
  }
  seed.subscriptionId = ok(
    await t.req('POST', '/v0/webhook_subscriptions', {
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
      events: ['page.deleted'],
    }),
    201,
  ).subscriptionId;
  // One finished delivery to retry from the console.
  const delivery = ok(await t.req('POST', `/v0/webhook_subscriptions/${seed.subscriptionId}/test`, {}));
  await until('the test delivery to finish', async () => {
    const list = ok(await t.req('GET', `/v0/webhook_subscriptions/${seed.subscriptionId}/deliveries`)).items as Json[];
    return list.find((d) => d.deliveryId === delivery.deliveryId && d.status !== 'pending');
  });
}

before(async () => {
  if (skip) return;
  assert.ok(available, `no browser at ${CHROMIUM}: .ci/run installs Debian's chromium`);
  mkdirSync(ARTIFACTS, { recursive: true });
  await buildConsole();
  receiver = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received += 1;
      response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t = await startApp({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' });
  origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
  readKey = (await createApiKey(t.app.db, t.tenantId, { scopes: ['read'] })).apiKey;
  await seedData();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
after(async () => {
  await browser?.close();
  await t?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

interface Console {
  context: BrowserContext;
  tab: Tab;
  /** Content-Security-Policy violations the browser reported. */
  violations: string[];
}

async function openConsole(): Promise<Console> {
  const context = await browser.newContext({ userAgent: USER_AGENT, acceptDownloads: true, viewport: { width: 1280, height: 900 } });
  const tab = await context.newPage();
  recordAnswers(tab);
  const violations: string[] = [];
  tab.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    if (process.env.DEBUG_BROWSER) console.log('CONSOLE', message.type(), message.text());
  });
  if (process.env.DEBUG_BROWSER) {
    tab.on('pageerror', (err) => console.log('PAGEERROR', err.message));
    tab.on('response', (r) => console.log('RES', r.status(), r.url()));
  }
  const response = await tab.goto(`${origin}/console/`);
  assert.equal(response?.status(), 200);
  return { context, tab, violations };
}

async function signIn(tab: Tab, key: string): Promise<void> {
  await tab.getByLabel('API key').fill(key);
  await tab.getByRole('button', { name: 'Sign in' }).click();
  await tab.getByRole('button', { name: 'Sign out' }).waitFor();
  assert.ok(!tab.url().includes(key), 'the key is never in the URL');
}

const nav = (tab: Tab, name: string) => tab.getByRole('navigation', { name: 'Main' }).getByRole('link', { name }).click();

const visit = async (tab: Tab, hash: string) => {
  await tab.evaluate(`location.hash = ${JSON.stringify(hash)}`);
};

describe('the console in a real browser', { skip }, () => {
  test('a key with the write scope: every view, the chart, archive and restore, CSV, a webhook retry', { timeout: 180_000 }, async () => {
    const { context, tab, violations } = await openConsole();
    await check(tab, 'sign-in');
    await signIn(tab, t.key);
    assert.equal(await tab.evaluate(`sessionStorage.getItem('pam.apiKey')`), t.key);
    assert.equal(await tab.evaluate('localStorage.length'), 0, 'nothing in localStorage');
    assert.equal(await tab.evaluate('document.cookie'), '', 'no cookie');

    // Pages: status, audiences count, 30-day visits.
    const row = tab.getByRole('row', { name: /Spring/ });
    await row.waitFor();
    await pageUntil(tab, `document.querySelector('[data-visits="${seed.pageId}"]')?.textContent === '24'`);
    assert.match((await row.textContent()) ?? '', /published/);
    await check(tab, 'pages');

    // A page: the chart has as many points as the API's series, for each interval.
    const series = async (interval: string, act: () => Promise<void>) => {
      const [response] = await Promise.all([
        tab.waitForResponse(
          (r) => r.url().includes('/analytics?') && r.url().includes(`interval=${interval}`) && r.url().includes('groupBy=audience'),
        ),
        act(),
      ]);
      const body = (await response.json()) as Json;
      await pageUntil(tab, `document.querySelector('.plot')?.getAttribute('data-points') === '${body.series.length}'`);
      return body;
    };
    const daily = await series('day', () => tab.getByRole('link', { name: 'Spring' }).click());
    assert.ok(daily.series.length >= 30, 'a 30-day range of days');
    assert.equal(daily.totals.visits, 24);
    assert.equal(await tab.locator('[data-total="Visits"]').textContent(), '24');
    await tab.getByRole('table', { name: 'Top audiences' }).getByText('Jane Doe (acme.example)').waitFor();
    await tab.getByRole('table', { name: 'Top UTM sources' }).getByText('newsletter').waitFor();
    // The preview, for a chosen audience, in a sandbox without scripts.
    await tab.getByLabel('Preview for').selectOption({ label: 'Jane Doe (acme.example)' });
    const frame = tab.frameLocator('iframe.preview');
    await frame.getByRole('heading', { name: 'Hello Jane' }).waitFor();
    assert.equal(await tab.locator('iframe.preview').getAttribute('sandbox'), '');
    await openPageTab(tab, 'Links');
    await tab.getByRole('link', { name: /\/spring\/jane$/ }).waitFor();
    await check(tab, 'page');
    const weekly = await series('week', async () => {
      await tab.getByLabel('Interval').selectOption('week');
    });
    assert.ok(weekly.series.length < daily.series.length);
    await check(tab, 'page-weekly');

    // An audience: versions, archive and restore, sessions and their CSV.
    await tab.getByRole('table', { name: 'Top audiences' }).getByRole('link', { name: 'Jane Doe (acme.example)' }).click();
    await tab.getByRole('heading', { level: 1, name: /Jane Doe/ }).waitFor();
    await tab.locator('[data-version="1"]').waitFor();
    // Archiving asks first (accepted here; declining is tested in marketer.browser.test.ts).
    tab.once('dialog', (dialog) => void dialog.accept());
    await tab.getByRole('button', { name: 'Archive' }).click();
    await shown(tab, tab.getByRole('button', { name: 'Restore' }));
    const audienceUrl = `/v0/pages/${seed.pageId}/audiences/${seed.audienceId}`;
    assert.notEqual(ok(await t.req('GET', audienceUrl)).archivedAt, null, 'archived through the API');
    await tab.getByRole('button', { name: 'Restore' }).click();
    await shown(tab, tab.getByRole('button', { name: 'Archive' }));
    assert.equal(ok(await t.req('GET', audienceUrl)).archivedAt, null, 'restored through the API');
    // Regenerate queues a new version for the page agent (off in tests, so it stays queued).
    await tab.getByRole('button', { name: 'Regenerate' }).click();
    await shown(tab, tab.locator('[data-version="2"]'));
    const versions = ok(await t.req('GET', `${audienceUrl}/versions`)).items as Json[];
    assert.equal(versions[0]?.status, 'queued', 'queued through the API');

    const [download] = await Promise.all([tab.waitForEvent('download'), tab.getByRole('button', { name: 'Download CSV' }).click()]);
    const csv = readFileSync((await download.path()) ?? '', 'utf8');
    const lines = csv.trim().split(/\r?\n/);
    assert.match(lines[0] ?? '', /audienceSessionId/);
    assert.equal(lines.length, 1 + seed.sessions, 'a header and every session of the audience');
    assert.ok(csv.includes(`'=HYPERLINK`), 'formula-like cells are defused');
    // Filtered: a range with none of the visits.
    await tab.getByLabel('Until').fill('2020-01-01T00:00');
    await tab.getByRole('button', { name: 'Filter' }).click();
    await tab.getByText('No sessions match.').waitFor();
    await check(tab, 'audience');

    // Persons and accounts, and their log timelines.
    await nav(tab, 'Persons');
    await tab.getByRole('link', { name: 'Jane Doe' }).click();
    await tab.getByText('Asked about pricing').waitFor();
    await check(tab, 'person');
    await nav(tab, 'Persons');
    await check(tab, 'persons');
    await nav(tab, 'Accounts');
    await tab.getByLabel('Name or domain').fill('acme');
    await tab.getByRole('button', { name: 'Search' }).click();
    await tab.getByRole('link', { name: 'Acme Inc' }).click();
    await tab.getByText('won', { exact: true }).waitFor();
    await check(tab, 'account');
    await nav(tab, 'Accounts');
    await check(tab, 'accounts');

    // Webhooks: a finished delivery sent again, and a test sent.
    await nav(tab, 'Webhooks');
    await check(tab, 'webhooks');
    await tab.getByRole('link', { name: /\/hook$/ }).click();
    const before = received;
    await tab.getByRole('button', { name: 'Retry webhook.test' }).first().click();
    await tab.getByText('The delivery was sent again.').waitFor();
    await until('the retried delivery to arrive', async () => (received > before ? true : undefined));
    await tab.getByRole('button', { name: 'Send a test' }).click();
    await tab.getByText('A webhook.test delivery was sent.').waitFor();
    await until('the test to arrive', async () => (received > before + 1 ? true : undefined));
    await check(tab, 'subscription');

    assert.deepEqual(violations, [], 'no Content-Security-Policy violation');
    // Signing out forgets the key.
    await tab.getByRole('button', { name: 'Sign out' }).click();
    await tab.getByLabel('API key').waitFor();
    assert.equal(await tab.evaluate(`sessionStorage.getItem('pam.apiKey')`), null);
    await context.close();
  });

  test('a read-only key: every write control is disabled', { timeout: 90_000 }, async () => {
    const { context, tab } = await openConsole();
    await signIn(tab, readKey);
    await tab.getByText('read-only key').waitFor();
    const writesIn = async (hash: string, at: string | RegExp) => {
      await visit(tab, hash);
      await tab.getByRole('heading', { level: 1, name: at }).waitFor();
      await pageUntil(tab, `!document.body.textContent.includes('Loading…')`);
      const writes = tab.locator('button[data-write]');
      const count = await writes.count();
      assert.ok(count > 0, `${at}: write controls are shown`);
      for (let i = 0; i < count; i++) assert.equal(await writes.nth(i).isDisabled(), true, `${at}: write control ${i} disabled`);
    };
    await writesIn(`#/pages/${seed.pageId}/audiences/${seed.audienceId}`, 'Jane Doe (acme.example)');
    await check(tab, 'audience-read-only');
    await writesIn(`#/webhooks/${seed.subscriptionId}`, /\/hook$/);
    // Reads still work: the CSV is a read.
    const [download] = await Promise.all([
      tab.waitForEvent('download'),
      (async () => {
        await visit(tab, `#/pages/${seed.pageId}/audiences/${seed.audienceId}`);
        await tab.getByRole('button', { name: 'Download CSV' }).click();
      })(),
    ]);
    assert.match(readFileSync((await download.path()) ?? '', 'utf8').split('\n')[0] ?? '', /audienceSessionId/);
    await context.close();
  });
});
