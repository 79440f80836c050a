import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, ISO_MS, type Json, ok, startApp, type TestApp } from '../helpers.js';

// Sites (issue 48 §1) through the API: the answer's fields, the snippet, every bound of name and
// origins just inside and just outside, round trips, pagination, deletion and tenant isolation.

const BASE = 'https://pam.example.com';
let t: TestApp;
before(async () => {
  t = await startApp({ PUBLIC_BASE_URL: BASE });
});
after(async () => t.close());

const site = async (body: Json = {}): Promise<Json> =>
  ok(await t.req('POST', '/v0/sites', { name: 'Shop', origins: ['https://shop.example'], ...body }), 201);

describe('sites', () => {
  test('answers every field; the snippet names the public key, not the id', async () => {
    const s = await site({ origins: ['https://shop.example', 'http://shop-x.localhost:8080'] });
    assert.deepEqual(Object.keys(s).sort(), ['createdAt', 'lastSeenAt', 'name', 'origins', 'siteId', 'siteKey', 'snippet', 'updatedAt']);
    assert.match(s.siteId, /^site_[a-z0-9]{26}$/);
    assert.match(s.siteKey, /^[A-Za-z0-9_-]{22}$/);
    assert.ok(!s.siteKey.includes(s.siteId.slice(5)) && !s.siteKey.includes(t.tenantId.slice(7)));
    assert.equal(s.snippet, `<script src="${BASE}/_pam/site.js?site=${s.siteKey}"></script>`);
    assert.deepEqual(s.origins, ['https://shop.example', 'http://shop-x.localhost:8080']);
    assert.equal(s.lastSeenAt, null);
    assert.match(s.createdAt, ISO_MS);
    assert.equal(s.updatedAt, s.createdAt);
    assert.notEqual((await site()).siteKey, s.siteKey);
    assert.deepEqual(ok(await t.req('GET', `/v0/sites/${s.siteId}`)), s);
  });

  test('name: 1 to 255 characters', async () => {
    await site({ name: 'x'.repeat(255) });
    await site({ name: 'x' });
    expectProblem(await t.req('POST', '/v0/sites', { name: 'x'.repeat(256), origins: ['https://a.example'] }), 400, 'validation_failed', [
      '/name',
    ]);
    expectProblem(await t.req('POST', '/v0/sites', { name: '', origins: ['https://a.example'] }), 400, 'validation_failed', ['/name']);
    expectProblem(await t.req('POST', '/v0/sites', { origins: ['https://a.example'] }), 400, 'validation_failed', ['/name']);
    expectProblem(await t.req('POST', '/v0/sites', { name: 'a', origins: ['https://a.example'], extra: 1 }), 400, 'validation_failed', [
      '/extra',
    ]);
  });

  test('origins: 1 to 20', async () => {
    const twenty = Array.from({ length: 20 }, (_, i) => `https://s${i}.example`);
    assert.equal((await site({ origins: twenty })).origins.length, 20);
    expectProblem(await t.req('POST', '/v0/sites', { name: 'a', origins: [...twenty, 'https://s20.example'] }), 400, 'validation_failed', [
      '/origins',
    ]);
    expectProblem(await t.req('POST', '/v0/sites', { name: 'a', origins: [] }), 400, 'validation_failed', ['/origins']);
    expectProblem(await t.req('POST', '/v0/sites', { name: 'a' }), 400, 'validation_failed', ['/origins']);
  });

  test('origins are normalised: lower case, no default port', async () => {
    const s = await site({
      origins: ['HTTPS://Shop.Example:443', 'https://shop.example:8443', 'http://LOCALHOST:3000', 'http://127.0.0.1:5000'],
    });
    assert.deepEqual(s.origins, ['https://shop.example', 'https://shop.example:8443', 'http://localhost:3000', 'http://127.0.0.1:5000']);
    expectProblem(
      await t.req('POST', '/v0/sites', { name: 'a', origins: ['https://shop.example', 'https://SHOP.example:443'] }),
      400,
      'validation_failed',
      ['/origins/1'],
    );
  });

  for (const bad of [
    'https://shop.example/',
    'https://shop.example/path',
    'https://shop.example?x=1',
    'https://shop.example#x',
    'http://shop.example',
    'http://localhost.example',
    'http://10.0.0.1',
    'ftp://shop.example',
    'javascript:alert(1)',
    'shop.example',
    '//shop.example',
    'https://user:pw@shop.example',
    'https://*.shop.example',
    'https://shop_x.example',
    'https://',
    ' https://shop.example',
  ]) {
    test(`a bad origin is 400 at its pointer: ${JSON.stringify(bad)}`, async () => {
      const res = await t.req('POST', '/v0/sites', { name: 'a', origins: ['https://ok.example', bad] });
      expectProblem(res, 400, 'validation_failed', ['/origins/1']);
      assert.equal(res.body.errors.length, 1);
    });
  }

  test('PATCH name and origins; a read sent back changes nothing; read-only fields are 400', async () => {
    const s = await site();
    assert.deepEqual(ok(await t.req('PATCH', `/v0/sites/${s.siteId}`, s)), s);
    // lastSeenAt moves by itself: a stale one sent back is no error.
    assert.deepEqual(ok(await t.req('PATCH', `/v0/sites/${s.siteId}`, { ...s, lastSeenAt: '2026-01-01T00:00:00.000Z' })), s);
    const renamed = ok(await t.req('PATCH', `/v0/sites/${s.siteId}`, { name: 'Store', origins: ['https://store.example'] }));
    assert.equal(renamed.name, 'Store');
    assert.deepEqual(renamed.origins, ['https://store.example']);
    assert.equal(renamed.siteKey, s.siteKey);
    assert.ok(renamed.updatedAt > s.updatedAt);
    expectProblem(await t.req('PATCH', `/v0/sites/${s.siteId}`, { siteKey: 'other' }), 400, 'validation_failed', ['/siteKey']);
    expectProblem(await t.req('PATCH', `/v0/sites/${s.siteId}`, { snippet: '<script></script>' }), 400, 'validation_failed', ['/snippet']);
    expectProblem(
      await t.req('PATCH', `/v0/sites/${s.siteId}`, { origins: ['https://a.example', 'http://a.example'] }),
      400,
      'validation_failed',
      ['/origins/1'],
    );
    expectProblem(await t.req('PATCH', `/v0/sites/${s.siteId}`, { origins: [] }), 400, 'validation_failed', ['/origins']);
    expectProblem(await t.req('PATCH', `/v0/sites/${s.siteId}`, { name: '' }), 400, 'validation_failed', ['/name']);
  });

  test('list: newest first, by cursor, with the total', async () => {
    const other = await t.newTenant('Lister');
    const made: string[] = [];
    for (let i = 0; i < 3; i++)
      made.push(ok(await t.req('POST', '/v0/sites', { name: `s${i}`, origins: ['https://a.example'] }, { key: other.key }), 201).siteId);
    const first = ok(await t.req('GET', '/v0/sites?limit=2', undefined, { key: other.key }));
    assert.deepEqual(
      first.items.map((s: Json) => s.siteId),
      [made[2], made[1]],
    );
    assert.equal(first.hasMore, true);
    assert.equal(first.totalCount, 3);
    const second = ok(await t.req('GET', `/v0/sites?limit=2&cursor=${first.nextCursor}`, undefined, { key: other.key }));
    assert.deepEqual(
      second.items.map((s: Json) => s.siteId),
      [made[0]],
    );
    assert.equal(second.hasMore, false);
    assert.equal(second.nextCursor, null);
    assert.equal(second.items[0].snippet.startsWith(`<script src="${BASE}/_pam/site.js?site=`), true);
    expectProblem(await t.req('GET', '/v0/sites?limit=0'), 400, 'validation_failed', ['/limit']);
    expectProblem(await t.req('GET', '/v0/sites?limit=101'), 400, 'validation_failed', ['/limit']);
    expectProblem(await t.req('GET', '/v0/sites?cursor=nonsense'), 400, 'validation_failed', ['/cursor']);
    expectProblem(await t.req('GET', '/v0/sites?siteId=x'), 400, 'validation_failed');
  });

  test("another tenant's site is not found; its list does not show it", async () => {
    const s = await site();
    const other = await t.newTenant('Other');
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { name: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      expectProblem(await t.req(method, `/v0/sites/${s.siteId}`, body, { key: other.key }), 404, 'not_found');
    }
    assert.equal(ok(await t.req('GET', '/v0/sites', undefined, { key: other.key })).totalCount, 0);
    expectProblem(await t.req('GET', `/v0/sites/site_${'0'.repeat(26)}`), 404, 'not_found');
    // A malformed id is refused by its pattern, as every area's ids are.
    expectProblem(await t.req('GET', '/v0/sites/nope'), 400, 'validation_failed', ['/site_id']);
    assert.equal(ok(await t.req('GET', `/v0/sites/${s.siteId}`)).siteId, s.siteId);
  });

  test('DELETE removes the site and its experiences', async () => {
    const s = await site();
    const e = ok(
      await t.req('POST', '/v0/experiences', {
        siteId: s.siteId,
        name: 'E',
        urlMatch: { type: 'exact', value: '/' },
        changes: [{ selector: 'h1', action: 'hide' }],
      }),
      201,
    );
    assert.equal((await t.req('DELETE', `/v0/sites/${s.siteId}`)).status, 204);
    expectProblem(await t.req('GET', `/v0/sites/${s.siteId}`), 404, 'not_found');
    expectProblem(await t.req('GET', `/v0/experiences/${e.experienceId}`), 404, 'not_found');
    expectProblem(await t.req('DELETE', `/v0/sites/${s.siteId}`), 404, 'not_found');
  });

  test('Idempotency-Key replays the first answer', async () => {
    const headers = { 'idempotency-key': 'site-once' };
    const first = ok(await t.req('POST', '/v0/sites', { name: 'Once', origins: ['https://once.example'] }, { headers }), 201);
    const again = await t.req('POST', '/v0/sites', { name: 'Once', origins: ['https://once.example'] }, { headers });
    assert.equal(again.status, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body.siteId, first.siteId);
    expectProblem(
      await t.req('POST', '/v0/sites', { name: 'Twice', origins: ['https://once.example'] }, { headers }),
      422,
      'idempotency_key_reused',
    );
  });

  test('without an API key: 401', async () => {
    expectProblem(await t.req('GET', '/v0/sites', undefined, { key: null }), 401, 'unauthorized');
    expectProblem(await t.req('POST', '/v0/sites', { name: 'a', origins: ['https://a.example'] }, { key: null }), 401, 'unauthorized');
  });
});
