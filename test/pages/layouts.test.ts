import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, type Json, ok, startApp, type TestApp } from '../helpers.js';
import { everyLayout, imageAsset, VIDEO_URL } from './layout-fixtures.js';

// Issue 38: section layouts in page content, validated wherever content is written.

let t: TestApp;
let images: string[];
let page: Json;
let actionId: string;
before(async () => {
  t = await startApp();
  images = [(await imageAsset(t)).assetId, (await imageAsset(t)).assetId];
  page = ok(
    await t.req('POST', '/v0/pages', {
      name: 'Layouts',
      title: 'Layouts',
      pageContext: 'ctx',
      pageType: 'inbound',
      actions: [{ purpose: 'demo', buttonTitle: 'Book a demo', actionType: 'link', url: 'https://example.com/demo' }],
    }),
    201,
  );
  actionId = page.actions[0].actionId;
});
after(async () => {
  await t.close();
});

const content = (sections: Json[]) => ({ headline: 'H', subheadline: '', sections });
const patch = (sections: Json[]) => t.req('PATCH', `/v0/pages/${page.pageId}`, { content: content(sections) });
const accepted = async (sections: Json[]) => ok(await patch(sections)).content.sections as Json[];
const refused = async (sections: Json[], pointer: string) => expectProblem(await patch(sections), 400, 'validation_failed', [pointer]);

const items = (n: number, item: (i: number) => Json) => Array.from({ length: n }, (_, i) => item(i));
const feature = (i: number) => ({ title: `t${i}`, body: `b${i}` });
const logo = (i: number) => ({ title: `logo ${i}`, imageAssetId: images[i % 2] });
const withItems = (layout: string, list: Json[]) => [{ layout, heading: '', body: '', items: list }];

describe('section layouts', () => {
  test('a section of every layout is stored and read back as written; a section without one stays as it was', async () => {
    const sections = everyLayout(images, actionId);
    assert.deepEqual(await accepted(sections), sections);
    const read = ok(await t.req('GET', `/v0/pages/${page.pageId}`)).content.sections as Json[];
    assert.deepEqual(read, sections);
    assert.equal('layout' in (read[1] as Json), false, 'a text section stays without a layout');
  });

  test('item counts: features 2–12, faq 1–30, logos 2–24, just inside and just outside', async () => {
    for (const [layout, min, max, item] of [
      ['features', 2, 12, feature],
      ['faq', 1, 30, feature],
      ['logos', 2, 24, logo],
    ] as const) {
      await accepted(withItems(layout, items(min, item)));
      await accepted(withItems(layout, items(max, item)));
      if (min > 1) await refused(withItems(layout, items(min - 1, item)), '/content/sections/0/items');
      await refused(withItems(layout, items(max + 1, item)), '/content/sections/0/items');
    }
    await refused(withItems('faq', []), '/content/sections/0/items');
  });

  test('text lengths, just inside and just outside', async () => {
    const hero = (fields: Json) => [{ layout: 'hero', heading: '', body: '', imageAssetId: images[0], imageAlt: '', ...fields }];
    await accepted(hero({ imageAlt: 'a'.repeat(300) }));
    await refused(hero({ imageAlt: 'a'.repeat(301) }), '/content/sections/0/imageAlt');
    const quote = (fields: Json) => [{ layout: 'quote', heading: '', body: '', author: 'A', role: '', ...fields }];
    for (const field of ['author', 'role']) {
      await accepted(quote({ [field]: 'x'.repeat(200) }));
      await refused(quote({ [field]: 'x'.repeat(201) }), `/content/sections/0/${field}`);
    }
    const faq = (item: Json) => withItems('faq', [item]);
    await accepted(faq({ title: 'q'.repeat(200), body: 'a'.repeat(5000) }));
    await refused(faq({ title: 'q'.repeat(201), body: '' }), '/content/sections/0/items/0/title');
    await refused(faq({ title: '', body: 'a'.repeat(5001) }), '/content/sections/0/items/0/body');
    const video = (videoUrl: string) => [{ layout: 'video', heading: '', body: '', videoUrl }];
    await refused(video(`${VIDEO_URL}&x=${'x'.repeat(2048)}`), '/content/sections/0/videoUrl');
  });

  test("each layout's fields: a missing one, one of another layout, an unknown layout or field", async () => {
    await refused([{ layout: 'hero', heading: '', body: '', imageAlt: '' }], '/content/sections/0/imageAssetId');
    await refused([{ layout: 'hero', heading: '', body: '', imageAssetId: images[0] }], '/content/sections/0/imageAlt');
    await refused(
      [{ layout: 'image_text', heading: '', body: '', imageAssetId: images[0], imageAlt: '', imageSide: 'top' }],
      '/content/sections/0/imageSide',
    );
    await refused([{ heading: '', body: '', imageAssetId: images[0] }], '/content/sections/0/imageAssetId');
    await refused([{ layout: 'cta', heading: '', body: '', actionId, videoUrl: VIDEO_URL }], '/content/sections/0/videoUrl');
    await refused([{ layout: 'quote', heading: '', body: '', role: '' }], '/content/sections/0/author');
    await refused([{ layout: 'cta', heading: '', body: '' }], '/content/sections/0/actionId');
    await refused([{ layout: 'video', heading: '', body: '' }], '/content/sections/0/videoUrl');
    await refused([{ layout: 'gallery', heading: '', body: '' }], '/content/sections/0/layout');
    await refused([{ heading: '', body: '', html: '<b>' }], '/content/sections/0/html');
    await refused(
      withItems('logos', [{ title: 'a', imageAssetId: images[0] }, { title: 'b' }]),
      '/content/sections/0/items/1/imageAssetId',
    );
    await refused(withItems('logos', [logo(0), { ...logo(1), body: 'x' }]), '/content/sections/0/items/1/body');
    await refused(withItems('faq', [{ title: 'q', body: 'a', imageAssetId: images[0] }]), '/content/sections/0/items/0/imageAssetId');
    await refused(withItems('features', [feature(0), { title: 'no body' }]), '/content/sections/0/items/1/body');
    await accepted([{ layout: 'image_text', heading: '', body: '', imageAssetId: images[0], imageAlt: 'x' }]);
  });

  test("images: another tenant's, an unknown or a trashed asset is 400 at its pointer", async () => {
    const other = await t.newTenant('Elsewhere');
    const theirs = (await imageAsset(t, other.key)).assetId;
    const trashed = (await imageAsset(t)).assetId;
    ok(await t.req('PATCH', `/v0/assets/${trashed}`, { lifecycleState: 'trashed' }));
    for (const id of [theirs, trashed, 'asset_00000000000000000000000000']) {
      await refused([{ layout: 'hero', heading: '', body: '', imageAssetId: id, imageAlt: '' }], '/content/sections/0/imageAssetId');
      await refused(
        [{ layout: 'quote', heading: '', body: '', author: 'a', role: '', imageAssetId: id }],
        '/content/sections/0/imageAssetId',
      );
      await refused(
        [{ heading: '', body: '' }, ...withItems('features', [feature(0), { ...feature(1), imageAssetId: id }])],
        '/content/sections/1/items/1/imageAssetId',
      );
      await refused(withItems('logos', [logo(0), { title: 'x', imageAssetId: id }]), '/content/sections/0/items/1/imageAssetId');
    }
  });

  test('a cta names an action of the page; a video is YouTube or Vimeo', async () => {
    await refused([{ layout: 'cta', heading: '', body: '', actionId: 'action_unknown' }], '/content/sections/0/actionId');
    for (const url of [
      'https://youtu.be/dQw4w9WgXcQ',
      'https://www.youtube.com/embed/dQw4w9WgXcQ',
      'https://www.youtube.com/shorts/dQw4w9WgXcQ',
      'https://vimeo.com/76979871',
      'https://player.vimeo.com/video/76979871?h=abcdef0123',
    ]) {
      await accepted([{ layout: 'video', heading: '', body: '', videoUrl: url }]);
    }
    for (const url of [
      'http://www.youtube.com/watch?v=dQw4w9WgXcQ',
      'https://www.youtube.com/watch?v=short',
      'https://evil.example/watch?v=dQw4w9WgXcQ',
      'https://youtube.com.evil.example/watch?v=dQw4w9WgXcQ',
      'https://vimeo.com/abc',
      'javascript:alert(1)',
      '',
    ]) {
      await refused([{ layout: 'video', heading: '', body: '', videoUrl: url }], '/content/sections/0/videoUrl');
    }
  });

  test('creating a page checks its content too', async () => {
    const res = await t.req('POST', '/v0/pages', {
      name: 'x',
      title: 'x',
      pageContext: 'x',
      pageType: 'inbound',
      content: content([{ layout: 'hero', heading: '', body: '', imageAssetId: 'asset_nope', imageAlt: '' }]),
    });
    expectProblem(res, 400, 'validation_failed', ['/content/sections/0/imageAssetId']);
  });

  test("an audience's versions: created and patched content is checked the same way, against the page's actions", async () => {
    const audience = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, {}), 201);
    const versions = `/v0/pages/${page.pageId}/audiences/${audience.audienceId}/versions`;
    const bad = content([{ layout: 'cta', heading: '', body: '', actionId: 'action_unknown' }]);
    expectProblem(await t.req('POST', versions, { content: bad }), 400, 'validation_failed', ['/content/sections/0/actionId']);
    const good = content(everyLayout(images, actionId));
    const draft = ok(await t.req('POST', versions, { content: good }), 201);
    assert.deepEqual(draft.content, good);
    expectProblem(
      await t.req('PATCH', `${versions}/${draft.versionId}`, { content: content(withItems('features', [feature(0)])) }),
      400,
      'validation_failed',
      ['/content/sections/0/items'],
    );
  });
});
