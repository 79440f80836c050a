import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startApp, type TestApp } from '../helpers.js';
import { audienceOf, fallbackHost, link, publishedPage, tokenIn, unique, viewClaims, visit } from './serve-helpers.js';

// Which page, for which audience, a visitor path shows: every resolution rule of issue 15.

let t: TestApp;
let host: string;
before(async () => {
  t = await startApp();
  host = await fallbackHost(t);
});
after(async () => {
  await t.close();
});

const headlineOf = (html: string) => /<h1>([^<]*)<\/h1>/.exec(html)?.[1];
const hasToken = (html: string) => html.includes('id="pam-view"') && html.includes('<script src="/_pam/v.js" defer></script>');

describe('resolution', () => {
  test('an audience target shows that audience, with its view token and the measuring script', async () => {
    const page = await publishedPage(t, { title: 'Hello' });
    const audience = await audienceOf(t, page.pageId, { customName: 'Big Co' });
    const path = unique('aud');
    await link(t, path, { targetType: 'audience', audienceId: audience.audienceId });
    const res = await visit(t, host, path);
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/html; charset=utf-8/);
    assert.ok(res.body.startsWith('<!doctype html><html lang="en">'));
    assert.equal(headlineOf(res.body), 'Hello');
    assert.ok(hasToken(res.body));
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.match(String(res.headers.etag), /^"[\w-]+"$/);
  });

  test('a page target shows its home_page audience, else the page itself, measured too (issue 45)', async () => {
    const page = await publishedPage(t);
    const path = unique('page');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    const bare = await visit(t, host, path);
    assert.equal(bare.statusCode, 200);
    assert.ok(hasToken(bare.body), 'the page itself has its view token and the measuring script');
    await audienceOf(t, page.pageId, { flags: ['home_page'] });
    const withHome = await visit(t, host, path);
    assert.ok(hasToken(withHome.body));
  });

  test('page_routing: P as a page target, P/<key> the live audience with that route key, an unknown key as P', async () => {
    const page = await publishedPage(t);
    const path = unique('route');
    await link(t, path, { targetType: 'page_routing', pageId: page.pageId });
    await audienceOf(t, page.pageId, { customName: 'Jane', personRouteKey: 'jane', actionUrlOverride: 'https://jane.example.com/' });
    await audienceOf(t, page.pageId, { flags: ['home_page'], actionUrlOverride: 'https://home.example.com/' });
    await t.req('PATCH', `/v0/pages/${page.pageId}`, {
      actions: [{ purpose: 'p', buttonTitle: 'Go', actionType: 'link', url: 'https://page.example.com/' }],
    });
    const jane = await visit(t, host, `${path}/jane`);
    assert.equal(jane.statusCode, 200);
    assert.match(jane.body, /href="https:\/\/jane\.example\.com\/"/);
    const unknown = await visit(t, host, `${path}/nobody`);
    assert.equal(unknown.statusCode, 200);
    assert.match(unknown.body, /href="https:\/\/home\.example\.com\/"/);
    const p = await visit(t, host, path);
    assert.match(p.body, /href="https:\/\/home\.example\.com\/"/);
    // Deeper paths and an empty key are not P/<key>.
    assert.equal((await visit(t, host, `${path}/jane/x`)).statusCode, 404);
  });

  test('a route key of an archived audience is unknown: the page as P', async () => {
    const page = await publishedPage(t, {
      actions: [{ purpose: 'p', buttonTitle: 'Go', actionType: 'link', url: 'https://page.example.com/' }],
    });
    const path = unique('route');
    await link(t, path, { targetType: 'page_routing', pageId: page.pageId });
    const bob = await audienceOf(t, page.pageId, { personRouteKey: 'bob', actionUrlOverride: 'https://bob.example.com/' });
    assert.match((await visit(t, host, `${path}/bob`)).body, /bob\.example\.com/);
    await t.req('POST', `/v0/pages/${page.pageId}/audiences/${bob.audienceId}/archive`, {});
    const res = await visit(t, host, `${path}/bob`);
    assert.equal(res.statusCode, 200);
    assert.doesNotMatch(res.body, /bob\.example\.com/);
    assert.match(res.body, /page\.example\.com/);
  });

  test('an archived audience target is its page without an audience, measured as the page itself (issue 45)', async () => {
    const page = await publishedPage(t);
    const audience = await audienceOf(t, page.pageId);
    await audienceOf(t, page.pageId, { flags: ['home_page'] });
    const path = unique('arch');
    await link(t, path, { targetType: 'audience', audienceId: audience.audienceId });
    assert.ok(hasToken((await visit(t, host, path)).body));
    await t.req('POST', `/v0/pages/${page.pageId}/audiences/${audience.audienceId}/archive`, {});
    const res = await visit(t, host, path);
    assert.equal(res.statusCode, 200);
    const claims = viewClaims(tokenIn(res.body));
    assert.equal(claims.audienceId, page.pageId, "the page itself, under the page's own id");
  });

  test('one trailing slash more than a link is a 308 to it; two, or a slash less, is 404', async () => {
    const page = await publishedPage(t);
    const path = unique('slash');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    const res = await visit(t, host, `${path}/?utm_source=x`);
    assert.equal(res.statusCode, 308);
    assert.equal(res.headers.location, path);
    assert.equal((await visit(t, host, `${path}//`)).statusCode, 404);
    const withSlash = unique('ends');
    await link(t, `${withSlash}/`, { targetType: 'page', pageId: page.pageId });
    assert.equal((await visit(t, host, `${withSlash}/`)).statusCode, 200);
    assert.equal((await visit(t, host, withSlash)).statusCode, 404);
  });

  test('links match exactly: case and prefixes matter; query strings do not', async () => {
    const page = await publishedPage(t);
    const path = unique('Exact');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    assert.equal((await visit(t, host, `${path}?utm_source=news&x=<script>`)).statusCode, 200);
    assert.equal((await visit(t, host, path.toLowerCase())).statusCode, 404);
    assert.equal((await visit(t, host, `${path}x`)).statusCode, 404);
    assert.equal((await visit(t, host, path.slice(0, -1))).statusCode, 404);
  });

  test('a link path with characters a browser percent-encodes is found from its encoded form', async () => {
    const page = await publishedPage(t);
    const path = `${unique('été')}`;
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    assert.equal((await visit(t, host, encodeURI(path))).statusCode, 200);
    const malformed = await visit(t, host, '/%E0%A4%A');
    assert.equal(malformed.statusCode, 400);
    // The API app's router fails before any hook: it still hands a tenant domain's request to the site.
    assert.match(String(malformed.headers['content-type']), /^text\/html/);
    assert.doesNotMatch(malformed.body, /problem|"status"/);
    const onApi = await t.app.inject({ method: 'GET', url: '/v0/persons/%E0%A4%A', headers: { 'x-api-key': t.key } });
    assert.equal(onApi.statusCode, 400);
    assert.match(String(onApi.headers['content-type']), /^application\/problem\+json/);
  });

  test('/ without a link is the tenant page flagged home_page; with a link, the link', async () => {
    const other = await t.newTenant('Other');
    const otherHost = await fallbackHost(t, other.key);
    assert.equal((await visit(t, otherHost, '/')).statusCode, 404);
    await publishedPage(t, { title: 'Not home' }, other.key);
    await publishedPage(t, { title: 'Draft home', flags: ['home_page'], status: 'draft' }, other.key);
    assert.equal((await visit(t, otherHost, '/')).statusCode, 404);
    const home = await publishedPage(t, { title: 'Home', flags: ['home_page'] }, other.key);
    const res = await visit(t, otherHost, '/');
    assert.equal(res.statusCode, 200);
    assert.equal(headlineOf(res.body), 'Home');
    await audienceOf(t, home.pageId, { flags: ['home_page'] }, other.key);
    assert.ok(hasToken((await visit(t, otherHost, '/')).body));
    const linked = await publishedPage(t, { title: 'Linked root' }, other.key);
    await link(t, '/', { targetType: 'page', pageId: linked.pageId }, other.key);
    assert.equal(headlineOf((await visit(t, otherHost, '/')).body), 'Linked root');
  });

  test('only published, live pages are served; a 404 names nothing of the tenant', async () => {
    const page = await publishedPage(t, { title: 'Acme secret plan' });
    const path = unique('status');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    assert.equal((await visit(t, host, path)).statusCode, 200);
    for (const status of ['draft', 'archived']) {
      await t.req('PATCH', `/v0/pages/${page.pageId}`, { status });
      const res = await visit(t, host, path);
      assert.equal(res.statusCode, 404, status);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.doesNotMatch(res.body, /Acme|secret|page_/);
    }
    await t.req('PATCH', `/v0/pages/${page.pageId}`, { status: 'published' });
    assert.equal((await visit(t, host, path)).statusCode, 200);
    await t.req('DELETE', `/v0/pages/${page.pageId}`);
    assert.equal((await visit(t, host, path)).statusCode, 404);
    assert.equal((await visit(t, host, '/nothing-here')).statusCode, 404);
  });

  test("another tenant's link is not on this domain", async () => {
    const other = await t.newTenant('Third');
    const page = await publishedPage(t, {}, other.key);
    const path = unique('theirs');
    await link(t, path, { targetType: 'page', pageId: page.pageId }, other.key);
    assert.equal((await visit(t, host, path)).statusCode, 404);
    assert.equal((await visit(t, await fallbackHost(t, other.key), path)).statusCode, 200);
  });

  test('GET and HEAD only: every other method is 405 with Allow, whatever its body', async () => {
    const page = await publishedPage(t);
    const path = unique('methods');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    const head = await visit(t, host, path, { method: 'HEAD' });
    assert.equal(head.statusCode, 200);
    assert.equal(head.body, '');
    assert.ok(head.headers.etag);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      const res = await visit(t, host, path, { method, headers: { 'content-type': 'application/xml' }, payload: '<x/>' });
      assert.equal(res.statusCode, 405, method);
      assert.equal(res.headers.allow, 'GET, HEAD');
      assert.match(String(res.headers['content-type']), /^text\/html/);
    }
    assert.equal((await visit(t, host, '/nowhere', { method: 'DELETE' })).statusCode, 405);
  });

  test('visitor paths never answer on the API host', async () => {
    const page = await publishedPage(t);
    const path = unique('api');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    const res = await visit(t, 'localhost', path);
    assert.equal(res.statusCode, 404);
    assert.match(String(res.headers['content-type']), /problem\+json/);
    assert.equal((await visit(t, 'localhost', '/_pam/files/file_x')).statusCode, 404);
  });
});

describe('the visit records the path it was served at', () => {
  test('P/<key> of a page_routing link: the session pageUrl ends with P/<key>', async () => {
    const page = await publishedPage(t, { title: 'Routed' });
    const audience = await audienceOf(t, page.pageId, { personRouteKey: 'jane' });
    const path = unique('route');
    await link(t, path, { targetType: 'page_routing', pageId: page.pageId });
    const served = await visit(t, host, `${path}/jane`);
    assert.equal(served.statusCode, 200);
    const token = JSON.parse(/id="pam-view">([^<]*)</.exec(served.body)?.[1] ?? '{}').token;
    assert.equal(typeof token, 'string');
    const report = JSON.stringify({ token, visibleMs: 1000, scroll: 10, clicks: 0, questions: 0, conversions: 0 });
    const collected = await visit(t, host, '/_pam/collect', {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0 Safari/537.36' },
      payload: report,
    });
    assert.equal(collected.statusCode, 204, collected.body);
    const sessions = (await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions`)).body.items;
    assert.equal(sessions.length, 1);
    assert.equal(sessions[0].audienceId, audience.audienceId);
    assert.equal(sessions[0].pageUrl, `http://${host}:${t.app.config.port}${path}/jane`);
  });
});
