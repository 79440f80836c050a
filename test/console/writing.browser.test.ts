// Runs once (scripts/test.mjs): the console in a browser; its API is tested on both databases.
import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, type BrowserContext, chromium, type Page as Tab } from 'playwright-core';
import sharp from 'sharp';
import { Webhook } from 'standardwebhooks';
import { buildConsole } from '../../scripts/build-console.js';
import { createApiKey } from '../../src/admin/repository.js';
import { available, CHROMIUM, skip, until, USER_AGENT } from '../browser.js';
import { type FakeDns, startFakeDns } from '../dns-server.js';
import { type Json, ok, onPostgres, startApp, type TestApp } from '../helpers.js';
import { assertAccessible, openPageTab, pageUntil, pick, previewHeading } from './console-tab.js';

// Issue 29, writing in the console, end to end in real headless Chromium against a listening
// server: create a page with a form action, write its content, publish it, make an audience for a
// person found by search, link it, set the tenant's brand in the Brand view (the preview wears it),
// open the link as a visitor (the page branded) and send its form (the lead in the Leads view, and
// a new person for a lead on a page of no one's), add a domain and verify it from the record the
// console shows, create a webhook and send a test whose signature the secret shown once verifies.
// Then a read-only key, and axe-core on every view. A screenshot of each step goes to
// $ARTIFACTS_DIR (or the system's temp directory), never into the repository.

const ARTIFACTS = path.join(process.env.ARTIFACTS_DIR ?? os.tmpdir(), 'console-writing', onPostgres ? 'postgres' : 'sqlite');

let t: TestApp;
let browser: Browser;
let origin: string;
let dns: FakeDns;
let receiver: http.Server;
const hits: { raw: string; headers: Record<string, string> }[] = [];
let readKey: string;
const made = { pageId: '', audienceId: '', linkUrl: '', subscriptionId: '', logoAssetId: '', logoFileId: '' };
/** The brand set in the Brand view, and how the browser computes it. */
const BRAND = { color: '#7a1fa2', rgb: 'rgb(122, 31, 162)', footer: 'Made by **Acme**', privacyUrl: 'https://acme.example/privacy' };

before(async () => {
  if (skip) return;
  assert.ok(available, `no browser at ${CHROMIUM}: .ci/run installs Debian's chromium`);
  rmSync(ARTIFACTS, { recursive: true, force: true });
  mkdirSync(ARTIFACTS, { recursive: true });
  await buildConsole();
  dns = await startFakeDns();
  receiver = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      hits.push({ raw: Buffer.concat(chunks).toString('utf8'), headers: request.headers as Record<string, string> });
      response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t = await startApp({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true', DNS_RESOLVERS: dns.address });
  origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
  readKey = (await createApiKey(t.app.db, t.tenantId, { scopes: ['read'] })).apiKey;
  // The prospect the audience is for, and someone else the search must not offer.
  ok(await t.req('POST', '/v0/persons', { name: 'Jane Doe', email: 'jane@acme.example', domain: 'acme.example' }), 201);
  ok(await t.req('POST', '/v0/persons', { name: 'John Roe', email: 'john@other.example' }), 201);
  ok(await t.req('POST', '/v0/accounts', { name: 'Acme Inc', domain: 'acme.example' }), 201);
  // The logo the Brand view picks from the assets.
  const png = await sharp({ create: { width: 200, height: 50, channels: 3, background: { r: 122, g: 31, b: 162 } } })
    .png()
    .toBuffer();
  const file = await t.app.inject({
    method: 'POST',
    url: '/v0/files',
    headers: { 'content-type': 'image/png', 'x-api-key': t.key },
    payload: png,
  });
  assert.equal(file.statusCode, 201, file.body);
  made.logoFileId = JSON.parse(file.body).fileId;
  made.logoAssetId = ok(await t.req('POST', '/v0/assets', { assetType: 'image', name: 'Acme logo', fileId: made.logoFileId }), 201).assetId;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
after(async () => {
  await browser?.close();
  await t?.close();
  await dns?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

async function openConsole(key: string): Promise<{ context: BrowserContext; tab: Tab; errors: string[] }> {
  const context = await browser.newContext({ userAgent: USER_AGENT, viewport: { width: 1280, height: 900 } });
  const tab = await context.newPage();
  const errors: string[] = [];
  tab.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) errors.push(message.text());
  });
  tab.on('pageerror', (err) => errors.push(err.message));
  // Every confirmation is accepted, as a person who meant it would.
  tab.on('dialog', (dialog) => void dialog.accept());
  assert.equal((await tab.goto(`${origin}/console/`))?.status(), 200);
  await tab.getByLabel('API key').fill(key);
  await tab.getByRole('button', { name: 'Sign in' }).click();
  await tab.getByRole('button', { name: 'Sign out' }).waitFor();
  return { context, tab, errors };
}

let step = 0;
/** axe-core in the page (evaluated: the console's CSP allows no inline script), then a screenshot. */
async function check(tab: Tab, view: string): Promise<void> {
  await assertAccessible(tab, view);
  step += 1;
  await tab.screenshot({ path: path.join(ARTIFACTS, `${String(step).padStart(2, '0')}-${view}.png`), fullPage: true });
}

type DomNode = { nodeId: number; nodeType: number; documentURL?: string; children?: DomNode[]; contentDocument?: DomNode };
const previewDocumentIn = (node: DomNode): DomNode | undefined =>
  node.nodeType === 9 && node.documentURL?.includes('/previews/')
    ? node
    : [...(node.children ?? []), ...(node.contentDocument ? [node.contentDocument] : [])].map(previewDocumentIn).find(Boolean);

/**
 * A computed style of the first element matching `selector` in the preview frame, as Chromium
 * computes it, read through the DevTools protocol: the preview is sandboxed without scripts, so
 * nothing can be evaluated in it. The frame has a session of its own when Chromium isolates it.
 */
async function previewStyle(tab: Tab, selector: string, property: string): Promise<string | undefined> {
  const frame = tab.frames().find((f) => f.url().includes('/previews/'));
  if (!frame) return undefined;
  const cdp = await tab
    .context()
    .newCDPSession(frame)
    .catch(() => tab.context().newCDPSession(tab));
  try {
    const { root } = await cdp.send('DOM.getDocument', { depth: -1, pierce: true });
    const doc = previewDocumentIn(root as DomNode);
    if (!doc) return undefined;
    const { nodeId } = await cdp.send('DOM.querySelector', { nodeId: doc.nodeId, selector });
    if (!nodeId) return undefined;
    await cdp.send('CSS.enable');
    const { computedStyle } = await cdp.send('CSS.getComputedStyleForNode', { nodeId });
    return computedStyle.find((p) => p.name === property)?.value;
  } finally {
    await cdp.detach();
  }
}

const nav = (tab: Tab, name: string) => tab.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
const form = (tab: Tab, name: string) => tab.getByRole('form', { name, exact: true });
const field = (tab: Tab, formName: string, label: string) => form(tab, formName).getByLabel(label, { exact: true });

describe('writing in the console, end to end', { skip }, () => {
  test('page, content, publish, audience, link, visit and form, domain, webhook', { timeout: 240_000 }, async () => {
    const { context, tab, errors } = await openConsole(t.key);

    // 1. A page with a form action. First without a name: the API's problem shows at `name`.
    await tab.getByRole('button', { name: 'New page', exact: true }).click();
    await field(tab, 'New page', 'Title').fill('Spring launch');
    await field(tab, 'New page', 'Page type').selectOption('outbound');
    await field(tab, 'New page', 'What the page is for').fill('A launch page for prospects');
    await form(tab, 'New page').getByRole('button', { name: 'Add a button' }).click();
    await field(tab, 'New page', 'What the button does').selectOption('form');
    await field(tab, 'New page', 'Button text').fill('Talk to us');
    await field(tab, 'New page', 'Purpose').fill('lead');
    await tab.getByRole('button', { name: 'Create page' }).click();
    const name = field(tab, 'New page', 'Page name');
    await pageUntil(tab, `document.querySelector('[data-pointer="/name"]')?.getAttribute('aria-invalid') === 'true'`);
    const described = await name.getAttribute('aria-describedby');
    assert.ok(described, 'the error is tied to the field');
    assert.match((await tab.locator(`[id="${described.split(' ').pop()}"]`).textContent()) ?? '', /\S/, 'the field says why');
    await form(tab, 'New page').getByRole('alert').waitFor();
    await check(tab, 'new-page-problem');
    await name.fill('Spring');
    await tab.getByRole('button', { name: 'Create page' }).click();
    await tab.getByRole('heading', { level: 1, name: /Spring/ }).waitFor();
    made.pageId = decodeURIComponent(tab.url().split('#/pages/')[1] ?? '');
    const created = ok(await t.req('GET', `/v0/pages/${made.pageId}`));
    assert.equal(created.pageType, 'outbound');
    assert.equal(created.status, 'draft');
    assert.deepEqual(
      created.actions.map((a: Json) => [a.actionType, a.buttonTitle, a.purpose]),
      [['form', 'Talk to us', 'lead']],
    );
    await check(tab, 'page-created');

    // 2. Its content, with a token, and the preview from the preview endpoint.
    await field(tab, 'Page content', 'Headline').fill('Hello {{person.firstName | there}}');
    await field(tab, 'Page content', 'Subheadline').fill('For {{account.name | your team}}');
    await form(tab, 'Page content').getByRole('button', { name: 'Add section' }).click();
    await field(tab, 'Page content', 'Section heading').fill('Why');
    await field(tab, 'Page content', 'Section text').fill('Because **spring**.');
    await form(tab, 'Page content').getByRole('button', { name: 'Save', exact: true }).click();
    await form(tab, 'Page content').getByText('Saved.').waitFor();
    const preview = tab.frameLocator('iframe.preview');
    await previewHeading(tab, 'Hello there');
    assert.equal(ok(await t.req('GET', `/v0/pages/${made.pageId}`)).content.sections[0].body, 'Because **spring**.');
    await check(tab, 'content');

    // 3. Publish, confirmed.
    await tab.getByRole('button', { name: 'Publish', exact: true }).click();
    await tab.getByRole('button', { name: 'Unpublish', exact: true }).waitFor();
    assert.equal(ok(await t.req('GET', `/v0/pages/${made.pageId}`)).status, 'published');
    await check(tab, 'published');

    // 4. An audience for a person found by the API's search.
    await openPageTab(tab, 'Audiences');
    await tab.getByRole('button', { name: 'New audience', exact: true }).click();
    const [searched] = await Promise.all([
      tab.waitForResponse((r) => r.url().includes('/v0/persons/search?') && r.url().includes('query=acme')),
      (async () => {
        await tab.getByLabel('Search persons').fill('acme');
        await form(tab, 'New audience').getByRole('button', { name: 'Search', exact: true }).click();
      })(),
    ]);
    assert.equal(searched.status(), 200);
    await tab.getByRole('radio', { name: 'Jane Doe <jane@acme.example>' }).check();
    assert.equal(await tab.getByRole('radio', { name: /John Roe/ }).count(), 0, 'only what the search found is offered');
    await field(tab, 'New audience', 'Link key').fill('jane');
    await tab.getByRole('button', { name: 'Create audience' }).click();
    await tab.getByRole('heading', { level: 1, name: 'Jane Doe (acme.example)' }).waitFor();
    made.audienceId = decodeURIComponent(tab.url().split('/audiences/')[1] ?? '');
    const audience = ok(await t.req('GET', `/v0/pages/${made.pageId}/audiences/${made.audienceId}`));
    assert.equal(audience.personRouteKey, 'jane');
    assert.ok(audience.personId);
    await check(tab, 'audience');
    // A draft version of the audience: its own content, then published.
    await tab.getByRole('button', { name: 'New draft version' }).click();
    await tab.getByRole('heading', { level: 2, name: 'Version 2 (draft)' }).waitFor();
    const versionForm = 'Content for Jane Doe (acme.example)';
    await field(tab, versionForm, 'Headline').fill('Hi {{person.firstName}}, this is for you');
    await field(tab, versionForm, 'Subheadline').fill('For {{account.name}}');
    await form(tab, versionForm).getByRole('button', { name: 'Save', exact: true }).click();
    await form(tab, versionForm).getByText('Saved.').waitFor();
    await tab.getByRole('button', { name: 'Publish', exact: true }).click();
    await tab.getByRole('heading', { level: 2, name: 'Version 2 (published)' }).waitFor();
    const published = ok(await t.req('GET', `/v0/pages/${made.pageId}/audiences/${made.audienceId}`)).latestVersion;
    assert.equal(published.status, 'published');
    assert.equal(published.content.headline, 'Hi {{person.firstName}}, this is for you');
    await check(tab, 'audience-version');

    // 5. A link to the audience on the fallback domain, shown as its full URL.
    await tab.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'Spring', exact: true }).click();
    await openPageTab(tab, 'Links');
    await field(tab, 'New link', 'Path').fill('/spring/jane');
    await field(tab, 'New link', 'Shows').selectOption({ label: 'the page for Jane Doe (acme.example)' });
    await tab.getByRole('button', { name: 'Create link' }).click();
    const shown = tab.getByRole('link', { name: /\/spring\/jane$/ });
    await shown.waitFor();
    made.linkUrl = (await shown.getAttribute('href')) ?? '';
    const fallback = ((await t.req('GET', '/v0/tenant_domains')).body.items as Json[]).find((d) => d.isFallback).hostname;
    assert.equal(made.linkUrl, `http://${fallback}:${new URL(origin).port}/spring/jane`);
    assert.equal(await shown.textContent(), made.linkUrl);
    // The preview for that audience.
    await openPageTab(tab, 'Content');
    await tab.getByLabel('Preview for').selectOption({ label: 'Jane Doe (acme.example)' });
    await preview.getByRole('heading', { name: 'Hi Jane, this is for you' }).waitFor();
    await check(tab, 'link');

    // The brand, in the Brand view: first a colour too light for white button text, refused by the
    // API at /brandColor and said beside that field; then the logo, the colour and the footer.
    await nav(tab, 'Brand');
    await form(tab, 'Brand').waitFor();
    await field(tab, 'Brand', 'Brand colour').fill('#ffff00');
    await form(tab, 'Brand').getByRole('button', { name: 'Save', exact: true }).click();
    await pageUntil(tab, `document.querySelector('[data-pointer="/brandColor"]')?.getAttribute('aria-invalid') === 'true'`);
    await form(tab, 'Brand').getByRole('alert').waitFor();
    assert.equal(ok(await t.req('GET', '/v0/site_settings')).updatedAt, null, 'nothing saved');
    await check(tab, 'brand-problem');
    await pick(tab, 'Logo', 'Acme logo', form(tab, 'Brand'));
    await field(tab, 'Brand', 'Brand colour').fill(BRAND.color);
    await field(tab, 'Brand', 'Font').selectOption('serif');
    await field(tab, 'Brand', 'Footer text').fill(BRAND.footer);
    await field(tab, 'Brand', 'Privacy policy address').fill(BRAND.privacyUrl);
    await form(tab, 'Brand').getByRole('button', { name: 'Save', exact: true }).click();
    await form(tab, 'Brand').getByText('Saved: served pages show it from the next request.').waitFor();
    const settings = ok(await t.req('GET', '/v0/site_settings'));
    assert.deepEqual(
      [settings.logoAssetId, settings.brandColor, settings.font, settings.footerText, settings.privacyUrl, settings.faviconAssetId],
      [made.logoAssetId, BRAND.color, 'serif', BRAND.footer, BRAND.privacyUrl, null],
    );
    await check(tab, 'brand');
    // The page's preview wears the brand: a document of its own, whose policy allows its brand style.
    // Its logo comes from the tenant's domain at the public origin where the service runs (issue 36).
    const logoInPreview = tab.waitForResponse((r) => r.url().endsWith(`/_pam/files/${made.logoFileId}`));
    await tab.evaluate(`location.hash = ${JSON.stringify(`#/pages/${made.pageId}`)}`);
    await previewHeading(tab, 'Hello there');
    const logoResponse = await logoInPreview;
    assert.equal(logoResponse.status(), 200, `the preview's logo at ${logoResponse.url()}`);
    assert.equal(new URL(logoResponse.url()).port, new URL(origin).port, 'on the port the service listens on');
    const previewFrame = tab.locator('iframe.preview');
    assert.equal(await previewFrame.getAttribute('sandbox'), '', 'no scripts, forms or navigation');
    assert.match((await previewFrame.getAttribute('src')) ?? '', /^\/previews\/page_/, "a preview link on the console's origin");
    // The page's one action is a lead form, which the page itself now shows as a form (issue 45 §7).
    await until('the brand colour in the preview', async () =>
      (await previewStyle(tab, '.button, form button[type="submit"]', 'background-color')) === BRAND.rgb ? true : undefined,
    );
    assert.match((await previewStyle(tab, 'body', 'font-family')) ?? '', /Georgia/, 'the serif font stack');
    assert.equal(await preview.locator('footer').getByText('Made by').count(), 1, 'the footer');
    await check(tab, 'brand-preview');

    // 6. The link, opened by a visitor: the personalised page, branded.
    const visitor = await browser.newContext({ userAgent: USER_AGENT });
    const page = await visitor.newPage();
    assert.equal((await page.goto(made.linkUrl))?.status(), 200);
    assert.equal(await page.locator('h1').first().textContent(), 'Hi Jane, this is for you', "the audience's published version");
    assert.ok((await page.content()).includes('For Acme Inc'), 'the account token filled');
    const logo = page.locator('header .logo img');
    assert.equal(await logo.getAttribute('alt'), 'Acme logo');
    assert.equal(await logo.getAttribute('src'), `/_pam/files/${made.logoFileId}`);
    const logoWidth = `(() => { const img = document.querySelector('header .logo img'); return img.complete ? img.naturalWidth : 0; })()`;
    await until('the logo loaded', async () => ((await page.evaluate(logoWidth)) ? true : undefined));
    assert.equal(await page.evaluate(`getComputedStyle(document.querySelector('.button, button')).backgroundColor`), BRAND.rgb, 'buttons');
    const privacy = page.locator('footer').getByRole('link', { name: 'Privacy policy' });
    assert.equal(await privacy.getAttribute('href'), BRAND.privacyUrl);
    const privacyColour = `getComputedStyle(document.querySelector('footer a[href="${BRAND.privacyUrl}"]')).color`;
    assert.equal(await page.evaluate(privacyColour), BRAND.rgb, 'links');
    assert.equal((await page.locator('footer strong').textContent())?.trim(), 'Acme', 'the footer, from its Markdown');
    assert.match((await page.locator('footer').textContent()) ?? '', /Made by Acme/);
    step += 1;
    await page.screenshot({ path: path.join(ARTIFACTS, `${String(step).padStart(2, '0')}-visit.png`), fullPage: true });

    // 7. Its form, sent as a new visitor.
    await page.fill('input[name="name"]', 'Lee Lead');
    await page.fill('input[name="email"]', 'lee@newco.example');
    await page.fill('input[name="phone"]', '+14155550123');
    await Promise.all([page.waitForURL(/submitted=1/), page.locator('form button[type="submit"]').first().click()]);
    step += 1;
    await page.screenshot({ path: path.join(ARTIFACTS, `${String(step).padStart(2, '0')}-form-sent.png`), fullPage: true });
    await visitor.close();
    const lead = await until('the form submission as a session', async () => {
      const sessions = ok(await t.req('GET', `/v0/pages/${made.pageId}/audience_sessions?audienceId=${made.audienceId}`)).items as Json[];
      return sessions.find((s) => s.hasFormSubmit && s.formSubmissionEmail === 'lee@newco.example');
    });
    assert.equal(lead.formSubmissionPhone, '+14155550123');
    // Issue 36: a lead is who filled the form, here a new person (Lee), via the link's person (Jane).
    await nav(tab, 'Leads');
    await tab.getByRole('heading', { level: 2, name: 'Leads' }).waitFor();
    const leadRows = async () => (await tab.locator('tbody tr').allTextContents()).map((r) => r.replace(/\s+/g, ' '));
    await until('the lead in the Leads view', async () => ((await leadRows()).length === 1 ? true : undefined));
    assert.match((await leadRows())[0] ?? '', /Lee Lead.*lee@newco\.example.*via the link's person.*Spring.*Jane Doe \(acme\.example\)/);
    await check(tab, 'leads');
    // The same form on a link to an audience of no one's, sent again by Lee with another phone:
    // the lead is Lee's (found by email), listed first in Leads, and changes nothing of Lee.
    const generic = ok(await t.req('POST', `/v0/pages/${made.pageId}/audiences`, {}), 201);
    ok(
      await t.req('POST', '/v0/page_links', { path: '/spring/all', target: { targetType: 'audience', audienceId: generic.audienceId } }),
      201,
    );
    const stranger = await browser.newContext({ userAgent: USER_AGENT });
    const open = await stranger.newPage();
    assert.equal((await open.goto(made.linkUrl.replace(/\/spring\/jane$/, '/spring/all')))?.status(), 200);
    await open.fill('input[name="name"]', 'Lee Lead');
    await open.fill('input[name="email"]', 'lee@newco.example');
    await open.fill('input[name="phone"]', '+14155550124');
    await Promise.all([open.waitForURL(/submitted=1/), open.locator('form button[type="submit"]').first().click()]);
    step += 1;
    await open.screenshot({ path: path.join(ARTIFACTS, `${String(step).padStart(2, '0')}-lead-sent.png`), fullPage: true });
    await stranger.close();
    const found = ok(await t.req('GET', '/v0/persons/search?query=lee')).items as Json[];
    assert.deepEqual(
      found.map((p) => [p.name, p.email, p.phoneNumber, p.domain]),
      [['Lee Lead', 'lee@newco.example', '+14155550123', 'newco.example']],
      'one person, made by the first lead; the second changed nothing',
    );
    await tab.getByRole('button', { name: 'Filter' }).click();
    await until('the new lead in the Leads view', async () => ((await leadRows()).length === 2 ? true : undefined));
    assert.match((await leadRows())[0] ?? '', /Lee Lead.*\+14155550124.*Spring/, 'newest first, with what was typed');
    await tab.getByRole('link', { name: 'Lee Lead' }).first().click();
    await tab.getByRole('heading', { level: 1, name: 'Lee Lead' }).waitFor();
    assert.ok(tab.url().endsWith(`#/persons/${found[0].personId}`));
    await nav(tab, 'Persons');
    await tab.getByLabel('Name, email, domain or id').fill('lee');
    await tab.getByRole('button', { name: 'Search', exact: true }).click();
    await tab.getByRole('link', { name: 'Lee Lead' }).waitFor();
    await check(tab, 'lead-person');

    // 8. A domain: its record, "Check now" before and after the record exists.
    await nav(tab, 'Domains');
    await field(tab, 'Add a domain', 'Domain name').fill('go.example.com');
    await tab.getByRole('button', { name: 'Add domain' }).click();
    const record = tab.getByRole('table', { name: 'DNS record to create for go.example.com' });
    await record.waitFor();
    const cells = await record.locator('tbody td').allTextContents();
    const domain = ((await t.req('GET', '/v0/tenant_domains')).body.items as Json[]).find((d) => d.hostname === 'go.example.com');
    assert.deepEqual(cells, ['TXT', domain.verification.name, domain.verification.value], 'the record the API asks for');
    // And the record that sends visitors: SITE_CNAME_TARGET is unset here, so "point this name at your proxy".
    const routing = tab.getByRole('table', { name: 'DNS record that sends visitors to go.example.com' });
    const routed = await routing.locator('tbody td').allTextContents();
    assert.equal(routed[1], 'go.example.com');
    assert.match(routed[2] ?? '', /^Point this name at your proxy/);
    await check(tab, 'domain-added');
    await tab.getByRole('button', { name: 'Check now go.example.com' }).click();
    const refusal = tab.locator('[data-domain="go.example.com"]').getByRole('alert');
    await refusal.waitFor();
    assert.match((await refusal.textContent()) ?? '', /NXDOMAIN.*\(409\)/);
    dns.txt(cells[1] ?? '', [cells[2] ?? '']);
    await tab.getByRole('button', { name: 'Check now go.example.com' }).click();
    await tab.getByText('go.example.com is verified.').waitFor();
    await tab.locator('[data-domain="go.example.com"] .badge-verified').waitFor();
    await check(tab, 'domain-verified');
    // A link on that domain, moved, then deleted.
    await tab.evaluate(`location.hash = ${JSON.stringify(`#/pages/${made.pageId}/links`)}`);
    await field(tab, 'New link', 'Domain').selectOption({ label: 'go.example.com' });
    await field(tab, 'New link', 'Path').fill('/promo');
    await tab.getByRole('button', { name: 'Create link' }).click();
    const promo = `http://go.example.com:${new URL(origin).port}/promo`;
    await tab.getByRole('link', { name: promo, exact: true }).waitFor();
    const linksOfPage = async () =>
      (await t.req('GET', `/v0/page_links/search?pageId=${made.pageId}&tenantDomainId=${domain.tenantDomainId}`)).body.items as Json[];
    const promoLink = (await linksOfPage()).find((l) => l.path === '/promo');
    assert.equal(promoLink.tenantDomainId, domain.tenantDomainId);
    const row = tab.locator(`[data-link="${promoLink.pageLinkId}"]`);
    await row.locator('summary', { hasText: 'Move' }).click();
    await row.getByLabel('New path', { exact: true }).fill('/promo-2');
    await row.getByRole('button', { name: 'Move', exact: true }).click();
    await tab.getByRole('link', { name: `${promo}-2`, exact: true }).waitFor();
    assert.equal((await linksOfPage()).find((l) => l.pageLinkId === promoLink.pageLinkId)?.path, '/promo-2');
    await tab.getByRole('button', { name: 'Delete link /promo-2' }).click();
    await tab.getByRole('link', { name: `${promo}-2`, exact: true }).waitFor({ state: 'detached' });
    assert.equal(
      (await linksOfPage()).find((l) => l.pageLinkId === promoLink.pageLinkId),
      undefined,
      'deleted through the API',
    );

    // 9. A webhook: created, its secret shown once, a test sent and verified with that secret.
    await nav(tab, 'Webhooks');
    await tab.getByRole('button', { name: 'New subscription', exact: true }).click();
    await field(tab, 'New subscription', 'Address to send events to').fill(
      `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
    );
    await form(tab, 'New subscription').getByLabel('page.updated', { exact: true }).check();
    await tab.getByRole('button', { name: 'Create subscription' }).click();
    const secret = (await tab.locator('[data-secret]').textContent()) ?? '';
    assert.match(secret, /^whsec_/);
    await check(tab, 'webhook-created');
    await tab.getByRole('link', { name: 'Open the new subscription' }).click();
    await tab.getByRole('button', { name: 'Send a test' }).click();
    await tab.getByText('A webhook.test delivery was sent.').waitFor();
    const hit = await until('the test delivery', async () => hits.find((h) => h.raw.includes('webhook.test')));
    new Webhook(secret).verify(hit.raw, hit.headers);
    assert.equal(await tab.locator('[data-secret]').count(), 0, 'the secret is not shown again');
    await check(tab, 'webhook-test');
    // Paused, and its secret rotated: the new one shown once and signing from now on.
    await tab.getByRole('button', { name: 'Pause', exact: true }).click();
    await tab.getByRole('button', { name: 'Resume', exact: true }).waitFor();
    made.subscriptionId = decodeURIComponent(tab.url().split('#/webhooks/')[1] ?? '');
    assert.equal(ok(await t.req('GET', `/v0/webhook_subscriptions/${made.subscriptionId}`)).active, false, 'paused through the API');
    await tab.getByRole('button', { name: 'Rotate the secret' }).click();
    const rotated = (await tab.locator('[data-secret]').textContent()) ?? '';
    assert.match(rotated, /^whsec_/);
    assert.notEqual(rotated, secret);

    assert.deepEqual(errors, [], 'no script error and no Content-Security-Policy violation');
    await context.close();
  });

  test('the other write views: every one passes axe', { timeout: 120_000 }, async () => {
    const { context, tab, errors } = await openConsole(t.key);
    for (const view of ['Assets', 'Topics', 'Persons', 'Accounts']) {
      await nav(tab, view);
      await tab.getByRole('heading', { level: 2, name: view }).waitFor();
      await check(tab, view.toLowerCase());
    }
    // An image uploaded, and its variants: the original and its preview.
    await nav(tab, 'Assets');
    const png = await sharp({ create: { width: 640, height: 320, channels: 3, background: { r: 11, g: 87, b: 208 } } })
      .png()
      .toBuffer();
    await tab.getByLabel('file', { exact: true }).setInputFiles({ name: 'hero.png', mimeType: 'image/png', buffer: png });
    await field(tab, 'Upload an image', 'Image name').fill('Hero');
    await tab.getByRole('button', { name: 'Upload', exact: true }).click();
    const variants = tab.getByRole('list', { name: 'Variants of Hero' });
    await variants.getByRole('link', { name: 'preview (320 px)' }).waitFor();
    const assets = ok(await t.req('GET', '/v0/assets')).items as Json[];
    assert.equal(assets[0]?.name, 'Hero');
    // The preview is shown from the API's signed link (its host is PUBLIC_BASE_URL, not this test's port).
    // Each read signs anew, so the expiry may be a second apart: the file and variant are what must agree.
    const shown = new URL((await tab.getByRole('img', { name: 'Hero' }).getAttribute('src')) ?? '');
    const listed = new URL(String(assets[0]?.previewDownloadUrl));
    assert.equal(shown.origin + shown.pathname, listed.origin + listed.pathname);
    assert.deepEqual([...shown.searchParams.keys()].sort(), [...listed.searchParams.keys()].sort());
    await check(tab, 'asset-uploaded');
    // A page's OG image is picked from the assets.
    await nav(tab, 'Pages');
    await tab.getByRole('button', { name: 'New page', exact: true }).click();
    await field(tab, 'New page', 'Page name').fill('With an image');
    await field(tab, 'New page', 'Title').fill('With an image');
    await field(tab, 'New page', 'What the page is for').fill('A page with an OG image');
    await pick(tab, 'Image in link previews', 'Hero', form(tab, 'New page'));
    await tab.getByRole('button', { name: 'Create page' }).click();
    await tab.getByRole('heading', { level: 1, name: /With an image/ }).waitFor();
    const withImage = ok(await t.req('GET', `/v0/pages/${decodeURIComponent(tab.url().split('#/pages/')[1] ?? '')}`));
    assert.equal(withImage.metadata.ogImageAssetId, assets[0]?.assetId);

    // A topic and an entry, created.
    await nav(tab, 'Topics');
    await field(tab, 'New topic', 'Topic name').fill('Pricing');
    await tab.getByRole('button', { name: 'Create topic' }).click();
    await form(tab, 'Topic Pricing').waitFor();
    await field(tab, 'New entry', 'Entry text').first().fill('Plans start at 10 a month.');
    await form(tab, 'New entry').first().getByRole('button', { name: 'Add entry' }).click();
    await until('the entry', async () => {
      const topics = ok(await t.req('GET', '/v0/topics')).items as Json[];
      return topics.find((x) => x.title === 'Pricing')?.entries.find((e: Json) => e.content.content === 'Plans start at 10 a month.');
    });
    await check(tab, 'topic');
    // A person, created, then erased by typing the name.
    await nav(tab, 'Persons');
    await tab.getByRole('button', { name: 'New person', exact: true }).click();
    await field(tab, 'New person', 'Name').fill('Erin Erase');
    await field(tab, 'New person', 'Phone number').fill('not a phone');
    await tab.getByRole('button', { name: 'Create person' }).click();
    await pageUntil(tab, `document.querySelector('[data-pointer="/phoneNumber"]')?.getAttribute('aria-invalid') === 'true'`);
    // Said in words beside the field, never the pattern.
    const said = String(
      await tab.evaluate(`(() => {
        const el = document.querySelector('[data-pointer="/phoneNumber"]');
        return (el.getAttribute('aria-describedby') || '').split(' ').map((id) => document.getElementById(id)?.textContent || '').join(' ');
      })()`),
    );
    assert.match(said, /phone number/);
    assert.doesNotMatch(said, /\^|\\d/);
    // As people type it: international with spaces, stored in E.164.
    await field(tab, 'New person', 'Phone number').fill('+44 20 7183 8750');
    await tab.getByRole('button', { name: 'Create person' }).click();
    await tab.getByRole('heading', { level: 1, name: 'Erin Erase' }).waitFor();
    const personId = decodeURIComponent(tab.url().split('#/persons/')[1] ?? '');
    assert.equal(ok(await t.req('GET', `/v0/persons/${personId}`)).phoneNumber, '+442071838750');
    const erase = tab.getByRole('button', { name: 'Erase this person' });
    assert.equal(await erase.isDisabled(), true, 'not before the name is typed');
    await tab.getByLabel('Type “Erin Erase” to confirm').fill('Erin');
    assert.equal(await erase.isDisabled(), true, 'not with part of the name');
    await tab.getByLabel('Type “Erin Erase” to confirm').fill('Erin Erase');
    await check(tab, 'person-erase');
    await erase.click();
    await tab.getByRole('heading', { level: 2, name: 'Persons' }).waitFor();
    assert.equal((await t.req('GET', `/v0/persons/${personId}`)).status, 404);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('a read-only key: every write control disabled, with the reason', { timeout: 120_000 }, async () => {
    assert.ok(made.pageId, 'runs after the flow above');
    const { context, tab } = await openConsole(readKey);
    await tab.getByText('read-only key').waitFor();
    const writesIn = async (hash: string, heading: string | RegExp, level = 1) => {
      await tab.evaluate(`location.hash = ${JSON.stringify(hash)}`);
      await tab.getByRole('heading', { level, name: heading }).first().waitFor();
      await pageUntil(tab, `!document.body.textContent.includes('Loading…')`);
      const writes = tab.locator('button[data-write]');
      const count = await writes.count();
      assert.ok(count > 0, `${hash}: write controls are shown`);
      for (let i = 0; i < count; i++) {
        assert.equal(await writes.nth(i).isDisabled(), true, `${hash}: write control ${i} disabled`);
        assert.equal(await writes.nth(i).getAttribute('title'), 'This API key may only read', `${hash}: control ${i} says why`);
      }
      assert.ok((await tab.getByText('This API key may only read.').count()) > 0, `${hash}: the reason is shown`);
    };
    await writesIn('#/pages', 'Pages', 2);
    assert.equal(await tab.getByRole('button', { name: 'New page' }).isDisabled(), true);
    await writesIn(`#/pages/${made.pageId}`, /Spring/);
    assert.equal(await form(tab, 'Page content').getByRole('button', { name: 'Save' }).isDisabled(), true);
    assert.equal(await field(tab, 'Page content', 'Headline').isDisabled(), true, 'fields too');
    await check(tab, 'read-only-page');
    await openPageTab(tab, 'Audiences');
    assert.equal(await tab.getByRole('button', { name: 'New audience' }).isDisabled(), true);
    await writesIn(`#/pages/${made.pageId}/audiences/${made.audienceId}`, 'Jane Doe (acme.example)');
    await writesIn('#/domains', 'Domains', 2);
    await writesIn('#/webhooks', 'Webhook subscriptions', 2);
    await writesIn('#/assets', 'Assets', 2);
    await writesIn('#/topics', 'Topics', 2);
    await writesIn('#/persons', 'Persons', 2);
    await writesIn('#/accounts', 'Accounts', 2);
    await check(tab, 'read-only-accounts');
    await writesIn('#/brand', 'Brand', 2);
    assert.equal(await field(tab, 'Brand', 'Brand colour').isDisabled(), true, 'the brand fields too');
    await check(tab, 'read-only-brand');
    await context.close();
  });
});
