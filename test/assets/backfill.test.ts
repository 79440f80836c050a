import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { backfillRound } from '../../src/assets/backfill.js';
import { fileStores } from '../../src/assets/store.js';
import { makeImage } from '../fixtures.js';
import { freshDatabase, ok, startApp, type TestApp, type TestDatabase, toRes } from '../helpers.js';
import { fallbackHost, link, publishedPage, visit } from '../site/serve-helpers.js';
import { until } from '../until.js';

// Issue 46 §5: files uploaded before the widths existed get them from a background job, which
// never holds up start-up, shares the work between instances by leases (a conditional UPDATE),
// and picks up a file whose holder died (kill -9) once its lease has ended.

let database: TestDatabase;
let t: TestApp;
let host: string;
const shown: { fileId: string; path: string }[] = [];

/** A file as an earlier version left it: no widths recorded, none in the store. */
async function asBefore(app: TestApp, fileIds: string[], leaseUntil: string | null = null) {
  await app.app.db.updateTable('files').set({ renditions: null, renditions_lease_until: leaseUntil }).where('id', 'in', fileIds).execute();
  for (const id of fileIds) {
    await app.app.db.deleteFrom('file_blobs').where('key', 'like', `${id}.%`).where('key', '!=', `${id}.preview`).execute();
  }
}

const page = (app: TestApp, path: string) => visit(app, host, path).then((res) => res.body);

before(async () => {
  database = await freshDatabase();
  t = await startApp({ DATABASE_URL: database.url, FILE_STORE: 'database' });
  host = await fallbackHost(t);
  for (const width of [1000, 700, 400]) {
    const bytes = await makeImage('jpeg', width, width / 2);
    const file = ok(
      toRes(
        await t.app.inject({
          method: 'POST',
          url: '/v0/files',
          headers: { 'content-type': 'image/jpeg', 'x-api-key': t.key },
          payload: bytes,
        }),
      ),
      201,
    );
    const asset = ok(await t.req('POST', '/v0/assets', { assetType: 'image', name: 'I', fileId: file.fileId }), 201);
    const section = { layout: 'hero', heading: 'Hero', body: 'b', imageAssetId: asset.assetId, imageAlt: 'a' };
    const p = await publishedPage(t, { content: { headline: 'H', subheadline: '', sections: [section] } });
    const path = `/backfill-${width}`;
    await link(t, path, { targetType: 'page', pageId: p.pageId });
    shown.push({ fileId: file.fileId, path });
  }
});
after(async () => {
  await t.close();
  await database.drop();
});

describe('the widths of earlier files', () => {
  test('two instances at once: each file is made by one of them, once', async () => {
    const ids = shown.map((s) => s.fileId);
    await asBefore(t, ids);
    const stores = fileStores(t.app.db, '', 'database');
    const rounds = await Promise.all([backfillRound(t.app.db, stores), backfillRound(t.app.db, stores)]);
    assert.equal(rounds[0] + rounds[1], 3, `made ${rounds.join(' + ')}`);
    const rows = await t.app.db.selectFrom('files').select(['id', 'renditions', 'renditions_lease_until']).where('id', 'in', ids).execute();
    const byId = new Map(rows.map((r) => [r.id, r]));
    assert.deepEqual(JSON.parse(byId.get(ids[0] ?? '')?.renditions ?? ''), { widths: [320, 640, 960], webp: true });
    assert.deepEqual(JSON.parse(byId.get(ids[2] ?? '')?.renditions ?? ''), { widths: [320], webp: true });
    for (const r of rows) assert.equal(r.renditions_lease_until, null, 'the lease is given back');
    assert.equal(await backfillRound(t.app.db, stores), 0, 'nothing left to do');
    // A page rendered from now on lists them.
    const html = await page(t, shown[0]?.path ?? '');
    assert.match(html, /<source type="image\/webp" srcset="[^"]*\/w960\.webp 960w/);
    const res = await visit(t, host, `/_pam/files/${ids[0]}/w960`);
    assert.equal(res.statusCode, 200);
    assert.equal((await sharp(res.rawPayload).metadata()).width, 960);
  });

  test('a file whose bytes are gone gets none, and is not tried again', async () => {
    const bytes = await makeImage('png', 500, 250);
    const upload = await t.app.inject({
      method: 'POST',
      url: '/v0/files',
      headers: { 'content-type': 'image/png', 'x-api-key': t.key },
      payload: bytes,
    });
    const { fileId } = ok(toRes(upload), 201) as { fileId: string };
    const stores = fileStores(t.app.db, '', 'database');
    await asBefore(t, [fileId]);
    await t.app.db.deleteFrom('file_blobs').where('key', '=', fileId).execute();
    assert.equal(await backfillRound(t.app.db, stores), 1);
    const row = await t.app.db.selectFrom('files').select('renditions').where('id', '=', fileId).executeTakeFirstOrThrow();
    assert.deepEqual(JSON.parse(row.renditions ?? ''), { widths: [], webp: false });
    assert.equal(await backfillRound(t.app.db, stores), 0);
  });
  test('after a restart: start-up does not wait, a dead holder is waited out, then every file has its widths', async () => {
    const ids = shown.map((s) => s.fileId);
    const [held, ...free] = ids as [string, ...string[]];
    // The first file is held by a process killed mid-way: its lease runs two more seconds.
    await asBefore(t, free);
    await asBefore(t, [held], new Date(Date.now() + 2000).toISOString());
    await t.app.close();
    const started = Date.now();
    const again = await startApp({ DATABASE_URL: database.url, FILE_STORE: 'database' }, { renditions: { pollMs: 200 } });
    try {
      // Served at once, without the held file's widths: nothing waits for the job.
      const first = await page(again, shown[0]?.path ?? '');
      assert.match(first, /<img [^>]*srcset="[^"]*\/preview 320w/, 'the preview stands in meanwhile');
      assert.doesNotMatch(first, /<picture>/);
      const rows = () => again.app.db.selectFrom('files').select(['id', 'renditions']).where('id', 'in', ids).execute();
      await until('the free files are made', async () =>
        (await rows()).filter((r) => r.id !== held && r.renditions !== null).length === 2 ? true : undefined,
      );
      await until('the held file is made once its lease ended', async () =>
        (await rows()).every((r) => r.renditions !== null) ? true : undefined,
      );
      assert.ok(Date.now() - started >= 2000, 'not before the dead holder’s lease ended');
      // Pages first rendered now list the widths. The held file's page, rendered before, keeps its
      // cached document (keyed by the page, not its images: docs/decisions.md), whose srcset still works.
      for (const { path, fileId } of shown.slice(1)) {
        assert.match(
          await page(again, path),
          new RegExp(`<picture><source type="image/webp" srcset="/_pam/files/${fileId}/w320\\.webp 320w`),
          path,
        );
      }
      for (const name of ['w320', 'w640', 'w960', 'w960.webp', 'webp']) {
        assert.equal((await visit(again, host, `/_pam/files/${held}/${name}`)).statusCode, 200, name);
      }
    } finally {
      t = again;
    }
  });
});
