import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import http from 'node:http';
import { loadConfig } from '../../src/config.js';
import { USER_AGENT } from '../browser.js';
import { startApp, type Json, type TestApp } from '../helpers.js';
import { startServer, startsAndWork, type ServerProcess } from '../server-process.js';
import { audienceOf, fallbackHost, link, publishedPage, unique, viewClaims, visit } from './serve-helpers.js';

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

/** Each post comes from an address of its own unless told (the rate limit is tested on its own). */
let nextAddress = 1;
const freshAddress = () => {
  const n = nextAddress++;
  return `198.51.${100 + Math.floor(n / 250)}.${(n % 250) + 1}`;
};

const post = (fields: Record<string, string>, headers: Record<string, string> = {}, remoteAddress = freshAddress()) =>
  visit(t, host, '/_pam/forms', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: new URLSearchParams(fields).toString(),
    remoteAddress,
  });

/** Every accepted lead as if it were `ms` older: the 10 s repeat window is tested on stored times, not waited for. */
const ageClaims = (ms: number) =>
  t.app.db
    .updateTable('form_claims')
    .set({ accepted_at: new Date(Date.now() - ms).toISOString() })
    .execute();

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

  test('a valid lead: 303 to the page with ?submitted=1 at its confirmation, the session, the person log and form.submitted', async () => {
    const { token, actionId, path, page, audience, person } = await formPage({ actionFormIdOverride: 'crm-form-7' });
    const res = await post({ token, action: actionId, path, name: '  Jane Roe ', email: 'jane@example.com', phone: '+14155550123' });
    assert.equal(res.statusCode, 303);
    // Issue 45: the fragment names the confirmation, so it is in view at once.
    assert.equal(res.headers.location, `${path}?submitted=1#pam-thanks-${actionId}`);
    const thanks = await visit(t, host, String(res.headers.location).split('#')[0] ?? '');
    assert.equal(thanks.statusCode, 200);
    assert.match(thanks.body, new RegExp(`<p class="thanks" id="pam-thanks-${actionId}" role="status" tabindex="-1">Thank you`));
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
    assert.equal(session.pageUrl, `http://${host}:${t.app.config.port}${path}`);

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
        // Issue 29: the person the lead is, here the audience's (issue 36: no email of theirs yet, so the link's person).
        personId: person.personId,
        viaPersonId: null,
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

    // A second submission of the same visit, past the 10 s window, updates its one session.
    await ageClaims(10_001);
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

  test("the phone as people type it: national in the tenant's defaultCountry or international, recorded in E.164", async () => {
    const valid = { name: 'Jane', email: 'jane@example.com' };
    const sessionPhone = async (pageId: string) =>
      ((await t.req('GET', `/v0/pages/${pageId}/audience_sessions`)).body.items as Json[]).map((s) => s.formSubmissionPhone);
    // No defaultCountry: a national number asks for the country code, in words; the typed value is kept.
    assert.equal((await t.req('PATCH', '/v0/site_settings', { defaultCountry: null })).status, 200);
    const national = await formPage();
    const refused = await post({
      token: national.token,
      action: national.actionId,
      path: national.path,
      ...valid,
      phone: '(415) 555-0100',
    });
    assert.equal(refused.statusCode, 400);
    assert.match(refused.body, /country code/);
    assert.match(refused.body, /name="phone" value="\(415\) 555-0100"[^>]* aria-invalid="true"/);
    assert.deepEqual(await sessionPhone(national.page.pageId), []);
    const international = await formPage();
    const sent = { token: international.token, action: international.actionId, path: international.path, ...valid };
    assert.equal((await post({ ...sent, phone: ' +44 20 7183 8750 ' })).statusCode, 303);
    assert.deepEqual(await sessionPhone(international.page.pageId), ['+442071838750']);
    // defaultCountry US: the national number is a US one; a number impossible there is refused naming US.
    assert.equal((await t.req('PATCH', '/v0/site_settings', { defaultCountry: 'US' })).status, 200);
    const us = await formPage();
    const usSent = { token: us.token, action: us.actionId, path: us.path, ...valid };
    for (const phone of ['555-01', '(415) 555-01000', '<b>4155550100</b>', '415 555 0100 ext. 9']) {
      const res = await post({ ...usSent, phone });
      assert.equal(res.statusCode, 400, phone);
      assert.ok(!res.body.includes('<b>4155550100</b>'), 'escaped');
    }
    assert.match((await post({ ...usSent, phone: '555-01' })).body, /valid phone number for US/);
    assert.equal((await post({ ...usSent, phone: '(415) 555-0100' })).statusCode, 303);
    assert.deepEqual(await sessionPhone(us.page.pageId), ['+14155550100']);
    assert.equal((await t.req('PATCH', '/v0/site_settings', { defaultCountry: null })).status, 200);
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

  test('a page without an audience shows its form and its token (issue 45); a form action has no URL to link to (issue 38)', async () => {
    const page = await publishedPage(t, { actions: [{ ...FORM_ACTION, url: 'https://example.com/contact' }] });
    assert.equal(page.actions[0].url, '', 'a form action stores no URL');
    const path = unique('noaud');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    const html = (await visit(t, host, path)).body as string;
    assert.match(html, /<form method="post" action="\/_pam\/forms">/);
    assert.match(html, /<input type="hidden" name="token" value="[^"]{20,}">/);
    assert.doesNotMatch(html, /example\.com\/contact/);
    assert.doesNotMatch(html, /<span class="button">/);
  });
});

describe('a form and visit.started', () => {
  /** The measuring script's report of the visit whose view token this is. */
  const report = (token: string) =>
    visit(t, host, '/_pam/collect', {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'user-agent': USER_AGENT },
      payload: JSON.stringify({ token, visibleMs: 1000, scroll: 10, clicks: 0, questions: 0, conversions: 0 }),
      remoteAddress: freshAddress(),
    });
  const visitIdOf = (token: string) => viewClaims(token).visitId as string;
  const startedOf = async (token: string) =>
    (await events('visit.started')).filter((e) => e.payload.data.analyticsSessionId === visitIdOf(token));

  test("a form before the first report on a person's audience: that report still announces the visit, once", async () => {
    const { token, actionId, path, audience, person } = await formPage();
    assert.equal((await post({ token, action: actionId, path, ...LEAD })).statusCode, 303);
    assert.deepEqual(await startedOf(token), [], 'a form is no report');
    assert.equal((await report(token)).statusCode, 204);
    assert.equal((await report(token)).statusCode, 204);
    const started = await startedOf(token);
    assert.equal(started.length, 1);
    assert.deepEqual([started[0].payload.data.personId, started[0].payload.data.audienceId], [person.personId, audience.audienceId]);
  });

  test('a lead on an audience without a person makes a person, but its visit is not announced (the audience was not made for one)', async () => {
    const page = await publishedPage(t, { actions: [FORM_ACTION] });
    const a = await audienceOf(t, page.pageId);
    const path = unique('generic');
    await link(t, path, { targetType: 'audience', audienceId: a.audienceId });
    const html = (await visit(t, host, path)).body as string;
    const token = /name="token" value="([^"]+)"/.exec(html)?.[1] ?? '';
    assert.equal((await report(token)).statusCode, 204);
    assert.equal(
      (await post({ token, action: page.actions[0].actionId, path, name: 'Lee', email: 'lee@generic.example' })).statusCode,
      303,
    );
    assert.equal((await report(token)).statusCode, 204);
    const [submitted] = (await events('form.submitted')).filter((e) => e.payload.data.pageId === page.pageId);
    assert.ok(submitted?.payload.data.personId, 'the lead is a person');
    assert.deepEqual(await startedOf(token), []);
  });
});

/** What a form post may have written for a page: its sessions, its form events, the person's form logs. */
async function written(page: Json, person?: Json) {
  const sessions = (await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions`)).body.items as Json[];
  const submitted = (await events('form.submitted')).filter((e) => e.payload.data.pageId === page.pageId);
  const logs = person ? ((await t.req('GET', `/v0/persons/${person.personId}/logs`)).body.items as Json[]) : [];
  return { sessions: sessions.length, submitted: submitted.length, logs: logs.length, emails: sessions.map((x) => x.formSubmissionEmail) };
}

const LEAD = { name: 'Jane', email: 'jane@example.com' };

describe('trust: the rate limit', () => {
  test('forms: a flood from one address gets 429', async () => {
    const { token, actionId, path, page, person } = await formPage();
    const address = freshAddress();
    // FORM_RATE_PER_MINUTE is 10 by default: the tenth post passes (bad ones spend tokens too), the eleventh does not.
    for (let i = 0; i < 9; i++) assert.equal((await post({ token, action: actionId, path, name: '' }, {}, address)).statusCode, 400);
    assert.equal((await post({ token, action: actionId, path, ...LEAD }, {}, address)).statusCode, 303);
    const limited = await post({ token, action: actionId, path, ...LEAD, email: 'flood@example.com' }, {}, address);
    assert.equal(limited.statusCode, 429);
    const retryAfter = Number(limited.headers['retry-after']);
    // Ten a minute: one more every 6 s.
    assert.ok(retryAfter >= 1 && retryAfter <= 6, String(retryAfter));
    assert.match(String(limited.headers['content-type']), /^text\/html/);
    assert.match(limited.body, /Too many submissions/);
    assert.ok(limited.body.includes(`wait ${retryAfter} second`), 'the page says how long to wait');
    assert.deepEqual(await written(page, person), { sessions: 1, submitted: 1, logs: 1, emails: ['jane@example.com'] });
    // Another address has a bucket of its own.
    assert.notEqual((await post({ token, action: actionId, path, name: '' })).statusCode, 429);
  });

  test('forms: a flood through a trusted proxy is counted by the client, and a forged X-Forwarded-For escapes nothing', async () => {
    const three = await startApp({ FORM_RATE_PER_MINUTE: '3', TRUST_PROXY: '10.9.0.0/16' });
    try {
      const on = await fallbackHost(three);
      const send = (remoteAddress: string, forwardedFor?: string) =>
        three.app.inject({
          method: 'POST',
          url: '/_pam/forms',
          remoteAddress,
          headers: {
            host: on,
            'content-type': 'application/x-www-form-urlencoded',
            ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
          },
          payload: 'token=x',
        });
      for (let i = 0; i < 3; i++) assert.equal((await send('10.9.0.7', `1.2.3.${i}, 203.0.113.9`)).statusCode, 400);
      const limited = await send('10.9.0.8', '203.0.113.9');
      assert.equal(limited.statusCode, 429);
      // Three a minute: one more every 20 s.
      assert.ok(Number(limited.headers['retry-after']) > 6 && Number(limited.headers['retry-after']) <= 20);
      assert.equal((await send('10.9.0.7', '203.0.113.10')).statusCode, 400, 'another client behind the proxy');
      for (let i = 0; i < 3; i++) assert.equal((await send('192.0.2.50', `203.0.113.${100 + i}`)).statusCode, 400);
      assert.equal((await send('192.0.2.50', '203.0.113.200')).statusCode, 429, 'a direct client cannot say it forwards another');
    } finally {
      await three.close();
    }
  });

  test('FORM_RATE_PER_MINUTE: 10 by default, 1 and up, nothing else', () => {
    assert.equal(loadConfig({}).formRatePerMinute, 10);
    assert.equal(loadConfig({ FORM_RATE_PER_MINUTE: '1' }).formRatePerMinute, 1);
    assert.equal(loadConfig({ FORM_RATE_PER_MINUTE: '1000000' }).formRatePerMinute, 1_000_000);
    for (const value of ['0', '-1', '1000001', 'many', '2.5']) {
      assert.throws(
        () => loadConfig({ FORM_RATE_PER_MINUTE: value }),
        (err: Error) => err.name === 'ConfigError' && err.message.includes('FORM_RATE_PER_MINUTE'),
        value,
      );
    }
  });
});

describe('trust: one view token, at most once per 10 s', () => {
  test('forms: a repeat of one view token within 10 s shows the thank-you page and writes nothing', async () => {
    const { token, actionId, path, page, person } = await formPage();
    const first = await post({ token, action: actionId, path, ...LEAD });
    assert.equal(first.statusCode, 303);
    for (const email of ['again@example.com', 'jane@example.com']) {
      const repeat = await post({ token, action: actionId, path, ...LEAD, email });
      assert.equal(repeat.statusCode, 303);
      assert.equal(repeat.headers.location, first.headers.location);
    }
    const thanks = await visit(t, host, String(first.headers.location));
    assert.match(thanks.body, /Thank you/);
    assert.deepEqual(await written(page, person), { sessions: 1, submitted: 1, logs: 1, emails: ['jane@example.com'] });
  });

  test('forms: the same token is refused 9.9 s after its lead and accepted again 10 s after', async () => {
    const { token, actionId, path, page, person } = await formPage();
    assert.equal((await post({ token, action: actionId, path, ...LEAD })).statusCode, 303);
    await ageClaims(9_900);
    assert.equal((await post({ token, action: actionId, path, ...LEAD, email: 'early@example.com' })).statusCode, 303);
    assert.deepEqual((await written(page, person)).emails, ['jane@example.com']);
    await ageClaims(10_000);
    assert.equal((await post({ token, action: actionId, path, ...LEAD, email: 'later@example.com' })).statusCode, 303);
    assert.deepEqual(await written(page, person), { sessions: 1, submitted: 2, logs: 2, emails: ['later@example.com'] });
  });

  test('an invalid post spends nothing: the next valid one of the token is accepted', async () => {
    const { token, actionId, path, page } = await formPage();
    assert.equal((await post({ token, action: actionId, path, ...LEAD, email: 'nope' })).statusCode, 400);
    assert.equal((await post({ token, action: actionId, path, ...LEAD })).statusCode, 303);
    assert.deepEqual((await written(page)).emails, ['jane@example.com']);
  });

  test('forms: a repeat through another instance, at once or after a restart, writes nothing', startsAndWork(2, 30_000), async () => {
    const { token, actionId, path, page, person } = await formPage();
    const { database } = t.app.config;
    const env = {
      DATABASE_URL: database.kind === 'sqlite' ? database.path : database.url,
      DATABASE_POOL_SIZE: '2',
      WEBHOOK_DISPATCHER: 'false',
      ALERT_SENDER: 'false',
      AGENT: 'false',
      FORM_RATE_PER_MINUTE: '1000',
    };
    const payload = (email: string) => new URLSearchParams({ token, action: actionId, path, ...LEAD, email }).toString();
    const throughProcess = (server: ServerProcess, email: string) =>
      new Promise<number>((resolve, reject) => {
        const body = payload(email);
        const req = http.request(
          `${server.url}/_pam/forms`,
          {
            method: 'POST',
            headers: { host, 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    const here = async (email: string) => (await post({ token, action: actionId, path, ...LEAD, email })).statusCode;

    // The instance that comes after is started now: a start can take longer than the repeat window
    // under load, and what it shows needs only a process that never saw the claim in memory.
    const [other, restarted] = await Promise.all([startServer(env), startServer(env)]);
    try {
      // Both instances at once, several posts each: one lead wins.
      const raced = await Promise.all(
        Array.from({ length: 6 }, (_, i) => (i % 2 ? throughProcess(other, `o${i}@example.com`) : here(`h${i}@example.com`))),
      );
      assert.deepEqual(
        raced,
        raced.map(() => 303),
      );
      const after = await written(page, person);
      assert.deepEqual({ ...after, emails: after.emails.length }, { sessions: 1, submitted: 1, logs: 1, emails: 1 });
    } catch (err) {
      await restarted.kill();
      throw err;
    } finally {
      await other.kill();
    }
    // A new instance remembers: the claim is in the database.
    const before = await written(page, person);
    try {
      assert.equal(await throughProcess(restarted, 'restart@example.com'), 303);
      assert.deepEqual(await written(page, person), before);
    } finally {
      await restarted.kill();
    }
  });
});

describe('trust: the honeypot', () => {
  test('rendered in the form where people never see or reach it, always empty', async () => {
    const { html } = await formPage();
    const form = /<form[^>]*>[\s\S]*?<\/form>/.exec(html)?.[0] ?? '';
    const trap =
      /<div class="hp" aria-hidden="true"><label>[^<]*<input type="text" name="website" value="" tabindex="-1" autocomplete="off"><\/label><\/div>/;
    assert.match(form, trap);
    assert.match(html, /\.lead \.hp\{position:absolute;left:-10000px;width:1px;height:1px;overflow:hidden\}/);
  });

  test('forms: a bot that fills the hidden field is thanked and nothing is written', async () => {
    const { token, actionId, path, page, person } = await formPage();
    for (const website of ['https://spam.example', ' ']) {
      const res = await post({ token, action: actionId, path, ...LEAD, website });
      assert.equal(res.statusCode, 303, website);
      assert.equal(res.headers.location, `${path}?submitted=1#pam-thanks-${actionId}`);
    }
    // Even with fields a person would be asked to correct: the bot learns nothing.
    const invalid = await post({ token, action: actionId, path, name: '', email: 'x', website: 'spam' });
    assert.equal(invalid.statusCode, 303);
    assert.deepEqual(await written(page, person), { sessions: 0, submitted: 0, logs: 0, emails: [] });
    // It spent nothing of the visit either: a person's post of the same token, field empty, is recorded.
    assert.equal((await post({ token, action: actionId, path, ...LEAD, website: '' })).statusCode, 303);
    assert.deepEqual(await written(page, person), { sessions: 1, submitted: 1, logs: 1, emails: ['jane@example.com'] });
  });
});

describe('trust: a form redirect never leaves its host', () => {
  /** A form page also served at `evilPath` (a link of the tenant's own), so that only the redirect rule stands between. */
  async function servedAlsoAt(evilPath: string) {
    const f = await formPage();
    await link(t, evilPath, { targetType: 'audience', audienceId: f.audience.audienceId });
    return f;
  }

  test('forms: path=//evil.example does not redirect off-site', async () => {
    const { token, actionId, page } = await servedAlsoAt('//evil.example');
    const served = await visit(t, host, '//evil.example');
    assert.equal(served.statusCode, 200, 'the link serves the page');
    const res = await post({ token, action: actionId, path: '//evil.example', ...LEAD });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/?submitted=1');
    assert.equal((await written(page)).sessions, 1, 'the lead itself is kept');
  });

  test('forms: path=/\\evil.example does not redirect off-site', async () => {
    const { token, actionId } = await servedAlsoAt('/\\evil.example');
    const res = await post({ token, action: actionId, path: '/\\evil.example', ...LEAD });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/?submitted=1');
  });

  test('forms: percent-encoded //evil.example and /\\evil.example do not redirect off-site', async () => {
    for (const evil of ['/%2F%2Fevil.example', '/%5Cevil.example', '/%252F%252Fevil.example', '/%2F/evil.example']) {
      const { token, actionId } = await servedAlsoAt(evil);
      const res = await post({ token, action: actionId, path: evil, ...LEAD });
      assert.equal(res.statusCode, 303, evil);
      assert.equal(res.headers.location, '/?submitted=1', evil);
    }
    // Encoded in the form body itself (decoded once, as every form field is).
    const { token, actionId } = await servedAlsoAt('//evil2.example');
    for (const raw of ['%2F%2Fevil2.example', '%2f%2fevil2.example']) {
      const res = await visit(t, host, '/_pam/forms', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `token=${token}&action=${actionId}&name=Jane&email=jane%40example.com&path=${raw}`,
        remoteAddress: freshAddress(),
      });
      assert.equal(res.statusCode, 303, raw);
      assert.equal(res.headers.location, '/?submitted=1', raw);
    }
  });

  test('forms: path=//<route key> under a routing link at / does not redirect off-site', async () => {
    const page = await publishedPage(t, { actions: [FORM_ACTION] });
    const key = `evil-${Date.now().toString(36)}`;
    const a = await audienceOf(t, page.pageId, { personRouteKey: key });
    await link(t, '/', { targetType: 'page_routing', pageId: page.pageId });
    const html = (await visit(t, host, `//${key}`)).body as string;
    const token = /name="token" value="([^"]+)"/.exec(html)?.[1] ?? '';
    assert.ok(token, 'the routing link serves the audience at //<key>');
    const res = await post({ token, action: page.actions[0].actionId, path: `//${key}`, ...LEAD });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/?submitted=1');
    assert.equal((await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions?audienceId=${a.audienceId}`)).body.items.length, 1);
  });

  test('serving: a link at //evil.example is never a 308 off-site', async () => {
    await servedAlsoAt('//evil3.example');
    const res = await visit(t, host, '//evil3.example/');
    assert.notEqual(res.statusCode, 308);
    assert.equal(res.headers.location, undefined);
    // A path of this host that ends in a slash still goes to its link.
    const { path } = await formPage();
    const fine = await visit(t, host, `${path}/`);
    assert.equal(fine.statusCode, 308);
    assert.equal(fine.headers.location, path);
  });

  test('a path of this host with its own characters still comes back to it', async () => {
    const f = await servedAlsoAt('/offer/été-2026');
    const res = await post({ token: f.token, action: f.actionId, path: '/offer/été-2026', ...LEAD });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, `${encodeURI('/offer/été-2026')}?submitted=1#pam-thanks-${f.actionId}`);
  });
});
