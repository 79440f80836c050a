import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { USER_AGENT } from '../browser.js';
import { IMAGE_MIME, makeImage } from '../fixtures.js';
import { ok, startApp, type Json, type TestApp, toRes } from '../helpers.js';
import { audienceOf, fallbackHost, link, publishedPage, unique, visit } from './serve-helpers.js';

// What a visitor sees is true (issue 45 §7): the page itself works and is measured, a form comes
// back to the version the visitor was shown at its confirmation, and every page has an icon.

let t: TestApp;
let host: string;
before(async () => {
  t = await startApp({ FILE_STORE: 'database' });
  host = await fallbackHost(t);
});
after(async () => {
  await t.close();
});

const FORM = { purpose: 'lead', buttonTitle: 'Book a demo', actionType: 'form', url: '' };
const LINK = { purpose: 'other', buttonTitle: 'Read the docs', actionType: 'link', url: 'https://example.com/docs' };
const LEAD = { name: 'Jane Roe', email: 'jane.itself@example.com' };

let address = 1;
const freshAddress = () => `203.0.113.${address++}`;
const hidden = (html: string, name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html)?.[1] ?? '';
const unattr = (value: string) =>
  value
    .replace(/&amp;/g, '&')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"');
const h1 = (html: string) => /<h1>(.*?)<\/h1>/s.exec(html)?.[1] ?? '';

const post = (fields: Record<string, string>) =>
  visit(t, host, '/_pam/forms', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': USER_AGENT },
    payload: new URLSearchParams(fields).toString(),
    remoteAddress: freshAddress(),
  });

const report = (token: string) =>
  visit(t, host, '/_pam/collect', {
    method: 'POST',
    headers: { 'content-type': 'text/plain', 'user-agent': USER_AGENT },
    payload: JSON.stringify({ token, visibleMs: 12_000, scroll: 40, clicks: 1, questions: 0, conversions: 0 }),
    remoteAddress: freshAddress(),
  });

/** The fields a browser posts: every hidden input of the page's form, and what the visitor typed. */
const formFields = (html: string, typed: Record<string, string>) => ({
  token: hidden(html, 'token'),
  action: hidden(html, 'action'),
  path: unattr(hidden(html, 'path')),
  ...typed,
});

describe('the page itself (no home audience)', () => {
  test('serves its link and its form, is measured under its own id, and takes leads', async () => {
    const page = await publishedPage(t, { actions: [LINK, FORM] });
    const formId = page.actions[1].actionId;
    const path = unique('itself');
    await link(t, path, { targetType: 'page', pageId: page.pageId });

    const res = await visit(t, host, path);
    assert.equal(res.statusCode, 200);
    const html = res.body;
    assert.doesNotMatch(html, /<span class="button">/, 'no action is a dead button');
    assert.match(html, /<a class="button" href="https:\/\/example\.com\/docs">Read the docs<\/a>/);
    assert.match(html, /<form method="post" action="\/_pam\/forms">/);
    assert.match(html, /<script src="\/_pam\/v\.js" defer><\/script>/, 'the measuring script');
    const token = /\{"token":"([^"]+)"\}/.exec(html)?.[1] ?? '';
    assert.ok(token.length > 20, 'a visit token');
    assert.equal(hidden(html, 'token'), token, 'the form carries the same visit');

    // The collector records the visit: a session of the page, under the page's own id.
    assert.equal((await report(token)).statusCode, 204);
    const sessions = ok(await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions`)).items as Json[];
    assert.equal(sessions.length, 1);
    assert.equal(sessions[0].audienceId, page.pageId);
    assert.equal(sessions[0].pageId, page.pageId);
    assert.equal(sessions[0].timeSpentSeconds > 0, true);
    assert.equal(sessions[0].isBounce, false);
    const filtered = ok(await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions?audienceId=${page.pageId}`)).items as Json[];
    assert.equal(filtered.length, 1, 'the page itself is an audienceId a list can filter by');

    // Its form takes a lead, on the same session.
    const sent = await post(formFields(html, LEAD));
    assert.equal(sent.statusCode, 303);
    assert.equal(sent.headers.location, `${path}?submitted=1#pam-thanks-${formId}`);
    const after = ok(await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions`)).items as Json[];
    assert.equal(after.length, 1);
    assert.equal(after[0].hasFormSubmit, true);
    assert.equal(after[0].formSubmissionEmail, LEAD.email);
    const leads = ok(await t.req('GET', `/v0/leads?pageId=${page.pageId}`)).items as Json[];
    assert.equal(leads.length, 1);
    assert.equal(leads[0].audienceId, page.pageId);
    assert.equal(leads[0].submittedEmail, LEAD.email);
    const submitted = ok(await t.req('GET', '/v0/events?type=form.submitted&limit=100')).items as Json[];
    assert.ok(submitted.some((e) => e.payload.data.pageId === page.pageId && e.payload.data.audienceId === page.pageId));

    // The thank-you is the same visit: it starts no new one.
    const thanks = await visit(t, host, `${path}?submitted=1`);
    assert.match(thanks.body, new RegExp(`id="pam-thanks-${formId}" role="status"`));
    assert.doesNotMatch(thanks.body, /\/_pam\/v\.js/);
  });

  test('a form button in the header leads to the form; a token of the page itself posts only to its own page', async () => {
    const page = await publishedPage(t, { actions: [FORM] });
    ok(await t.req('PATCH', `/v0/pages/${page.pageId}`, { headerActionId: page.actions[0].actionId }));
    const path = unique('itself-header');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    const html = (await visit(t, host, path)).body;
    assert.match(html, new RegExp(`<a class="button" href="#pam-form-${page.actions[0].actionId}">Book a demo</a>`));
    // Another page's form action with this page's token: nothing to record.
    const other = await publishedPage(t, { actions: [FORM] });
    const res = await post({ ...formFields(html, LEAD), action: other.actions[0].actionId });
    assert.equal(res.statusCode, 404);
  });

  test('a page with a home audience still measures that audience', async () => {
    const page = await publishedPage(t, { actions: [FORM] });
    const home = await audienceOf(t, page.pageId, { flags: ['home_page'] });
    const path = unique('itself-home');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    const html = (await visit(t, host, path)).body;
    assert.equal((await report(/\{"token":"([^"]+)"\}/.exec(html)?.[1] ?? '')).statusCode, 204);
    const sessions = ok(await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions`)).items as Json[];
    assert.deepEqual(
      sessions.map((s) => s.audienceId),
      [home.audienceId],
    );
  });
});

describe('after a form: the confirmation, in the version the visitor was shown', () => {
  const content = (headline: string) => ({ headline, subheadline: '', sections: [] });

  test("a segment's visitor comes back to the segment's thank-you, query kept, at the confirmation", async () => {
    const page = await publishedPage(t, { content: content('Everyone'), actions: [FORM] });
    const formId = page.actions[0].actionId;
    const segment = await audienceOf(t, page.pageId, {
      customName: 'From LinkedIn',
      rules: { match: 'all', conditions: [{ field: 'utm.source', operator: 'equals', value: 'linkedin' }] },
    });
    const base = `/v0/pages/${page.pageId}/audiences/${segment.audienceId}/versions`;
    const version = ok(await t.req('POST', base, { content: content('Hello LinkedIn') }), 201);
    ok(await t.req('PATCH', `${base}/${version.versionId}`, { status: 'published' }));
    const path = unique('seg-form');
    await link(t, path, { targetType: 'page', pageId: page.pageId });

    const query = '?utm_source=linkedin&utm_campaign=spring';
    const shown = await visit(t, host, `${path}${query}`);
    assert.equal(h1(shown.body), 'Hello LinkedIn');
    assert.equal(unattr(hidden(shown.body, 'path')), `${path}${query}`, 'the form keeps the URL it is on');
    assert.equal(h1((await visit(t, host, path)).body), 'Everyone', 'the generic page, without the query');

    const res = await post(formFields(shown.body, LEAD));
    assert.equal(res.statusCode, 303);
    const location = String(res.headers.location);
    assert.equal(location, `${path}${query}&submitted=1#pam-thanks-${formId}`);
    const thanks = await visit(t, host, location.split('#')[0] ?? '');
    assert.equal(thanks.statusCode, 200);
    assert.equal(h1(thanks.body), 'Hello LinkedIn', "the segment's version, not the generic page");
    assert.match(
      thanks.body,
      new RegExp(`<p class="thanks" id="pam-thanks-${formId}" role="status" tabindex="-1">Thank you! Your details have been sent.</p>`),
    );
    const sessions = ok(await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions`)).items as Json[];
    assert.deepEqual(
      sessions.map((s) => [s.audienceId, s.hasFormSubmit]),
      [[segment.audienceId, true]],
    );
  });

  test('the kept query: escaped in the page, re-encoded in the Location, one submitted marker, bounded', async () => {
    const page = await publishedPage(t, { actions: [FORM] });
    const formId = page.actions[0].actionId;
    const path = unique('query-form');
    await link(t, path, { targetType: 'page', pageId: page.pageId });

    const odd = await visit(t, host, `${path}?q=%22%3E%3Cscript%3E&a=1&submitted=0`);
    const field = /<input type="hidden" name="path" value="([^"]*)">/.exec(odd.body)?.[1] ?? '';
    assert.equal(field, `${path}?q=%22%3E%3Cscript%3E&amp;a=1`, 'the query is text in the attribute; an old marker is dropped');
    assert.doesNotMatch(odd.body, /"><script>/);
    const res = await post(formFields(odd.body, LEAD));
    assert.equal(res.headers.location, `${path}?q=%22%3E%3Cscript%3E&a=1&submitted=1#pam-thanks-${formId}`);

    // A query just inside the bound is kept; one past it is left out (the path still comes back).
    const inside = `?x=${'a'.repeat(2046)}`;
    const outside = `?x=${'a'.repeat(2047)}`;
    const keptInside = unattr(hidden((await visit(t, host, `${path}${inside}`)).body, 'path'));
    assert.equal(keptInside, `${path}${inside}`);
    const keptOutside = unattr(hidden((await visit(t, host, `${path}${outside}`)).body, 'path'));
    assert.equal(keptOutside, path);

    // A query posted by hand is re-encoded before it reaches the Location header.
    const plain = await visit(t, host, path);
    const typed = await post({ ...formFields(plain.body, { ...LEAD, email: 'second@example.com' }), path: `${path}?name=José Ñ&x=<b>` });
    assert.equal(typed.statusCode, 303);
    assert.equal(typed.headers.location, `${path}?name=Jos%C3%A9+%C3%91&x=%3Cb%3E&submitted=1#pam-thanks-${formId}`);
  });
});

describe('a favicon on every served page', () => {
  const iconOf = (html: string) => /<link rel="icon" href="([^"]+)" type="([^"]+)">/.exec(html);
  const svgOf = (href: string) => decodeURIComponent(unattr(href).replace(/^data:image\/svg\+xml,/, ''));

  test('no brand image: an SVG of the brand colour and the page initial, escaped; the logo once there is one', async () => {
    const other = await t.newTenant('Icons');
    const otherHost = await fallbackHost(t, other.key);
    const page = await publishedPage(t, { title: '  "<élan> & co' }, other.key);
    const path = unique('icon');
    await link(t, path, { targetType: 'page', pageId: page.pageId }, other.key);
    const first = iconOf((await visit(t, otherHost, path)).body);
    assert.ok(first, 'a favicon link');
    assert.equal(first[2], 'image/svg+xml');
    const svg = svgOf(first[1] ?? '');
    assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 64 64">/);
    assert.match(svg, /<rect width="64" height="64" rx="12" fill="#0b57d0"\/>/);
    assert.match(svg, />É<\/text><\/svg>$/, 'the first letter, uppercased');

    const setColour = await t.req('PATCH', '/v0/site_settings', { brandColor: '#7a1fa2' }, { key: other.key });
    ok(setColour);
    const recoloured = svgOf(iconOf((await visit(t, otherHost, path)).body)?.[1] ?? '');
    assert.match(recoloured, /fill="#7a1fa2"/);

    const bytes = await makeImage('png', 64, 64);
    const file = toRes(
      await t.app.inject({
        method: 'POST',
        url: '/v0/files',
        headers: { 'content-type': IMAGE_MIME.png, 'x-api-key': other.key },
        payload: bytes,
      }),
    );
    assert.equal(file.status, 201, file.text);
    const asset = ok(
      await t.req('POST', '/v0/assets', { assetType: 'image', name: 'Logo', fileId: file.body.fileId }, { key: other.key }),
      201,
    );
    ok(await t.req('PATCH', '/v0/site_settings', { logoAssetId: asset.assetId }, { key: other.key }));
    const logo = iconOf((await visit(t, otherHost, path)).body);
    assert.equal(logo?.[1], `/_pam/files/${file.body.fileId}`);
    assert.equal(logo?.[2], 'image/png');
    const served = await visit(t, otherHost, logo?.[1] ?? '');
    assert.equal(served.statusCode, 200, 'the logo is a file the domain serves');

    // /favicon.ico answers the logo's bytes.
    const ico = await visit(t, otherHost, '/favicon.ico');
    assert.equal(ico.statusCode, 200);
    assert.equal(ico.headers['content-type'], 'image/png');
    assert.equal(ico.headers['cache-control'], 'public, max-age=86400');
    assert.deepEqual(ico.rawPayload, bytes);
  });

  test('/favicon.ico answers 200 on a domain with nothing set, an SVG with the home page initial, and 304 when unchanged', async () => {
    const other = await t.newTenant('Bare');
    const bareHost = await fallbackHost(t, other.key);
    const ico = await visit(t, bareHost, '/favicon.ico');
    assert.equal(ico.statusCode, 200);
    assert.equal(ico.headers['content-type'], 'image/svg+xml');
    assert.equal(ico.headers['cache-control'], 'public, max-age=86400');
    assert.match(ico.body, /^<svg [^>]*>.*fill="#0b57d0".*><\/text><\/svg>$/);
    const again = await visit(t, bareHost, '/favicon.ico', { headers: { 'if-none-match': String(ico.headers.etag) } });
    assert.equal(again.statusCode, 304);
    assert.equal((await visit(t, bareHost, '/favicon.ico', { method: 'HEAD' })).statusCode, 200);

    await publishedPage(t, { title: '9 reasons <why>', flags: ['home_page'] }, other.key);
    const home = await visit(t, bareHost, '/favicon.ico');
    assert.match(home.body, />9<\/text><\/svg>$/);
    assert.notEqual(home.headers.etag, ico.headers.etag);
  });
});
