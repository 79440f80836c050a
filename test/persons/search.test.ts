import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, ok, startApp, type Json, type TestApp } from '../helpers.js';

// GET /v0/persons/search (extension): what the console's person pickers ask, through HTTP.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const search = async (query: Record<string, string>, key?: string): Promise<Json> =>
  ok(await t.req('GET', `/v0/persons/search?${new URLSearchParams(query)}`, undefined, key ? { key } : {}));
const names = (page: Json): string[] => page.items.map((p: Json) => p.name);

describe('GET /v0/persons/search', () => {
  test('matches the name, the email or the domain, A-Z folded, newest first, with cursors', async () => {
    const { key } = await t.newTenant('search');
    const made = async (body: Json) => ok(await t.req('POST', '/v0/persons', body, { key }), 201);
    await made({ name: 'Ada Lovelace', email: 'ada@engines.example' });
    await made({ name: 'Grace Hopper', domain: 'navy.example' });
    await made({ name: 'Alan Turing', email: 'ALAN@Bletchley.example' });
    await made({ name: '100% real_name' });

    assert.deepEqual(names(await search({ query: 'LOVE' }, key)), ['Ada Lovelace']);
    assert.deepEqual(names(await search({ query: 'navy' }, key)), ['Grace Hopper']);
    assert.deepEqual(names(await search({ query: 'bletchley' }, key)), ['Alan Turing']);
    // LIKE's wildcards are taken literally.
    assert.deepEqual(names(await search({ query: '%' }, key)), ['100% real_name']);
    assert.deepEqual(names(await search({ query: '_' }, key)), ['100% real_name']);
    assert.deepEqual(names(await search({ query: 'nobody' }, key)), []);
    const all = await search({}, key);
    assert.deepEqual(names(all), ['100% real_name', 'Alan Turing', 'Grace Hopper', 'Ada Lovelace']);
    assert.equal(all.totalCount, 4);

    const a = await search({ query: 'a', limit: '2' }, key);
    assert.equal(a.totalCount, 4);
    assert.equal(a.items.length, 2);
    assert.ok(a.nextCursor);
    const rest = await search({ query: 'a', limit: '2', cursor: a.nextCursor }, key);
    assert.deepEqual([...names(a), ...names(rest)], names(all));
    // A cursor of another text is refused.
    expectProblem(await t.req('GET', `/v0/persons/search?query=b&cursor=${a.nextCursor}`, undefined, { key }), 400, 'validation_failed', [
      '/cursor',
    ]);
  });

  test('another tenant sees none of them; bounds of the text', async () => {
    const { key } = await t.newTenant('other');
    ok(await t.req('POST', '/v0/persons', { name: 'Only Mine' }), 201);
    assert.deepEqual(names(await search({ query: 'only mine' }, key)), []);
    assert.deepEqual(names(await search({ query: 'only mine' })), ['Only Mine']);
    ok(await t.req('GET', `/v0/persons/search?query=${'x'.repeat(255)}`));
    expectProblem(await t.req('GET', `/v0/persons/search?query=${'x'.repeat(256)}`), 400, 'validation_failed', ['/query']);
    expectProblem(await t.req('GET', '/v0/persons/search?q=x'), 400, 'validation_failed');
  });
});
