import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeImage } from '../fixtures.js';
import { expectProblem, startApp, toRes, type Json, type TestApp, ok } from '../helpers.js';
import { audienceOf, fallbackHost, link, publishedPage, unique, visit } from '../site/serve-helpers.js';

// Issue 19: metadata merges (pages and audience overrides), images set from assets and served as
// og:image / twitter:image, robots directives validated.

let t: TestApp;
let host: string;
before(async () => {
  t = await startApp();
  host = await fallbackHost(t);
});
after(async () => {
  await t.close();
});

async function imageAsset(key = t.key): Promise<Json> {
  const bytes = await makeImage('png', 30, 20, [Math.floor(Math.random() * 255), 40, 50]);
  const file = ok(
    toRes(
      await t.app.inject({ method: 'POST', url: '/v0/files', headers: { 'content-type': 'image/png', 'x-api-key': key }, payload: bytes }),
    ),
    201,
  );
  return ok(await t.req('POST', '/v0/assets', { assetType: 'image', name: 'Image', fileId: file.fileId }, { key }), 201);
}

// The public origin of the fallback domain without TLS (http/public-origin.ts): injected, the configured port.
const fileUrl = (fileId: string) => `http://${host}:${t.app.config.port}/_pam/files/${fileId}`;

async function document(path: string): Promise<string> {
  const res = await visit(t, host, path);
  assert.equal(res.statusCode, 200, res.body);
  return res.body;
}

describe('page images from assets', () => {
  test('set on create and PATCH, served as og:image and twitter:image, cleared with null', async () => {
    const og = await imageAsset();
    const tw = await imageAsset();
    const page = await publishedPage(t, { metadata: { title: 'With image', ogImageAssetId: og.assetId } });
    assert.equal(page.metadata.ogImageAssetId, og.assetId);
    assert.equal(page.metadata.ogImageFileId, og.data.fileId);
    assert.equal(page.metadata.ogImageUrl, fileUrl(og.data.fileId));
    assert.equal('twitterImageAssetId' in page.metadata, false, 'an unset asset id is absent');
    assert.equal(page.metadata.twitterImageUrl, '');

    // The URL serves the image (the fallback domain serves the tenant's files).
    const image = await visit(t, host, new URL(page.metadata.ogImageUrl).pathname);
    assert.equal(image.statusCode, 200);
    assert.equal(image.headers['content-type'], 'image/png');

    const path = unique('img');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    let html = await document(path);
    assert.ok(html.includes(`<meta property="og:image" content="${fileUrl(og.data.fileId)}">`), html);
    assert.ok(!html.includes('twitter:image"'));

    const url = `/v0/pages/${page.pageId}`;
    const both = ok(await t.req('PATCH', url, { metadata: { twitterImageAssetId: tw.assetId } }));
    assert.deepEqual(both.metadata, {
      ...page.metadata,
      twitterImageAssetId: tw.assetId,
      twitterImageFileId: tw.data.fileId,
      twitterImageUrl: fileUrl(tw.data.fileId),
    });
    assert.deepEqual(ok(await t.req('PATCH', url, both)), both, 'a round trip with images changes nothing');
    html = await document(path);
    assert.ok(html.includes(`<meta name="twitter:image" content="${fileUrl(tw.data.fileId)}">`), html);

    const cleared = ok(await t.req('PATCH', url, { metadata: { ogImageAssetId: null } }));
    assert.equal('ogImageAssetId' in cleared.metadata, false);
    assert.equal(cleared.metadata.ogImageFileId, '');
    assert.equal(cleared.metadata.ogImageUrl, '');
    assert.equal(cleared.metadata.twitterImageAssetId, tw.assetId, 'the other image stays');
    html = await document(path);
    assert.ok(!html.includes('og:image"'), html);
    assert.ok(html.includes('twitter:image"'));
  });

  test("another tenant's, a trashed, an unknown or a malformed asset id is 400 naming the field; nothing changes", async () => {
    const other = await t.newTenant('Images elsewhere');
    const theirs = await imageAsset(other.key);
    const trashed = await imageAsset();
    ok(await t.req('PATCH', `/v0/assets/${trashed.assetId}`, { lifecycleState: 'trashed' }));
    const page = await publishedPage(t, { metadata: { title: 'Keep' } });
    const url = `/v0/pages/${page.pageId}`;
    for (const id of [theirs.assetId, trashed.assetId, 'asset_00000000000000000000000000']) {
      expectProblem(await t.req('PATCH', url, { metadata: { ogImageAssetId: id } }), 400, 'validation_failed', [
        '/metadata/ogImageAssetId',
      ]);
      expectProblem(
        await t.req('POST', '/v0/pages', {
          name: 'n',
          title: 't',
          pageContext: 'c',
          pageType: 'inbound',
          metadata: { twitterImageAssetId: id },
        }),
        400,
        'validation_failed',
        ['/metadata/twitterImageAssetId'],
      );
    }
    for (const bad of ['', 5, {}]) {
      expectProblem(await t.req('PATCH', url, { metadata: { ogImageAssetId: bad } }), 400, 'validation_failed', [
        '/metadata/ogImageAssetId',
      ]);
    }
    assert.deepEqual(ok(await t.req('GET', url)), page);
  });

  test("an audience's override takes the asset ids; null gives the page's image back", async () => {
    const pageImage = await imageAsset();
    const theirImage = await imageAsset();
    const page = await publishedPage(t, { metadata: { ogImageAssetId: pageImage.assetId } });
    const a = await audienceOf(t, page.pageId, { metadataOverride: { ogImageAssetId: theirImage.assetId } });
    assert.deepEqual(a.metadataOverride, {
      ogImageAssetId: theirImage.assetId,
      ogImageFileId: theirImage.data.fileId,
      ogImageUrl: fileUrl(theirImage.data.fileId),
    });
    assert.equal(a.effectiveMetadata.ogImageFileId, theirImage.data.fileId);
    const path = unique('aud-img');
    await link(t, path, { targetType: 'audience', audienceId: a.audienceId });
    assert.ok((await document(path)).includes(`og:image" content="${fileUrl(theirImage.data.fileId)}"`));

    const url = `/v0/pages/${page.pageId}/audiences/${a.audienceId}`;
    const back = ok(await t.req('PATCH', url, { metadataOverride: { ogImageAssetId: null, title: 'Theirs' } }));
    assert.deepEqual(back.metadataOverride, { title: 'Theirs' });
    assert.equal(back.effectiveMetadata.ogImageFileId, pageImage.data.fileId);
    assert.ok((await document(path)).includes(`og:image" content="${fileUrl(pageImage.data.fileId)}"`));

    const other = await t.newTenant('Override elsewhere');
    const theirs = await imageAsset(other.key);
    expectProblem(await t.req('PATCH', url, { metadataOverride: { twitterImageAssetId: theirs.assetId } }), 400, 'validation_failed', [
      '/metadataOverride/twitterImageAssetId',
    ]);
    expectProblem(
      await t.req('POST', `/v0/pages/${page.pageId}/audiences`, { metadataOverride: { ogImageAssetId: theirs.assetId } }),
      400,
      'validation_failed',
      ['/metadataOverride/ogImageAssetId'],
    );
    assert.deepEqual(ok(await t.req('GET', url)), back);
  });
});

describe('merge (RFC 7396)', () => {
  test('page metadata: present replaces, absent keeps, null resets; unknown fields and the wrong types are 400', async () => {
    const page = await publishedPage(t, { metadata: { title: 'T', description: 'D', keywords: ['a'], themeColor: '#fff' } });
    const url = `/v0/pages/${page.pageId}`;
    const onlyDescription = ok(await t.req('PATCH', url, { metadata: { description: 'New' } }));
    assert.equal(onlyDescription.metadata.title, 'T', 'setting the description keeps the title');
    assert.equal(onlyDescription.metadata.description, 'New');
    assert.deepEqual(onlyDescription.metadata.keywords, ['a']);
    const reset = ok(await t.req('PATCH', url, { metadata: { title: null, keywords: null, author: 'A' } }));
    assert.deepEqual(
      [reset.metadata.title, reset.metadata.keywords, reset.metadata.author, reset.metadata.themeColor],
      ['', [], 'A', '#fff'],
    );
    assert.ok(reset.updatedAt > onlyDescription.updatedAt);
    const again = ok(await t.req('PATCH', url, { metadata: { title: null } }));
    assert.deepEqual(again, reset, 'resetting an unset field changes nothing, updatedAt included');
    expectProblem(await t.req('PATCH', url, { metadata: { colour: 'red' } }), 400, 'validation_failed', ['/metadata/colour']);
    expectProblem(await t.req('PATCH', url, { metadata: { keywords: 'a' } }), 400, 'validation_failed', ['/metadata/keywords']);
    expectProblem(await t.req('PATCH', url, { metadata: null }), 400, 'validation_failed', ['/metadata']);
    assert.deepEqual(ok(await t.req('GET', url)), reset);
  });

  test('audience override: merged field by field; null removes a field (the page shows through); null clears it', async () => {
    const page = await publishedPage(t, { metadata: { title: 'Page title', description: 'Page description' } });
    const a = await audienceOf(t, page.pageId, { metadataOverride: { title: 'Their title', author: 'Them' } });
    const url = `/v0/pages/${page.pageId}/audiences/${a.audienceId}`;
    const merged = ok(await t.req('PATCH', url, { metadataOverride: { description: 'Their description' } }));
    assert.deepEqual(merged.metadataOverride, { title: 'Their title', author: 'Them', description: 'Their description' });
    const removed = ok(await t.req('PATCH', url, { metadataOverride: { title: null } }));
    assert.deepEqual(removed.metadataOverride, { author: 'Them', description: 'Their description' });
    assert.equal(removed.effectiveMetadata.title, 'Page title');
    const cleared = ok(await t.req('PATCH', url, { metadataOverride: null }));
    assert.equal('metadataOverride' in cleared, false);
    assert.equal(cleared.effectiveMetadata.description, 'Page description');
  });
});

describe('robots', () => {
  const VALID = [
    'index',
    'noindex',
    'follow',
    'nofollow',
    'noarchive',
    'nosnippet',
    'noimageindex',
    'max-snippet:-1',
    'max-snippet:0',
    'max-snippet:999999999',
    'max-image-preview:none',
    'max-image-preview:standard',
    'max-image-preview:large',
    'max-video-preview:-1',
    'max-video-preview:30',
    'unavailable_after:2027-01-31',
    'unavailable_after:2027-01-31T12:00:00Z',
    'unavailable_after:2027-01-31T12:00:00.5+02:00',
  ];
  const INVALID = [
    '',
    'NOINDEX',
    'noindex, nofollow',
    ' noindex',
    'none',
    'all',
    'max-snippet:',
    'max-snippet:1000000000',
    'max-snippet:-2',
    'max-snippet:01',
    'max-snippet:abc',
    'max-image-preview:huge',
    'max-video-preview:1.5',
    'unavailable_after:',
    'unavailable_after:tomorrow',
    'unavailable_after:2027-01-31T12:00',
    'googlebot: noindex',
  ];

  test('every listed directive is accepted (page create, PATCH, audience override) and served joined', async () => {
    const page = await publishedPage(t, { metadata: { robots: VALID.slice(0, 10) } });
    const patched = ok(await t.req('PATCH', `/v0/pages/${page.pageId}`, { metadata: { robots: VALID } }));
    assert.deepEqual(patched.metadata.robots, VALID);
    const path = unique('robots');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    assert.ok((await document(path)).includes(`<meta name="robots" content="${VALID.join(', ')}">`));
    const a = await audienceOf(t, page.pageId, { metadataOverride: { robots: ['noindex'] } });
    assert.deepEqual(a.effectiveMetadata.robots, ['noindex']);
  });

  test('anything else is 400 naming the element, on create, PATCH and audience overrides', async () => {
    const page = await publishedPage(t, { metadata: { robots: ['index'] } });
    for (const bad of [...INVALID, 5, null]) {
      expectProblem(await t.req('PATCH', `/v0/pages/${page.pageId}`, { metadata: { robots: ['index', bad] } }), 400, 'validation_failed', [
        '/metadata/robots/1',
      ]);
    }
    for (const bad of INVALID.slice(0, 4)) {
      expectProblem(
        await t.req('POST', '/v0/pages', { name: 'n', title: 't', pageContext: 'c', pageType: 'inbound', metadata: { robots: [bad] } }),
        400,
        'validation_failed',
        ['/metadata/robots/0'],
      );
      expectProblem(
        await t.req('POST', `/v0/pages/${page.pageId}/audiences`, { metadataOverride: { robots: [bad] } }),
        400,
        'validation_failed',
        ['/metadataOverride/robots/0'],
      );
    }
    expectProblem(
      await t.req('PATCH', `/v0/pages/${page.pageId}`, { metadata: { robots: Array(21).fill('index') } }),
      400,
      'validation_failed',
      ['/metadata/robots'],
    );
    assert.equal(
      ok(await t.req('PATCH', `/v0/pages/${page.pageId}`, { metadata: { robots: Array(20).fill('index') } })).metadata.robots.length,
      20,
    );
  });
});
