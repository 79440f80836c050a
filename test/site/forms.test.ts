import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startApp, type Json, type TestApp } from '../helpers.js';
import { audienceOf, fallbackHost, link, publishedPage, unique, visit } from './serve-helpers.js';

// Lead forms: rendered inline, posted without JavaScript, validated, recorded on the visit's session.

let t: TestApp;
let host: string;
before(async () => {
  t = await startApp();
  host = await fallbackHost(t);
});
after(async () => {
  await t.close();
});

const FORM_ACTION = { purpose: 'lead', buttonTitle: 'Send {{person.firstName}}', actionType: 'form', url: '' };

async function formPage(audience: Record<string, unknown> = {}) {
  const person = (await t.req('POST', '/v0/persons', { name: 'Jane Roe' })).body;
  const page = await publishedPage(t, {
    actions: [{ purpose: 'other', buttonTitle: 'Read', actionType: 'link', url: 'https://example.com/' }, FORM_ACTION],
  });
  const a = await audienceOf(t, page.pageId, { personId: person.personId, ...audience });
  const path = unique('form');
  await link(t, path, { targetType: 'audience', audienceId: a.audienceId });
  const html = (await visit(t, host, path)).body as string;
  const hidden = (name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html)?.[1] ?? '';
  return { person, page, audience: a, path, html, token: hidden('token'), actionId: hidden('action'), formPath: hidden('path') };
}

const post = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
  visit(t, host, '/_pam/forms', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: new URLSearchParams(fields).toString(),
  });

const events = async (type: string) => (await t.req('GET', `/v0/events?type=${type}&limit=100`)).body.items as Json[];

describe('lead forms', () => {
  test('render: name, email, optional phone, the token, the instructions above, posting to /_pam/forms', async () => {
    const { html, token, actionId, path, formPath, page } = await formPage({ actionFormInstructionsOverride: 'Tell us <who> you are' });
    assert.match(html, /<form method="post" action="\/_pam\/forms">/);
    assert.match(html, /<input type="text" name="name" value="" required/);
    assert.match(html, /<input type="email" name="email" value="" required/);
    assert.match(html, /<input type="tel" name="phone" value=""(?! required)/);
    assert.ok(html.includes('<p>Tell us &lt;who&gt; you are</p>'));
    assert.ok(html.indexOf('Tell us') < html.indexOf('<form'));
    assert.ok(html.includes('<button type="submit">Send Jane</button>'));
    assert.ok(token.length > 20 && html.includes(`{"token":"${token}"}`), 'the same token as the measuring script');
    assert.equal(actionId, page.actions[1].actionId);
    assert.equal(formPath, path);
  });

  test('a valid lead: 303 to the page with ?submitted=1 (a thank-you), the session, the person log and form.submitted', async () => {
    const { token, actionId, path, page, audience, person } = await formPage({ actionFormIdOverride: 'crm-form-7' });
    const res = await post({ token, action: actionId, path, name: '  Jane Roe ', email: 'jane@example.com', phone: '+14155550123' });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, `${path}?submitted=1`);
    const thanks = await visit(t, host, String(res.headers.location));
    assert.equal(thanks.statusCode, 200);
    assert.match(thanks.body, /Thank you/);
    assert.doesNotMatch(thanks.body, /<form/);

    const sessions = (await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions`)).body.items as Json[];
    assert.equal(sessions.length, 1);
    const session = sessions[0];
    assert.equal(session.audienceId, audience.audienceId);
    assert.equal(session.hasFormSubmit, true);
    assert.equal(session.hasConversion, true);
    assert.equal(session.isBounce, false);
    assert.equal(session.formSubmissionIdentifier, 'crm-form-7');
    assert.equal(session.formSubmissionEmail, 'jane@example.com');
    assert.equal(session.formSubmissionPhone, '+14155550123');
    assert.match(session.formSubmissionId, /^submission_/);
    assert.equal(session.pageUrl, `https://${host}${path}`);

    const submitted = (await events('form.submitted')).find((e) => e.payload.data.formSubmissionId === session.formSubmissionId);
    assert.ok(submitted);
    assert.deepEqual(
      { ...submitted.payload.data, submittedAt: undefined },
      {
        formSubmissionId: session.formSubmissionId,
        formSubmissionIdentifier: 'crm-form-7',
        pageId: page.pageId,
        audienceId: audience.audienceId,
        actionId,
        audienceSessionId: session.audienceSessionId,
        analyticsSessionId: session.analyticsSessionId,
        name: 'Jane Roe',
        email: 'jane@example.com',
        phone: '+14155550123',
        submittedAt: undefined,
      },
    );
    assert.equal(
      (await events('audience_session.created')).filter((e) => e.payload.data.audienceSessionId === session.audienceSessionId).length,
      1,
    );
    const logs = (await t.req('GET', `/v0/persons/${person.personId}/logs`)).body.items as Json[];
    assert.equal(logs.length, 1);
    assert.equal(logs[0].source, 'pages');
    assert.equal(logs[0].type, 'form-submitted');
    assert.equal(logs[0].payload.email, 'jane@example.com');

    // A second submission of the same visit updates its one session.
    const again = await post({ token, action: actionId, path, name: 'Jane', email: 'other@example.com', phone: '' });
    assert.equal(again.statusCode, 303);
    const after = (await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions`)).body.items as Json[];
    assert.equal(after.length, 1);
    assert.equal(after[0].formSubmissionEmail, 'other@example.com');
    assert.equal(after[0].formSubmissionPhone, '');
    assert.equal(
      (await events('audience_session.created')).filter((e) => e.payload.data.audienceSessionId === session.audienceSessionId).length,
      1,
    );
  });

  test('without a person, no log; the identifier is the action id', async () => {
    const page = await publishedPage(t, { actions: [FORM_ACTION] });
    const a = await audienceOf(t, page.pageId);
    const path = unique('anon');
    await link(t, path, { targetType: 'audience', audienceId: a.audienceId });
    const html = (await visit(t, host, path)).body as string;
    const token = /name="token" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const res = await post({ token, action: page.actions[0].actionId, path, name: 'A', email: 'a@example.com' });
    assert.equal(res.statusCode, 303);
    const [session] = (await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions`)).body.items as Json[];
    assert.equal(session.formSubmissionIdentifier, page.actions[0].actionId);
  });

  test('each invalid field re-renders the page with its error (400), the values kept, nothing recorded', async () => {
    const { token, actionId, path, page } = await formPage();
    const valid = { name: 'Jane', email: 'jane@example.com', phone: '+14155550123' };
    const cases: [Record<string, string>, string][] = [
      [{ name: '' }, 'name'],
      [{ name: 'x'.repeat(256) }, 'name'],
      [{ email: 'not-an-email' }, 'email'],
      [{ email: '' }, 'email'],
      [{ email: '"><script>alert(1)</script>@x' }, 'email'],
      [{ phone: '0415555' }, 'phone'],
      [{ phone: '+0123' }, 'phone'],
      [{ phone: `+1${'2'.repeat(15)}` }, 'phone'],
    ];
    for (const [change, field] of cases) {
      const res = await post({ token, action: actionId, path, ...valid, ...change });
      assert.equal(res.statusCode, 400, JSON.stringify(change));
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(res.body, new RegExp(`name="${field}" value="[^"]*"[^>]* aria-invalid="true"`), field);
      assert.ok(!res.body.includes('<script>alert(1)</script>'));
      const kept = field === 'name' ? valid.email : valid.name;
      assert.ok(res.body.includes(`value="${kept}"`), 'the other values are kept');
      assert.ok(res.body.includes(`name="token" value="${token}"`), 'the same visit');
    }
    // Just inside the bounds.
    assert.equal((await post({ token, action: actionId, path, ...valid, name: 'x'.repeat(255) })).statusCode, 303);
    assert.equal((await post({ token, action: actionId, path, ...valid, phone: `+1${'2'.repeat(14)}` })).statusCode, 303);
    assert.equal((await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions`)).body.items.length, 1);
  });

  test('a forged, foreign or missing token, an unknown action, another content type: refused, nothing written', async () => {
    const { token, actionId, path, page } = await formPage();
    const valid = { action: actionId, path, name: 'Jane', email: 'jane@example.com' };
    const forged = `${token.split('.')[0]}.AAAA`;
    assert.equal((await post({ ...valid, token: forged })).statusCode, 400);
    assert.equal((await post({ ...valid, token: '' })).statusCode, 400);
    assert.equal((await post({ ...valid, token, action: 'action_nope' })).statusCode, 404);
    const json = await visit(t, host, '/_pam/forms', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ ...valid, token }),
    });
    assert.equal(json.statusCode, 400);
    const other = await t.newTenant('Forms elsewhere');
    assert.equal(
      (
        await visit(t, await fallbackHost(t, other.key), '/_pam/forms', {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ ...valid, token }).toString(),
        })
      ).statusCode,
      400,
    );
    assert.equal((await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions`)).body.items.length, 0);
  });

  test('a path that does not show this page to this audience is never redirected to', async () => {
    const { token, actionId, page } = await formPage();
    for (const path of ['//evil.example.com/x', 'https://evil.example.com/', '/nowhere']) {
      const res = await post({ token, action: actionId, path, name: 'Jane', email: 'jane@example.com' });
      assert.equal(res.statusCode, 303, path);
      assert.equal(res.headers.location, '/?submitted=1');
    }
    assert.equal((await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions`)).body.items.length, 1);
  });

  test('a page without an audience shows a form action as a link, and no token', async () => {
    const page = await publishedPage(t, { actions: [{ ...FORM_ACTION, url: 'https://example.com/contact' }] });
    const path = unique('noaud');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    const html = (await visit(t, host, path)).body as string;
    assert.doesNotMatch(html, /<form/);
    assert.match(html, /<a class="button" href="https:\/\/example\.com\/contact">/);
  });
});
