import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, startApp, type Json, type TestApp, ok } from '../helpers.js';

// The audience operations around the reference: PATCH, archive, restore, the list's status
// filter, the route-key and home-page rules, through HTTP only.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

async function newPage(name = 'Page'): Promise<Json> {
  return ok(await t.req('POST', '/v0/pages', { name, title: 'Title', pageContext: 'ctx', pageType: 'inbound' }), 201);
}
async function newAudience(pageId: string, body: Json = {}): Promise<Json> {
  return ok(await t.req('POST', `/v0/pages/${pageId}/audiences`, body), 201);
}
const at = (a: Json) => `/v0/pages/${a.pageId}/audiences/${a.audienceId}`;
const patch = (a: Json, body: Json, key?: string) => t.req('PATCH', at(a), body, key === undefined ? {} : { key });
async function eventsOf(type: string): Promise<Json[]> {
  return ok(await t.req('GET', `/v0/events?type=${type}&limit=100`)).items;
}

describe('PATCH audience', () => {
  test('changes the fields given and recomputes the names; returns the Audience', async () => {
    const page = await newPage();
    const person = ok(await t.req('POST', '/v0/persons', { name: 'Jane Doe', domain: 'acme.com' }), 201);
    const audience = await newAudience(page.pageId);
    assert.match(audience.computedName, /^Audience \d+$/);

    const linked = ok(await patch(audience, { personId: person.personId }));
    assert.equal(linked.personId, person.personId);
    assert.equal(linked.computedName, 'Jane Doe (acme.com)');
    assert.equal(linked.effectiveName, 'Jane Doe (acme.com)');

    const named = ok(await patch(audience, { customName: 'VIP', actionUrlOverride: 'https://example.com/x', actionFormIdOverride: 'f1' }));
    assert.equal(named.customName, 'VIP');
    assert.equal(named.effectiveName, 'VIP');
    assert.equal(named.computedName, 'Jane Doe (acme.com)');
    assert.equal(named.actionUrlOverride, 'https://example.com/x');
    assert.equal(named.actionFormIdOverride, 'f1');

    const cleared = ok(await patch(audience, { customName: null, personId: null, actionUrlOverride: null }));
    assert.equal(cleared.customName, null);
    assert.equal(cleared.personId, null);
    assert.equal(cleared.actionUrlOverride, null);
    assert.equal(cleared.computedName, audience.computedName);
    assert.equal(cleared.effectiveName, audience.computedName);
    assert.equal(cleared.actionFormIdOverride, 'f1', 'fields absent keep their value');

    assert.deepEqual(ok(await t.req('GET', at(audience))), cleared);
    const updates = (await eventsOf('audience.updated')).filter((e) => e.payload.data.audienceId === audience.audienceId);
    assert.equal(updates.length, 3);
  });

  test('an empty patch changes nothing and emits nothing', async () => {
    const page = await newPage();
    const audience = await newAudience(page.pageId);
    const before = (await eventsOf('audience.updated')).length;
    assert.deepEqual(ok(await patch(audience, {})), audience);
    assert.equal((await eventsOf('audience.updated')).length, before);
  });

  test('metadataOverride merges field by field; null clears it', async () => {
    const page = await newPage();
    const audience = await newAudience(page.pageId, { metadataOverride: { title: 'T1' } });
    const merged = ok(await patch(audience, { metadataOverride: { description: 'D1' } }));
    assert.deepEqual(merged.metadataOverride, { title: 'T1', description: 'D1' });
    assert.equal(merged.effectiveMetadata.title, 'T1');
    assert.equal(merged.effectiveMetadata.description, 'D1');
    const cleared = ok(await patch(audience, { metadataOverride: null }));
    assert.equal(cleared.metadataOverride, undefined);
    expectProblem(await patch(audience, { metadataOverride: { nope: 'x' } }), 400, 'validation_failed', ['/metadataOverride/nope']);
  });

  test('bounds: customName 1-255, personRouteKey 1-64 of its pattern, absolute http(s) URLs', async () => {
    const page = await newPage();
    const audience = await newAudience(page.pageId);
    assert.equal(ok(await patch(audience, { customName: 'n'.repeat(255) })).customName.length, 255);
    expectProblem(await patch(audience, { customName: 'n'.repeat(256) }), 400, 'validation_failed', ['/customName']);
    expectProblem(await patch(audience, { customName: '' }), 400, 'validation_failed', ['/customName']);
    assert.equal(ok(await patch(audience, { personRouteKey: `A${'b'.repeat(63)}` })).personRouteKey.length, 64);
    expectProblem(await patch(audience, { personRouteKey: `A${'b'.repeat(64)}` }), 400, 'validation_failed', ['/personRouteKey']);
    for (const bad of ['', '-jane', '_jane', 'jane doe', 'jane/doe', 'jané']) {
      expectProblem(await patch(audience, { personRouteKey: bad }), 400, 'validation_failed', ['/personRouteKey']);
    }
    assert.equal(ok(await patch(audience, { personRouteKey: 'Jane_Doe-2' })).personRouteKey, 'Jane_Doe-2');
    assert.equal(ok(await patch(audience, { actionUrlOverride: 'http://example.com' })).actionUrlOverride, 'http://example.com');
    for (const bad of ['example.com', 'ftp://example.com/x', 'javascript:alert(1)', '/relative', 'https://']) {
      expectProblem(await patch(audience, { actionUrlOverride: bad }), 400, 'validation_failed', ['/actionUrlOverride']);
    }
    expectProblem(await patch(audience, { flags: ['other'] }), 400, 'validation_failed', ['/flags/0']);
    expectProblem(await patch(audience, { status: 'archived' }), 400, 'validation_failed', ['/status']);
    expectProblem(await patch(audience, { personId: 'person_01h0000000000000000000000a' }), 400, 'validation_failed', ['/personId']);
  });

  test('another tenant, an unknown audience or a deleted page is 404', async () => {
    const page = await newPage();
    const audience = await newAudience(page.pageId);
    const other = await t.newTenant('Other');
    expectProblem(await patch(audience, { customName: 'x' }, other.key), 404, 'not_found');
    expectProblem(await t.req('POST', `${at(audience)}/archive`, {}, { key: other.key }), 404, 'not_found');
    expectProblem(await t.req('PATCH', `/v0/pages/${page.pageId}/audiences/audience_01h0000000000000000000000a`, {}), 404, 'not_found');
    const otherPage = await newPage('Other page');
    expectProblem(await t.req('PATCH', `/v0/pages/${otherPage.pageId}/audiences/${audience.audienceId}`, {}), 404, 'not_found');
  });
});

describe('personRouteKey is unique among the live audiences of a page', () => {
  test('a clash at creation or update is 409 naming /personRouteKey; other pages are free', async () => {
    const page = await newPage();
    const a = await newAudience(page.pageId, { personRouteKey: 'jane' });
    expectProblem(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, { personRouteKey: 'jane' }), 409, 'conflict', [
      '/personRouteKey',
    ]);
    const b = await newAudience(page.pageId, { personRouteKey: 'john' });
    expectProblem(await patch(b, { personRouteKey: 'jane' }), 409, 'conflict', ['/personRouteKey']);
    assert.equal(ok(await patch(a, { personRouteKey: 'jane' })).personRouteKey, 'jane', 'its own key is no clash');
    const elsewhere = await newPage('Elsewhere');
    assert.equal((await newAudience(elsewhere.pageId, { personRouteKey: 'jane' })).personRouteKey, 'jane');
    assert.equal(ok(await t.req('GET', at(b))).personRouteKey, 'john', 'a refused patch changes nothing');
  });

  test('concurrent patches of two audiences to one key: exactly one wins', async () => {
    const page = await newPage();
    const audiences = await Promise.all([1, 2, 3, 4].map(() => newAudience(page.pageId)));
    const results = await Promise.all(audiences.map((a) => patch(a, { personRouteKey: 'race' })));
    assert.equal(results.filter((r) => r.status === 200).length, 1, results.map((r) => r.status).join());
    for (const r of results.filter((r) => r.status !== 200)) expectProblem(r, 409, 'conflict', ['/personRouteKey']);
  });

  test('concurrent identical patches of one audience both land', async () => {
    const page = await newPage();
    const a = await newAudience(page.pageId);
    const results = await Promise.all([patch(a, { personRouteKey: 'same' }), patch(a, { personRouteKey: 'same' })]);
    assert.deepEqual(
      results.map((r) => r.status),
      [200, 200],
    );
  });
});

describe('home_page', () => {
  test('setting it on one audience removes it from the other, with an audience.updated for each', async () => {
    const page = await newPage();
    const a = await newAudience(page.pageId, { flags: ['home_page'] });
    const b = await newAudience(page.pageId);
    const before = (await eventsOf('audience.updated')).length;
    assert.deepEqual(ok(await patch(b, { flags: ['home_page'] })).flags, ['home_page']);
    assert.deepEqual(ok(await t.req('GET', at(a))).flags, []);
    const updates = (await eventsOf('audience.updated')).slice(0, (await eventsOf('audience.updated')).length - before);
    assert.deepEqual(updates.map((e) => e.payload.data.audienceId).sort(), [a.audienceId, b.audienceId].sort());
    const c = await newAudience(page.pageId, { flags: ['home_page'] });
    assert.deepEqual(ok(await t.req('GET', at(b))).flags, [], 'creation takes it too');
    assert.deepEqual(c.flags, ['home_page']);
    const list = ok(await t.req('GET', `/v0/pages/${page.pageId}/audiences`)).items as Json[];
    assert.equal(list.filter((x) => x.flags.includes('home_page')).length, 1);
  });
});

describe('archive and restore', () => {
  test('archive: status archived, out of the default list and search, key and flag freed; again is 200 unchanged', async () => {
    const page = await newPage('Archivable page');
    const a = await newAudience(page.pageId, { customName: 'Archived one', personRouteKey: 'key1', flags: ['home_page'] });
    const archived = ok(await t.req('POST', `${at(a)}/archive`, {}));
    assert.equal(archived.status, 'archived');
    assert.ok(archived.archivedAt);
    assert.equal(archived.personRouteKey, 'key1', 'the value stays on the archived audience');
    assert.deepEqual(archived.flags, ['home_page']);
    const again = ok(await t.req('POST', `${at(a)}/archive`));
    assert.deepEqual(again, archived);
    assert.equal((await eventsOf('audience.archived')).filter((e) => e.payload.data.audienceId === a.audienceId).length, 1);

    const live = ok(await t.req('GET', `/v0/pages/${page.pageId}/audiences`));
    assert.equal(live.items.length, 0);
    assert.equal(live.totalCount, 0);
    const onlyArchived = ok(await t.req('GET', `/v0/pages/${page.pageId}/audiences?status=archived`));
    assert.deepEqual(
      onlyArchived.items.map((x: Json) => x.audienceId),
      [a.audienceId],
    );
    const search = ok(await t.req('GET', '/v0/audiences/search?query=archived%20one'));
    assert.equal(search.items.length, 0);

    const b = await newAudience(page.pageId, { personRouteKey: 'key1', flags: ['home_page'] });
    assert.equal(b.personRouteKey, 'key1');
    assert.deepEqual(b.flags, ['home_page']);
    assert.deepEqual(ok(await t.req('GET', at(a))).flags, ['home_page'], 'taking the flag leaves the archived one alone');

    expectProblem(await t.req('POST', `${at(a)}/restore`, {}), 409, 'conflict', ['/personRouteKey']);
    ok(await patch(b, { personRouteKey: 'key2' }));
    const restored = ok(await t.req('POST', `${at(a)}/restore`, {}));
    assert.equal(restored.archivedAt, null);
    assert.equal(restored.status, restored.latestVersion.status);
    assert.equal(restored.personRouteKey, 'key1');
    assert.deepEqual(restored.flags, [], 'another live audience holds the home page: the restored one does not take it');
    assert.deepEqual(ok(await t.req('GET', at(b))).flags, ['home_page']);
    assert.deepEqual(ok(await t.req('POST', `${at(a)}/restore`, {})), restored, 'restoring a live audience is 200 unchanged');
    assert.equal((await eventsOf('audience.restored')).filter((e) => e.payload.data.audienceId === a.audienceId).length, 1);
  });

  test('status filter: the live audiences whose latest version has it', async () => {
    const page = await newPage();
    const a = await newAudience(page.pageId);
    const b = await newAudience(page.pageId);
    ok(await t.req('POST', `${at(b)}/versions`, {}), 201);
    const drafts = ok(await t.req('GET', `/v0/pages/${page.pageId}/audiences?status=draft`));
    assert.deepEqual(
      drafts.items.map((x: Json) => x.audienceId),
      [b.audienceId],
    );
    assert.equal(drafts.totalCount, 1);
    const published = ok(await t.req('GET', `/v0/pages/${page.pageId}/audiences?status=published`));
    assert.deepEqual(
      published.items.map((x: Json) => x.audienceId),
      [a.audienceId],
    );
    expectProblem(await t.req('GET', `/v0/pages/${page.pageId}/audiences?status=gone`), 400, 'validation_failed', ['/status']);
    const paged = ok(await t.req('GET', `/v0/pages/${page.pageId}/audiences?limit=1`));
    expectProblem(
      await t.req('GET', `/v0/pages/${page.pageId}/audiences?status=draft&cursor=${paged.nextCursor}`),
      400,
      'validation_failed',
      ['/cursor'],
    );
  });

  test('archive and restore take an Idempotency-Key and no body fields', async () => {
    const page = await newPage();
    const a = await newAudience(page.pageId);
    expectProblem(await t.req('POST', `${at(a)}/archive`, { reason: 'x' }), 400, 'validation_failed', ['/reason']);
    const first = await t.req('POST', `${at(a)}/archive`, {}, { headers: { 'idempotency-key': 'arch-1' } });
    const replay = await t.req('POST', `${at(a)}/archive`, {}, { headers: { 'idempotency-key': 'arch-1' } });
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual(replay.body, first.body);
  });
});
