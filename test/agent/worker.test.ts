import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, startApp, type Json, type TestApp } from '../helpers.js';
import { ok, PAGE_CONTENT, pageWithAudiences, statusEvents, until, versionsOf } from './common.js';

// The page agent with the template generator: POST /v0/pages/{page_id}/regenerate queues a new
// version of each live audience; the worker moves each queued → processing → published with
// generated content, through the audience lifecycle (events, timestamps, archiving).

let t: TestApp;
before(async () => {
  // The worker holds up to three connections at once (two batches and the writer of outcomes), so
  // the tests' small pool of four would leave the API one, and a request could wait out the 2.5 s
  // checkout limit on a loaded machine (503). The service's own default is ten.
  t = await startApp({ AGENT: 'true', DATABASE_POOL_SIZE: '10' }, { agent: { pollMs: 50, batchSize: 10 } });
});
after(async () => {
  await t.close();
});

const regenerate = (pageId: string, body?: unknown, opts: { key?: string; headers?: Record<string, string> } = {}) =>
  t.req('POST', `/v0/pages/${pageId}/regenerate`, body, opts);

async function allPublished(audienceIds: string[], versionNumber = 2): Promise<boolean> {
  for (const id of audienceIds) {
    const [latest] = await versionsOf(t, id);
    if (!latest || Number(latest.version_number) !== versionNumber || latest.status !== 'published') return false;
  }
  return true;
}

describe('queued → processing → published', () => {
  test('every live audience gets a new version, generated from the page and its context, and published', async () => {
    const { page, audiences } = await pageWithAudiences(t, 3, { linked: 1, context: 'Mention the **spring** offer.' });
    // An archived audience is not regenerated.
    ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences/${audiences[2].audienceId}/archive`));
    const res = await regenerate(page.pageId);
    assert.deepEqual(ok(res, 202), { queued: 2, skipped: [] });
    const live = audiences.slice(0, 2).map((a: Json) => a.audienceId as string);
    await until('the versions to be published', () => allPublished(live));

    for (const audienceId of live) {
      const audience = ok(await t.req('GET', `/v0/pages/${page.pageId}/audiences/${audienceId}`));
      const v = audience.publishedVersion;
      assert.equal(v.versionNumber, 2);
      assert.equal(v.status, 'published');
      assert.equal(v.failureReason, null);
      assert.equal(v.supplementaryContext, 'Mention the **spring** offer.', 'carried over from the latest version');
      // The template: the page's content (tokens kept for serve time) and the context as a last section.
      assert.deepEqual(v.content, {
        ...PAGE_CONTENT,
        sections: [...PAGE_CONTENT.sections, { heading: '', body: 'Mention the **spring** offer.' }],
      });
      assert.ok(typeof v.queueDurationMs === 'number' && v.queueDurationMs >= 0);
      assert.ok(Date.parse(v.publishedAt) >= Date.parse(v.queuedAt));
      assert.equal(audience.latestVersion.versionId, v.versionId);
      // The statuses it went through, each with its event and previous status.
      const moves = (await statusEvents(t, v.versionId)).map((e) => `${e.previousStatus}→${e.data.status}`);
      assert.deepEqual(moves, ['draft→queued', 'queued→processing', 'processing→published']);
      // Version 1 was archived by the publication.
      const v1 = ok(
        await t.req('GET', `/v0/pages/${page.pageId}/audiences/${audienceId}/versions/${(await versionsOf(t, audienceId))[1]?.id}`),
      );
      assert.equal(v1.status, 'archived');
    }
    const archived = await versionsOf(t, audiences[2].audienceId);
    assert.equal(archived.length, 1);
  });

  test('a write of many publications: each version published, its older one archived, then page.version.published', async () => {
    // 12 audiences and batches of 10: the worker's writes hold several publications each.
    const { page, audiences } = await pageWithAudiences(t, 12);
    assert.deepEqual(ok(await regenerate(page.pageId), 202), { queued: 12, skipped: [] });
    const ids = audiences.map((a: Json) => a.audienceId as string);
    await until('all 12 published', () => allPublished(ids));
    const rows = await t.app.db
      .selectFrom('events')
      .select(['type', 'payload'])
      .where('type', 'in', ['audience_version.status_changed', 'page.version.published'])
      .orderBy('id')
      .execute();
    const events = rows.map((r) => ({ type: r.type, ...JSON.parse(r.payload) }) as Json);
    for (const audienceId of ids) {
      const [v2, v1] = await versionsOf(t, audienceId);
      assert.ok(v2 && v1);
      const base = `/v0/pages/${page.pageId}/audiences/${audienceId}/versions`;
      const [second, first] = [ok(await t.req('GET', `${base}/${v2.id}`)), ok(await t.req('GET', `${base}/${v1.id}`))];
      const ours = events.filter((e) => e.data.versionId === v2.id || e.data.versionId === v1.id);
      const from = ours.findIndex((e) => e.data.versionId === v2.id && e.data.status === 'processing');
      assert.ok(from !== -1, 'the move to processing was told');
      assert.deepEqual(
        ours.slice(from + 1).map((e) => `${e.type} v${e.data.versionNumber} ${e.previousStatus ?? ''}→${e.data.status}`),
        [
          'audience_version.status_changed v2 processing→published',
          'audience_version.status_changed v1 published→archived',
          'page.version.published v2 →published',
        ],
        audienceId,
      );
      const [published, archived, told] = ours.slice(from + 1);
      assert.deepEqual(published.data, second, 'the event carries the version as the API returns it');
      assert.deepEqual(archived.data, first);
      assert.deepEqual(told.data, second);
      assert.equal(told.pageId, page.pageId);
      const audience = ok(await t.req('GET', `/v0/pages/${page.pageId}/audiences/${audienceId}`));
      assert.equal(audience.publishedVersion.versionId, v2.id, 'the audience serves the new version');
    }
  });

  test('a version a client queues by hand is generated and published too', async () => {
    const { page, audiences } = await pageWithAudiences(t, 1);
    const base = `/v0/pages/${page.pageId}/audiences/${audiences[0].audienceId}/versions`;
    const draft = ok(await t.req('POST', base, { supplementaryContext: 'By hand' }), 201);
    ok(await t.req('PATCH', `${base}/${draft.versionId}`, { status: 'queued' }));
    await until('the hand-queued version to be published', () => allPublished([audiences[0].audienceId]));
    const v = ok(await t.req('GET', `${base}/${draft.versionId}`));
    assert.equal(v.content.sections.at(-1).body, 'By hand');
  });
});

describe('POST /v0/pages/{page_id}/regenerate', () => {
  test('the listed audiences only; each must be a live audience of the page (400 naming it), checked before any is queued', async () => {
    const { page, audiences } = await pageWithAudiences(t, 3);
    const other = await pageWithAudiences(t, 1);
    const ids = audiences.map((a: Json) => a.audienceId as string);
    expectProblem(await regenerate(page.pageId, { audienceIds: [ids[0], other.audiences[0].audienceId] }), 400, 'validation_failed', [
      '/audienceIds/1',
    ]);
    expectProblem(await regenerate(page.pageId, { audienceIds: [ids[0], 'audience_nope'] }), 400, 'validation_failed', ['/audienceIds/1']);
    assert.equal((await versionsOf(t, ids[0] as string)).length, 1, 'nothing was queued by a refused request');
    assert.deepEqual(ok(await regenerate(page.pageId, { audienceIds: [ids[1]] }), 202), { queued: 1, skipped: [] });
    await until('the listed audience', () => allPublished([ids[1] as string]));
    assert.equal((await versionsOf(t, ids[0] as string)).length, 1);
    assert.equal((await versionsOf(t, ids[2] as string)).length, 1);
    assert.deepEqual(ok(await regenerate(page.pageId, { audienceIds: [] }), 202), { queued: 0, skipped: [] });
  });

  test('bounds: 10,000 ids pass the schema, 10,001 do not; duplicates, empty ids and unknown fields are 400', async () => {
    const { page } = await pageWithAudiences(t, 1);
    const many = (n: number) => Array.from({ length: n }, (_, i) => `audience_${i}`);
    // Just inside: the schema accepts it; the ids are then refused as not the page's audiences.
    expectProblem(await regenerate(page.pageId, { audienceIds: many(10_000) }), 400, 'validation_failed', ['/audienceIds/0']);
    expectProblem(await regenerate(page.pageId, { audienceIds: many(10_001) }), 400, 'validation_failed', ['/audienceIds']);
    expectProblem(await regenerate(page.pageId, { audienceIds: ['a', 'a'] }), 400, 'validation_failed', ['/audienceIds']);
    expectProblem(await regenerate(page.pageId, { audienceIds: [''] }), 400, 'validation_failed', ['/audienceIds/0']);
    expectProblem(await regenerate(page.pageId, { audienceIds: 'all' }), 400, 'validation_failed', ['/audienceIds']);
    expectProblem(await regenerate(page.pageId, { everything: true }), 400, 'validation_failed');
  });

  test("another tenant's page, a deleted page and an unknown page are 404", async () => {
    const { page } = await pageWithAudiences(t, 1);
    const other = await t.newTenant('Other');
    expectProblem(await regenerate(page.pageId, {}, { key: other.key }), 404, 'not_found');
    expectProblem(await regenerate('page_01h0000000000000000000000a'), 404, 'not_found');
    const gone = await pageWithAudiences(t, 1);
    ok(await t.req('DELETE', `/v0/pages/${gone.page.pageId}`), 204);
    expectProblem(await regenerate(gone.page.pageId), 404, 'not_found');
    expectProblem(await regenerate(page.pageId, {}, { key: null as unknown as string }), 401, 'unauthorized');
  });

  test('a retried request with its Idempotency-Key replays the answer and queues nothing more', async () => {
    const { page, audiences } = await pageWithAudiences(t, 2);
    const headers = { 'idempotency-key': `regen-${page.pageId}` };
    const first = await regenerate(page.pageId, {}, { headers });
    assert.deepEqual(ok(first, 202), { queued: 2, skipped: [] });
    const again = await regenerate(page.pageId, {}, { headers });
    assert.deepEqual(ok(again, 202), { queued: 2, skipped: [] });
    assert.equal(again.headers['idempotent-replayed'], 'true');
    expectProblem(await regenerate(page.pageId, { audienceIds: [] }, { headers }), 422, 'idempotency_key_reused');
    const ids = audiences.map((a: Json) => a.audienceId as string);
    await until('published', () => allPublished(ids));
    for (const id of ids) assert.equal((await versionsOf(t, id)).length, 2, 'one round of generations');
  });

  test('a retry of a request that died between its batches queues only the rest, and answers the whole count', async () => {
    const { page, audiences } = await pageWithAudiences(t, 3);
    const headers = { 'idempotency-key': `half-${page.pageId}` };
    // The first attempt: its first batch was written (one audience here), then the process died
    // before the answer was recorded. Simulated by queueing one version under the request's work key.
    const { workKey, fromHeader } = await import('../../src/http/idempotency.js');
    const { queueNewVersions } = await import('../../src/audiences/regeneration.js');
    const key = workKey({
      ...fromHeader({ headers, tenantId: t.tenantId, method: 'POST', url: `/v0/pages/${page.pageId}/regenerate`, body: {} } as never, 202),
    });
    assert.ok(key);
    const first = await t.app.db.selectFrom('audiences').selectAll().where('id', '=', audiences[0].audienceId).execute();
    await t.app.db.transaction().execute((trx) => queueNewVersions(trx, first, key));
    assert.deepEqual(ok(await regenerate(page.pageId, {}, { headers }), 202), { queued: 3, skipped: [] });
    const ids = audiences.map((a: Json) => a.audienceId as string);
    await until('published', () => allPublished(ids));
    for (const id of ids) assert.equal((await versionsOf(t, id)).length, 2, 'each audience queued once');
  });
});

describe('fairness', () => {
  test('tenant A queues 500, then tenant B one: B is published before A’s 100th', async () => {
    const b = await t.newTenant('Tenant B');
    const pageA = await pageWithAudiences(t, 500);
    const pageB = await pageWithAudiences(t, 1, { key: b.key });
    assert.deepEqual(ok(await regenerate(pageA.page.pageId), 202), { queued: 500, skipped: [] });
    assert.deepEqual(ok(await t.req('POST', `/v0/pages/${pageB.page.pageId}/regenerate`, {}, { key: b.key }), 202), {
      queued: 1,
      skipped: [],
    });
    const idsA = pageA.audiences.map((a: Json) => a.audienceId as string);
    const idB = pageB.audiences[0].audienceId as string;
    // When each second version was published, as far as they are: one statement a poll (a statement
    // per audience, 501 every 25 ms, competed with the worker it waited for).
    const published = async (ids: string[]) =>
      (
        await t.app.db
          .selectFrom('audience_versions')
          .select('published_at')
          .where('audience_id', 'in', ids)
          .where('version_number', '=', 2)
          .where('status', '=', 'published')
          .execute()
      )
        .map((r) => r.published_at as string)
        .sort();
    // The order is what is asked: B, and A's first 100. How fast the worker goes is the benchmark's
    // (agent-template), so the whole queue is then given as long as a loaded machine needs.
    await until('B and 100 of A', async () => (await published([idB])).length === 1 && (await published(idsA)).length >= 100, 120_000);
    const timesA = await published(idsA);
    const [timeB] = await published([idB]);
    assert.ok(timeB && timesA[99] && timeB < (timesA[99] as string), `B at ${timeB}, A's 100th at ${timesA[99]}`);
    await until('every version of both', async () => (await published([...idsA, idB])).length === 501, 300_000);
    assert.ok(await allPublished([...idsA, idB]), 'each one’s latest version is its second, published');
  });
});
