import { makeImage } from '../fixtures.js';
import { type Json, ok, type TestApp, toRes } from '../helpers.js';

/** A new image asset of the tenant (`key`, else the first), `width`×`height` pixels. */
export async function imageAsset(t: TestApp, key = t.key, width = 60, height = 40, name = 'Image'): Promise<Json> {
  const bytes = await makeImage('png', width, height, [Math.floor(Math.random() * 255), 40, 50]);
  const file = ok(
    toRes(
      await t.app.inject({ method: 'POST', url: '/v0/files', headers: { 'content-type': 'image/png', 'x-api-key': key }, payload: bytes }),
    ),
    201,
  );
  return ok(await t.req('POST', '/v0/assets', { assetType: 'image', name, fileId: file.fileId }, { key }), 201);
}

export const VIDEO_URL = 'https://www.youtube.com/watch?v=dQw4w9WgXcQ';

/** A section of every layout, each text `text(field)`; images from `images` (at least two), the cta on `actionId`. */
export function everyLayout(images: string[], actionId: string, text: (field: string) => string = (f) => f): Json[] {
  const [a, b] = images as [string, string];
  return [
    { layout: 'hero', heading: text('hero heading'), body: text('hero body'), imageAssetId: a, imageAlt: text('hero alt') },
    { heading: text('text heading'), body: text('text body') },
    {
      layout: 'image_text',
      heading: text('image_text heading'),
      body: text('image_text body'),
      imageAssetId: b,
      imageAlt: text('image_text alt'),
      imageSide: 'right',
    },
    {
      layout: 'features',
      heading: text('features heading'),
      body: text('features body'),
      items: [
        { title: text('feature 1 title'), body: text('feature 1 body'), imageAssetId: a },
        { title: text('feature 2 title'), body: text('feature 2 body') },
        { title: text('feature 3 title'), body: text('feature 3 body') },
      ],
    },
    {
      layout: 'faq',
      heading: text('faq heading'),
      body: text('faq body'),
      items: [
        { title: text('question 1'), body: text('answer 1') },
        { title: text('question 2'), body: text('answer 2') },
      ],
    },
    {
      layout: 'quote',
      heading: text('quote heading'),
      body: text('quote body'),
      author: text('quote author'),
      role: text('quote role'),
      imageAssetId: b,
    },
    {
      layout: 'logos',
      heading: text('logos heading'),
      body: text('logos body'),
      items: [
        { title: text('logo 1'), imageAssetId: a },
        { title: text('logo 2'), imageAssetId: b },
      ],
    },
    { layout: 'cta', heading: text('cta heading'), body: text('cta body'), actionId },
    { layout: 'video', heading: text('video heading'), body: text('video body'), videoUrl: VIDEO_URL },
  ];
}
