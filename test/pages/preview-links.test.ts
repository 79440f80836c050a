import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/admin/repository.js';
import { PREVIEW_LINK_SECONDS, previewLinks } from '../../src/pages/preview-links.js';
import { brandCss } from '../../src/render/brand.js';
import { STYLE } from '../../src/render/style.js';
import { expectProblem, ok, startApp, type TestApp, toRes } from '../helpers.js';
import { audienceOf, publishedPage } from '../site/serve-helpers.js';

// Preview links (issue 29): GET /v0/pages/{page_id}/preview_link hands out a short-lived link that
// answers the page's preview without an API key, under a policy of its own that allows its inline
// styles (the brand's too) and nothing else. Tampered, expired and other tenants' links are refused.

const SECRET = 'preview-link-test-secret-0123456789abcdef';
const BASE = 'https://api.example.test';
let t: TestApp;
before(async () => {
  t = await startApp({ FILE_URL_SECRET: SECRET, PUBLIC_BASE_URL: BASE });
});
after(async () => t?.close());

/** Opens a link as a browser would: no API key. */
async function open(url: string) {
  assert.ok(url.startsWith(`${BASE}/previews/`), url);
  return toRes(await t.app.inject({ method: 'GET', url: url.slice(BASE.length) }));
}

const issue = async (pageId: string, audienceId?: string, key?: string) =>
  ok(await t.req('GET', `/v0/pages/${pageId}/preview_link${audienceId ? `?audienceId=${audienceId}` : ''}`, undefined, key ? { key } : {}));

const hash = (css: string) => `'sha256-${createHash('sha256').update(css).digest('base64')}'`;
const directives = (policy: string) =>
  new Map(
    policy
      .split(';')
      .map((d) => d.trim().split(/\s+/) as [string, ...string[]])
      .map(([k, ...v]) => [k, v]),
  );

/** A link with some of what it names changed (`undefined`: removed), under its old signature. */
function tampered(url: string, change: Record<string, string | undefined>): string {
  const link = new URL(url);
  for (const [name, value] of Object.entries(change)) {
    if (name === 'pageId') link.pathname = `/previews/${value}`;
    else if (value === undefined) link.searchParams.delete(name);
    else link.searchParams.set(name, value);
  }
  return link.toString();
}

describe('preview links', () => {
  test('a link for an audience answers its document under its own policy, brand style allowed by hash, no key', async () => {
    ok(await t.req('PATCH', '/v0/site_settings', { brandColor: '#7a1fa2', footerText: 'Made by **Acme**' }));
    const person = ok(await t.req('POST', '/v0/persons', { name: 'Pat' }), 201);
    const page = await publishedPage(t, {
      status: 'draft',
      content: { headline: 'Hi {{person.name}}', subheadline: '', sections: [] },
      actions: [{ purpose: 'book', actionType: 'link', buttonTitle: 'Book a call', url: 'https://acme.example/book' }],
    });
    const audience = await audienceOf(t, page.pageId, { personId: person.personId });
    const before = Date.now();
    const issued = await t.req('GET', `/v0/pages/${page.pageId}/preview_link?audienceId=${audience.audienceId}`);
    const after = Date.now();
    assert.equal(issued.status, 200);
    assert.equal(issued.headers['cache-control'], 'no-store');
    assert.deepEqual(Object.keys(issued.body).sort(), ['expiresAt', 'url']);
    // Issued somewhere between before and after, in whole seconds rounded down.
    const expiresAt = Date.parse(issued.body.expiresAt);
    assert.ok(expiresAt % 1000 === 0, issued.body.expiresAt);
    assert.ok(expiresAt > before + (PREVIEW_LINK_SECONDS - 1) * 1000, `${expiresAt - before} ms after the request`);
    assert.ok(expiresAt <= after + PREVIEW_LINK_SECONDS * 1000, `${expiresAt - after} ms after the answer`);

    const res = await open(issued.body.url);
    assert.equal(res.status, 200, res.text);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.ok(res.text.includes('<h1>Hi Pat</h1>'));
    assert.ok(res.text.includes('Made by <strong>Acme</strong>'), 'the brand footer');
    const brand = brandCss({
      brandColor: '#7a1fa2',
      textColor: '#1f2328',
      backgroundColor: '#ffffff',
      font: 'system',
      footerText: 'Made by **Acme**',
      privacyUrl: null,
    });
    assert.ok(res.text.includes(`<style>${brand}</style>`), 'the brand style is in the document');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers['x-frame-options'], 'SAMEORIGIN');
    assert.equal(res.headers['x-robots-tag'], 'noindex, nofollow');
    const policy = String(res.headers['content-security-policy']);
    const d = directives(policy);
    assert.deepEqual(d.get('default-src'), ["'none'"]);
    assert.deepEqual(d.get('style-src'), [hash(STYLE), hash(brand)], 'exactly the two style elements, by hash');
    assert.deepEqual(d.get('frame-ancestors'), ["'self'"]);
    assert.deepEqual(d.get('sandbox'), [], 'no scripts or forms even when opened on its own');
    assert.equal(d.get('script-src'), undefined, 'no script source: default-src none applies');
    assert.ok(!policy.includes('unsafe-inline'), policy);
    assert.ok(!res.text.includes('<script'), 'no script in a preview');

    // The same document as the keyed preview endpoint.
    const keyed = await t.req('GET', `/v0/pages/${page.pageId}/preview?audienceId=${audience.audienceId}`);
    assert.equal(res.text, keyed.text);
    // Without an audience, the page itself: the default style and the brand.
    const bare = await open((await issue(page.pageId)).url);
    assert.equal(bare.status, 200);
    assert.match(bare.text, /<h1>Hi/);
  });

  test('a read-only key gets a link; a missing page is 404, an audience of another page 400, no key 401', async () => {
    const page = await publishedPage(t);
    const other = await publishedPage(t);
    const elsewhere = await audienceOf(t, other.pageId, {});
    const { apiKey } = await createApiKey(t.app.db, t.tenantId, { scopes: ['read'] });
    assert.equal((await open((await issue(page.pageId, undefined, apiKey)).url)).status, 200);
    expectProblem(await t.req('GET', '/v0/pages/page_nope/preview_link'), 404, 'not_found');
    expectProblem(
      await t.req('GET', `/v0/pages/${page.pageId}/preview_link?audienceId=${elsewhere.audienceId}`),
      400,
      'validation_failed',
      ['/audienceId'],
    );
    expectProblem(await t.req('GET', `/v0/pages/${page.pageId}/preview_link?other=1`), 400, 'validation_failed');
    expectProblem(await t.req('GET', `/v0/pages/${page.pageId}/preview_link`, undefined, { key: null }), 401, 'unauthorized');
    const stranger = await t.newTenant('Preview stranger');
    expectProblem(await t.req('GET', `/v0/pages/${page.pageId}/preview_link`, undefined, { key: stranger.key }), 404, 'not_found');
  });

  test('tampered, forged, malformed, expired and other tenants’ links are refused, each saying why', async () => {
    const page = await publishedPage(t);
    const audience = await audienceOf(t, page.pageId, {});
    const { url } = await issue(page.pageId, audience.audienceId);
    const stranger = await t.newTenant('Preview other tenant');
    const theirs = await publishedPage(t, {}, stranger.key);

    // What it names changed under the old signature: another tenant, another page, no audience, a later expiry.
    for (const change of [
      { tenantId: stranger.tenantId },
      { pageId: theirs.pageId },
      { audienceId: undefined },
      { expires: String(Number(new URL(url).searchParams.get('expires')) + 3600) },
    ]) {
      const res = await open(tampered(url, change));
      expectProblem(res, 403, 'forbidden');
      assert.match(res.body.detail, /not genuine/, JSON.stringify(change));
    }
    // The signature changed (at its first character: base64url's last has spare bits), or made with another key.
    const signature = new URL(url).searchParams.get('signature') ?? '';
    const flipped = `${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
    assert.match((await open(tampered(url, { signature: flipped }))).body.detail, /not genuine/);
    assert.match((await open(tampered(url, { signature: `${signature}A` }))).body.detail, /not genuine/);
    const otherKey = previewLinks(BASE, 'another-secret-that-is-long-enough-000000');
    const foreign = await open(otherKey.issue(t.tenantId, page.pageId, audience.audienceId).url);
    expectProblem(foreign, 403, 'forbidden');
    assert.match(foreign.body.detail, /not genuine/);
    // Not a link at all: what is missing or ill-formed is named.
    expectProblem(await open(tampered(url, { signature: undefined })), 400, 'validation_failed', ['/signature']);
    expectProblem(await open(tampered(url, { tenantId: undefined })), 400, 'validation_failed', ['/tenantId']);
    expectProblem(await open(tampered(url, { expires: 'soon' })), 400, 'validation_failed', ['/expires']);

    // Expired: issued just over five minutes ago, and just inside.
    const links = previewLinks(BASE, SECRET);
    const now = Date.now();
    const expired = await open(links.issue(t.tenantId, page.pageId, audience.audienceId, now - PREVIEW_LINK_SECONDS * 1000 - 1000).url);
    expectProblem(expired, 403, 'forbidden');
    assert.match(expired.body.detail, /expired/);
    assert.equal(
      (await open(links.issue(t.tenantId, page.pageId, audience.audienceId, now - (PREVIEW_LINK_SECONDS - 30) * 1000).url)).status,
      200,
    );

    // Genuine, but naming a tenant that does not hold the page: nothing of the page is shown.
    const crossed = await open(links.issue(stranger.tenantId, page.pageId, undefined).url);
    expectProblem(crossed, 404, 'not_found');
    assert.ok(!crossed.text.includes('<h1>'));
    // The page deleted after the link was issued: 404; its audience gone from it: 404.
    const gone = await publishedPage(t, { status: 'draft' });
    const goneUrl = (await issue(gone.pageId)).url;
    assert.equal((await t.req('DELETE', `/v0/pages/${gone.pageId}`)).status, 204);
    expectProblem(await open(goneUrl), 404, 'not_found');
    expectProblem(await open(links.issue(t.tenantId, page.pageId, 'audience_nope').url), 404, 'not_found');
  });
});
