import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, startApp, type Json, type TestApp, ok } from '../helpers.js';

// Topic and entry operations around the reference: get, update, delete, through HTTP only.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});
async function newTenantTopics() {
  const tenant = await t.newTenant('Topics');
  const key = tenant.key;
  const first = ok(await t.req('POST', '/v0/topics', { title: 'First' }, { key }), 201);
  const second = ok(await t.req('POST', '/v0/topics', { title: 'Second' }, { key }), 201);
  return { key, first, second };
}
async function eventTypes(key: string): Promise<string[]> {
  return (ok(await t.req('GET', '/v0/events?limit=100', undefined, { key })).items as Json[]).map((e) => e.type);
}

describe('topics', () => {
  test('GET a topic with its entries; another tenant gets 404', async () => {
    const { key, first } = await newTenantTopics();
    const e1 = ok(
      await t.req('POST', `/v0/topics/${first.topicId}/entries`, { content: { type: 'text', content: 'b' }, sortOrder: 5 }, { key }),
      201,
    );
    const e0 = ok(
      await t.req('POST', `/v0/topics/${first.topicId}/entries`, { content: { type: 'text', content: 'a' }, sortOrder: 1 }, { key }),
      201,
    );
    const got = ok(await t.req('GET', `/v0/topics/${first.topicId}`, undefined, { key }));
    assert.deepEqual(
      got.entries.map((e: Json) => e.topicEntryId),
      [e0.topicEntryId, e1.topicEntryId],
    );
    assert.equal(got.isDefault, true);
    expectProblem(await t.req('GET', `/v0/topics/${first.topicId}`), 404, 'not_found');
    expectProblem(await t.req('GET', '/v0/topics/topic_01h0000000000000000000000a', undefined, { key }), 404, 'not_found');
  });

  test('PATCH title, purpose, sortOrder; an empty patch changes nothing', async () => {
    const { key, second } = await newTenantTopics();
    const patched = ok(await t.req('PATCH', `/v0/topics/${second.topicId}`, { title: 'Renamed', purpose: 'Why', sortOrder: 0 }, { key }));
    assert.equal(patched.title, 'Renamed');
    assert.equal(patched.purpose, 'Why');
    assert.equal(patched.sortOrder, 0);
    assert.ok(patched.updatedAt > second.updatedAt);
    assert.equal(ok(await t.req('PATCH', `/v0/topics/${second.topicId}`, { purpose: null }, { key })).purpose, null);
    const same = ok(await t.req('PATCH', `/v0/topics/${second.topicId}`, {}, { key }));
    assert.equal(same.updatedAt, ok(await t.req('GET', `/v0/topics/${second.topicId}`, undefined, { key })).updatedAt);
    assert.ok((await eventTypes(key)).includes('topic.updated'));
  });

  test('bounds: title 1+, sortOrder 0..2^53-1, isDefault only true, no unknown fields', async () => {
    const { key, first, second } = await newTenantTopics();
    const url = `/v0/topics/${second.topicId}`;
    expectProblem(await t.req('PATCH', url, { title: '' }, { key }), 400, 'validation_failed', ['/title']);
    assert.equal(ok(await t.req('PATCH', url, { title: 'x' }, { key })).title, 'x');
    assert.equal(ok(await t.req('PATCH', url, { sortOrder: 9007199254740991 }, { key })).sortOrder, 9007199254740991);
    expectProblem(await t.req('PATCH', url, { sortOrder: 9007199254740992 }, { key }), 400, 'validation_failed', ['/sortOrder']);
    expectProblem(await t.req('PATCH', url, { sortOrder: -1 }, { key }), 400, 'validation_failed', ['/sortOrder']);
    expectProblem(await t.req('PATCH', url, { sortOrder: 1.5 }, { key }), 400, 'validation_failed', ['/sortOrder']);
    // false only as read (issue 19): the default topic cannot be told false; another topic already is.
    expectProblem(await t.req('PATCH', `/v0/topics/${first.topicId}`, { isDefault: false }, { key }), 400, 'validation_failed', [
      '/isDefault',
    ]);
    const notDefault = ok(await t.req('GET', url, undefined, { key }));
    assert.deepEqual(ok(await t.req('PATCH', url, { isDefault: false }, { key })), notDefault);
    expectProblem(await t.req('PATCH', url, { isDefault: 'false' }, { key }), 400, 'validation_failed', ['/isDefault']);
    expectProblem(await t.req('PATCH', url, { colour: 'red' }, { key }), 400, 'validation_failed', ['/colour']);
  });

  test('isDefault: true moves the default; the default cannot be deleted', async () => {
    const { key, first, second } = await newTenantTopics();
    expectProblem(await t.req('DELETE', `/v0/topics/${first.topicId}`, undefined, { key }), 409, 'conflict');
    const promoted = ok(await t.req('PATCH', `/v0/topics/${second.topicId}`, { isDefault: true }, { key }));
    assert.equal(promoted.isDefault, true);
    assert.equal(ok(await t.req('GET', `/v0/topics/${first.topicId}`, undefined, { key })).isDefault, false);
    const all = ok(await t.req('GET', '/v0/topics', undefined, { key })).items as Json[];
    assert.equal(all.filter((x) => x.isDefault).length, 1);
    expectProblem(await t.req('DELETE', `/v0/topics/${second.topicId}`, undefined, { key }), 409, 'conflict');
    assert.equal((await t.req('DELETE', `/v0/topics/${first.topicId}`, undefined, { key })).status, 204);
  });

  test('concurrent promotions leave exactly one default', async () => {
    const { key, first, second } = await newTenantTopics();
    const third = ok(await t.req('POST', '/v0/topics', { title: 'Third' }, { key }), 201);
    const results = await Promise.all(
      [first, second, third].map((x) => t.req('PATCH', `/v0/topics/${x.topicId}`, { isDefault: true }, { key })),
    );
    for (const r of results) assert.ok(r.status === 200 || r.status === 409, r.text);
    const all = ok(await t.req('GET', '/v0/topics', undefined, { key })).items as Json[];
    assert.equal(all.filter((x) => x.isDefault).length, 1);
  });

  test('DELETE removes the topic with its entries; again is 404', async () => {
    const { key, second } = await newTenantTopics();
    const entry = ok(
      await t.req('POST', `/v0/topics/${second.topicId}/entries`, { content: { type: 'text', content: 'x' } }, { key }),
      201,
    );
    expectProblem(await t.req('DELETE', `/v0/topics/${second.topicId}`), 404, 'not_found');
    assert.equal((await t.req('DELETE', `/v0/topics/${second.topicId}`, undefined, { key })).status, 204);
    expectProblem(await t.req('GET', `/v0/topics/${second.topicId}`, undefined, { key }), 404, 'not_found');
    expectProblem(await t.req('GET', `/v0/topics/${second.topicId}/entries/${entry.topicEntryId}`, undefined, { key }), 404, 'not_found');
    expectProblem(await t.req('DELETE', `/v0/topics/${second.topicId}`, undefined, { key }), 404, 'not_found');
    assert.ok((await eventTypes(key)).includes('topic.deleted'));
  });
});

describe('topic entries', () => {
  test('GET, PATCH and DELETE an entry; each change moves the topic updatedAt', async () => {
    const { key, first } = await newTenantTopics();
    const base = `/v0/topics/${first.topicId}/entries`;
    const entry = ok(await t.req('POST', base, { content: { type: 'text', content: 'Old' } }, { key }), 201);
    assert.deepEqual(ok(await t.req('GET', `${base}/${entry.topicEntryId}`, undefined, { key })), entry);
    const before = ok(await t.req('GET', `/v0/topics/${first.topicId}`, undefined, { key })).updatedAt;
    const patched = ok(
      await t.req('PATCH', `${base}/${entry.topicEntryId}`, { content: { type: 'faq', content: 'New' }, sortOrder: 7 }, { key }),
    );
    assert.deepEqual(patched.content, { type: 'faq', content: 'New' });
    assert.equal(patched.sortOrder, 7);
    assert.ok(patched.updatedAt > entry.updatedAt);
    const mid = ok(await t.req('GET', `/v0/topics/${first.topicId}`, undefined, { key })).updatedAt;
    assert.ok(mid > before);
    expectProblem(
      await t.req('PATCH', `${base}/${entry.topicEntryId}`, { content: { type: '', content: 'x' } }, { key }),
      400,
      'validation_failed',
      ['/content/type'],
    );
    expectProblem(await t.req('PATCH', `${base}/${entry.topicEntryId}`, { content: { type: 'x' } }, { key }), 400, 'validation_failed', [
      '/content/content',
    ]);
    expectProblem(await t.req('PATCH', `${base}/${entry.topicEntryId}`, { topicId: 'x' }, { key }), 400, 'validation_failed', ['/topicId']);
    expectProblem(await t.req('PATCH', `${base}/${entry.topicEntryId}`, { sortOrder: 1 }), 404, 'not_found');
    assert.equal((await t.req('DELETE', `${base}/${entry.topicEntryId}`, undefined, { key })).status, 204);
    assert.ok(ok(await t.req('GET', `/v0/topics/${first.topicId}`, undefined, { key })).updatedAt > mid);
    expectProblem(await t.req('GET', `${base}/${entry.topicEntryId}`, undefined, { key }), 404, 'not_found');
    expectProblem(await t.req('DELETE', `${base}/${entry.topicEntryId}`, undefined, { key }), 404, 'not_found');
    const types = await eventTypes(key);
    assert.ok(types.includes('topic_entry.updated') && types.includes('topic_entry.deleted'));
  });

  test('an entry is found only under its own topic', async () => {
    const { key, first, second } = await newTenantTopics();
    const entry = ok(await t.req('POST', `/v0/topics/${first.topicId}/entries`, { content: { type: 'text', content: 'x' } }, { key }), 201);
    expectProblem(await t.req('GET', `/v0/topics/${second.topicId}/entries/${entry.topicEntryId}`, undefined, { key }), 404, 'not_found');
  });
});
