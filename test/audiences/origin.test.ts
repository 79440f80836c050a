import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, ok, startApp, type Json, type TestApp } from '../helpers.js';
import { PAGE_CONTENT, pageWithAudiences, until } from '../agent/common.js';

// Issue 36, part 1: a regenerate never destroys what a person wrote. Every version says where its
// content came from (`origin`); a page-wide regenerate skips the audiences a person wrote for; an
// archived version keeps its content; and any version with content can be restored. Through HTTP,
// with the page agent running the template generator.

let t: TestApp;
before(async () => {
  t = await startApp({ AGENT: 'true', DATABASE_POOL_SIZE: '10' }, { agent: { pollMs: 50, batchSize: 10 } });
});
after(async () => {
  await t.close();
});

const WRITTEN = { headline: 'Written by Jane', subheadline: 'For Globex, by hand', sections: [{ heading: 'Why', body: 'Because.' }] };
const OTHER = { headline: 'Second words', subheadline: 'Also by hand', sections: [] };

const base = (a: Json) => `/v0/pages/${a.pageId}/audiences/${a.audienceId}`;
const getAudience = async (a: Json) => ok(await t.req('GET', base(a)));
const regenerate = (pageId: string, body?: unknown, key?: string) =>
  t.req('POST', `/v0/pages/${pageId}/regenerate`, body, key ? { key } : {});
const restore = (a: Json, versionId: string, body: unknown = {}, opts: { key?: string; headers?: Record<string, string> } = {}) =>
  t.req('POST', `${base(a)}/versions/${versionId}/restore`, body, opts);

/** A version written and published by a person: created with content, then published. */
async function publishWritten(a: Json, content: Json = WRITTEN): Promise<Json> {
  const draft = ok(await t.req('POST', `${base(a)}/versions`, { content }), 201);
  assert.equal(draft.origin, 'written');
  return ok(await t.req('PATCH', `${base(a)}/versions/${draft.versionId}`, { status: 'published' }));
}

/**
 * Waits until the audience's latest version is published and is its publishedVersion (the agent has
 * done its work). Both: on PostgreSQL a GET outside a transaction may read the audience row from
 * before the publication's commit and the version rows from after it.
 */
async function settled(a: Json): Promise<Json> {
  let audience: Json;
  await until('the latest version to be published', async () => {
    audience = await getAudience(a);
    return audience.latestVersion.status === 'published' && audience.publishedVersion.versionId === audience.latestVersion.versionId;
  });
  return audience;
}

async function eventsOf(type: string): Promise<Json[]> {
  const page = ok(await t.req('GET', `/v0/events?type=${type}&limit=100`));
  return page.items.map((e: Json) => e.payload);
}

describe('origin', () => {
  test('version 1 and a draft carried over are generated; content given on create or patched into a draft is written', async () => {
    const { audiences } = await pageWithAudiences(t, 1);
    const a = audiences[0];
    assert.equal(a.latestVersion.origin, 'generated', 'version 1 has no content of its own');
    const carried = ok(await t.req('POST', `${base(a)}/versions`, {}), 201);
    assert.equal(carried.origin, 'generated', "a draft without content carries the latest version's content and origin");
    const patched = ok(await t.req('PATCH', `${base(a)}/versions/${carried.versionId}`, { content: WRITTEN }));
    assert.equal(patched.origin, 'written');
    assert.deepEqual(patched.content, WRITTEN);
    // Sent back as read, unchanged: nothing changes (its origin included).
    const again = ok(await t.req('PATCH', `${base(a)}/versions/${carried.versionId}`, { ...patched }));
    assert.equal(again.origin, 'written');
    // origin is read-only: another value is refused naming it.
    expectProblem(await t.req('PATCH', `${base(a)}/versions/${carried.versionId}`, { origin: 'generated' }), 400, 'validation_failed', [
      '/origin',
    ]);
    expectProblem(await t.req('POST', `${base(a)}/versions`, { origin: 'written' }), 400, 'validation_failed');
    // Explicit content on create, null included (the person chose the page's content), is written.
    assert.equal(ok(await t.req('POST', `${base(a)}/versions`, { content: null }), 201).origin, 'written');
    const fromWritten = ok(await t.req('POST', `${base(a)}/versions`, { content: WRITTEN }), 201);
    assert.equal(ok(await t.req('POST', `${base(a)}/versions`, {}), 201).origin, 'written', 'carried over from a written draft');
    assert.equal((await t.req('GET', `${base(a)}/versions/${fromWritten.versionId}`)).body.origin, 'written');
    const list = ok(await t.req('GET', `${base(a)}/versions`));
    assert.deepEqual(
      list.items.map((v: Json) => v.origin),
      ['written', 'written', 'written', 'written', 'generated'],
    );
  });

  test('what the agent publishes is generated, even when it carried written content into the queue', async () => {
    const { page, audiences } = await pageWithAudiences(t, 1);
    const a = audiences[0];
    // Queued by hand with written content: the agent then writes it.
    const draft = ok(await t.req('POST', `${base(a)}/versions`, { content: WRITTEN }), 201);
    ok(await t.req('PATCH', `${base(a)}/versions/${draft.versionId}`, { status: 'queued' }));
    const audience = await settled(a);
    assert.equal(audience.publishedVersion.versionId, draft.versionId);
    assert.equal(audience.publishedVersion.origin, 'generated');
    assert.deepEqual(audience.publishedVersion.content, PAGE_CONTENT, "the template's content, not the person's");
    // The person's words are still in the events (created), but the version says who wrote what it holds.
    const regenerated = ok(await regenerate(page.pageId, { audienceIds: [a.audienceId] }), 202);
    assert.deepEqual(regenerated, { queued: 1, skipped: [] });
    const after = await settled(a);
    assert.equal(after.publishedVersion.origin, 'generated');
    assert.equal(after.publishedVersion.versionNumber, 3);
  });
});

describe('POST /v0/pages/{page_id}/regenerate and written versions', () => {
  test('page-wide: skips an audience whose published or latest draft version is written, queues the rest', async () => {
    const { page, audiences } = await pageWithAudiences(t, 4);
    const [generatedOnly, publishedWritten, draftWritten, draftGenerated] = audiences;
    await publishWritten(publishedWritten);
    ok(await t.req('POST', `${base(draftWritten)}/versions`, { content: OTHER }), 201);
    ok(await t.req('POST', `${base(draftGenerated)}/versions`, {}), 201);
    // An archived audience is neither queued nor reported.
    const archived = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, {}), 201);
    await publishWritten(archived);
    ok(await t.req('POST', `${base(archived)}/archive`, {}));

    const expectedSkipped = [publishedWritten.audienceId, draftWritten.audienceId]
      .sort()
      .map((audienceId) => ({ audienceId, reason: 'written' }));
    const dry = ok(await regenerate(page.pageId, { dryRun: true }), 200);
    assert.deepEqual(dry, { queued: 2, skipped: expectedSkipped, dryRun: true });
    assert.equal((await getAudience(draftGenerated)).latestVersion.versionNumber, 2, 'a dry run writes nothing');

    const res = await regenerate(page.pageId);
    assert.deepEqual(ok(res, 202), { queued: 2, skipped: expectedSkipped });
    for (const a of [generatedOnly, draftGenerated]) {
      const audience = await settled(a);
      assert.equal(audience.publishedVersion.origin, 'generated');
    }
    const kept = await getAudience(publishedWritten);
    assert.equal(kept.publishedVersion.versionNumber, 2);
    assert.deepEqual(kept.publishedVersion.content, WRITTEN, "the person's published words are still served");
    assert.equal(kept.latestVersion.versionNumber, 2, 'nothing was queued for it');
    const draft = await getAudience(draftWritten);
    assert.equal(draft.latestVersion.status, 'draft');
    assert.deepEqual(draft.latestVersion.content, OTHER);

    // With a null body too: the same rule.
    const again = ok(await t.req('POST', `/v0/pages/${page.pageId}/regenerate`), 202);
    assert.deepEqual(again.skipped, expectedSkipped);
    assert.equal(again.queued, 2);
    await settled(generatedOnly);
    await settled(draftGenerated);
  });

  test('includeWritten: true regenerates the written ones too; false is the default', async () => {
    const { page, audiences } = await pageWithAudiences(t, 2);
    await publishWritten(audiences[1]);
    assert.deepEqual(ok(await regenerate(page.pageId, { includeWritten: false, dryRun: true }), 200), {
      queued: 1,
      skipped: [{ audienceId: audiences[1].audienceId, reason: 'written' }],
      dryRun: true,
    });
    assert.deepEqual(ok(await regenerate(page.pageId, { includeWritten: true, dryRun: true }), 200), {
      queued: 2,
      skipped: [],
      dryRun: true,
    });
    assert.deepEqual(ok(await regenerate(page.pageId, { includeWritten: true }), 202), { queued: 2, skipped: [] });
    for (const a of audiences) {
      const audience = await settled(a);
      assert.equal(audience.publishedVersion.origin, 'generated');
      assert.deepEqual(audience.publishedVersion.content, PAGE_CONTENT);
    }
    // The written version is archived, with its content: it can be restored (below).
    const versions = ok(await t.req('GET', `${base(audiences[1])}/versions`)).items;
    const written = versions.find((v: Json) => v.versionNumber === 2);
    assert.equal(written.status, 'archived');
    assert.equal(written.origin, 'written');
    assert.deepEqual(written.content, WRITTEN);
    for (const body of [{ includeWritten: 'yes' }, { includeWritten: 1 }, { dryRun: 'true' }, { includeWritten: null }]) {
      const field = Object.keys(body)[0];
      expectProblem(await regenerate(page.pageId, body), 400, 'validation_failed', [`/${field}`]);
    }
  });

  test('audienceIds regenerates exactly those, written or not', async () => {
    const { page, audiences } = await pageWithAudiences(t, 3);
    await publishWritten(audiences[0]);
    await publishWritten(audiences[1]);
    const listed = [audiences[0].audienceId, audiences[2].audienceId];
    assert.deepEqual(ok(await regenerate(page.pageId, { audienceIds: listed, dryRun: true }), 200), {
      queued: 2,
      skipped: [],
      dryRun: true,
    });
    assert.deepEqual(ok(await regenerate(page.pageId, { audienceIds: listed }), 202), { queued: 2, skipped: [] });
    const first = await settled(audiences[0]);
    assert.equal(first.publishedVersion.origin, 'generated', 'named: regenerated although written');
    await settled(audiences[2]);
    const untouched = await getAudience(audiences[1]);
    assert.equal(untouched.latestVersion.versionNumber, 2);
    assert.equal(untouched.publishedVersion.origin, 'written');
    // A dry run checks the ids as the real request does.
    expectProblem(await regenerate(page.pageId, { audienceIds: ['audience_nope'], dryRun: true }), 400, 'validation_failed', [
      '/audienceIds/0',
    ]);
  });

  test("a dry run of another tenant's page is 404, and a retried keyed request replays its skipped list", async () => {
    const { page, audiences } = await pageWithAudiences(t, 2);
    await publishWritten(audiences[0]);
    const other = await t.newTenant('Other dry run');
    expectProblem(await regenerate(page.pageId, { dryRun: true }, other.key), 404, 'not_found');
    const headers = { 'idempotency-key': `written-${page.pageId}` };
    const first = ok(await t.req('POST', `/v0/pages/${page.pageId}/regenerate`, {}, { headers }), 202);
    assert.deepEqual(first, { queued: 1, skipped: [{ audienceId: audiences[0].audienceId, reason: 'written' }] });
    const again = await t.req('POST', `/v0/pages/${page.pageId}/regenerate`, {}, { headers });
    assert.deepEqual(ok(again, 202), first);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    await settled(audiences[1]);
  });
});

describe('POST .../versions/{version_id}/restore', () => {
  test("publishes a new written version with the archived version's content, archives the one before, emits page.version.published", async () => {
    const { page, audiences } = await pageWithAudiences(t, 1);
    const a = audiences[0];
    const written = await publishWritten(a);
    ok(await regenerate(page.pageId, { audienceIds: [a.audienceId] }), 202);
    const generated = (await settled(a)).publishedVersion;
    assert.equal(generated.origin, 'generated');
    const archived = ok(await t.req('GET', `${base(a)}/versions/${written.versionId}`));
    assert.equal(archived.status, 'archived');
    assert.deepEqual(archived.content, WRITTEN, 'an archived version keeps its content');

    const res = await restore(a, written.versionId);
    const restored = ok(res, 201);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.notEqual(restored.versionId, written.versionId);
    assert.equal(restored.versionNumber, 4);
    assert.equal(restored.status, 'published');
    assert.equal(restored.origin, 'written');
    assert.deepEqual(restored.content, WRITTEN);
    assert.ok(restored.publishedAt);
    const audience = await getAudience(a);
    assert.equal(audience.publishedVersion.versionId, restored.versionId);
    assert.equal(audience.latestVersion.versionId, restored.versionId);
    const before = ok(await t.req('GET', `${base(a)}/versions/${generated.versionId}`));
    assert.equal(before.status, 'archived');
    assert.deepEqual(before.content, PAGE_CONTENT, 'the generated one is archived with its content too');
    const published = (await eventsOf('page.version.published')).filter((e) => e.data.versionId === restored.versionId);
    assert.equal(published.length, 1);
    assert.equal(published[0].pageId, page.pageId);
    assert.equal(published[0].data.origin, 'written');
    const created = (await eventsOf('audience_version.created')).filter((e) => e.data.versionId === restored.versionId);
    assert.equal(created.length, 1);

    // The restored audience is written now: a page-wide regenerate leaves it alone.
    assert.deepEqual(ok(await regenerate(page.pageId), 202), { queued: 0, skipped: [{ audienceId: a.audienceId, reason: 'written' }] });
    // The generated version can be restored too (the copy is written: a person chose it).
    const back = ok(await restore(a, generated.versionId, null), 201);
    assert.equal(back.origin, 'written');
    assert.deepEqual(back.content, PAGE_CONTENT);
  });

  test('409 nothing_to_restore for a version with no content; the body must be empty; an Idempotency-Key replays', async () => {
    const { audiences } = await pageWithAudiences(t, 1);
    const a = audiences[0];
    const v1 = a.latestVersion;
    expectProblem(await restore(a, v1.versionId), 409, 'nothing_to_restore');
    const nullDraft = ok(await t.req('POST', `${base(a)}/versions`, { content: null }), 201);
    expectProblem(await restore(a, nullDraft.versionId), 409, 'nothing_to_restore');
    assert.equal((await getAudience(a)).latestVersion.versionId, nullDraft.versionId, 'a refused restore writes nothing');
    const draft = ok(await t.req('POST', `${base(a)}/versions`, { content: OTHER }), 201);
    expectProblem(await restore(a, draft.versionId, { content: WRITTEN }), 400, 'validation_failed', ['/content']);
    expectProblem(await restore(a, draft.versionId, []), 400, 'validation_failed');
    const headers = { 'idempotency-key': `restore-${draft.versionId}` };
    const first = ok(await restore(a, draft.versionId, {}, { headers }), 201);
    const again = await restore(a, draft.versionId, {}, { headers });
    assert.deepEqual(ok(again, 201), first);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal((await getAudience(a)).latestVersion.versionId, first.versionId, 'restored once');
    // The draft it was restored from stays as it was.
    const source = ok(await t.req('GET', `${base(a)}/versions/${draft.versionId}`));
    assert.equal(source.status, 'draft');
  });

  test("404 for an unknown page, audience or version, another audience's version and another tenant's", async () => {
    const { page, audiences } = await pageWithAudiences(t, 2);
    const [a, b] = audiences;
    const written = await publishWritten(a);
    const unknown = 'version_01h0000000000000000000000a';
    expectProblem(await restore(a, unknown), 404, 'not_found');
    expectProblem(await restore(b, written.versionId), 404, 'not_found');
    expectProblem(await restore({ ...a, audienceId: 'audience_01h0000000000000000000000a' }, written.versionId), 404, 'not_found');
    expectProblem(await restore({ ...a, pageId: 'page_01h0000000000000000000000a' }, written.versionId), 404, 'not_found');
    const other = await t.newTenant('Other restore');
    expectProblem(await restore(a, written.versionId, {}, { key: other.key }), 404, 'not_found');
    ok(await t.req('DELETE', `/v0/pages/${page.pageId}`), 204);
    expectProblem(await restore(a, written.versionId), 404, 'not_found');
  });
});

describe('erasure', () => {
  test("erasing the audience's person still clears every version's content, archived ones included; nothing is left to restore", async () => {
    const { audiences } = await pageWithAudiences(t, 1, { linked: 1 });
    const a = audiences[0];
    const first = await publishWritten(a);
    await publishWritten(a, OTHER);
    assert.deepEqual(ok(await t.req('GET', `${base(a)}/versions/${first.versionId}`)).content, WRITTEN);
    ok(await t.req('DELETE', `/v0/persons/${a.personId}`), 204);
    const versions = ok(await t.req('GET', `${base(a)}/versions`)).items;
    assert.equal(versions.length, 3);
    for (const v of versions) assert.equal(v.content, null, `version ${v.versionNumber}`);
    expectProblem(await restore(a, first.versionId), 409, 'nothing_to_restore');
  });
});
