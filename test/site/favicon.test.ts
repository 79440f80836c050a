import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { IMAGE_MIME, makeImage } from '../fixtures.js';
import { ok, startApp, type TestApp, toRes, verifiedDomain } from '../helpers.js';
import { fallbackHost, link, publishedPage, unique, visit } from './serve-helpers.js';

// Issue 46 §6: a favicon, always. With no logo (nor favicon) in the brand, a page's icon and the
// domain's /favicon.ico are an SVG of the brand colour with the page's initial; /favicon.ico on
// every tenant domain, fallback or custom, answers 200.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

/** The `<link rel="icon">` of a served document, its SVG decoded. */
const pageIcon = (html: string) => {
  const href = /<link rel="icon" href="([^"]+)" type="image\/svg\+xml">/.exec(html)?.[1] ?? '';
  return decodeURIComponent(href.replace(/^data:image\/svg\+xml,/, '').replaceAll('&amp;', '&'));
};

describe('the favicon without a logo', () => {
  test("the brand colour and the page's initial, on the page and at /favicon.ico of a fallback and a custom domain", async () => {
    const tenant = await t.newTenant('Initials');
    const hosts = [await fallbackHost(t, tenant.key), (await verifiedDomain(t, `icons-${Date.now()}.example.com`, tenant.key)).hostname];
    ok(await t.req('PATCH', '/v0/site_settings', { brandColor: '#7A1FA2' }, { key: tenant.key }));
    for (const host of hosts) {
      const ico = await visit(t, host, '/favicon.ico');
      assert.equal(ico.statusCode, 200, host);
      assert.equal(ico.headers['content-type'], 'image/svg+xml');
      assert.match(ico.body, /<rect [^>]*fill="#7a1fa2"\/>/, 'the brand colour');
      assert.match(ico.body, /><\/text><\/svg>$/, 'no home page yet: no initial');
    }
    await publishedPage(t, { title: 'élan <script>', flags: ['home_page'] }, tenant.key);
    const other = await publishedPage(t, { title: '<b>Beta</b>' }, tenant.key);
    const path = unique('beta');
    await link(t, path, { targetType: 'page', pageId: other.pageId }, tenant.key);
    for (const host of hosts) {
      const ico = await visit(t, host, '/favicon.ico');
      assert.equal(ico.statusCode, 200);
      assert.match(ico.body, /fill="#7a1fa2"/);
      assert.match(ico.body, />É<\/text><\/svg>$/, "the home page's initial, upper-cased");
      assert.doesNotMatch(ico.body, /<script/);
      // The link is on the fallback domain; the custom domain shows the home page at /.
      const page = await visit(t, host, host === hosts[0] ? path : '/');
      assert.equal(page.statusCode, 200, host);
      const icon = pageIcon(page.body);
      assert.match(icon, /fill="#7a1fa2"/);
      assert.match(
        icon,
        host === hosts[0] ? />B<\/text><\/svg>$/ : />É<\/text><\/svg>$/,
        "each page's own initial: a letter, never markup",
      );
    }
  });

  test('a logo is the favicon while its asset is active; trashed, the SVG is back', async () => {
    const tenant = await t.newTenant('Logo');
    const host = await fallbackHost(t, tenant.key);
    const bytes = await makeImage('png', 48, 48);
    const upload = toRes(
      await t.app.inject({
        method: 'POST',
        url: '/v0/files',
        headers: { 'content-type': IMAGE_MIME.png, 'x-api-key': tenant.key },
        payload: bytes,
      }),
    );
    const asset = ok(
      await t.req('POST', '/v0/assets', { assetType: 'image', name: 'Logo', fileId: upload.body.fileId }, { key: tenant.key }),
      201,
    );
    ok(await t.req('PATCH', '/v0/site_settings', { logoAssetId: asset.assetId }, { key: tenant.key }));
    const logo = await visit(t, host, '/favicon.ico');
    assert.equal(logo.statusCode, 200);
    assert.equal(logo.headers['content-type'], 'image/png');
    assert.ok(logo.rawPayload.equals(bytes));
    ok(await t.req('PATCH', `/v0/assets/${asset.assetId}`, { lifecycleState: 'trashed' }, { key: tenant.key }));
    const svg = await visit(t, host, '/favicon.ico');
    assert.equal(svg.statusCode, 200);
    assert.equal(svg.headers['content-type'], 'image/svg+xml');
    assert.match(svg.body, /fill="#0b57d0"/, 'the default brand colour');
  });
});
