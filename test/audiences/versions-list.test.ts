import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startApp, type Json, type TestApp, ok } from '../helpers.js';

// GET /v0/pages/{page_id}/audiences/{audience_id}/versions (extension): an audience's versions,
// newest first, keyset-paginated; what the console's versions timeline reads.

let t: TestApp;
let pageId: string;
let audienceId: string;
before(async () => {
  t = await startApp();
  pageId = ok(await t.req('POST', '/v0/pages', { name: 'P', title: 'P', pageContext: 'c', pageType: 'inbound' }), 201).pageId;
  audienceId = ok(await t.req('POST', `/v0/pages/${pageId}/audiences`, {}), 201).audienceId;
  for (let i = 0; i < 4; i++) ok(await t.req('POST', `/v0/pages/${pageId}/audiences/${audienceId}/versions`, {}), 201);
});
after(async () => t?.close());
const url = (query = '') => `/v0/pages/${pageId}/audiences/${audienceId}/versions${query}`;

describe('listing an audience versions', () => {
  test('newest first, every version once across pages, with the total', async () => {
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const body: Json = ok(await t.req('GET', url(`?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)));
      assert.equal(body.totalCount, 5);
      seen.push(...body.items.map((v: Json) => v.versionNumber));
      cursor = body.nextCursor;
    } while (cursor);
    assert.deepEqual(seen, [5, 4, 3, 2, 1]);
    const first = ok(await t.req('GET', url())).items[0];
    assert.equal(first.audienceId, audienceId);
    assert.equal(first.status, 'draft');
  });

  test('bounds: limit 1 and 100 are taken, 0 and 101 are 400; an unknown parameter is 400', async () => {
    assert.equal(ok(await t.req('GET', url('?limit=1'))).items.length, 1);
    assert.equal(ok(await t.req('GET', url('?limit=100'))).items.length, 5);
    assert.equal((await t.req('GET', url('?limit=0'))).status, 400);
    assert.equal((await t.req('GET', url('?limit=101'))).status, 400);
    assert.equal((await t.req('GET', url('?status=draft'))).status, 400);
    assert.equal((await t.req('GET', url('?cursor=garbage'))).status, 400);
  });

  test("a cursor of another audience is 400; another tenant's audience, an unknown one and a read of another page are 404", async () => {
    const other = ok(await t.req('POST', `/v0/pages/${pageId}/audiences`, {}), 201).audienceId;
    const cursor = ok(await t.req('GET', url('?limit=1'))).nextCursor;
    const res = await t.req('GET', `/v0/pages/${pageId}/audiences/${other}/versions?cursor=${encodeURIComponent(cursor)}`);
    assert.equal(res.status, 400, res.text);
    const stranger = await t.newTenant('Other');
    assert.equal((await t.req('GET', url(), undefined, { key: stranger.key })).status, 404);
    assert.equal((await t.req('GET', `/v0/pages/${pageId}/audiences/audience_unknown/versions`)).status, 404);
    const otherPage = ok(await t.req('POST', '/v0/pages', { name: 'Q', title: 'Q', pageContext: 'c', pageType: 'inbound' }), 201).pageId;
    assert.equal((await t.req('GET', `/v0/pages/${otherPage}/audiences/${audienceId}/versions`)).status, 404);
    assert.equal((await t.req('GET', url(), undefined, { key: null })).status, 401);
  });
});
