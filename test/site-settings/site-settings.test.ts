import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { IMAGE_MIME, makeImage } from '../fixtures.js';
import { expectProblem, freshDatabase, ok, onPostgres, startApp, type Json, type TestApp, type TestDatabase, toRes } from '../helpers.js';
import { audienceOf, fallbackHost, link, publishedPage, unique, visit } from '../site/serve-helpers.js';

// GET/PATCH /v0/site_settings (issue 29): bounds, contrast, round trip, assets, and the brand on served pages.

let database: TestDatabase;
let t: TestApp;
let host: string;
before(async () => {
  database = await freshDatabase();
  // The database outlives this app: a second instance on it checks freshness across instances.
  t = await startApp({ DATABASE_URL: database.url, FILE_STORE: 'database' });
  host = await fallbackHost(t);
});
after(async () => {
  await t.close();
  await database.drop();
});

const DEFAULTS = {
  logoAssetId: null,
  brandColor: '#0b57d0',
  textColor: '#1f2328',
  backgroundColor: '#ffffff',
  font: 'system',
  footerText: null,
  privacyUrl: null,
  faviconAssetId: null,
  defaultCountry: null,
  enrichment: true,
  updatedAt: null,
};

async function imageAsset(app: TestApp, key: string, width = 200, height = 50): Promise<Json> {
  const bytes = await makeImage('png', width, height);
  const file = toRes(
    await app.app.inject({
      method: 'POST',
      url: '/v0/files',
      headers: { 'content-type': IMAGE_MIME.png, 'x-api-key': key },
      payload: bytes,
    }),
  );
  assert.equal(file.status, 201, file.text);
  return ok(await app.req('POST', '/v0/assets', { assetType: 'image', name: 'Acme logo', fileId: file.body.fileId }, { key }), 201);
}

const patch = (body: unknown, key?: string) => t.req('PATCH', '/v0/site_settings', body, key === undefined ? {} : { key });

describe('site settings: the API', () => {
  test('a new tenant reads the defaults; a PATCH round-trips; an empty PATCH changes nothing', async () => {
    const other = await t.newTenant('Fresh');
    assert.deepEqual(ok(await t.req('GET', '/v0/site_settings', undefined, { key: other.key })), DEFAULTS);
    assert.deepEqual(ok(await patch({}, other.key)), DEFAULTS, 'nothing to change: still the defaults, no row');

    const changed = ok(
      await patch(
        { brandColor: '#0A4FBF', font: 'serif', footerText: 'Made by **Acme**', privacyUrl: 'https://acme.example/privacy' },
        other.key,
      ),
    );
    assert.equal(changed.brandColor, '#0a4fbf', 'colours are stored lowercased');
    assert.equal(changed.font, 'serif');
    assert.match(changed.updatedAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const read = ok(await t.req('GET', '/v0/site_settings', undefined, { key: other.key }));
    assert.deepEqual(read, changed);
    assert.deepEqual(ok(await patch(read, other.key)), read, 'the resource sent back as read changes nothing');
    assert.deepEqual(ok(await patch({}, other.key)), read);
    const cleared = ok(await patch({ footerText: null, privacyUrl: null }, other.key));
    assert.equal(cleared.footerText, null);
    assert.equal(cleared.privacyUrl, null);
    assert.ok(cleared.updatedAt > read.updatedAt);
    // Tenant-wide, and per tenant: the first tenant's settings are not these.
    assert.notEqual(ok(await t.req('GET', '/v0/site_settings')).brandColor, '#0a4fbf');
    expectProblem(await patch({ ...read, updatedAt: '2020-01-01T00:00:00.000Z' }, other.key), 400, 'validation_failed', ['/updatedAt']);
    expectProblem(await t.req('GET', '/v0/site_settings', undefined, { key: null }), 401, 'unauthorized');
  });

  test('bounds: each just inside and just outside', async () => {
    const other = await t.newTenant('Bounds');
    const bad = async (body: Json, path: string) => expectProblem(await patch(body, other.key), 400, 'validation_failed', [path]);
    ok(await patch({ footerText: 'x'.repeat(2000) }, other.key));
    await bad({ footerText: 'x'.repeat(2001) }, '/footerText');
    await bad({ footerText: '' }, '/footerText');
    for (const color of ['#12345', '#1234567', 'red', '0b57d0', '#gggggg', '#0b57d0;}body{x:y'])
      await bad({ brandColor: color }, '/brandColor');
    await bad({ font: 'comic-sans' }, '/font');
    for (const font of ['system', 'serif', 'rounded', 'mono']) assert.equal(ok(await patch({ font }, other.key)).font, font);
    await bad({ privacyUrl: 'javascript:alert(1)' }, '/privacyUrl');
    await bad({ privacyUrl: `https://a.example/${'p'.repeat(2048)}` }, '/privacyUrl');
    await bad({ logoAssetId: '' }, '/logoAssetId');
    await bad({ unknown: 1 }, '/unknown');
    await bad({ textColor: null }, '/textColor');
  });

  test('contrast: text on background and white on the brand colour, WCAG AA 4.5:1, naming the field', async () => {
    const other = await t.newTenant('Contrast');
    const bad = async (body: Json, path: string) => {
      const res = await patch(body, other.key);
      expectProblem(res, 400, 'validation_failed', [path]);
      assert.match(res.body.detail, /4\.5:1/);
    };
    // #767676 on white is 4.54:1, #777777 is 4.48:1.
    assert.equal(ok(await patch({ textColor: '#767676' }, other.key)).textColor, '#767676');
    await bad({ textColor: '#777777' }, '/textColor');
    assert.equal(ok(await patch({ brandColor: '#767676' }, other.key)).brandColor, '#767676');
    await bad({ brandColor: '#777777' }, '/brandColor');
    await bad({ brandColor: '#ffff00' }, '/brandColor');
    ok(await patch({ textColor: '#333333' }, other.key));
    // Against the stored text colour (#333333): a dark background fails, named as the field that changed.
    await bad({ backgroundColor: '#000000' }, '/backgroundColor');
    const dark = ok(await patch({ backgroundColor: '#000000', textColor: '#ffffff' }, other.key));
    assert.equal(dark.backgroundColor, '#000000');
    const res = await patch({ textColor: '#111111', brandColor: '#eeeeee' }, other.key);
    expectProblem(res, 400, 'validation_failed', ['/textColor', '/brandColor']);
    assert.deepEqual(ok(await t.req('GET', '/v0/site_settings', undefined, { key: other.key })), dark, 'a refused PATCH writes nothing');
  });

  test('asset ids: an active image asset of the tenant, else 400 naming the field', async () => {
    const other = await t.newTenant('Assets');
    const mine = await imageAsset(t, other.key);
    const theirs = await imageAsset(t, t.key);
    expectProblem(await patch({ logoAssetId: 'asset_00000000000000000000000000' }, other.key), 400, 'validation_failed', ['/logoAssetId']);
    expectProblem(await patch({ faviconAssetId: theirs.assetId }, other.key), 400, 'validation_failed', ['/faviconAssetId']);
    const set = ok(await patch({ logoAssetId: mine.assetId, faviconAssetId: mine.assetId }, other.key));
    assert.equal(set.logoAssetId, mine.assetId);
    const trashed = await imageAsset(t, other.key);
    ok(await t.req('PATCH', `/v0/assets/${trashed.assetId}`, { lifecycleState: 'trashed' }, { key: other.key }));
    expectProblem(await patch({ logoAssetId: trashed.assetId }, other.key), 400, 'validation_failed', ['/logoAssetId']);
    assert.equal(ok(await patch({ logoAssetId: null }, other.key)).logoAssetId, null);
  });
});

const FORM_ACTION = { purpose: 'lead', buttonTitle: 'Send', actionType: 'form', url: '' };

/** A page with a form, served at a fresh path for a generic audience. */
async function servedPath(): Promise<{ path: string; page: Json }> {
  const page = await publishedPage(t, { actions: [FORM_ACTION] });
  const audience = await audienceOf(t, page.pageId, {});
  const path = unique('brand');
  await link(t, path, { targetType: 'audience', audienceId: audience.audienceId });
  return { path, page };
}

describe('site settings: served pages', () => {
  test('logo with its size, favicon, colours, font, footer and privacy link; stored values escaped; small and without blocking requests', async () => {
    const logo = await imageAsset(t, t.key, 400, 100);
    ok(
      await patch({
        logoAssetId: logo.assetId,
        faviconAssetId: logo.assetId,
        brandColor: '#7a1fa2',
        textColor: '#222222',
        backgroundColor: '#fafafa',
        font: 'rounded',
        footerText: '© Acme <script>alert(1)</script> [terms](https://acme.example/terms) [bad](javascript:alert(1))\n\n'
          .repeat(20)
          .slice(0, 2000),
        privacyUrl: "https://acme.example/privacy?a=1&b='2'",
      }),
    );
    const { path } = await servedPath();
    const res = await visit(t, host, path);
    assert.equal(res.statusCode, 200);
    const html = res.body;
    const fileId = logo.data.fileId;
    assert.match(html, new RegExp(`<img src="/_pam/files/${fileId}" alt="Acme logo" width="160" height="40">`), 'the logo keeps its box');
    assert.match(html, new RegExp(`<link rel="icon" href="/_pam/files/${fileId}" type="image/png">`));
    assert.match(html, /\.button,button\{background:#7a1fa2;color:#fff\}/);
    assert.match(html, /a\{color:#7a1fa2\}/);
    assert.match(html, /body\{color:#222222;background:#fafafa;font-family:ui-rounded,/);
    assert.match(html, /<a href="https:\/\/acme\.example\/privacy\?a=1&amp;b=&#39;2&#39;">Privacy policy<\/a>/);
    assert.match(html, /<a href="https:\/\/acme\.example\/terms" rel="nofollow noopener">terms<\/a>/);
    assert.doesNotMatch(html, /<script>alert/);
    assert.doesNotMatch(html, /href="javascript:/);
    assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    // Issue 29: at most 20 KB of HTML and CSS (with a footer of the longest text), and nothing render-blocking but the logo.
    assert.ok(Buffer.byteLength(html) <= 20 * 1024, `${Buffer.byteLength(html)} bytes`);
    assert.doesNotMatch(html, /<link[^>]+rel="?stylesheet/i);
    assert.doesNotMatch(html, /@import|@font-face|url\(/i);
    const scripts = html.match(/<script[^>]*\ssrc=[^>]*>/g) ?? [];
    for (const s of scripts) assert.match(s, /\sdefer|\sasync/, s);
    assert.deepEqual(html.match(/<img [^>]*>/g)?.length, 1, 'the logo is the only image');
    // The files it names are served on the domain, so nothing comes from a third party.
    for (const src of html.match(/(?:src|href)="\/_pam\/files\/[^"]+"/g) ?? []) {
      const url = src.replace(/^(src|href)="|"$/g, '');
      assert.equal((await visit(t, host, url)).statusCode, 200, url);
    }
  });

  test('a change shows on the very next request, on another instance too (PostgreSQL)', async () => {
    const { path } = await servedPath();
    // better-sqlite3 waits for a lock synchronously: two apps in one process on one SQLite file would
    // wait on each other, so on SQLite the second instance is the same app (its memo and cache are tested).
    const second = onPostgres ? await startApp({ DATABASE_URL: database.url, FILE_STORE: 'database' }) : t;
    try {
      ok(await patch({ brandColor: '#005500', footerText: 'First footer' }));
      for (const app of [t, second]) {
        const html = (await visit(app, host, path)).body;
        assert.match(html, /background:#005500/);
        assert.match(html, /First footer/);
      }
      const before = await visit(second, host, path);
      ok(await patch({ brandColor: '#550000', footerText: 'Second footer' }));
      for (const app of [second, t]) {
        const res = await visit(app, host, path, { headers: { 'if-none-match': String(before.headers.etag) } });
        assert.equal(res.statusCode, 200, 'a new ETag: the cached document is not reused');
        assert.match(res.body, /background:#550000/);
        assert.match(res.body, /Second footer/);
        assert.doesNotMatch(res.body, /First footer/);
      }
    } finally {
      if (second !== t) await second.close();
    }
  });
});
