import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { available, CHROMIUM, skip, until, USER_AGENT } from '../browser.js';
import { startApp, type Json, type TestApp, ok } from '../helpers.js';

// A visit driven end to end in real headless Chromium (Debian's): a page created through the API,
// published and linked, is served on its tenant domain personalised for its audience; the visitor
// scrolls, clicks and submits the lead form; the session and the form's event are then found
// through the API. Chromium resolves *.localhost to loopback, so the fallback domain needs no DNS.

let t: TestApp;
let browser: Browser;
let origin: string;
before(async () => {
  if (skip) return;
  assert.ok(available, `no browser at ${CHROMIUM}: .ci/run installs Debian's chromium`);
  t = await startApp();
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = new URL(address);
  const fallback = ((await t.req('GET', '/v0/tenant_domains')).body.items as Json[]).find((d) => d.isFallback).hostname;
  origin = `http://${fallback}:${port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
after(async () => {
  await browser?.close();
  await t?.close();
});

describe('a real browser visit', { skip }, () => {
  test('served personalised, measured, and its lead form recorded', { timeout: 90_000 }, async () => {
    const person = ok(await t.req('POST', '/v0/persons', { name: 'Jane Doe', email: 'jane@acme.example', domain: 'acme.example' }), 201);
    ok(await t.req('POST', '/v0/accounts', { name: 'Acme Inc', domain: 'acme.example' }), 201);
    const long = Array.from({ length: 40 }, (_, i) => `Paragraph ${i} about **spring** for {{person.firstName}}.`).join('\n\n');
    const page = ok(
      await t.req('POST', '/v0/pages', {
        name: 'Spring',
        title: 'Spring launch',
        pageContext: 'launch',
        pageType: 'inbound',
        content: {
          headline: 'Hello {{person.firstName | there}}',
          subheadline: 'For {{account.name}}',
          sections: [{ heading: 'Why', body: long }],
        },
        actions: [
          { purpose: 'learn', buttonTitle: 'Read more', actionType: 'link', url: 'https://example.com/more' },
          { purpose: 'lead', buttonTitle: 'Talk to us', actionType: 'form', url: '' },
        ],
      }),
      201,
    );
    ok(await t.req('PATCH', `/v0/pages/${page.pageId}`, { status: 'published' }));
    const audience = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, { personId: person.personId }), 201);
    ok(
      await t.req('POST', '/v0/page_links', { path: '/spring/jane', target: { targetType: 'audience', audienceId: audience.audienceId } }),
      201,
    );

    // Headless Chromium names itself HeadlessChrome, which the collector ignores as a bot (rightly):
    // the visit is a person's, so the browser says what an ordinary Chrome says.
    const context = await browser.newContext({
      userAgent: USER_AGENT,
    });
    const tab = await context.newPage();
    if (process.env.DEBUG_BROWSER) {
      tab.on('request', (r) => console.log('REQ', r.method(), r.url(), r.postData()));
      tab.on('response', (r) => console.log('RES', r.status(), r.url()));
      tab.on('requestfailed', (r) => console.log('FAILED', r.url(), r.failure()?.errorText));
    }
    const response = await tab.goto(`${origin}/spring/jane?utm_source=newsletter&utm_campaign=spring`);
    assert.equal(response?.status(), 200);
    assert.equal(await tab.locator('h1').first().textContent(), 'Hello Jane');
    assert.ok((await tab.content()).includes('For Acme Inc'));
    assert.equal(await tab.evaluate('document.cookie'), '', 'no cookies');

    // A visit a person makes: time on the page, scrolling to the bottom, a few clicks.
    await tab.waitForTimeout(1500);
    await tab.mouse.wheel(0, 20_000);
    await tab.evaluate('window.scrollTo(0, document.body.scrollHeight)');
    await tab.waitForTimeout(500);
    for (let i = 0; i < 3; i++) await tab.locator('h1').first().click();

    // The lead form, without any help from JavaScript of ours.
    await tab.fill('input[name="name"]', 'Jane Doe');
    await tab.fill('input[name="email"]', 'jane.form@acme.example');
    await tab.fill('input[name="phone"]', '+14155550123');
    await Promise.all([
      tab.waitForURL(/submitted=1/),
      tab.locator('form button[type="submit"], form input[type="submit"]').first().click(),
    ]);
    assert.match(tab.url(), /\/spring\/jane\?submitted=1$/);

    // Leaving the page sends the last report.
    await tab.close({ runBeforeUnload: true });

    const session = await until('the visit as a session', async () => {
      const list = ok(await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions?audienceId=${audience.audienceId}`)).items as Json[];
      const s = list.find((x) => x.hasFormSubmit && x.totalClicksCount >= 3 && x.maxScrollDepthPercentage >= 90);
      if (process.env.DEBUG_BROWSER) console.log(JSON.stringify(list));
      return s;
    });
    assert.equal(session.audienceId, audience.audienceId);
    assert.equal(session.formSubmissionEmail, 'jane.form@acme.example');
    assert.equal(session.formSubmissionPhone, '+14155550123');
    assert.equal(session.hasConversion, true);
    assert.equal(session.isBounce, false);
    assert.equal(session.utmSource, 'newsletter');
    assert.equal(session.utmCampaign, 'spring');
    assert.ok(session.timeSpentSeconds > 0);
    assert.match(session.pageUrl, /\/spring\/jane/);

    const events = ok(await t.req('GET', '/v0/events?type=form.submitted')).items as Json[];
    assert.equal(events.length, 1);
    assert.equal(events[0].payload.data.email ?? events[0].payload.data.formSubmissionEmail, 'jane.form@acme.example');
    const created = ok(await t.req('GET', '/v0/events?type=audience_session.created')).items as Json[];
    assert.equal(created.length, 1, 'one session for the visit, created once');
    const logs = ok(await t.req('GET', `/v0/persons/${person.personId}/logs?source=pages`)).items as Json[];
    assert.equal(logs.length, 1);
    assert.equal(logs[0].type, 'form-submitted');
  });
});
