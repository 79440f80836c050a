import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { IMAGE_MIME, makeImage } from '../fixtures.js';
import { expectProblem, ISO_MS, startApp, toRes, type Json, type Res, type TestApp } from '../helpers.js';

// Black-box tests of reference endpoints 9 and 10 (create and get asset) and the extensions around
// them: POST /v0/files, PATCH and DELETE /v0/assets/{asset_id}, and the signed download links
// GET /files/{fileId} and GET /files/{fileId}/preview. Real images are made with sharp.

const FILE_ID = /^file_[0-9a-z]{26}$/;
const ASSET_ID = /^asset_[0-9a-z]{26}$/;
const FILE_FIELDS = ['contentType', 'createdAt', 'fileId', 'height', 'sha256', 'sizeBytes', 'width'];
const ASSET_FIELDS = [
  'aiDescription',
  'assetId',
  'createdAt',
  'data',
  'deletedAt',
  'downloadUrl',
  'hidden',
  'lifecycleState',
  'name',
  'parentAssetId',
  'previewDownloadUrl',
  'purpose',
  'tags',
  'tenantId',
  'trashedAt',
  'updatedAt',
];
/** Well-formed ids that name nothing (TypeID body: first character 0-7). */
const UNKNOWN_ASSET = 'asset_01h0000000000000000000000a';
const UNKNOWN_FILE = 'file_01h0000000000000000000000a';
const DEFAULT_BASE = 'http://127.0.0.1:3000';
const SECRET = 'a-known-file-url-secret-of-40-characters!';
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const MiB = 1024 * 1024;

/** A PNG of noise: it compresses badly, so it is long enough to be cut in half meaningfully. */
async function noisyPng(width = 200, height = 200): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let i = 0; i < raw.length; i++) raw[i] = (i * 7919) % 251;
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** POST /v0/files with raw bytes; `key: null` sends no API key. */
async function upload(app: TestApp, bytes: Buffer, contentType: string, key: string | null = app.key): Promise<Res> {
  const headers: Record<string, string> = { 'content-type': contentType };
  if (key !== null) headers['x-api-key'] = key;
  return toRes(await app.app.inject({ method: 'POST', url: '/v0/files', headers, payload: bytes }));
}

async function uploadOk(app: TestApp, bytes: Buffer, contentType: string, key?: string): Promise<Json> {
  const res = await upload(app, bytes, contentType, key);
  assert.equal(res.status, 201, res.text);
  return res.body;
}

async function createAsset(app: TestApp, body: Json, key?: string): Promise<Json> {
  const res = await app.req('POST', '/v0/assets', body, key === undefined ? {} : { key });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

/** A fresh PNG file and an asset on it, for tests that need one of their own. */
async function newAsset(app: TestApp, extra: Json = {}, key?: string): Promise<{ file: Json; asset: Json; bytes: Buffer }> {
  const bytes = await makeImage('png', 40, 30, [Math.floor(Math.random() * 255), 10, 20]);
  const file = await uploadOk(app, bytes, 'image/png', key);
  const asset = await createAsset(app, { assetType: 'image', name: 'An asset', fileId: file.fileId, ...extra }, key);
  return { file, asset, bytes };
}

/** GET of a signed link as a browser would follow it: path and query only, no API key. */
async function follow(app: TestApp, link: string): Promise<{ res: Res; raw: Buffer }> {
  const u = new URL(link);
  const r = await app.app.inject({ method: 'GET', url: u.pathname + u.search });
  return { res: toRes(r), raw: r.rawPayload };
}

function withParam(link: string, name: string, value: string | null): string {
  const u = new URL(link);
  if (value === null) u.searchParams.delete(name);
  else u.searchParams.set(name, value);
  return u.toString();
}

function assertAssetShape(a: Json, tenantId: string): void {
  assert.deepEqual(Object.keys(a).sort(), ASSET_FIELDS);
  assert.match(a.assetId, ASSET_ID);
  assert.equal(a.tenantId, tenantId);
  assert.equal(typeof a.name, 'string');
  assert.equal(typeof a.purpose, 'string');
  assert.ok(Array.isArray(a.tags));
  assert.equal(typeof a.hidden, 'boolean');
  assert.deepEqual(Object.keys(a.data).sort(), ['fileId', 'type']);
  assert.equal(a.data.type, 'image');
  assert.match(a.data.fileId, FILE_ID);
  assert.ok(['active', 'trashed', 'deleted'].includes(a.lifecycleState));
  assert.match(a.createdAt, ISO_MS);
  assert.match(a.updatedAt, ISO_MS);
  for (const f of ['trashedAt', 'deletedAt']) assert.ok(a[f] === null || ISO_MS.test(a[f]), `${f}: ${a[f]}`);
}

/** `<base>/files/<fileId>[/preview]?expires=<unix seconds>&signature=<base64url>`, valid at most one hour. */
function assertSignedLink(link: string, base: string, fileId: string, variant: 'original' | 'preview'): void {
  assert.equal(typeof link, 'string');
  const u = new URL(link);
  assert.equal(`${u.protocol}//${u.host}`, new URL(base).origin.replace(/\/$/, ''));
  assert.ok(link.startsWith(`${base}/files/${fileId}${variant === 'preview' ? '/preview' : ''}?`), link);
  assert.equal(u.pathname, `/files/${fileId}${variant === 'preview' ? '/preview' : ''}`);
  assert.deepEqual([...u.searchParams.keys()].sort(), ['expires', 'signature']);
  const expires = Number(u.searchParams.get('expires'));
  assert.ok(Number.isInteger(expires), 'expires is unix seconds');
  const left = expires - Date.now() / 1000;
  assert.ok(left > 3500 && left <= 3601, `valid about one hour, got ${left}s`);
  assert.match(u.searchParams.get('signature')!, /^[A-Za-z0-9_-]+$/);
}

function maxAge(res: Res): number {
  const m = /^private, max-age=(\d+)$/.exec(String(res.headers['cache-control']));
  assert.ok(m, `cache-control: ${res.headers['cache-control']}`);
  return Number(m[1]);
}

/**
 * On PostgreSQL the data folder is ./data, relative to the working directory: a disk store there
 * must not leave an empty folder behind in the project when it was not there before.
 */
const PROJECT_DATA = path.resolve('data');
const projectDataExisted = fs.existsSync(PROJECT_DATA);
function removeEmptyProjectData(): void {
  if (projectDataExisted) return;
  for (const dir of [path.join(PROJECT_DATA, 'files'), PROJECT_DATA]) {
    try {
      fs.rmdirSync(dir); // only ever removes an empty folder
    } catch {
      // not there, or not empty: leave it
    }
  }
}

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
  removeEmptyProjectData();
});

describe('POST /v0/files', () => {
  for (const format of ['png', 'jpeg', 'gif', 'webp'] as const) {
    test(`201 for a real ${format}: every field, sha256 of the bytes, dimensions`, async () => {
      const bytes = await makeImage(format, 37, 23);
      const res = await upload(t, bytes, IMAGE_MIME[format]);
      assert.equal(res.status, 201, res.text);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      const f = res.body;
      assert.deepEqual(Object.keys(f).sort(), FILE_FIELDS);
      assert.match(f.fileId, FILE_ID);
      assert.equal(f.contentType, IMAGE_MIME[format]);
      assert.equal(f.sizeBytes, bytes.length);
      assert.equal(f.sha256, sha256(bytes));
      assert.equal(f.width, 37);
      assert.equal(f.height, 23);
      assert.match(f.createdAt, ISO_MS);
      assert.ok(Math.abs(Date.parse(f.createdAt) - Date.now()) < 60_000);
    });
  }

  test('the same bytes twice are two files', async () => {
    const bytes = await makeImage('png');
    const a = await uploadOk(t, bytes, 'image/png');
    const b = await uploadOk(t, bytes, 'image/png');
    assert.notEqual(a.fileId, b.fileId);
    assert.equal(a.sha256, b.sha256);
  });

  test('bytes of another type than the Content-Type are 400', async () => {
    expectProblem(await upload(t, await makeImage('png'), 'image/jpeg'), 400, 'validation_failed');
    expectProblem(await upload(t, await makeImage('jpeg'), 'image/png'), 400, 'validation_failed');
    expectProblem(await upload(t, await makeImage('gif'), 'image/webp'), 400, 'validation_failed');
    expectProblem(await upload(t, await makeImage('webp'), 'image/gif'), 400, 'validation_failed');
  });

  test('garbage bytes with an image type are 400', async () => {
    const garbage = Buffer.from('this is not an image at all, just some text bytes');
    for (const type of Object.values(IMAGE_MIME)) expectProblem(await upload(t, garbage, type), 400, 'validation_failed');
  });

  test('a PNG magic number followed by garbage is 400', async () => {
    const fake = Buffer.concat([PNG_MAGIC, Buffer.from('garbage garbage garbage garbage garbage')]);
    expectProblem(await upload(t, fake, 'image/png'), 400, 'validation_failed');
  });

  test('a truncated PNG (valid magic and header, body cut in half) is 400', async () => {
    const png = await noisyPng();
    const half = png.subarray(0, Math.floor(png.length / 2));
    expectProblem(await upload(t, half, 'image/png'), 400, 'validation_failed');
  });

  test('a PNG cut inside its header is 400', async () => {
    const png = await makeImage('png');
    expectProblem(await upload(t, png.subarray(0, 20), 'image/png'), 400, 'validation_failed');
  });

  test('image/svg+xml is 415, even with SVG bytes', async () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>');
    expectProblem(await upload(t, svg, 'image/svg+xml'), 415, 'unsupported_media_type');
  });

  test('application/json is 415', async () => {
    expectProblem(await upload(t, Buffer.from('{"fileId":"x"}'), 'application/json'), 415, 'unsupported_media_type');
    expectProblem(await upload(t, await makeImage('png'), 'application/octet-stream'), 415, 'unsupported_media_type');
    expectProblem(await upload(t, await makeImage('jpeg'), 'image/jpg'), 415, 'unsupported_media_type');
    expectProblem(await upload(t, await makeImage('png'), 'image/bmp'), 415, 'unsupported_media_type');
  });

  test('no Content-Type is 415', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/v0/files', headers: { 'x-api-key': t.key }, payload: await makeImage('png') });
    expectProblem(toRes(r), 415, 'unsupported_media_type');
  });

  test('an empty body is 400', async () => {
    expectProblem(await upload(t, Buffer.alloc(0), 'image/png'), 400, 'validation_failed');
  });

  test('exactly 10 MiB is accepted; 10 MiB + 1 byte is 413', async () => {
    const png = await makeImage('png');
    const exact = Buffer.concat([png, Buffer.alloc(10 * MiB - png.length)]);
    assert.equal(exact.length, 10 * MiB);
    const ok = await upload(t, exact, 'image/png');
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.body.sizeBytes, 10 * MiB);

    const over = Buffer.alloc(10 * MiB + 1);
    PNG_MAGIC.copy(over);
    expectProblem(await upload(t, over, 'image/png'), 413, 'payload_too_large');
  });

  test('no API key is 401; a wrong one is 401', async () => {
    const png = await makeImage('png');
    expectProblem(await upload(t, png, 'image/png', null), 401, 'unauthorized');
    expectProblem(await upload(t, png, 'image/png', 'pak_not-a-real-key-0000000000000000'), 401, 'unauthorized');
  });
});

describe('POST /v0/assets', () => {
  let file: Json;
  let bytes: Buffer;
  before(async () => {
    bytes = await makeImage('png', 64, 48);
    file = await uploadOk(t, bytes, 'image/png');
  });

  test('201 with every Asset field and its defaults', async () => {
    const res = await t.req('POST', '/v0/assets', { assetType: 'image', name: 'Logo', fileId: file.fileId });
    assert.equal(res.status, 201, res.text);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.equal(res.headers['idempotent-replayed'], undefined);
    const a = res.body;
    assertAssetShape(a, t.tenantId);
    assert.equal(a.name, 'Logo');
    assert.equal(a.purpose, '');
    assert.deepEqual(a.tags, []);
    assert.equal(a.aiDescription, null);
    assert.equal(a.parentAssetId, null);
    assert.equal(a.hidden, false);
    assert.deepEqual(a.data, { type: 'image', fileId: file.fileId });
    assert.equal(a.lifecycleState, 'active');
    assert.equal(a.trashedAt, null);
    assert.equal(a.deletedAt, null);
    assert.equal(a.createdAt, a.updatedAt);
    assert.ok(Math.abs(Date.parse(a.createdAt) - Date.now()) < 60_000);
    assertSignedLink(a.downloadUrl, DEFAULT_BASE, file.fileId, 'original');
    assertSignedLink(a.previewDownloadUrl, DEFAULT_BASE, file.fileId, 'preview');
  });

  test('purpose and hidden are kept as given', async () => {
    const a = await createAsset(t, { assetType: 'image', name: 'Hero', purpose: 'Homepage hero', hidden: true, fileId: file.fileId });
    assert.equal(a.purpose, 'Homepage hero');
    assert.equal(a.hidden, true);
    const b = await createAsset(t, { assetType: 'image', name: 'Shown', purpose: '', hidden: false, fileId: file.fileId });
    assert.equal(b.purpose, '');
    assert.equal(b.hidden, false);
  });

  test('ids are distinct and sort by creation', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await createAsset(t, { assetType: 'image', name: `n${i}`, fileId: file.fileId })).assetId);
    assert.equal(new Set(ids).size, 4);
    assert.deepEqual([...ids].sort(), ids);
  });

  test('assetType other than image is 400 at /assetType; missing is 400', async () => {
    for (const assetType of ['video', 'IMAGE', '', 'file']) {
      const res = await t.req('POST', '/v0/assets', { assetType, name: 'x', fileId: file.fileId });
      expectProblem(res, 400, 'validation_failed', ['/assetType']);
    }
    expectProblem(await t.req('POST', '/v0/assets', { name: 'x', fileId: file.fileId }), 400, 'validation_failed', ['/assetType']);
  });

  test('name missing or "" is 400 at /name; "x" is accepted', async () => {
    expectProblem(await t.req('POST', '/v0/assets', { assetType: 'image', fileId: file.fileId }), 400, 'validation_failed', ['/name']);
    expectProblem(await t.req('POST', '/v0/assets', { assetType: 'image', name: '', fileId: file.fileId }), 400, 'validation_failed', [
      '/name',
    ]);
    assert.equal((await createAsset(t, { assetType: 'image', name: 'x', fileId: file.fileId })).name, 'x');
  });

  test('fileId missing, unknown, malformed or of another tenant is 400 at /fileId', async () => {
    expectProblem(await t.req('POST', '/v0/assets', { assetType: 'image', name: 'x' }), 400, 'validation_failed', ['/fileId']);
    expectProblem(await t.req('POST', '/v0/assets', { assetType: 'image', name: 'x', fileId: UNKNOWN_FILE }), 400, 'validation_failed', [
      '/fileId',
    ]);
    expectProblem(await t.req('POST', '/v0/assets', { assetType: 'image', name: 'x', fileId: 'nope' }), 400, 'validation_failed', [
      '/fileId',
    ]);
    const other = await t.newTenant('Other');
    const theirs = await uploadOk(t, await makeImage('png'), 'image/png', other.key);
    expectProblem(await t.req('POST', '/v0/assets', { assetType: 'image', name: 'x', fileId: theirs.fileId }), 400, 'validation_failed', [
      '/fileId',
    ]);
  });

  test('wrong types and unknown fields are 400 at their paths', async () => {
    const base = { assetType: 'image', name: 'x', fileId: file.fileId };
    expectProblem(await t.req('POST', '/v0/assets', { ...base, hidden: 'yes' }), 400, 'validation_failed', ['/hidden']);
    expectProblem(await t.req('POST', '/v0/assets', { ...base, purpose: null }), 400, 'validation_failed', ['/purpose']);
    expectProblem(await t.req('POST', '/v0/assets', { ...base, name: 5 }), 400, 'validation_failed', ['/name']);
    expectProblem(await t.req('POST', '/v0/assets', { ...base, tags: ['a'] }), 400, 'validation_failed', ['/tags']);
    expectProblem(await t.req('POST', '/v0/assets', { ...base, lifecycleState: 'active' }), 400, 'validation_failed', ['/lifecycleState']);
    expectProblem(await t.req('POST', '/v0/assets', { ...base, tenantId: t.tenantId }), 400, 'validation_failed', ['/tenantId']);
  });

  test('parentAssetId: a valid parent is kept; unknown or of another tenant is 400 at /parentAssetId', async () => {
    const parent = await createAsset(t, { assetType: 'image', name: 'Parent', fileId: file.fileId });
    const child = await createAsset(t, { assetType: 'image', name: 'Child', fileId: file.fileId, parentAssetId: parent.assetId });
    assert.equal(child.parentAssetId, parent.assetId);
    assert.equal((await t.req('GET', `/v0/assets/${child.assetId}`)).body.parentAssetId, parent.assetId);

    const bad = { assetType: 'image', name: 'Child', fileId: file.fileId };
    expectProblem(await t.req('POST', '/v0/assets', { ...bad, parentAssetId: UNKNOWN_ASSET }), 400, 'validation_failed', [
      '/parentAssetId',
    ]);
    const other = await t.newTenant('Other parent');
    const theirs = await newAsset(t, {}, other.key);
    expectProblem(await t.req('POST', '/v0/assets', { ...bad, parentAssetId: theirs.asset.assetId }), 400, 'validation_failed', [
      '/parentAssetId',
    ]);
  });

  test('PUBLIC_BASE_URL is the base of both links', async () => {
    for (const base of ['https://cdn.example.com', 'https://cdn.example.com/']) {
      const app = await startApp({ PUBLIC_BASE_URL: base });
      try {
        const { file: f, asset } = await newAsset(app);
        assertSignedLink(asset.downloadUrl, 'https://cdn.example.com', f.fileId, 'original');
        assertSignedLink(asset.previewDownloadUrl, 'https://cdn.example.com', f.fileId, 'preview');
        // The link still works against the app itself.
        const { res } = await follow(app, asset.downloadUrl);
        assert.equal(res.status, 200);
      } finally {
        await app.close();
      }
    }
  });
});

describe('POST /v0/assets idempotencyKey', () => {
  let fileId: string;
  before(async () => {
    fileId = (await uploadOk(t, await makeImage('png'), 'image/png')).fileId;
  });
  const body = (key: string, extra: Json = {}) => ({ assetType: 'image', name: 'Idem', fileId, idempotencyKey: key, ...extra });

  test('length 1 and 255 are accepted; "" and 256 are 400 at /idempotencyKey', async () => {
    assert.equal((await t.req('POST', '/v0/assets', body('k'))).status, 201);
    assert.equal((await t.req('POST', '/v0/assets', body('k'.repeat(255)))).status, 201);
    expectProblem(await t.req('POST', '/v0/assets', body('')), 400, 'validation_failed', ['/idempotencyKey']);
    expectProblem(await t.req('POST', '/v0/assets', body('k'.repeat(256))), 400, 'validation_failed', ['/idempotencyKey']);
    expectProblem(await t.req('POST', '/v0/assets', body(null as unknown as string)), 400, 'validation_failed', ['/idempotencyKey']);
  });

  test('same key and same body replays: 201, same asset, idempotent-replayed: true', async () => {
    const first = await t.req('POST', '/v0/assets', body('replay-1', { purpose: 'p' }));
    assert.equal(first.status, 201, first.text);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    // The same body with its keys in another order is the same body.
    const again = await t.req('POST', '/v0/assets', { purpose: 'p', idempotencyKey: 'replay-1', fileId, name: 'Idem', assetType: 'image' });
    assert.equal(again.status, 201, again.text);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body.assetId, first.body.assetId);
    assertAssetShape(again.body, t.tenantId);
    assert.deepEqual(
      { ...again.body, downloadUrl: null, previewDownloadUrl: null },
      { ...first.body, downloadUrl: null, previewDownloadUrl: null },
    );
    assertSignedLink(again.body.downloadUrl, DEFAULT_BASE, fileId, 'original');
    assertSignedLink(again.body.previewDownloadUrl, DEFAULT_BASE, fileId, 'preview');
    const third = await t.req('POST', '/v0/assets', body('replay-1', { purpose: 'p' }));
    assert.equal(third.body.assetId, first.body.assetId);
    assert.equal(third.headers['idempotent-replayed'], 'true');
  });

  test('a replay shows the asset as it is now', async () => {
    const first = await t.req('POST', '/v0/assets', body('replay-now'));
    assert.equal(first.status, 201);
    const patched = await t.req('PATCH', `/v0/assets/${first.body.assetId}`, { name: 'Renamed', tags: ['x'] });
    assert.equal(patched.status, 200, patched.text);
    const again = await t.req('POST', '/v0/assets', body('replay-now'));
    assert.equal(again.status, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body.assetId, first.body.assetId);
    assert.equal(again.body.name, 'Renamed');
    assert.deepEqual(again.body.tags, ['x']);
    assert.equal(again.body.updatedAt, patched.body.updatedAt);
  });

  test('same key with a different body is 422 idempotency_key_reused', async () => {
    const first = await t.req('POST', '/v0/assets', body('reuse-1'));
    assert.equal(first.status, 201);
    expectProblem(await t.req('POST', '/v0/assets', body('reuse-1', { name: 'Other name' })), 422, 'idempotency_key_reused');
    expectProblem(await t.req('POST', '/v0/assets', body('reuse-1', { hidden: true })), 422, 'idempotency_key_reused');
    expectProblem(await t.req('POST', '/v0/assets', body('reuse-1', { purpose: 'added' })), 422, 'idempotency_key_reused');
    // The first asset is untouched and the key still replays it.
    const again = await t.req('POST', '/v0/assets', body('reuse-1'));
    assert.equal(again.status, 201);
    assert.equal(again.body.assetId, first.body.assetId);
    assert.equal(again.body.name, 'Idem');
  });

  test('a request that failed validation does not take the key', async () => {
    expectProblem(await t.req('POST', '/v0/assets', body('after-fail', { fileId: UNKNOWN_FILE })), 400, 'validation_failed', ['/fileId']);
    const ok = await t.req('POST', '/v0/assets', body('after-fail'));
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.headers['idempotent-replayed'], undefined);
  });

  test('10 concurrent requests with one key create one asset', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => t.req('POST', '/v0/assets', body('concurrent-1'))));
    const created = results.filter((r) => r.status === 201);
    assert.ok(created.length >= 1, 'at least one 201');
    for (const r of results) {
      if (r.status !== 201) expectProblem(r, 409, 'idempotency_key_in_progress');
    }
    assert.equal(new Set(created.map((r) => r.body.assetId)).size, 1, 'one asset');
    assert.equal(created.filter((r) => r.headers['idempotent-replayed'] === undefined).length, 1, 'exactly one original response');
    const after = await t.req('POST', '/v0/assets', body('concurrent-1'));
    assert.equal(after.status, 201);
    assert.equal(after.body.assetId, created[0]!.body.assetId);
    assert.equal(after.headers['idempotent-replayed'], 'true');
  });

  test('keys are per tenant: another tenant may use the same key', async () => {
    const mine = await t.req('POST', '/v0/assets', body('shared-key'));
    assert.equal(mine.status, 201);
    const other = await t.newTenant('Same key');
    const theirFile = await uploadOk(t, await makeImage('png'), 'image/png', other.key);
    const theirs = await t.req(
      'POST',
      '/v0/assets',
      { assetType: 'image', name: 'Idem', fileId: theirFile.fileId, idempotencyKey: 'shared-key' },
      { key: other.key },
    );
    assert.equal(theirs.status, 201, theirs.text);
    assert.equal(theirs.headers['idempotent-replayed'], undefined);
    assert.notEqual(theirs.body.assetId, mine.body.assetId);
    assert.equal(theirs.body.tenantId, other.tenantId);
  });
});

describe('GET /v0/assets/{asset_id}', () => {
  test('200 with the asset as created, fresh links', async () => {
    const { asset, file } = await newAsset(t, { purpose: 'Get me', hidden: true });
    const res = await t.req('GET', `/v0/assets/${asset.assetId}`);
    assert.equal(res.status, 200, res.text);
    assertAssetShape(res.body, t.tenantId);
    assert.deepEqual(
      { ...res.body, downloadUrl: null, previewDownloadUrl: null },
      { ...asset, downloadUrl: null, previewDownloadUrl: null },
    );
    assertSignedLink(res.body.downloadUrl, DEFAULT_BASE, file.fileId, 'original');
    assertSignedLink(res.body.previewDownloadUrl, DEFAULT_BASE, file.fileId, 'preview');
  });

  test("unknown, malformed or another tenant's asset is 404", async () => {
    expectProblem(await t.req('GET', `/v0/assets/${UNKNOWN_ASSET}`), 404, 'not_found');
    expectProblem(await t.req('GET', '/v0/assets/nope'), 404, 'not_found');
    const other = await t.newTenant('Get other');
    const { asset } = await newAsset(t, {}, other.key);
    expectProblem(await t.req('GET', `/v0/assets/${asset.assetId}`), 404, 'not_found');
    assert.equal((await t.req('GET', `/v0/assets/${asset.assetId}`, undefined, { key: other.key })).status, 200);
  });

  test('no API key is 401', async () => {
    const { asset } = await newAsset(t);
    expectProblem(await t.req('GET', `/v0/assets/${asset.assetId}`, undefined, { key: null }), 401, 'unauthorized');
  });
});

describe('signed download links', () => {
  test('downloadUrl serves the exact bytes with Content-Type, Cache-Control and nosniff, without an API key', async () => {
    for (const format of ['png', 'jpeg', 'gif', 'webp'] as const) {
      const bytes = await makeImage(format, 50, 40);
      const file = await uploadOk(t, bytes, IMAGE_MIME[format]);
      const asset = await createAsset(t, { assetType: 'image', name: format, fileId: file.fileId });
      const { res, raw } = await follow(t, asset.downloadUrl);
      assert.equal(res.status, 200, res.text);
      assert.ok(raw.equals(bytes), `${format}: the exact uploaded bytes`);
      assert.equal(String(res.headers['content-type']).split(';')[0], IMAGE_MIME[format]);
      const age = maxAge(res);
      assert.ok(age > 3500 && age <= 3600, `max-age ${age}`);
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
    }
  });

  test('previewDownloadUrl serves a WebP at most 320 px wide: 640x480 gives 320x240', async () => {
    const file = await uploadOk(t, await makeImage('jpeg', 640, 480), 'image/jpeg');
    const asset = await createAsset(t, { assetType: 'image', name: 'Big', fileId: file.fileId });
    const { res, raw } = await follow(t, asset.previewDownloadUrl);
    assert.equal(res.status, 200, res.text);
    assert.equal(String(res.headers['content-type']).split(';')[0], 'image/webp');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    const age = maxAge(res);
    assert.ok(age > 3500 && age <= 3600, `max-age ${age}`);
    const meta = await sharp(raw).metadata();
    assert.equal(meta.format, 'webp');
    assert.equal(meta.width, 320);
    assert.equal(meta.height, 240);
  });

  test('a small image is not enlarged: 100x50 gives a 100x50 preview', async () => {
    const file = await uploadOk(t, await makeImage('png', 100, 50), 'image/png');
    const asset = await createAsset(t, { assetType: 'image', name: 'Small', fileId: file.fileId });
    const { res, raw } = await follow(t, asset.previewDownloadUrl);
    assert.equal(res.status, 200, res.text);
    const meta = await sharp(raw).metadata();
    assert.equal(meta.format, 'webp');
    assert.equal(meta.width, 100);
    assert.equal(meta.height, 50);
  });

  test('a tall image keeps its aspect: 200x1000 gives a 200x1000 preview; 1000x2000 gives 320x640', async () => {
    for (const [w, h, pw, ph] of [
      [200, 1000, 200, 1000],
      [1000, 2000, 320, 640],
    ] as const) {
      const file = await uploadOk(t, await makeImage('png', w, h), 'image/png');
      const asset = await createAsset(t, { assetType: 'image', name: 'Tall', fileId: file.fileId });
      const { raw } = await follow(t, asset.previewDownloadUrl);
      const meta = await sharp(raw).metadata();
      assert.deepEqual([meta.format, meta.width, meta.height], ['webp', pw, ph]);
    }
  });

  test('tampered signature, another fileId, missing parameters or changed expires are 403', async () => {
    const { asset } = await newAsset(t);
    const { asset: other } = await newAsset(t);
    const link = asset.downloadUrl as string;
    assert.equal((await follow(t, link)).res.status, 200);
    const sig = new URL(link).searchParams.get('signature')!;
    const expires = new URL(link).searchParams.get('expires')!;
    const flipped = (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1);
    const otherFileId = other.data.fileId as string;
    const u = new URL(link);
    const bad = [
      withParam(link, 'signature', flipped),
      withParam(link, 'signature', sig.slice(0, -1)),
      withParam(link, 'signature', `${sig}A`),
      withParam(link, 'signature', ''),
      withParam(link, 'signature', null),
      withParam(link, 'expires', null),
      withParam(link, 'expires', String(Number(expires) + 1)),
      withParam(link, 'expires', String(Number(expires) + 86400)),
      withParam(link, 'expires', `${expires}.0`),
      withParam(link, 'expires', 'soon'),
      `${u.origin}/files/${otherFileId}${u.search}`,
      `${u.origin}/files/${asset.data.fileId}`,
      // The original's signature does not open the preview, nor the other way round.
      `${u.origin}/files/${asset.data.fileId}/preview${u.search}`,
      `${u.origin}/files/${asset.data.fileId}${new URL(asset.previewDownloadUrl).search}`,
    ];
    for (const l of bad) {
      const { res } = await follow(t, l);
      expectProblem(res, 403, 'forbidden');
    }
    // A tampered fileId that names no file is also 403 (the signature is checked first).
    expectProblem((await follow(t, `${u.origin}/files/${UNKNOWN_FILE}${u.search}`)).res, 403, 'forbidden');
  });

  test('an API key does not replace the signature', async () => {
    const { asset } = await newAsset(t);
    const res = await t.req('GET', `/files/${asset.data.fileId}`);
    expectProblem(res, 403, 'forbidden');
  });

  test('a file whose bytes are gone is 404 even with a valid link', async () => {
    const app = await startApp({ FILE_STORE: 'disk' });
    try {
      const { asset, file } = await newAsset(app);
      assert.equal((await follow(app, asset.downloadUrl)).res.status, 200);
      fs.rmSync(path.join(path.resolve(app.app.config.dataDir), 'files', file.fileId));
      expectProblem((await follow(app, asset.downloadUrl)).res, 404, 'not_found');
      // The preview is kept apart and still served.
      assert.equal((await follow(app, asset.previewDownloadUrl)).res.status, 200);
      await app.req('DELETE', `/v0/assets/${asset.assetId}`);
    } finally {
      await app.close();
    }
  });

  describe('with a known FILE_URL_SECRET', () => {
    let s: TestApp;
    before(async () => {
      s = await startApp({ FILE_URL_SECRET: SECRET });
    });
    after(async () => {
      await s.close();
    });
    const sign = (fileId: string, variant: string, expires: number) =>
      createHmac('sha256', SECRET).update(`${fileId}:${variant}:${expires}`).digest('base64url');

    test('the handed-out signature is HMAC-SHA256(secret, "fileId:variant:expires") in base64url', async () => {
      const { asset, file } = await newAsset(s);
      for (const [link, variant] of [
        [asset.downloadUrl, 'original'],
        [asset.previewDownloadUrl, 'preview'],
      ] as const) {
        const u = new URL(link);
        assert.equal(u.searchParams.get('signature'), sign(file.fileId, variant, Number(u.searchParams.get('expires'))));
      }
    });

    test('a self-signed link in the future works; one in the past is 403', async () => {
      const { file, bytes } = await newAsset(s);
      const future = Math.floor(Date.now() / 1000) + 600;
      const ok = await follow(
        s,
        `${DEFAULT_BASE}/files/${file.fileId}?expires=${future}&signature=${sign(file.fileId, 'original', future)}`,
      );
      assert.equal(ok.res.status, 200, ok.res.text);
      assert.ok(ok.raw.equals(bytes));
      const age = maxAge(ok.res);
      assert.ok(age > 590 && age <= 600, `max-age is the seconds left: ${age}`);
      const okPreview = await follow(
        s,
        `${DEFAULT_BASE}/files/${file.fileId}/preview?expires=${future}&signature=${sign(file.fileId, 'preview', future)}`,
      );
      assert.equal(okPreview.res.status, 200, okPreview.res.text);
      assert.equal((await sharp(okPreview.raw).metadata()).format, 'webp');

      for (const past of [Math.floor(Date.now() / 1000) - 1, Math.floor(Date.now() / 1000) - 7200, 0]) {
        const expired = await follow(
          s,
          `${DEFAULT_BASE}/files/${file.fileId}?expires=${past}&signature=${sign(file.fileId, 'original', past)}`,
        );
        expectProblem(expired.res, 403, 'forbidden');
        const expiredPreview = await follow(
          s,
          `${DEFAULT_BASE}/files/${file.fileId}/preview?expires=${past}&signature=${sign(file.fileId, 'preview', past)}`,
        );
        expectProblem(expiredPreview.res, 403, 'forbidden');
      }
    });

    test('a link signed with another secret is 403', async () => {
      const { file } = await newAsset(s);
      const future = Math.floor(Date.now() / 1000) + 600;
      const wrong = createHmac('sha256', 'another-secret-that-is-long-enough-000000')
        .update(`${file.fileId}:original:${future}`)
        .digest('base64url');
      expectProblem((await follow(s, `${DEFAULT_BASE}/files/${file.fileId}?expires=${future}&signature=${wrong}`)).res, 403, 'forbidden');
    });

    test('a link from another app with another secret is 403 here', async () => {
      const { asset } = await newAsset(t);
      expectProblem((await follow(s, asset.downloadUrl)).res, 403, 'forbidden');
    });
  });
});

describe('PATCH /v0/assets/{asset_id}', () => {
  test('name, purpose, hidden and tags change; updatedAt moves; the rest stays', async () => {
    const { asset } = await newAsset(t, { purpose: 'before' });
    const res = await t.req('PATCH', `/v0/assets/${asset.assetId}`, { name: 'New name', purpose: '', hidden: true, tags: ['a', 'b'] });
    assert.equal(res.status, 200, res.text);
    const p = res.body;
    assertAssetShape(p, t.tenantId);
    assert.equal(p.name, 'New name');
    assert.equal(p.purpose, '');
    assert.equal(p.hidden, true);
    assert.deepEqual(p.tags, ['a', 'b']);
    assert.equal(p.createdAt, asset.createdAt);
    assert.ok(p.updatedAt > asset.updatedAt, 'updatedAt moves forward');
    assert.deepEqual(p.data, asset.data);
    assert.equal(p.lifecycleState, 'active');
    assert.equal(p.trashedAt, null);
    const got = (await t.req('GET', `/v0/assets/${asset.assetId}`)).body;
    assert.deepEqual({ ...got, downloadUrl: null, previewDownloadUrl: null }, { ...p, downloadUrl: null, previewDownloadUrl: null });

    const only = (await t.req('PATCH', `/v0/assets/${asset.assetId}`, { hidden: false })).body;
    assert.equal(only.hidden, false);
    assert.equal(only.name, 'New name');
    assert.deepEqual(only.tags, ['a', 'b']);
    assert.deepEqual((await t.req('PATCH', `/v0/assets/${asset.assetId}`, { tags: [] })).body.tags, []);
  });

  test('an empty body changes nothing and returns the asset', async () => {
    const { asset } = await newAsset(t);
    const res = await t.req('PATCH', `/v0/assets/${asset.assetId}`, {});
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.updatedAt, asset.updatedAt);
    assert.equal(res.body.name, asset.name);
  });

  test('tags: 50 tags of 64 characters are accepted; 51, "" and 65 characters are 400', async () => {
    const { asset } = await newAsset(t);
    const url = `/v0/assets/${asset.assetId}`;
    const fifty = Array.from({ length: 50 }, (_, i) => `${i}`.padEnd(64, 't'));
    const ok = await t.req('PATCH', url, { tags: fifty });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body.tags, fifty);
    assert.deepEqual((await t.req('PATCH', url, { tags: ['x'] })).body.tags, ['x']);
    expectProblem(await t.req('PATCH', url, { tags: [...fifty, 'one-more'] }), 400, 'validation_failed', ['/tags']);
    expectProblem(await t.req('PATCH', url, { tags: [''] }), 400, 'validation_failed', ['/tags/0']);
    expectProblem(await t.req('PATCH', url, { tags: ['ok', 't'.repeat(65)] }), 400, 'validation_failed', ['/tags/1']);
    expectProblem(await t.req('PATCH', url, { tags: 'a' }), 400, 'validation_failed', ['/tags']);
    expectProblem(await t.req('PATCH', url, { tags: [1] }), 400, 'validation_failed', ['/tags/0']);
    expectProblem(await t.req('PATCH', url, { tags: null }), 400, 'validation_failed', ['/tags']);
    // Nothing changed by the failures.
    assert.deepEqual((await t.req('GET', url)).body.tags, ['x']);
  });

  test('name "" or null is 400 at /name; hidden must be boolean', async () => {
    const { asset } = await newAsset(t);
    const url = `/v0/assets/${asset.assetId}`;
    expectProblem(await t.req('PATCH', url, { name: '' }), 400, 'validation_failed', ['/name']);
    expectProblem(await t.req('PATCH', url, { name: null }), 400, 'validation_failed', ['/name']);
    expectProblem(await t.req('PATCH', url, { hidden: 'true' }), 400, 'validation_failed', ['/hidden']);
    expectProblem(await t.req('PATCH', url, { purpose: null }), 400, 'validation_failed', ['/purpose']);
  });

  test('trashing sets trashedAt, restoring clears it; a trashed asset keeps its links', async () => {
    const { asset, bytes } = await newAsset(t);
    const url = `/v0/assets/${asset.assetId}`;
    const trashed = await t.req('PATCH', url, { lifecycleState: 'trashed' });
    assert.equal(trashed.status, 200, trashed.text);
    assert.equal(trashed.body.lifecycleState, 'trashed');
    assert.match(trashed.body.trashedAt, ISO_MS);
    assert.ok(Math.abs(Date.parse(trashed.body.trashedAt) - Date.now()) < 60_000);
    assert.equal(trashed.body.deletedAt, null);
    assert.ok(trashed.body.updatedAt > asset.updatedAt);
    const got = (await t.req('GET', url)).body;
    assert.equal(got.lifecycleState, 'trashed');
    assert.equal(got.trashedAt, trashed.body.trashedAt);
    assert.equal(typeof got.downloadUrl, 'string');
    assert.equal(typeof got.previewDownloadUrl, 'string');
    assert.ok((await follow(t, got.downloadUrl)).raw.equals(bytes));

    // Trashing again keeps the first trashedAt; other fields can change while trashed.
    const again = (await t.req('PATCH', url, { lifecycleState: 'trashed', name: 'In the bin' })).body;
    assert.equal(again.trashedAt, trashed.body.trashedAt);
    assert.equal(again.name, 'In the bin');

    const restored = await t.req('PATCH', url, { lifecycleState: 'active' });
    assert.equal(restored.status, 200, restored.text);
    assert.equal(restored.body.lifecycleState, 'active');
    assert.equal(restored.body.trashedAt, null);
    assert.equal((await t.req('GET', url)).body.trashedAt, null);
  });

  test('lifecycleState "deleted" or anything else is 400; unknown fields are 400', async () => {
    const { asset } = await newAsset(t);
    const url = `/v0/assets/${asset.assetId}`;
    expectProblem(await t.req('PATCH', url, { lifecycleState: 'deleted' }), 400, 'validation_failed', ['/lifecycleState']);
    expectProblem(await t.req('PATCH', url, { lifecycleState: 'archived' }), 400, 'validation_failed', ['/lifecycleState']);
    expectProblem(await t.req('PATCH', url, { color: 'red' }), 400, 'validation_failed', ['/color']);
    expectProblem(await t.req('PATCH', url, { fileId: asset.data.fileId }), 400, 'validation_failed', ['/fileId']);
    expectProblem(await t.req('PATCH', url, { aiDescription: 'x' }), 400, 'validation_failed', ['/aiDescription']);
    // Read-only fields are accepted only as read (issue 19): any other value is 400 naming them.
    expectProblem(await t.req('PATCH', url, { parentAssetId: asset.assetId }), 400, 'validation_failed', ['/parentAssetId']);
    expectProblem(await t.req('PATCH', url, { data: { ...asset.data, type: 'video' } }), 400, 'validation_failed', ['/data']);
    assert.equal((await t.req('GET', url)).body.lifecycleState, 'active');
  });

  test('unknown asset is 404; a deleted asset is 409', async () => {
    expectProblem(await t.req('PATCH', `/v0/assets/${UNKNOWN_ASSET}`, { name: 'x' }), 404, 'not_found');
    const { asset } = await newAsset(t);
    assert.equal((await t.req('DELETE', `/v0/assets/${asset.assetId}`)).status, 204);
    expectProblem(await t.req('PATCH', `/v0/assets/${asset.assetId}`, { name: 'x' }), 409, 'conflict');
    expectProblem(await t.req('PATCH', `/v0/assets/${asset.assetId}`, { lifecycleState: 'active' }), 409, 'conflict');
    expectProblem(await t.req('PATCH', `/v0/assets/${asset.assetId}`, {}), 409, 'conflict');
    const got = (await t.req('GET', `/v0/assets/${asset.assetId}`)).body;
    assert.equal(got.lifecycleState, 'deleted');
    assert.equal(got.name, 'An asset');
  });
});

describe('DELETE /v0/assets/{asset_id}', () => {
  test('204; the asset reads as deleted with null links; the old link is 404; DELETE again is 204', async () => {
    const { asset } = await newAsset(t);
    const res = await t.req('DELETE', `/v0/assets/${asset.assetId}`);
    assert.equal(res.status, 204, res.text);
    assert.equal(res.text, '');
    const got = await t.req('GET', `/v0/assets/${asset.assetId}`);
    assert.equal(got.status, 200);
    assertAssetShape(got.body, t.tenantId);
    assert.equal(got.body.lifecycleState, 'deleted');
    assert.match(got.body.deletedAt, ISO_MS);
    assert.ok(Math.abs(Date.parse(got.body.deletedAt) - Date.now()) < 60_000);
    assert.equal(got.body.downloadUrl, null);
    assert.equal(got.body.previewDownloadUrl, null);
    assert.deepEqual(got.body.data, asset.data);
    expectProblem((await follow(t, asset.downloadUrl)).res, 404, 'not_found');
    expectProblem((await follow(t, asset.previewDownloadUrl)).res, 404, 'not_found');

    const again = await t.req('DELETE', `/v0/assets/${asset.assetId}`);
    assert.equal(again.status, 204, again.text);
    assert.equal((await t.req('GET', `/v0/assets/${asset.assetId}`)).body.deletedAt, got.body.deletedAt);
  });

  test('a trashed asset can be deleted', async () => {
    const { asset } = await newAsset(t);
    await t.req('PATCH', `/v0/assets/${asset.assetId}`, { lifecycleState: 'trashed' });
    assert.equal((await t.req('DELETE', `/v0/assets/${asset.assetId}`)).status, 204);
    const got = (await t.req('GET', `/v0/assets/${asset.assetId}`)).body;
    assert.equal(got.lifecycleState, 'deleted');
    assert.equal(got.downloadUrl, null);
  });

  test('unknown asset is 404', async () => {
    expectProblem(await t.req('DELETE', `/v0/assets/${UNKNOWN_ASSET}`), 404, 'not_found');
    expectProblem(await t.req('DELETE', '/v0/assets/nope'), 404, 'not_found');
  });

  test('two assets on one file: the file lives while one of them does', async () => {
    const bytes = await makeImage('png', 30, 30, [1, 2, 3]);
    const file = await uploadOk(t, bytes, 'image/png');
    const a = await createAsset(t, { assetType: 'image', name: 'A', fileId: file.fileId });
    const b = await createAsset(t, { assetType: 'image', name: 'B', fileId: file.fileId });
    assert.equal((await t.req('DELETE', `/v0/assets/${a.assetId}`)).status, 204);
    // Both links name the same file, so both still work: the file is alive.
    assert.ok((await follow(t, b.downloadUrl)).raw.equals(bytes));
    assert.equal((await follow(t, b.previewDownloadUrl)).res.status, 200);
    assert.ok((await follow(t, a.downloadUrl)).raw.equals(bytes));
    // The file can still be used for a new asset.
    const c = await createAsset(t, { assetType: 'image', name: 'C', fileId: file.fileId });
    assert.equal((await t.req('DELETE', `/v0/assets/${b.assetId}`)).status, 204);
    assert.ok((await follow(t, c.downloadUrl)).raw.equals(bytes));
    assert.equal((await t.req('DELETE', `/v0/assets/${c.assetId}`)).status, 204);
    expectProblem((await follow(t, b.downloadUrl)).res, 404, 'not_found');
    expectProblem((await follow(t, c.previewDownloadUrl)).res, 404, 'not_found');
    expectProblem(await t.req('POST', '/v0/assets', { assetType: 'image', name: 'D', fileId: file.fileId }), 400, 'validation_failed', [
      '/fileId',
    ]);
  });

  test('a trashed asset still uses its file', async () => {
    const bytes = await makeImage('png', 31, 31, [4, 5, 6]);
    const file = await uploadOk(t, bytes, 'image/png');
    const a = await createAsset(t, { assetType: 'image', name: 'A', fileId: file.fileId });
    const b = await createAsset(t, { assetType: 'image', name: 'B', fileId: file.fileId });
    assert.equal((await t.req('PATCH', `/v0/assets/${a.assetId}`, { lifecycleState: 'trashed' })).status, 200);
    assert.equal((await t.req('DELETE', `/v0/assets/${b.assetId}`)).status, 204);
    const got = (await t.req('GET', `/v0/assets/${a.assetId}`)).body;
    assert.ok((await follow(t, got.downloadUrl)).raw.equals(bytes));
    // Restored, it still works.
    const restored = (await t.req('PATCH', `/v0/assets/${a.assetId}`, { lifecycleState: 'active' })).body;
    assert.ok((await follow(t, restored.downloadUrl)).raw.equals(bytes));
  });

  test('deleting the last asset of a file while creating one on it: the new asset never points at removed bytes', async () => {
    for (let i = 0; i < 5; i++) {
      const bytes = await makeImage('png', 20 + i, 20);
      const file = await uploadOk(t, bytes, 'image/png');
      const a = await createAsset(t, { assetType: 'image', name: 'A', fileId: file.fileId });
      const [del, created] = await Promise.all([
        t.req('DELETE', `/v0/assets/${a.assetId}`),
        t.req('POST', '/v0/assets', { assetType: 'image', name: 'B', fileId: file.fileId }),
      ]);
      assert.equal(del.status, 204, del.text);
      if (created.status === 201) {
        assert.ok((await follow(t, created.body.downloadUrl)).raw.equals(bytes), 'the new asset keeps the file alive');
      } else {
        expectProblem(created, 400, 'validation_failed', ['/fileId']);
        expectProblem((await follow(t, a.downloadUrl)).res, 404, 'not_found');
      }
    }
  });

  test('deleting concurrently two assets on one file removes the file', async () => {
    const file = await uploadOk(t, await makeImage('png', 32, 32), 'image/png');
    const a = await createAsset(t, { assetType: 'image', name: 'A', fileId: file.fileId });
    const b = await createAsset(t, { assetType: 'image', name: 'B', fileId: file.fileId });
    const [ra, rb] = await Promise.all([t.req('DELETE', `/v0/assets/${a.assetId}`), t.req('DELETE', `/v0/assets/${b.assetId}`)]);
    assert.equal(ra.status, 204, ra.text);
    assert.equal(rb.status, 204, rb.text);
    expectProblem((await follow(t, a.downloadUrl)).res, 404, 'not_found');
    expectProblem(await t.req('POST', '/v0/assets', { assetType: 'image', name: 'D', fileId: file.fileId }), 400, 'validation_failed', [
      '/fileId',
    ]);
  });
});

/** The whole life of a file on one store: upload, assets, download, delete, bytes gone. */
function storeSuite(store: 'disk' | 'database'): void {
  describe(`FILE_STORE=${store}`, () => {
    let s: TestApp;
    before(async () => {
      s = await startApp({ FILE_STORE: store });
    });
    after(async () => {
      await s.close();
    });

    const onDisk = (name: string) => path.join(path.resolve(s.app.config.dataDir), 'files', name);
    const blobs = async (fileId: string) =>
      (
        await s.app.db
          .selectFrom('file_blobs')
          .select('key')
          .where('key', 'in', [fileId, `${fileId}.preview`])
          .execute()
      ).length;

    test('upload, asset, download, delete; the bytes are removed from the store', async () => {
      assert.equal(s.app.config.fileStore, store);
      const bytes = await makeImage('jpeg', 640, 480, [10, 200, 10]);
      const file = await uploadOk(s, bytes, 'image/jpeg');
      assert.equal(file.sha256, sha256(bytes));
      assert.deepEqual([file.width, file.height, file.sizeBytes], [640, 480, bytes.length]);
      if (store === 'disk') {
        assert.ok(fs.readFileSync(onDisk(file.fileId)).equals(bytes), 'the bytes are on disk');
        assert.ok(fs.existsSync(onDisk(`${file.fileId}.preview`)), 'the preview is on disk');
        assert.equal(await blobs(file.fileId), 0);
      } else {
        assert.equal(await blobs(file.fileId), 2, 'bytes and preview are in the database');
        assert.equal(fs.existsSync(onDisk(file.fileId)), false, 'nothing written to disk');
      }

      const a = await createAsset(s, { assetType: 'image', name: 'A', fileId: file.fileId });
      const b = await createAsset(s, { assetType: 'image', name: 'B', fileId: file.fileId });
      const { res, raw } = await follow(s, a.downloadUrl);
      assert.equal(res.status, 200);
      assert.ok(raw.equals(bytes));
      assert.equal(String(res.headers['content-type']).split(';')[0], 'image/jpeg');
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      const preview = await follow(s, a.previewDownloadUrl);
      assert.deepEqual([(await sharp(preview.raw).metadata()).width, (await sharp(preview.raw).metadata()).height], [320, 240]);

      assert.equal((await s.req('DELETE', `/v0/assets/${a.assetId}`)).status, 204);
      assert.ok((await follow(s, b.downloadUrl)).raw.equals(bytes), 'still served through B');
      if (store === 'disk') assert.ok(fs.existsSync(onDisk(file.fileId)));
      else assert.equal(await blobs(file.fileId), 2);

      assert.equal((await s.req('DELETE', `/v0/assets/${b.assetId}`)).status, 204);
      if (store === 'disk') {
        assert.equal(fs.existsSync(onDisk(file.fileId)), false, 'the bytes are gone from disk');
        assert.equal(fs.existsSync(onDisk(`${file.fileId}.preview`)), false, 'the preview is gone from disk');
      } else {
        assert.equal(await blobs(file.fileId), 0, 'the bytes are gone from the database');
      }
      expectProblem((await follow(s, b.downloadUrl)).res, 404, 'not_found');
      expectProblem((await follow(s, b.previewDownloadUrl)).res, 404, 'not_found');
      expectProblem(await s.req('POST', '/v0/assets', { assetType: 'image', name: 'C', fileId: file.fileId }), 400, 'validation_failed', [
        '/fileId',
      ]);
      assert.equal((await s.req('DELETE', `/v0/assets/${b.assetId}`)).status, 204);
    });
  });
}
storeSuite('disk');
storeSuite('database');

describe('cross-tenant isolation', () => {
  test('another tenant cannot GET, PATCH or DELETE an asset, nor use its file or parent', async () => {
    const { asset, file, bytes } = await newAsset(t);
    const other = await t.newTenant('Intruder');
    const as = { key: other.key };
    expectProblem(await t.req('GET', `/v0/assets/${asset.assetId}`, undefined, as), 404, 'not_found');
    expectProblem(await t.req('PATCH', `/v0/assets/${asset.assetId}`, { name: 'mine now' }, as), 404, 'not_found');
    expectProblem(await t.req('PATCH', `/v0/assets/${asset.assetId}`, { lifecycleState: 'trashed' }, as), 404, 'not_found');
    expectProblem(await t.req('DELETE', `/v0/assets/${asset.assetId}`, undefined, as), 404, 'not_found');
    expectProblem(await t.req('POST', '/v0/assets', { assetType: 'image', name: 'x', fileId: file.fileId }, as), 400, 'validation_failed', [
      '/fileId',
    ]);
    const theirFile = await uploadOk(t, await makeImage('png'), 'image/png', other.key);
    expectProblem(
      await t.req('POST', '/v0/assets', { assetType: 'image', name: 'x', fileId: theirFile.fileId, parentAssetId: asset.assetId }, as),
      400,
      'validation_failed',
      ['/parentAssetId'],
    );
    // The owner sees it unchanged and can still download it.
    const got = (await t.req('GET', `/v0/assets/${asset.assetId}`)).body;
    assert.equal(got.name, asset.name);
    assert.equal(got.lifecycleState, 'active');
    assert.ok((await follow(t, got.downloadUrl)).raw.equals(bytes));
  });
});
