import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, startApp, type Json, type TestApp } from '../helpers.js';
import { makeImage } from '../fixtures.js';

// The Idempotency-Key request header on every POST of the API, through HTTP only.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });
let n = 0;
const freshKey = () => `key-${Date.now()}-${++n}`;

async function count(url: string): Promise<number> {
  const res = await t.req('GET', url);
  assert.equal(res.status, 200, res.text);
  return res.body.totalCount;
}

describe('Idempotency-Key header', () => {
  test('a retried create replays the first answer and creates one resource', async () => {
    const before = await count('/v0/persons');
    const key = freshKey();
    const first = await t.req('POST', '/v0/persons', { name: 'Replay Person' }, withKey(key));
    assert.equal(first.status, 201, first.text);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    const second = await t.req('POST', '/v0/persons', { name: 'Replay Person' }, withKey(key));
    assert.equal(second.status, 201, second.text);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.deepEqual(second.body, first.body);
    assert.equal(await count('/v0/persons'), before + 1);
  });

  test('the same key with another body is 422 idempotency_key_reused, and nothing is created', async () => {
    const key = freshKey();
    assert.equal((await t.req('POST', '/v0/persons', { name: 'First body' }, withKey(key))).status, 201);
    const before = await count('/v0/persons');
    const res = await t.req('POST', '/v0/persons', { name: 'Second body' }, withKey(key));
    expectProblem(res, 422, 'idempotency_key_reused');
    assert.equal(await count('/v0/persons'), before);
  });

  test('the same key on another endpoint is 422 (keys are per tenant, bound to their request)', async () => {
    const key = freshKey();
    assert.equal((await t.req('POST', '/v0/persons', { name: 'Somebody' }, withKey(key))).status, 201);
    expectProblem(await t.req('POST', '/v0/topics', { title: 'Somebody' }, withKey(key)), 422, 'idempotency_key_reused');
  });

  test('key order in the body does not count as a difference', async () => {
    const key = freshKey();
    const a = await t.req('POST', '/v0/persons', { name: 'Order', email: 'o@example.com' }, withKey(key));
    const b = await t.req('POST', '/v0/persons', { email: 'o@example.com', name: 'Order' }, withKey(key));
    assert.equal(b.headers['idempotent-replayed'], 'true');
    assert.equal(b.body.personId, a.body.personId);
  });

  test('keys belong to their tenant: another tenant with the same key creates its own', async () => {
    const other = await t.newTenant('Other');
    const key = freshKey();
    const mine = await t.req('POST', '/v0/persons', { name: 'Same' }, withKey(key));
    const theirs = await t.req('POST', '/v0/persons', { name: 'Same' }, { key: other.key, ...withKey(key) });
    assert.equal(theirs.status, 201);
    assert.equal(theirs.headers['idempotent-replayed'], undefined);
    assert.notEqual(theirs.body.personId, mine.body.personId);
  });

  test('concurrent requests with one key create exactly one audience', async () => {
    const page = (await t.req('POST', '/v0/pages', { name: 'P', title: 'T', pageContext: 'c', pageType: 'inbound' })).body as Json;
    const key = freshKey();
    const results = await Promise.all(
      Array.from({ length: 8 }, () => t.req('POST', `/v0/pages/${page.pageId}/audiences`, { customName: 'Once' }, withKey(key))),
    );
    const created = results.filter((r) => r.status === 201);
    for (const r of results) assert.ok(r.status === 201 || r.status === 409, r.text);
    assert.ok(created.length >= 1);
    assert.equal(new Set(created.map((r) => r.body.audienceId)).size, 1);
    assert.equal(await count(`/v0/pages/${page.pageId}/audiences`), 1);
  });

  test('a failed request does not consume its key', async () => {
    const key = freshKey();
    expectProblem(await t.req('POST', '/v0/persons', { name: '' }, withKey(key)), 400, 'validation_failed', ['/name']);
    const res = await t.req('POST', '/v0/persons', { name: '' }, withKey(key));
    expectProblem(res, 400, 'validation_failed', ['/name']);
    const ok = await t.req('POST', '/v0/persons', { name: 'Fixed' }, withKey(key));
    assert.equal(ok.status, 201);
  });

  test('bounds: 255 characters are accepted, 256 and an empty or non-ASCII key are 400 naming the header', async () => {
    assert.equal((await t.req('POST', '/v0/topics', { title: 'Bound' }, withKey('k'.repeat(255)))).status, 201);
    expectProblem(await t.req('POST', '/v0/topics', { title: 'Bound' }, withKey('k'.repeat(256))), 400, 'validation_failed', [
      '/idempotency-key',
    ]);
    expectProblem(await t.req('POST', '/v0/topics', { title: 'Bound' }, withKey('')), 400, 'validation_failed', ['/idempotency-key']);
    expectProblem(await t.req('POST', '/v0/topics', { title: 'Bound' }, withKey('has space')), 400, 'validation_failed', [
      '/idempotency-key',
    ]);
  });

  test('actions replay their 200 answer: cancelling a version twice with one key', async () => {
    const page = (await t.req('POST', '/v0/pages', { name: 'Q', title: 'T', pageContext: 'c', pageType: 'inbound' })).body as Json;
    const audience = (await t.req('POST', `/v0/pages/${page.pageId}/audiences`, {})).body as Json;
    const base = `/v0/pages/${page.pageId}/audiences/${audience.audienceId}/versions`;
    const version = (await t.req('POST', base, {})).body as Json;
    const key = freshKey();
    const first = await t.req('POST', `${base}/${version.versionId}/cancel`, {}, withKey(key));
    assert.equal(first.status, 200, first.text);
    const again = await t.req('POST', `${base}/${version.versionId}/cancel`, {}, withKey(key));
    assert.equal(again.status, 200, again.text);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.body, first.body);
  });

  test('a file upload is stored once', async () => {
    const key = freshKey();
    const bytes = await makeImage('png');
    const send = () =>
      t.app.inject({
        method: 'POST',
        url: '/v0/files',
        headers: { 'x-api-key': t.key, 'content-type': 'image/png', 'idempotency-key': key },
        payload: bytes,
      });
    const a = await send();
    const b = await send();
    assert.equal(a.statusCode, 201, a.body);
    assert.equal(b.statusCode, 201, b.body);
    assert.equal(b.headers['idempotent-replayed'], 'true');
    assert.equal(JSON.parse(b.body).fileId, JSON.parse(a.body).fileId);
  });

  test('the reference body key still governs where it exists (person logs)', async () => {
    const person = (await t.req('POST', '/v0/persons', { name: 'Logged' })).body as Json;
    const body = { source: 's', type: 't', payload: {}, idempotencyKey: 'body-key' };
    const a = await t.req('POST', `/v0/persons/${person.personId}/logs`, body, withKey(freshKey()));
    const b = await t.req('POST', `/v0/persons/${person.personId}/logs`, body, withKey(freshKey()));
    assert.equal(b.headers['idempotent-replayed'], 'true');
    assert.equal(b.body.personLogId ?? b.body.id, a.body.personLogId ?? a.body.id);
  });

  test('every POST of the API documents the header', async () => {
    const doc = (await t.req('GET', '/openapi.json')).body as Json;
    for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
      if (!path.startsWith('/v0/') || !item.post) continue;
      const names = (item.post.parameters ?? []).filter((p: Json) => p.in === 'header').map((p: Json) => p.name.toLowerCase());
      assert.ok(names.includes('idempotency-key'), `${path} documents Idempotency-Key`);
    }
  });
});
