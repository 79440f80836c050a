import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import sharp from 'sharp';
import { startApp, type Json, type TestApp } from '../helpers.js';
import { audienceOf, fallbackHost, link, publishedPage, unique, visit } from './serve-helpers.js';

// The served document: its contents, escaping, robots, ETag/304, freshness after every kind of change, images, preview.

let t: TestApp;
let host: string;
before(async () => {
  t = await startApp();
  host = await fallbackHost(t);
});
after(async () => {
  await t.close();
});

const run = promisify(execFile);

const HOSTILE = '"><script>alert(1)</script>';
const HOSTILE_URL = 'javascript:alert(1)';

/** A page, its audience (optionally for a person) and a link to it. */
async function served(page: Record<string, unknown> = {}, audience: Record<string, unknown> | null = {}) {
  const p = await publishedPage(t, page);
  const a = audience === null ? undefined : await audienceOf(t, p.pageId, audience);
  const path = unique('doc');
  await link(t, path, a ? { targetType: 'audience', audienceId: a.audienceId } : { targetType: 'page', pageId: p.pageId });
  return { page: p, audience: a, path };
}

describe('the document', () => {
  test('valid HTML5 with its metadata, actions, widgets, footer and enabled scripts only', async () => {
    const { path } = await served(
      {
        title: 'The title',
        content: {
          headline: 'Hi {{person.firstName | there}}',
          subheadline: 'For {{account.name}}',
          sections: [{ heading: 'Why', body: 'Some *emphasis* and [a link](https://example.com/x)' }],
        },
        metadata: {
          title: 'Meta title',
          description: 'Desc',
          keywords: ['a', 'b'],
          author: 'Ann',
          canonicalUrl: 'https://example.com/c',
          themeColor: '#112233',
          ogTitle: 'OG',
          twitterTitle: 'TW',
        },
        actions: [
          { purpose: 'header', buttonTitle: 'Book {{audience.name}}', actionType: 'link', url: 'https://example.com/book' },
          { purpose: 'second', buttonTitle: 'Second', actionType: 'link', url: 'https://example.com/2' },
        ],
        actionCardWidgets: [
          {
            type: 'logos',
            title: 'Trusted by',
            logos: [{ image: { altText: 'Logo', url: 'https://cdn.example.com/l.png', fileId: '', assetId: '' } }],
          },
        ],
        footerLinks: [{ id: 'g', title: 'Company', links: [{ id: 'l', text: 'About', url: 'https://example.com/about' }] }],
        scripts: [
          { name: 'on', description: '', content: '<script>window.enabledScript=1</script>', enabled: true },
          { name: 'off', description: '', content: '<script>window.disabledScript=1</script>', enabled: false },
        ],
      },
      { customName: 'Big Co' },
    );
    const res = await visit(t, host, path);
    const html = res.body;
    assert.ok(
      html.startsWith(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
      ),
    );
    assert.match(html, /<title>Meta title<\/title>/);
    for (const tag of [
      '<meta name="description" content="Desc">',
      '<meta name="keywords" content="a, b">',
      '<meta name="author" content="Ann">',
      '<link rel="canonical" href="https://example.com/c">',
      '<meta name="theme-color" content="#112233">',
      '<meta property="og:title" content="OG">',
      '<meta name="twitter:title" content="TW">',
      '<h1>Hi there</h1>',
      '<em>emphasis</em>',
      'rel="nofollow noopener"',
      '<a class="button" href="https://example.com/book">Book Big Co</a>',
      '<img src="https://cdn.example.com/l.png" alt="Logo" loading="lazy">',
      '<a href="https://example.com/about">About</a>',
      '<script>window.enabledScript=1</script>',
    ]) {
      assert.ok(html.includes(tag), tag);
    }
    assert.ok(!html.includes('disabledScript'));
    assert.ok(html.indexOf('Book Big Co') < html.indexOf('Second'), 'actions in actionIndex order');
    assert.ok(html.indexOf('enabledScript') > html.indexOf('</footer>'), 'scripts at the end of the body');
    assert.doesNotMatch(html, /<link[^>]+stylesheet|fonts\.googleapis|cdn\.jsdelivr/);
  });

  test('the header action is a button in the header', async () => {
    const p = await publishedPage(t, {
      actions: [{ purpose: 'h', buttonTitle: 'Talk to us', actionType: 'link', url: 'https://example.com/t' }],
    });
    await t.req('PATCH', `/v0/pages/${p.pageId}`, { headerActionId: p.actions[0].actionId });
    const path = unique('header');
    await link(t, path, { targetType: 'page', pageId: p.pageId });
    assert.match(
      (await visit(t, host, path)).body,
      /<header class="top"><div class="wrap"><a class="button" href="https:\/\/example\.com\/t">Talk to us<\/a>/,
    );
  });

  test('the audience URL override replaces every link action', async () => {
    const { path } = await served(
      { actions: [{ purpose: 'x', buttonTitle: 'Go', actionType: 'link', url: 'https://example.com/page' }] },
      { actionUrlOverride: 'https://example.com/override' },
    );
    const html = (await visit(t, host, path)).body;
    assert.ok(html.includes('href="https://example.com/override"'));
    assert.ok(!html.includes('https://example.com/page'));
  });

  test('every stored text holding markup renders as text; unsafe URLs never become links', async () => {
    const person = (await t.req('POST', '/v0/persons', { name: HOSTILE, domain: 'hostile.example' })).body;
    await t.req('POST', '/v0/accounts', { name: HOSTILE, domain: 'hostile.example' });
    const { path } = await served(
      {
        title: HOSTILE,
        content: {
          headline: `${HOSTILE} {{person.name}}`,
          subheadline: `${HOSTILE} {{account.name}}`,
          sections: [{ heading: HOSTILE, body: `${HOSTILE} {{audience.name}} [x](${HOSTILE_URL})` }],
        },
        metadata: Object.fromEntries(
          [
            'title',
            'description',
            'author',
            'canonicalUrl',
            'ogTitle',
            'ogDescription',
            'ogImageAlt',
            'ogSiteName',
            'ogUrl',
            'twitterTitle',
            'twitterDescription',
            'twitterImageAlt',
            'twitterSite',
            'twitterCreator',
            'themeColor',
          ].map((k) => [k, HOSTILE]),
        ),
        actions: [
          // A link action's URL must be https (issue 38): markup in one is escaped; javascript: is refused (test/pages/actions.test.ts).
          { purpose: HOSTILE, buttonTitle: `${HOSTILE}{{person.name}}`, actionType: 'link', url: `https://example.com/${HOSTILE}` },
          { purpose: HOSTILE, buttonTitle: HOSTILE, actionType: 'form', url: HOSTILE },
        ],
        actionCardWidgets: [
          { type: HOSTILE, title: HOSTILE, logos: [{ image: { altText: HOSTILE, url: HOSTILE_URL, fileId: '', assetId: '' } }] },
        ],
        footerLinks: [{ id: HOSTILE, title: HOSTILE, links: [{ id: HOSTILE, text: HOSTILE, url: HOSTILE_URL }] }],
      },
      { customName: HOSTILE, personId: person.personId, actionFormInstructionsOverride: HOSTILE },
    );
    const html = (await visit(t, host, path)).body;
    assert.ok(!html.includes('<script>alert(1)</script>'), 'no hostile script is markup');
    assert.ok(!html.includes(HOSTILE), 'no attribute or element is broken out of');
    assert.ok(!/href="\s*javascript:/i.test(html) && !/src="\s*javascript:/i.test(html), 'no javascript: URL is a link or an image');
    assert.ok(html.includes('&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;'), 'shown as text');
    // The view token's JSON cannot end its script element.
    const json = /<script type="application\/json" id="pam-view">([^<]*)<\/script>/.exec(html)?.[1];
    assert.ok(json && typeof JSON.parse(json).token === 'string');
  });

  test('an audience that names a person is noindex, nofollow whatever its metadata says; others follow their metadata', async () => {
    const person = (await t.req('POST', '/v0/persons', { name: 'Jane Doe' })).body;
    const { path } = await served({ metadata: { robots: ['index', 'follow'] } }, { personId: person.personId });
    const res = await visit(t, host, path);
    assert.equal(res.headers['x-robots-tag'], 'noindex, nofollow');
    assert.match(res.body, /<meta name="robots" content="noindex, nofollow">/);
    assert.doesNotMatch(res.body, /content="index, follow"/);
    const plain = await served({ metadata: { robots: ['index', 'follow'] } }, {});
    const other = await visit(t, host, plain.path);
    assert.equal(other.headers['x-robots-tag'], undefined);
    assert.match(other.body, /<meta name="robots" content="index, follow">/);
  });
});

describe('served documents carry their security headers (issue 25)', () => {
  const CSP = "base-uri 'none'; object-src 'none'; form-action 'self'; frame-ancestors 'self'";

  /** The policy's directives by name, each with its values. */
  const directives = (csp: string) =>
    new Map(
      csp
        .split(';')
        .map((d) => d.trim())
        .filter(Boolean)
        .map((d) => {
          const [name = '', ...values] = d.split(/\s+/);
          return [name, values] as const;
        }),
    );

  function assertHeaders(res: { headers: Record<string, unknown> }, label: string) {
    const csp = String(res.headers['content-security-policy'] ?? '');
    assert.equal(csp, CSP, label);
    const rules = directives(csp);
    assert.deepEqual(rules.get('base-uri'), ["'none'"], `${label}: base-uri`);
    assert.deepEqual(rules.get('object-src'), ["'none'"], `${label}: object-src`);
    assert.deepEqual(rules.get('form-action'), ["'self'"], `${label}: form-action`);
    assert.deepEqual(rules.get('frame-ancestors'), ["'self'"], `${label}: frame-ancestors`);
    // The tenant's enabled scripts and the inline style must keep working: nothing restricts them.
    for (const open of ['default-src', 'script-src', 'script-src-elem', 'style-src', 'connect-src'])
      assert.equal(rules.has(open), false, `${label}: ${open}`);
    assert.equal(res.headers['referrer-policy'], 'strict-origin-when-cross-origin', `${label}: Referrer-Policy`);
    assert.equal(res.headers['x-content-type-options'], 'nosniff', `${label}: X-Content-Type-Options`);
  }

  test('a document with an audience, without one, the home page, its 304, HEAD, the thank-you page and a form re-rendered', async () => {
    const script = { name: 'on', description: '', content: '<script>window.tenantScript=1</script>', enabled: true };
    const form = { purpose: 'lead', buttonTitle: 'Send', actionType: 'form', url: '' };
    const withAudience = await served({ scripts: [script], actions: [form] });
    const without = await served({ scripts: [script] }, null);
    const first = await visit(t, host, withAudience.path);
    assert.equal(first.statusCode, 200);
    assert.ok(first.body.includes('<script>window.tenantScript=1</script>'), 'the enabled script is served as written');
    assertHeaders(first, 'with an audience');
    assertHeaders(await visit(t, host, without.path), 'without an audience');
    const revalidated = await visit(t, host, withAudience.path, { headers: { 'if-none-match': String(first.headers.etag) } });
    assert.equal(revalidated.statusCode, 304);
    assertHeaders(revalidated, '304');
    assertHeaders(await visit(t, host, withAudience.path, { method: 'HEAD' }), 'HEAD');
    assertHeaders(await visit(t, host, `${withAudience.path}?submitted=1`), 'thank-you page');

    const token = /name="token" value="([^"]+)"/.exec(first.body)?.[1] ?? '';
    const actionId = /name="action" value="([^"]+)"/.exec(first.body)?.[1] ?? '';
    const invalid = await visit(t, host, '/_pam/forms', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ token, action: actionId, path: withAudience.path, name: '', email: 'x' }).toString(),
    });
    assert.equal(invalid.statusCode, 400);
    assert.match(invalid.body, /aria-invalid="true"/);
    assertHeaders(invalid, 'a form re-rendered with its errors');

    const home = await publishedPage(t, { flags: ['home_page'], scripts: [script] });
    const homeRes = await visit(t, host, '/');
    assert.equal(homeRes.statusCode, 200);
    assert.ok(homeRes.body.includes(`<title>${home.title}</title>`), 'the home page');
    assertHeaders(homeRes, 'home page');
  });

  test("the plane's other answers keep nosniff and the Referrer-Policy; files keep their own stricter policy", async () => {
    for (const url of ['/nothing-here', '/_pam/v.js']) {
      const res = await visit(t, host, url);
      assert.equal(res.headers['x-content-type-options'], 'nosniff', url);
      assert.equal(res.headers['referrer-policy'], 'strict-origin-when-cross-origin', url);
    }
  });
});

describe('ETag and 304', () => {
  test('If-None-Match gets 304 across visits; each 200 carries a fresh token; HEAD too', async () => {
    const { path } = await served({}, {});
    const first = await visit(t, host, path);
    const second = await visit(t, host, path);
    assert.equal(first.headers.etag, second.headers.etag, 'one ETag for every visit');
    const token = (html: string) => JSON.parse(/id="pam-view">([^<]*)</.exec(html)?.[1] ?? '{}').token;
    assert.notEqual(token(first.body), token(second.body), 'a token per visit');
    const etag = String(first.headers.etag);
    for (const value of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await visit(t, host, path, { headers: { 'if-none-match': value } });
      assert.equal(res.statusCode, 304, value);
      assert.equal(res.body, '');
      assert.equal(res.headers.etag, etag);
      assert.equal(res.headers['cache-control'], 'no-cache');
    }
    assert.equal((await visit(t, host, path, { headers: { 'if-none-match': '"stale"' } })).statusCode, 200);
    assert.equal((await visit(t, host, path, { method: 'HEAD', headers: { 'if-none-match': etag } })).statusCode, 304);
  });
});

describe('freshness: an acknowledged change is on the very next request', () => {
  test('page content, metadata, scripts, status; audience; version; person; account; link', async () => {
    const person = (await t.req('POST', '/v0/persons', { name: 'Ann Old', domain: 'fresh.example' })).body;
    const account = (await t.req('POST', '/v0/accounts', { name: 'OldCo', domain: 'fresh.example' })).body;
    const { page, audience, path } = await served(
      { content: { headline: 'Hello {{person.name}} of {{account.name}} ({{audience.name}})', subheadline: '', sections: [] } },
      { personId: person.personId, customName: 'Aud one' },
    );
    const pageUrl = `/v0/pages/${page.pageId}`;
    const audienceUrl = `${pageUrl}/audiences/${audience.audienceId}`;
    let etag = '';
    const expectChange = async (what: string, check: (html: string) => boolean) => {
      const res = await visit(t, host, path, { headers: { 'if-none-match': etag || '"none"' } });
      assert.equal(res.statusCode, 200, `${what}: a changed document is no 304 (${res.statusCode})`);
      assert.notEqual(res.headers.etag, etag, what);
      assert.ok(check(res.body), what);
      etag = String(res.headers.etag);
    };
    await expectChange('first', (h) => h.includes('Hello Ann Old of OldCo (Aud one)'));
    assert.equal((await visit(t, host, path, { headers: { 'if-none-match': etag } })).statusCode, 304);

    await t.req('PATCH', pageUrl, { content: { headline: 'New headline', subheadline: '', sections: [] } });
    await expectChange('page content', (h) => h.includes('<h1>New headline</h1>'));
    await t.req('PATCH', pageUrl, {
      content: { headline: '{{person.name}}|{{account.name}}|{{audience.name}}', subheadline: '', sections: [] },
    });
    await expectChange('page content again', (h) => h.includes('<h1>Ann Old|OldCo|Aud one</h1>'));
    await t.req('PATCH', pageUrl, { metadata: { description: 'Fresh description' } });
    await expectChange('metadata', (h) => h.includes('content="Fresh description"'));
    await t.req('PATCH', pageUrl, { scripts: [{ name: 's', description: '', content: '<script>window.fresh=1</script>', enabled: true }] });
    await expectChange('scripts', (h) => h.includes('window.fresh=1'));
    await t.req('PATCH', audienceUrl, { customName: 'Aud two' });
    await expectChange('audience', (h) => h.includes('|Aud two</h1>'));
    await t.req('PATCH', `/v0/persons/${person.personId}`, { name: 'Ann New' });
    await expectChange('person name', (h) => h.includes('<h1>Ann New|'));
    await t.req('PATCH', `/v0/accounts/${account.accountId}`, { name: 'NewCo' });
    await expectChange('account name', (h) => h.includes('|NewCo|'));
    await t.req('DELETE', `/v0/accounts/${account.accountId}`);
    await expectChange('account removed', (h) => h.includes('<h1>Ann New||Aud two</h1>'));
    // A new version with its own content, published.
    const version = (
      await t.req('POST', `${audienceUrl}/versions`, { content: { headline: 'Version content', subheadline: '', sections: [] } })
    ).body;
    assert.equal((await visit(t, host, path, { headers: { 'if-none-match': etag } })).statusCode, 304, 'a draft is not served');
    assert.equal((await t.req('PATCH', `${audienceUrl}/versions/${version.versionId}`, { status: 'published' })).status, 200);
    await expectChange('version published', (h) => h.includes('<h1>Version content</h1>'));
    await t.req('PATCH', pageUrl, { status: 'draft' });
    assert.equal((await visit(t, host, path)).statusCode, 404, 'unpublished');
    await t.req('PATCH', pageUrl, { status: 'published' });
    assert.equal((await visit(t, host, path)).statusCode, 200);
    // The link moved to another audience.
    const other = await audienceOf(t, page.pageId, { customName: 'Other audience' });
    const links = (await t.req('GET', `/v0/page_links/search?query=${encodeURIComponent(path)}`)).body.items as Json[];
    await t.req('PATCH', `/v0/page_links/${links[0].pageLinkId}`, { target: { targetType: 'audience', audienceId: other.audienceId } });
    await expectChange('link target', (h) => h.includes('<h1>||Other audience</h1>'));
    await t.req('DELETE', `/v0/page_links/${links[0].pageLinkId}`);
    assert.equal((await visit(t, host, path)).statusCode, 404, 'link deleted');
  });

  test('another instance over the same database sees the change on its next request', async () => {
    const { page, path } = await served({ content: { headline: 'Before', subheadline: '', sections: [] } }, {});
    // Two app instances would share the database; here the cache of this one must not hide a write made without it.
    assert.match((await visit(t, host, path)).body, /<h1>Before<\/h1>/);
    await t.app.db
      .updateTable('pages')
      .set({
        content: JSON.stringify({ headline: 'After', subheadline: '', sections: [] }),
        updated_at: new Date(Date.now() + 1000).toISOString(),
      })
      .where('id', '=', page.pageId)
      .execute();
    assert.match((await visit(t, host, path)).body, /<h1>After<\/h1>/);
  });

  test('a write by another process on the same database (the CLI, another instance) is seen on the next request, a 404 included', async () => {
    const { page, path } = await served({ content: { headline: 'Mine', subheadline: '', sections: [] } }, {});
    // Twice: the second answer may come from what this instance remembers of the first.
    for (let i = 0; i < 2; i++) assert.match((await visit(t, host, path)).body, /<h1>Mine<\/h1>/);
    const later = () => new Date(Date.now() + 1000).toISOString();
    await elsewhere('update pages set content = $1, updated_at = $2 where id = $3', [
      JSON.stringify({ headline: 'Theirs', subheadline: '', sections: [] }),
      later(),
      page.pageId,
    ]);
    assert.match((await visit(t, host, path)).body, /<h1>Theirs<\/h1>/);

    const gone = unique('gone');
    const created = await link(t, gone, { targetType: 'page', pageId: page.pageId });
    await t.req('DELETE', `/v0/page_links/${created.pageLinkId}`);
    for (let i = 0; i < 2; i++) assert.equal((await visit(t, host, gone)).statusCode, 404);
    await elsewhere('update page_links set deleted_at = null, updated_at = $1 where id = $2', [later(), created.pageLinkId]);
    assert.match((await visit(t, host, gone)).body, /<h1>Theirs<\/h1>/);
  });
});

/**
 * One statement run by another process on this test's database, as the CLI or another instance
 * would: never through this process's connections (on SQLite, a second connection in this process
 * would wait for this one's write lock synchronously, blocking the very loop that would release it).
 */
async function elsewhere(statement: string, parameters: unknown[]): Promise<void> {
  const { database } = t.app.config;
  if (database.kind === 'postgres') {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query(statement, parameters);
    } finally {
      await client.end();
    }
    return;
  }
  const script =
    "const db = new (require('better-sqlite3'))(process.argv[1]); db.pragma('busy_timeout = 5000');" +
    'db.prepare(process.argv[2]).run(...JSON.parse(process.argv[3])); db.close();';
  await run(process.execPath, ['-e', script, database.path, statement.replace(/\$\d+/g, '?'), JSON.stringify(parameters)]);
}

describe('images', () => {
  test("a tenant's live file is served on its domains, immutable, with a strong ETag; another's or an unknown one is 404", async () => {
    const png = await sharp({ create: { width: 20, height: 10, channels: 3, background: { r: 10, g: 200, b: 30 } } })
      .png()
      .toBuffer();
    const file = (
      await t.app.inject({ method: 'POST', url: '/v0/files', headers: { 'x-api-key': t.key, 'content-type': 'image/png' }, payload: png })
    ).json();
    // Issue 36: a file no live page shows is reached by its signed link only.
    assert.equal((await visit(t, host, `/_pam/files/${file.fileId}`)).statusCode, 404);
    const asset = (await t.req('POST', '/v0/assets', { assetType: 'image', name: 'a', fileId: file.fileId })).body;
    await publishedPage(t, { metadata: { ogImageAssetId: asset.assetId } });
    const res = await visit(t, host, `/_pam/files/${file.fileId}`);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'image/png');
    assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.deepEqual(res.rawPayload, png);
    const etag = String(res.headers.etag);
    assert.match(etag, /^"[0-9a-f]{64}"$/);
    assert.equal((await visit(t, host, `/_pam/files/${file.fileId}`, { headers: { 'if-none-match': etag } })).statusCode, 304);
    const preview = await visit(t, host, `/_pam/files/${file.fileId}/preview`);
    assert.equal(preview.statusCode, 200);
    assert.equal(preview.headers['content-type'], 'image/webp');
    assert.notEqual(preview.headers.etag, etag);
    const other = await t.newTenant('Files elsewhere');
    assert.equal((await visit(t, await fallbackHost(t, other.key), `/_pam/files/${file.fileId}`)).statusCode, 404);
    for (const bad of ['file_00000000000000000000000000', '..%2F..%2Fetc%2Fpasswd', 'x'.repeat(300)]) {
      assert.equal((await visit(t, host, `/_pam/files/${bad}`)).statusCode, 404, bad);
    }
    // Removed: the asset that used it is deleted, and the file with it.
    assert.equal((await t.req('DELETE', `/v0/assets/${asset.assetId}`)).status, 204);
    assert.equal((await visit(t, host, `/_pam/files/${file.fileId}`)).statusCode, 404);
  });

  test('files: fetching an unsigned /_pam/files/<id> of a trashed asset, an unused file or a deleted page is 404', async () => {
    const upload = async (r: number) => {
      const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: { r, g: 1, b: 2 } } })
        .png()
        .toBuffer();
      const file = (
        await t.app.inject({ method: 'POST', url: '/v0/files', headers: { 'x-api-key': t.key, 'content-type': 'image/png' }, payload: png })
      ).json();
      const asset = (await t.req('POST', '/v0/assets', { assetType: 'image', name: `f${r}`, fileId: file.fileId })).body;
      return { fileId: file.fileId as string, assetId: asset.assetId as string };
    };
    const status = async (fileId: string) => (await visit(t, host, `/_pam/files/${fileId}`)).statusCode;
    // Unused: an uploaded file, an asset nothing shows.
    const unused = await upload(101);
    assert.equal(await status(unused.fileId), 404);
    // The brand's logo while its asset is active; trashed, nothing shows it any more.
    const logo = await upload(102);
    assert.equal((await t.req('PATCH', '/v0/site_settings', { logoAssetId: logo.assetId })).status, 200);
    assert.equal(await status(logo.fileId), 200);
    assert.equal((await t.req('PATCH', `/v0/assets/${logo.assetId}`, { lifecycleState: 'trashed' })).status, 200);
    assert.equal(await status(logo.fileId), 404, "a trashed asset's file");
    assert.equal((await t.req('PATCH', `/v0/assets/${logo.assetId}`, { lifecycleState: 'active' })).status, 200);
    assert.equal(await status(logo.fileId), 200, 'restored, shown again');
    assert.equal((await t.req('PATCH', '/v0/site_settings', { logoAssetId: null })).status, 200);
    assert.equal(await status(logo.fileId), 404, 'no longer the logo');
    // A page's image while the page lives; a draft's too (its preview shows it).
    const shown = await upload(103);
    const page = await publishedPage(t, { status: 'draft', metadata: { ogImageAssetId: shown.assetId } });
    assert.equal(await status(shown.fileId), 200);
    assert.equal((await t.req('DELETE', `/v0/pages/${page.pageId}`)).status, 204);
    assert.equal(await status(shown.fileId), 404, "a deleted page's image");
    // An audience's version showing a file by id; archived with its audience, no longer.
    const inVersion = await upload(104);
    const other = await publishedPage(t);
    const audience = await audienceOf(t, other.pageId, { metadataOverride: { ogImageFileId: inVersion.fileId } });
    assert.equal(await status(inVersion.fileId), 200);
    assert.equal((await t.req('POST', `/v0/pages/${other.pageId}/audiences/${audience.audienceId}/archive`, {})).status, 200);
    assert.equal(await status(inVersion.fileId), 404, "an archived audience's image");
  });

  test('og and twitter images from their file ids are absolute URLs on this domain; logos by file id are served here', async () => {
    const { path } = await served(
      {
        actionCardWidgets: [{ type: 'logos', title: '', logos: [{ image: { altText: 'L', url: '', fileId: 'file_logo', assetId: '' } }] }],
      },
      { metadataOverride: { ogImageFileId: 'file_og', twitterImageUrl: 'https://cdn.example.com/tw.png' } },
    );
    const html = (await visit(t, host, path)).body;
    assert.ok(html.includes(`<meta property="og:image" content="http://${host}:${t.app.config.port}/_pam/files/file_og">`));
    assert.ok(html.includes('<meta name="twitter:image" content="https://cdn.example.com/tw.png">'));
    assert.ok(html.includes('<img src="/_pam/files/file_logo" alt="L"'));
  });
});

describe('preview', () => {
  test('any status, for an audience or none, without the measuring script, always noindex; read scope', async () => {
    const person = (await t.req('POST', '/v0/persons', { name: 'Pat' })).body;
    const page = await publishedPage(t, {
      status: 'draft',
      content: { headline: 'Hi {{person.name}}', subheadline: '', sections: [] },
      metadata: { robots: ['index'] },
    });
    const audience = await audienceOf(t, page.pageId, { personId: person.personId });
    const res = await t.req('GET', `/v0/pages/${page.pageId}/preview?audienceId=${audience.audienceId}`);
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.equal(res.headers['x-robots-tag'], 'noindex, nofollow');
    assert.ok(res.text.includes('<h1>Hi Pat</h1>'));
    assert.ok(!res.text.includes('/_pam/v.js') && !res.text.includes('pam-view'));
    assert.match(res.text, /<meta name="robots" content="noindex, nofollow">/);
    const bare = await t.req('GET', `/v0/pages/${page.pageId}/preview`);
    assert.equal(bare.status, 200);
    assert.match(bare.text, /<meta name="robots" content="noindex, nofollow">/);
    assert.equal((await t.req('GET', `/v0/pages/${page.pageId}/preview?audienceId=audience_nope`)).status, 400);
    assert.equal((await t.req('GET', `/v0/pages/${page.pageId}/preview?other=1`)).status, 400);
    assert.equal((await t.req('GET', '/v0/pages/page_nope/preview')).status, 404);
    assert.equal((await t.req('GET', `/v0/pages/${page.pageId}/preview`, undefined, { key: null })).status, 401);
    const other = await t.newTenant('Preview other');
    assert.equal((await t.req('GET', `/v0/pages/${page.pageId}/preview`, undefined, { key: other.key })).status, 404);
  });
});
