import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { expectProblem, type Json, ok, startApp, type TestApp, toRes } from '../helpers.js';

// GET /v0/assets (extension): the console's asset library and OG image picker, through HTTP.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

async function asset(key: string, name: string, parentAssetId?: string): Promise<Json> {
  const png = await sharp({ create: { width: 8, height: 6, channels: 3, background: { r: name.length * 9, g: 40, b: 80 } } })
    .png()
    .toBuffer();
  const file = toRes(
    await t.app.inject({ method: 'POST', url: '/v0/files', headers: { 'content-type': 'image/png', 'x-api-key': key }, payload: png }),
  );
  assert.equal(file.status, 201, file.text);
  const body = { assetType: 'image', name, fileId: file.body.fileId, ...(parentAssetId ? { parentAssetId } : {}) };
  return ok(await t.req('POST', '/v0/assets', body, { key }), 201);
}
const list = async (key: string, query = ''): Promise<Json> => ok(await t.req('GET', `/v0/assets${query}`, undefined, { key }));

describe('GET /v0/assets', () => {
  test('active assets newest first, the variants of a parent, cursors, another tenant, bounds', async () => {
    const { key } = await t.newTenant('assets');
    const logo = await asset(key, 'logo');
    const small = await asset(key, 'logo-small', logo.assetId);
    const hero = await asset(key, 'hero');
    const gone = await asset(key, 'gone');
    assert.equal((await t.req('DELETE', `/v0/assets/${gone.assetId}`, undefined, { key })).status, 204);

    const all = await list(key);
    assert.deepEqual(
      all.items.map((a: Json) => a.name),
      ['hero', 'logo-small', 'logo'],
    );
    assert.equal(all.totalCount, 3);
    assert.ok(all.items[0].previewDownloadUrl, 'each with its preview');
    const variants = await list(key, `?parentAssetId=${logo.assetId}`);
    assert.deepEqual(
      variants.items.map((a: Json) => a.assetId),
      [small.assetId],
    );
    assert.equal(variants.totalCount, 1);

    const first = await list(key, '?limit=2');
    assert.equal(first.items.length, 2);
    const rest = await list(key, `?limit=2&cursor=${first.nextCursor}`);
    assert.deepEqual(
      [...first.items, ...rest.items].map((a: Json) => a.assetId),
      [hero.assetId, small.assetId, logo.assetId],
    );
    expectProblem(
      await t.req('GET', `/v0/assets?parentAssetId=${logo.assetId}&cursor=${first.nextCursor}`, undefined, { key }),
      400,
      'validation_failed',
      ['/cursor'],
    );

    assert.equal((await list(t.key, `?parentAssetId=${logo.assetId}`)).totalCount, 0, 'another tenant sees none');
    ok(await t.req('GET', `/v0/assets?parentAssetId=${'a'.repeat(64)}`));
    expectProblem(await t.req('GET', `/v0/assets?parentAssetId=${'a'.repeat(65)}`), 400, 'validation_failed', ['/parentAssetId']);
    expectProblem(await t.req('GET', '/v0/assets?limit=101'), 400, 'validation_failed', ['/limit']);
  });
});
