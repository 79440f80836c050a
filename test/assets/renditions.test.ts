import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { type ImageFormat, IMAGE_MIME, makeImage } from '../fixtures.js';
import { type Json, ok, startApp, type TestApp, toRes } from '../helpers.js';
import { fallbackHost, link, publishedPage, unique, visit } from '../site/serve-helpers.js';

// Issue 46 §5: every image at 320, 640, 960, 1280 and 1920 px (those under the original's width,
// and the original), in WebP and in the original's format, made on upload and served on the
// tenant's domain; the srcset and sizes of each layout; fetchpriority on the leading hero only.

let t: TestApp;
let host: string;
before(async () => {
  // The disk store (the default); the database store: backfill.test.ts.
  t = await startApp({ FILE_STORE: 'disk' });
  host = await fallbackHost(t);
});
after(async () => {
  await t.close();
});

async function asset(format: ImageFormat, width: number, height: number, name = 'Image'): Promise<Json> {
  const bytes = await makeImage(format, width, height, [Math.floor(Math.random() * 255), 90, 40]);
  const upload = await t.app.inject({
    method: 'POST',
    url: '/v0/files',
    headers: { 'content-type': IMAGE_MIME[format], 'x-api-key': t.key },
    payload: bytes,
  });
  const file = ok(toRes(upload), 201);
  return ok(await t.req('POST', '/v0/assets', { assetType: 'image', name, fileId: file.fileId }), 201);
}

/** A served page of `sections`; its HTML without Markdown's line breaks. */
async function served(sections: Json[]): Promise<string> {
  const page = await publishedPage(t, { content: { headline: 'H', subheadline: '', sections } });
  const path = unique('widths');
  await link(t, path, { targetType: 'page', pageId: page.pageId });
  const res = await visit(t, host, path);
  assert.equal(res.statusCode, 200, res.body);
  return res.body.replaceAll('\n', '');
}

const hero = (imageAssetId: string) => ({ layout: 'hero', heading: 'Hero', body: 'b', imageAssetId, imageAlt: 'alt' });

/** Each candidate of a srcset: its URL and the width it claims. */
const candidates = (srcset: string) =>
  srcset.split(', ').map((c) => {
    const [url, w] = c.split(' ');
    return { url: (url ?? '').replaceAll('&amp;', '&'), width: Number((w ?? '').replace(/w$/, '')) };
  });
const attrOf = (tag: string, name: string) => new RegExp(` ${name}="([^"]*)"`).exec(tag)?.[1];

/** Fetches `url` on the tenant's domain; asserts it is an image of `type` exactly `width` px wide. */
async function expectServed(url: string, type: string, width: number) {
  const res = await visit(t, host, url);
  assert.equal(res.statusCode, 200, url);
  assert.equal(res.headers['content-type'], type, url);
  assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable', url);
  const meta = await sharp(res.rawPayload).metadata();
  assert.equal(meta.width, width, url);
  assert.equal(meta.format, type.replace('image/', ''), url);
}

describe('images at every width', () => {
  for (const [format, width, expected] of [
    ['jpeg', 1921, [320, 640, 960, 1280, 1920, 1921]],
    ['jpeg', 1920, [320, 640, 960, 1280, 1920]],
    ['png', 961, [320, 640, 960, 961]],
    ['png', 960, [320, 640, 960]],
    ['gif', 321, [320, 321]],
    ['jpeg', 320, [320]],
    ['png', 200, [200]],
  ] as const) {
    test(`a ${width} px ${format}: ${expected.join(', ')} in WebP and in ${format}, each served`, async () => {
      const a = await asset(format, width, Math.round(width / 2));
      const html = await served([hero(a.assetId)]);
      const pictureTag = /<picture>(.*?)<\/picture>/.exec(html)?.[1];
      assert.ok(pictureTag, 'a picture element');
      const source = /<source [^>]*>/.exec(pictureTag)?.[0] ?? '';
      const img = /<img [^>]*>/.exec(pictureTag)?.[0] ?? '';
      assert.equal(attrOf(source, 'type'), 'image/webp');
      const webp = candidates(attrOf(source, 'srcset') ?? '');
      const own = candidates(attrOf(img, 'srcset') ?? '');
      assert.deepEqual(
        webp.map((c) => c.width),
        expected,
      );
      assert.deepEqual(
        own.map((c) => c.width),
        expected,
      );
      assert.equal(attrOf(img, 'src'), `/_pam/files/${a.data.fileId}`, 'the original is the fallback');
      assert.equal(attrOf(source, 'sizes'), attrOf(img, 'sizes'));
      for (const c of webp) await expectServed(c.url, 'image/webp', c.width);
      for (const c of own) await expectServed(c.url, IMAGE_MIME[format], c.width);
    });
  }

  test('a WebP original is offered in its own format only: no second WebP source', async () => {
    const a = await asset('webp', 700, 350);
    const html = await served([hero(a.assetId)]);
    assert.doesNotMatch(html, /<picture>|<source /);
    const img = /<img [^>]*>/.exec(html)?.[0] ?? '';
    const own = candidates(attrOf(img, 'srcset') ?? '');
    assert.deepEqual(
      own.map((c) => c.width),
      [320, 640, 700],
    );
    for (const c of own) await expectServed(c.url, 'image/webp', c.width);
  });

  test('a width that was not made, or a name the route does not know, is a 404', async () => {
    const a = await asset('png', 500, 250);
    await served([hero(a.assetId)]);
    const fileId = a.data.fileId as string;
    assert.equal((await visit(t, host, `/_pam/files/${fileId}/w320`)).statusCode, 200);
    for (const name of ['w640', 'w640.webp', 'w1920', 'w320.png', 'w-1', 'x320', 'webp.webp']) {
      assert.equal((await visit(t, host, `/_pam/files/${fileId}/${name}`)).statusCode, 404, name);
    }
    // A file no page shows is not served at any width.
    const hidden = await asset('png', 500, 250);
    assert.equal((await visit(t, host, `/_pam/files/${hidden.data.fileId}/w320`)).statusCode, 404);
    assert.equal((await visit(t, host, `/_pam/files/${hidden.data.fileId}/webp`)).statusCode, 404);
  });

  test('each layout says how wide it shows; only the leading hero is fetched first', async () => {
    const [a, b, c, d] = await Promise.all([
      asset('jpeg', 1600, 900),
      asset('jpeg', 1200, 800),
      asset('png', 800, 600),
      asset('png', 200, 200),
    ]);
    const html = await served([
      hero(a.assetId),
      { layout: 'image_text', heading: 'Side', body: 'b', imageAssetId: b.assetId, imageAlt: 'side' },
      { layout: 'features', heading: 'F', body: '', items: [1, 2, 3].map((i) => ({ title: `T${i}`, body: 'b', imageAssetId: c.assetId })) },
      { layout: 'logos', heading: 'L', body: '', items: ['One', 'Two'].map((title) => ({ title, imageAssetId: d.assetId })) },
      { layout: 'quote', heading: '', body: 'Q', author: 'Ann', role: 'CTO', imageAssetId: d.assetId },
      hero(b.assetId),
    ]);
    const imgs = [...html.matchAll(/<img [^>]*>/g)].map((m) => m[0]);
    const sizes = imgs.map((i) => attrOf(i, 'sizes'));
    assert.deepEqual(sizes, [
      '(min-width: 75rem) 36rem, (min-width: 46rem) 50vw, 100vw',
      '(min-width: 75rem) 36rem, (min-width: 46rem) 50vw, 100vw',
      '(min-width: 75rem) 24rem, (min-width: 64rem) 33vw, (min-width: 40rem) 50vw, 100vw',
      '(min-width: 75rem) 24rem, (min-width: 64rem) 33vw, (min-width: 40rem) 50vw, 100vw',
      '(min-width: 75rem) 24rem, (min-width: 64rem) 33vw, (min-width: 40rem) 50vw, 100vw',
      '9rem',
      '9rem',
      '4rem',
      '(min-width: 75rem) 36rem, (min-width: 46rem) 50vw, 100vw',
    ]);
    assert.equal(imgs.filter((i) => i.includes('fetchpriority')).length, 1, 'one image is fetched first');
    assert.match(imgs[0] ?? '', /fetchpriority="high"/);
    assert.doesNotMatch(imgs[0] ?? '', /loading="lazy"/);
    for (const img of imgs.slice(1)) assert.match(img, /loading="lazy"/);
  });

  test('a page whose first section is not a hero fetches no image first', async () => {
    const a = await asset('jpeg', 800, 400);
    const html = await served([{ layout: 'text', heading: 'T', body: 'b' }, hero(a.assetId)]);
    assert.doesNotMatch(html, /fetchpriority/);
  });

  test('deleting the asset removes every width: none is served any more', async () => {
    const a = await asset('jpeg', 700, 350);
    await served([hero(a.assetId)]);
    const fileId = a.data.fileId as string;
    assert.equal((await visit(t, host, `/_pam/files/${fileId}/w640.webp`)).statusCode, 200);
    assert.equal((await t.req('DELETE', `/v0/assets/${a.assetId}`)).status, 204);
    for (const name of ['w320', 'w640.webp', 'webp']) assert.equal((await visit(t, host, `/_pam/files/${fileId}/${name}`)).statusCode, 404);
  });
});
