import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, ISO_MS, startApp, type Json, type Res, type TestApp } from '../helpers.js';

// Black-box tests of audience versions: the POST .../versions and PATCH .../versions/{version_id}
// extensions (the lifecycle state machine and its timestamps), reference endpoints 6 (get version)
// and 7 (cancel version), and endpoint 8 (audience search), through HTTP only.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const VERSION_ID = /^version_[0-9a-z]{26}$/;
const VERSION_FIELDS = [
  'archivedAt',
  'audienceId',
  'becameDraftAt',
  'cancelledAt',
  'content',
  'createdAt',
  'failureReason',
  'isNewPageAgent',
  'obsoleteAt',
  'origin',
  'publishedAt',
  'queueDurationMs',
  'queuedAt',
  'status',
  'supplementaryContext',
  'versionId',
  'versionNumber',
];
const SEARCH_ITEM_FIELDS = ['audienceId', 'effectiveName', 'pageId', 'pageName'];
const ENVELOPE_FIELDS = ['hasMore', 'items', 'nextCursor', 'totalCount'];
const UNKNOWN_VERSION = 'version_01h0000000000000000000000a';

/** The forward order of the lifecycle; `cancelled` and `archived` are off it. */
const FORWARD = ['draft', 'pending', 'queued', 'processing', 'published'] as const;
type Forward = (typeof FORWARD)[number];

const opts = (key?: string) => (key === undefined ? {} : { key });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ms = (iso: string) => Date.parse(iso);

function assertJson(res: Res, status: number): void {
  assert.equal(res.status, status, res.text);
  assert.match(String(res.headers['content-type']), /^application\/json/);
}

function assertVersionShape(v: Json): void {
  assert.deepEqual(Object.keys(v).sort(), VERSION_FIELDS);
  assert.match(v.versionId, VERSION_ID);
  assert.equal(typeof v.isNewPageAgent, 'boolean');
  assert.match(v.createdAt, ISO_MS);
  for (const f of ['becameDraftAt', 'queuedAt', 'publishedAt', 'cancelledAt', 'obsoleteAt', 'archivedAt']) {
    assert.ok(v[f] === null || ISO_MS.test(v[f]), `${f} is null or an ISO timestamp: ${v[f]}`);
  }
  assert.ok(v.queueDurationMs === null || (typeof v.queueDurationMs === 'number' && v.queueDurationMs >= 0));
}

async function newPage(name = 'Versions page', key?: string): Promise<Json> {
  const res = await t.req('POST', '/v0/pages', { name, title: 'T', pageContext: 'Context', pageType: 'inbound' }, opts(key));
  assert.equal(res.status, 201, res.text);
  return res.body;
}

async function newAudience(pageId?: string, body: Json = {}, key?: string): Promise<Json> {
  const page = pageId ?? (await newPage(undefined, key)).pageId;
  const res = await t.req('POST', `/v0/pages/${page}/audiences`, body, opts(key));
  assert.equal(res.status, 201, res.text);
  return res.body;
}

const versionsUrl = (a: Json) => `/v0/pages/${a.pageId}/audiences/${a.audienceId}/versions`;
const versionUrl = (a: Json, versionId: string) => `${versionsUrl(a)}/${versionId}`;

async function newVersion(a: Json, body: Json = {}, key?: string): Promise<Json> {
  const res = await t.req('POST', versionsUrl(a), body, opts(key));
  assertJson(res, 201);
  return res.body;
}

async function getVersion(a: Json, versionId: string): Promise<Json> {
  const res = await t.req('GET', versionUrl(a, versionId));
  assertJson(res, 200);
  return res.body;
}

async function getAudience(a: Json): Promise<Json> {
  const res = await t.req('GET', `/v0/pages/${a.pageId}/audiences/${a.audienceId}`);
  assertJson(res, 200);
  return res.body;
}

function patch(a: Json, versionId: string, body: unknown): Promise<Res> {
  return t.req('PATCH', versionUrl(a, versionId), body);
}

async function move(a: Json, versionId: string, status: string): Promise<Json> {
  const res = await patch(a, versionId, { status });
  assertJson(res, 200);
  return res.body;
}

function cancel(a: Json, versionId: string, body: unknown = {}, key?: string): Promise<Res> {
  return t.req('POST', `${versionUrl(a, versionId)}/cancel`, body, opts(key));
}

/** A fresh audience with a draft version 2 moved to `status` along the forward path. */
async function versionAt(status: Forward): Promise<{ a: Json; v: Json }> {
  const a = await newAudience();
  let v = await newVersion(a);
  for (const s of FORWARD.slice(1, FORWARD.indexOf(status) + 1)) v = await move(a, v.versionId, s);
  assert.equal(v.status, status);
  return { a, v };
}

/** A fresh audience whose version 1 has been archived by publishing version 2. */
async function archivedVersion(): Promise<{ a: Json; v1: Json; v2: Json }> {
  const a = await newAudience();
  const v2 = await move(a, (await newVersion(a)).versionId, 'published');
  const v1 = await getVersion(a, a.publishedVersion.versionId);
  assert.equal(v1.status, 'archived');
  return { a, v1, v2 };
}

describe('POST .../audiences/{audience_id}/versions (extension)', () => {
  test('201 a draft with the next versionNumber, becameDraftAt = createdAt; latestVersion follows', async () => {
    const a = await newAudience();
    const v1 = a.publishedVersion;
    const before = Date.now();
    const res = await t.req('POST', versionsUrl(a), {});
    assertJson(res, 201);
    const v2 = res.body;
    assertVersionShape(v2);
    assert.deepEqual(
      { ...v2, versionId: 'x', createdAt: 'x', becameDraftAt: 'x' },
      {
        versionId: 'x',
        audienceId: a.audienceId,
        versionNumber: 2,
        status: 'draft',
        isNewPageAgent: false,
        supplementaryContext: null,
        content: null,
        origin: 'generated',
        queueDurationMs: null,
        createdAt: 'x',
        becameDraftAt: 'x',
        queuedAt: null,
        publishedAt: null,
        cancelledAt: null,
        obsoleteAt: null,
        archivedAt: null,
        failureReason: null,
      },
    );
    assert.equal(v2.becameDraftAt, v2.createdAt);
    assert.ok(ms(v2.createdAt) >= before - 1 && ms(v2.createdAt) <= Date.now() + 1);
    assert.notEqual(v2.versionId, v1.versionId);
    assert.ok(v2.versionId > v1.versionId, 'a later version id sorts after an earlier one');
    assert.deepEqual(await getVersion(a, v2.versionId), v2);

    let got = await getAudience(a);
    assert.deepEqual(got.latestVersion, v2);
    assert.deepEqual(got.publishedVersion, v1, 'version 1 is untouched');
    assert.equal(got.status, 'draft');

    const v3 = await newVersion(a);
    const v4 = await newVersion(a);
    assert.deepEqual([v3.versionNumber, v4.versionNumber], [3, 4]);
    got = await getAudience(a);
    assert.deepEqual(got.latestVersion, v4);
    assert.deepEqual(got.publishedVersion, v1);
    // The earlier drafts are untouched.
    assert.deepEqual(await getVersion(a, v2.versionId), v2);
  });

  test('fields from the body, else carried over from the latest version (draft or not)', async () => {
    const a = await newAudience(undefined, { isNewPageAgent: true, supplementaryContext: 'ctx 1' });
    const v2 = await newVersion(a);
    assert.equal(v2.isNewPageAgent, true);
    assert.equal(v2.supplementaryContext, 'ctx 1');
    const v3 = await newVersion(a, { supplementaryContext: 'ctx 3' });
    assert.equal(v3.isNewPageAgent, true);
    assert.equal(v3.supplementaryContext, 'ctx 3');
    const v4 = await newVersion(a, { isNewPageAgent: false });
    assert.equal(v4.isNewPageAgent, false);
    assert.equal(v4.supplementaryContext, 'ctx 3', 'carried from the latest (a draft), not from the published version');
    const v5 = await newVersion(a, { supplementaryContext: null });
    assert.equal(v5.supplementaryContext, null);
    assert.equal(v5.isNewPageAgent, false);
    // Carried over from a cancelled latest version too.
    assert.equal((await cancel(a, v5.versionId)).status, 200);
    const v6 = await newVersion(a, { isNewPageAgent: true });
    assert.equal(v6.supplementaryContext, null);
    assert.equal(v6.isNewPageAgent, true);
    const v7 = await newVersion(a, { isNewPageAgent: false, supplementaryContext: 'both' });
    assert.deepEqual([v7.versionNumber, v7.isNewPageAgent, v7.supplementaryContext], [7, false, 'both']);
    // No body at all: everything carried over.
    const res = await t.req('POST', versionsUrl(a));
    assertJson(res, 201);
    assert.deepEqual(
      [res.body.versionNumber, res.body.isNewPageAgent, res.body.supplementaryContext, res.body.status],
      [8, false, 'both', 'draft'],
    );
    // The audience's own values stay those of its published version 1.
    const got = await getAudience(a);
    assert.equal(got.isNewPageAgent, true);
    assert.equal(got.supplementaryContext, 'ctx 1');
  });

  test('concurrent creations get distinct consecutive numbers', async () => {
    const a = await newAudience();
    const made = await Promise.all(Array.from({ length: 8 }, () => t.req('POST', versionsUrl(a), {})));
    for (const res of made) assert.equal(res.status, 201, res.text);
    assert.deepEqual(
      made.map((r) => r.body.versionNumber).sort((x, y) => x - y),
      [2, 3, 4, 5, 6, 7, 8, 9],
    );
    assert.equal((await getAudience(a)).latestVersion.versionNumber, 9);
  });

  test('unknown fields and wrong types are 400; nothing is created', async () => {
    const a = await newAudience();
    expectProblem(await t.req('POST', versionsUrl(a), { status: 'published' }), 400, 'validation_failed', ['/status']);
    expectProblem(await t.req('POST', versionsUrl(a), { versionNumber: 9 }), 400, 'validation_failed', ['/versionNumber']);
    expectProblem(await t.req('POST', versionsUrl(a), { isNewPageAgent: 'true' }), 400, 'validation_failed', ['/isNewPageAgent']);
    expectProblem(await t.req('POST', versionsUrl(a), { supplementaryContext: 5 }), 400, 'validation_failed', ['/supplementaryContext']);
    expectProblem(await t.req('POST', versionsUrl(a), '[]'), 400, 'validation_failed');
    expectProblem(await t.req('POST', versionsUrl(a), '{"x":'), 400, 'validation_failed');
    const got = await getAudience(a);
    assert.equal(got.latestVersion.versionNumber, 1);
    assert.equal((await newVersion(a)).versionNumber, 2, 'refused requests took no number');
  });

  test('an audience of another page or tenant, unknown, or of a deleted page is 404', async () => {
    const a = await newAudience();
    const otherPage = await newPage('Other versions page');
    expectProblem(await t.req('POST', `/v0/pages/${otherPage.pageId}/audiences/${a.audienceId}/versions`, {}), 404, 'not_found');
    expectProblem(
      await t.req('POST', `/v0/pages/${a.pageId}/audiences/audience_01h0000000000000000000000a/versions`, {}),
      404,
      'not_found',
    );
    const other = await t.newTenant('Versions other tenant');
    expectProblem(await t.req('POST', versionsUrl(a), {}, { key: other.key }), 404, 'not_found');
    assert.equal((await getAudience(a)).latestVersion.versionNumber, 1);
    assert.equal((await t.req('DELETE', `/v0/pages/${a.pageId}`)).status, 204);
    expectProblem(await t.req('POST', versionsUrl(a), {}), 404, 'not_found');
  });
});

describe('PATCH .../versions/{version_id} (extension): the state machine', () => {
  const allowed: [Forward, Forward][] = [];
  for (let i = 0; i < FORWARD.length; i++) for (let j = i + 1; j < FORWARD.length; j++) allowed.push([FORWARD[i]!, FORWARD[j]!]);

  for (const [from, to] of allowed) {
    test(`${from} -> ${to} is 200, with the timestamps of the move`, async () => {
      const { a, v } = await versionAt(from);
      await sleep(15);
      const before = Date.now();
      const res = await patch(a, v.versionId, { status: to });
      const afterMove = Date.now();
      assertJson(res, 200);
      const m = res.body;
      assertVersionShape(m);
      assert.equal(m.status, to);
      // Unchanged by any move.
      for (const f of [
        'versionId',
        'audienceId',
        'versionNumber',
        'isNewPageAgent',
        'supplementaryContext',
        'content',
        'createdAt',
        'becameDraftAt',
      ]) {
        assert.deepEqual(m[f], v[f], f);
      }
      assert.equal(m.cancelledAt, null);
      assert.equal(m.obsoleteAt, null);
      assert.equal(m.archivedAt, null);
      const inMove = (iso: string) => ms(iso) >= before - 1 && ms(iso) <= afterMove + 1;
      // queuedAt: set on entering queued, kept after leaving it, null if never queued.
      if (to === 'queued') assert.ok(inMove(m.queuedAt), `queuedAt ${m.queuedAt} is the move's time`);
      else assert.equal(m.queuedAt, v.queuedAt);
      if (FORWARD.indexOf(from) < FORWARD.indexOf('queued') && to !== 'queued') assert.equal(m.queuedAt, null, 'never queued');
      // publishedAt: set on entering published.
      if (to === 'published') assert.ok(inMove(m.publishedAt), `publishedAt ${m.publishedAt} is the move's time`);
      else assert.equal(m.publishedAt, null);
      // queueDurationMs: measured when leaving queued, null otherwise.
      if (from === 'queued') {
        assert.equal(typeof m.queueDurationMs, 'number');
        assert.ok(m.queueDurationMs >= 14, `queueDurationMs ${m.queueDurationMs} covers the 15 ms wait`);
        assert.ok(m.queueDurationMs <= afterMove + 1 - ms(m.queuedAt));
        if (to === 'published') assert.equal(m.queueDurationMs, ms(m.publishedAt) - ms(m.queuedAt));
      } else {
        // Not leaving queued: unchanged (null if it was never queued, else measured when it left).
        assert.equal(m.queueDurationMs, v.queueDurationMs);
        if (from !== 'processing') assert.equal(m.queueDurationMs, null);
      }
      assert.deepEqual(await getVersion(a, v.versionId), m);
      const audience = await getAudience(a);
      assert.equal(audience.status, to);
      assert.deepEqual(audience.latestVersion, m);
      if (to === 'published') {
        assert.deepEqual(audience.publishedVersion, m);
        const v1 = await getVersion(a, a.publishedVersion.versionId);
        assert.equal(v1.status, 'archived');
        assert.equal(v1.obsoleteAt, m.publishedAt);
        assert.equal(v1.archivedAt, m.publishedAt);
      } else {
        assert.deepEqual(audience.publishedVersion, a.publishedVersion);
      }
    });
  }

  test('the full walk: queuedAt and queueDurationMs stay once set; duration = leaving time - queuedAt', async () => {
    const a = await newAudience();
    const v = await newVersion(a);
    const pending = await move(a, v.versionId, 'pending');
    assert.equal(pending.queuedAt, null);
    const queued = await move(a, v.versionId, 'queued');
    assert.match(queued.queuedAt, ISO_MS);
    assert.equal(queued.queueDurationMs, null, 'null while still queued');
    assert.equal((await getVersion(a, v.versionId)).queueDurationMs, null);
    await sleep(30);
    const t0 = Date.now();
    const processing = await move(a, v.versionId, 'processing');
    const t1 = Date.now();
    assert.equal(processing.queuedAt, queued.queuedAt);
    assert.ok(processing.queueDurationMs >= t0 - ms(queued.queuedAt) - 1, `${processing.queueDurationMs}`);
    assert.ok(processing.queueDurationMs <= t1 - ms(queued.queuedAt) + 1, `${processing.queueDurationMs}`);
    assert.ok(processing.queueDurationMs >= 29);
    await sleep(10);
    const published = await move(a, v.versionId, 'published');
    assert.equal(published.queuedAt, queued.queuedAt);
    assert.equal(published.queueDurationMs, processing.queueDurationMs, 'measured once, when queued was left');
    assert.ok(ms(published.publishedAt) - ms(queued.queuedAt) > published.queueDurationMs, 'publishing came later than leaving queued');
    assert.equal(published.becameDraftAt, v.becameDraftAt);
  });

  test('a move to the status the version already has is 200 and changes nothing', async () => {
    for (const status of ['pending', 'queued', 'processing', 'published'] as const) {
      const { a, v } = await versionAt(status);
      const audienceBefore = await getAudience(a);
      await sleep(3);
      const res = await patch(a, v.versionId, { status });
      assertJson(res, 200);
      assert.deepEqual(res.body, v, status);
      assert.deepEqual(await getVersion(a, v.versionId), v);
      assert.deepEqual(await getAudience(a), audienceBefore);
    }
    // Version 1, published at creation: re-publishing archives nothing and changes nothing.
    const a = await newAudience();
    const res = await patch(a, a.publishedVersion.versionId, { status: 'published' });
    assertJson(res, 200);
    assert.deepEqual(res.body, a.publishedVersion);
    assert.deepEqual(await getAudience(a), a);
  });

  const backward: [Forward, Forward][] = [];
  for (let i = 1; i < FORWARD.length; i++) for (let j = 1; j < i; j++) backward.push([FORWARD[i]!, FORWARD[j]!]);

  for (const [from, to] of backward) {
    test(`${from} -> ${to} (backward) is 409 naming both statuses; nothing changes`, async () => {
      const { a, v } = await versionAt(from);
      const audienceBefore = await getAudience(a);
      const res = await patch(a, v.versionId, { status: to });
      expectProblem(res, 409, 'conflict');
      assert.ok(res.body.detail.includes(from), `detail names ${from}: ${res.body.detail}`);
      assert.ok(res.body.detail.includes(to), `detail names ${to}: ${res.body.detail}`);
      assert.deepEqual(await getVersion(a, v.versionId), v);
      assert.deepEqual(await getAudience(a), audienceBefore);
    });
  }

  test('version 1 (published) cannot go back: 409 for pending, queued, processing', async () => {
    const a = await newAudience();
    for (const to of ['pending', 'queued', 'processing']) {
      const res = await patch(a, a.publishedVersion.versionId, { status: to });
      expectProblem(res, 409, 'conflict');
      assert.ok(res.body.detail.includes('published') && res.body.detail.includes(to), res.body.detail);
    }
    assert.deepEqual(await getAudience(a), a);
  });

  test('nothing leaves cancelled: 409 naming both statuses', async () => {
    for (const from of ['draft', 'queued'] as const) {
      const { a, v } = await versionAt(from);
      const c = await cancel(a, v.versionId);
      assert.equal(c.status, 200, c.text);
      for (const to of ['pending', 'queued', 'processing', 'published']) {
        const res = await patch(a, v.versionId, { status: to });
        expectProblem(res, 409, 'conflict');
        assert.ok(res.body.detail.includes('cancelled') && res.body.detail.includes(to), res.body.detail);
      }
      assert.deepEqual(await getVersion(a, v.versionId), c.body);
      assert.deepEqual((await getAudience(a)).publishedVersion, a.publishedVersion, 'no publish happened');
    }
  });

  test('nothing leaves archived: 409 naming both statuses', async () => {
    const { a, v1, v2 } = await archivedVersion();
    for (const to of ['pending', 'queued', 'processing', 'published']) {
      const res = await patch(a, v1.versionId, { status: to });
      expectProblem(res, 409, 'conflict');
      assert.ok(res.body.detail.includes('archived') && res.body.detail.includes(to), res.body.detail);
    }
    assert.deepEqual(await getVersion(a, v1.versionId), v1);
    assert.deepEqual((await getAudience(a)).publishedVersion, v2);
  });

  test('status "draft", "cancelled", "archived", a bad value, a missing status or another field is 400', async () => {
    const { a, v } = await versionAt('pending');
    for (const status of ['draft', 'cancelled', 'archived', 'PUBLISHED', 'Queued', '', 'done', 5, null, true, ['queued']]) {
      expectProblem(await patch(a, v.versionId, { status }), 400, 'validation_failed', ['/status']);
    }
    expectProblem(await patch(a, v.versionId, {}), 400, 'validation_failed', ['/status']);
    expectProblem(await patch(a, v.versionId, { status: 'queued', queuedAt: '2026-01-01T00:00:00.000Z' }), 400, 'validation_failed', [
      '/queuedAt',
    ]);
    expectProblem(await patch(a, v.versionId, { isNewPageAgent: true }), 400, 'validation_failed', ['/isNewPageAgent', '/status']);
    expectProblem(await patch(a, v.versionId, '{"status":'), 400, 'validation_failed');
    expectProblem(await patch(a, v.versionId, undefined), 400, 'validation_failed');
    assert.deepEqual(await getVersion(a, v.versionId), v, 'unchanged');
  });

  test('a version of another audience, page or tenant, or under a deleted page, is 404', async () => {
    const { a, v } = await versionAt('draft');
    const b = await newAudience(a.pageId);
    expectProblem(await patch(b, v.versionId, { status: 'pending' }), 404, 'not_found');
    expectProblem(await patch(a, UNKNOWN_VERSION, { status: 'pending' }), 404, 'not_found');
    expectProblem(await patch(a, 'nonsense', { status: 'pending' }), 404, 'not_found');
    const otherPage = await newPage('PATCH other page');
    expectProblem(await patch({ ...a, pageId: otherPage.pageId }, v.versionId, { status: 'pending' }), 404, 'not_found');
    const other = await t.newTenant('PATCH other tenant');
    expectProblem(await t.req('PATCH', versionUrl(a, v.versionId), { status: 'pending' }, { key: other.key }), 404, 'not_found');
    assert.deepEqual(await getVersion(a, v.versionId), v, 'unchanged');
    assert.equal((await t.req('DELETE', `/v0/pages/${a.pageId}`)).status, 204);
    expectProblem(await patch(a, v.versionId, { status: 'pending' }), 404, 'not_found');
  });
});

describe('publishing: archives the older published versions; publishedVersion is the newest published', () => {
  test('publishing v2 archives v1 (obsoleteAt = archivedAt = publish time); v3 then archives v2, v1 untouched', async () => {
    const a = await newAudience(undefined, { isNewPageAgent: false, supplementaryContext: 'one' });
    const v1 = a.publishedVersion;
    const v2 = await newVersion(a, { isNewPageAgent: true, supplementaryContext: 'two' });
    await sleep(3);
    const p2 = await move(a, v2.versionId, 'published');
    const a1 = await getVersion(a, v1.versionId);
    assert.deepEqual(a1, { ...v1, status: 'archived', obsoleteAt: p2.publishedAt, archivedAt: p2.publishedAt });
    let got = await getAudience(a);
    assert.deepEqual(got.publishedVersion, p2);
    assert.deepEqual(got.latestVersion, p2);
    assert.equal(got.status, 'published');
    assert.equal(got.isNewPageAgent, true);
    assert.equal(got.supplementaryContext, 'two');

    const v3 = await newVersion(a, { supplementaryContext: 'three' });
    await sleep(3);
    const p3 = await move(a, v3.versionId, 'queued');
    const published3 = await move(a, p3.versionId, 'published');
    assert.deepEqual(await getVersion(a, v2.versionId), {
      ...p2,
      status: 'archived',
      obsoleteAt: published3.publishedAt,
      archivedAt: published3.publishedAt,
    });
    assert.deepEqual(await getVersion(a, v1.versionId), a1, 'an archived version keeps its first archivedAt');
    got = await getAudience(a);
    assert.deepEqual(got.publishedVersion, published3);
    assert.equal(got.supplementaryContext, 'three');
    assert.equal(got.isNewPageAgent, true, 'carried over from v2 at creation');
  });

  test('publishing archives only published versions: drafts and cancelled versions stay as they are', async () => {
    const a = await newAudience();
    const v2 = await newVersion(a);
    const v3 = await newVersion(a);
    const c3 = (await cancel(a, v3.versionId)).body;
    const v4 = await newVersion(a);
    const p4 = await move(a, v4.versionId, 'published');
    assert.deepEqual(await getVersion(a, v2.versionId), v2);
    assert.deepEqual(await getVersion(a, v3.versionId), c3);
    assert.equal((await getVersion(a, a.publishedVersion.versionId)).status, 'archived');
    const got = await getAudience(a);
    assert.deepEqual(got.publishedVersion, p4);
    assert.deepEqual(got.latestVersion, p4);
  });

  test('publishing an older version after a newer one: only lower numbers are archived; publishedVersion stays the newest', async () => {
    const a = await newAudience();
    const v1 = a.publishedVersion;
    const v2 = await newVersion(a, { supplementaryContext: 'two' });
    const v3 = await newVersion(a, { supplementaryContext: 'three' });
    const p3 = await move(a, v3.versionId, 'published');
    const a1 = await getVersion(a, v1.versionId);
    assert.equal(a1.status, 'archived');
    assert.deepEqual(await getVersion(a, v2.versionId), v2, 'a draft is not archived');
    await sleep(3);
    const p2 = await move(a, v2.versionId, 'published');
    assert.equal(p2.status, 'published');
    assert.equal(p2.archivedAt, null);
    assert.deepEqual(await getVersion(a, v3.versionId), p3, 'v3 is newer: not archived by publishing v2');
    assert.deepEqual(await getVersion(a, v1.versionId), a1);
    const got = await getAudience(a);
    assert.deepEqual(got.publishedVersion, p3);
    assert.deepEqual(got.latestVersion, p3);
    assert.equal(got.supplementaryContext, 'three');
  });
});

describe('POST .../versions/{version_id}/cancel (endpoint 7)', () => {
  for (const from of ['draft', 'pending', 'queued', 'processing'] as const) {
    test(`${from} -> 200 cancelled with cancelledAt`, async () => {
      const { a, v } = await versionAt(from);
      await sleep(5);
      const before = Date.now();
      const res = await cancel(a, v.versionId, {});
      const afterCancel = Date.now();
      assertJson(res, 200);
      const c = res.body;
      assertVersionShape(c);
      assert.equal(c.status, 'cancelled');
      assert.ok(ms(c.cancelledAt) >= before - 1 && ms(c.cancelledAt) <= afterCancel + 1, c.cancelledAt);
      // Leaving queued measures the queue time; otherwise it stays as it was.
      const expectedDuration = from === 'queued' ? ms(c.cancelledAt) - ms(v.queuedAt) : v.queueDurationMs;
      assert.deepEqual(c, { ...v, status: 'cancelled', cancelledAt: c.cancelledAt, queueDurationMs: expectedDuration });
      if (from === 'queued') assert.ok(c.queueDurationMs >= 4);
      assert.deepEqual(await getVersion(a, v.versionId), c);
      const audience = await getAudience(a);
      assert.equal(audience.status, 'cancelled');
      assert.deepEqual(audience.latestVersion, c);
      assert.deepEqual(audience.publishedVersion, a.publishedVersion);
    });
  }

  test('cancelling a cancelled version returns it unchanged (the same cancelledAt)', async () => {
    const { a, v } = await versionAt('pending');
    const first = await cancel(a, v.versionId);
    assertJson(first, 200);
    await sleep(5);
    const again = await cancel(a, v.versionId);
    assertJson(again, 200);
    assert.deepEqual(again.body, first.body);
    assert.deepEqual(await getVersion(a, v.versionId), first.body);
  });

  test('the body may be {} or absent; any field is 400 and cancels nothing', async () => {
    const { a, v } = await versionAt('draft');
    expectProblem(await cancel(a, v.versionId, { x: 1 }), 400, 'validation_failed', ['/x']);
    expectProblem(await cancel(a, v.versionId, { status: 'cancelled' }), 400, 'validation_failed', ['/status']);
    expectProblem(await cancel(a, v.versionId, '[]'), 400, 'validation_failed');
    expectProblem(await cancel(a, v.versionId, '"cancel"'), 400, 'validation_failed');
    expectProblem(await cancel(a, v.versionId, '{'), 400, 'validation_failed');
    assert.deepEqual(await getVersion(a, v.versionId), v, 'still a draft');
    // {} cancels (covered above); so does no body at all, and an empty body.
    const absent = await t.req('POST', `${versionUrl(a, v.versionId)}/cancel`);
    assertJson(absent, 200);
    assert.equal(absent.body.status, 'cancelled');
    const { a: b, v: w } = await versionAt('pending');
    const empty = await t.req('POST', `${versionUrl(b, w.versionId)}/cancel`, '');
    assertJson(empty, 200);
    assert.equal(empty.body.status, 'cancelled');
  });

  test('cancelling a published or archived version is 409 naming its status; nothing changes', async () => {
    const a = await newAudience();
    const res = await cancel(a, a.publishedVersion.versionId);
    expectProblem(res, 409, 'conflict');
    assert.ok(res.body.detail.includes('published'), res.body.detail);
    assert.deepEqual(await getAudience(a), a);

    const { a: b, v1, v2 } = await archivedVersion();
    const arch = await cancel(b, v1.versionId);
    expectProblem(arch, 409, 'conflict');
    assert.ok(arch.body.detail.includes('archived'), arch.body.detail);
    assert.deepEqual(await getVersion(b, v1.versionId), v1);
    const pub = await cancel(b, v2.versionId);
    expectProblem(pub, 409, 'conflict');
    assert.ok(pub.body.detail.includes('published'), pub.body.detail);
    assert.deepEqual((await getAudience(b)).publishedVersion, v2);
  });

  test('a version of another audience, page or tenant, or under a deleted page, is 404', async () => {
    const { a, v } = await versionAt('draft');
    const b = await newAudience(a.pageId);
    expectProblem(await cancel(b, v.versionId), 404, 'not_found');
    expectProblem(await cancel(a, UNKNOWN_VERSION), 404, 'not_found');
    const otherPage = await newPage('Cancel other page');
    expectProblem(await cancel({ ...a, pageId: otherPage.pageId }, v.versionId), 404, 'not_found');
    const other = await t.newTenant('Cancel other tenant');
    expectProblem(await cancel(a, v.versionId, {}, other.key), 404, 'not_found');
    assert.deepEqual(await getVersion(a, v.versionId), v, 'still a draft');
    assert.equal((await t.req('DELETE', `/v0/pages/${a.pageId}`)).status, 204);
    expectProblem(await cancel(a, v.versionId), 404, 'not_found');
  });
});

describe('GET .../versions/{version_id} (endpoint 6)', () => {
  test("200 with the version; version 1 equals the audience's publishedVersion", async () => {
    const a = await newAudience(undefined, { supplementaryContext: 'read me' });
    const res = await t.req('GET', versionUrl(a, a.publishedVersion.versionId));
    assertJson(res, 200);
    assertVersionShape(res.body);
    assert.deepEqual(res.body, a.publishedVersion);
    const v2 = await newVersion(a);
    assert.deepEqual(await getVersion(a, v2.versionId), v2);
  });

  test('a version of another audience, page or tenant, unknown, malformed or under a deleted page is 404', async () => {
    const a = await newAudience();
    const b = await newAudience(a.pageId);
    const v = a.publishedVersion;
    expectProblem(await t.req('GET', versionUrl(b, v.versionId)), 404, 'not_found');
    expectProblem(await t.req('GET', versionUrl(a, UNKNOWN_VERSION)), 404, 'not_found');
    expectProblem(await t.req('GET', versionUrl(a, 'version_x')), 404, 'not_found');
    const otherPage = await newPage('Get other page');
    expectProblem(await t.req('GET', versionUrl({ ...a, pageId: otherPage.pageId }, v.versionId)), 404, 'not_found');
    const other = await t.newTenant('Get version other tenant');
    expectProblem(await t.req('GET', versionUrl(a, v.versionId), undefined, { key: other.key }), 404, 'not_found');
    // The other tenant's own version is not ours either.
    const theirs = await newAudience(undefined, {}, other.key);
    expectProblem(await t.req('GET', versionUrl(theirs, theirs.publishedVersion.versionId)), 404, 'not_found');
    expectProblem(await t.req('GET', versionUrl(a, theirs.publishedVersion.versionId)), 404, 'not_found');
    expectProblem(await t.req('GET', versionUrl(a, v.versionId), undefined, { key: null }), 401, 'unauthorized');
    assert.equal((await t.req('DELETE', `/v0/pages/${a.pageId}`)).status, 204);
    expectProblem(await t.req('GET', versionUrl(a, v.versionId)), 404, 'not_found');
  });
});

describe('GET /v0/audiences/search (endpoint 8)', () => {
  /** A tenant of its own, so counts are exact. */
  let key: string;
  const ids: Record<string, string> = {};
  const pages: Record<string, Json> = {};

  async function searchRes(qs: string, k = key): Promise<Res> {
    return t.req('GET', `/v0/audiences/search${qs}`, undefined, { key: k });
  }
  async function found(qs: string, k = key): Promise<Json> {
    const res = await searchRes(qs, k);
    assertJson(res, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ENVELOPE_FIELDS);
    for (const item of res.body.items) assert.deepEqual(Object.keys(item).sort(), SEARCH_ITEM_FIELDS);
    assert.equal(res.body.nextCursor, null);
    return res.body;
  }
  const names = (body: Json) => body.items.map((i: Json) => i.audienceId);

  before(async () => {
    key = (await t.newTenant('Search tenant')).key;
    pages.orchard = await newPage('Orchard Alpha', key);
    pages.ville = await newPage('alphaville', key);
    pages.neutral = await newPage('Neutral', key);
    const make = async (label: string, page: string, body: Json = {}) => {
      ids[label] = (await newAudience(pages[page].pageId, body, key)).audienceId;
    };
    // Oldest first.
    await make('s1', 'neutral', { customName: 'Team ALPHA' }); // inner
    await make('s2', 'neutral', { customName: 'Alpha one' }); // prefix
    await make('s3', 'orchard'); // "Audience 1" on "Orchard Alpha": inner, through the page name
    await make('s4', 'ville'); // "Audience 1" on "alphaville": prefix, through the page name
    await make('s5', 'neutral', { customName: 'Beta' }); // no match
    await make('s6', 'neutral', { customName: 'alphabet soup' }); // prefix
    await make('s7', 'neutral', { customName: 'xAlPhAx' }); // inner
  });

  test('item shape: audienceId, effectiveName, pageId, pageName', async () => {
    const body = await found('?query=beta');
    assert.deepEqual(body, {
      items: [{ audienceId: ids.s5, effectiveName: 'Beta', pageId: pages.neutral.pageId, pageName: 'Neutral' }],
      hasMore: false,
      nextCursor: null,
      totalCount: 1,
    });
    const viaPage = await found('?query=ORCHARD');
    assert.deepEqual(viaPage.items, [
      { audienceId: ids.s3, effectiveName: 'Audience 1', pageId: pages.orchard.pageId, pageName: 'Orchard Alpha' },
    ]);
  });

  test('case-insensitive substring on effectiveName or page name; prefix matches first, then newest', async () => {
    const body = await found('?query=ALPHA');
    assert.deepEqual(names(body), [ids.s6, ids.s4, ids.s2, ids.s7, ids.s3, ids.s1]);
    assert.equal(body.totalCount, 6);
    assert.equal(body.hasMore, false);
    assert.deepEqual(names(await found('?query=alpha')), names(body));
    assert.deepEqual(names(await found('?query=aLpHa')), names(body));
    // Two characters (below a trigram) match the same way: no prefix among them, so newest first.
    const short = await found('?query=lP');
    assert.deepEqual(names(short), [ids.s7, ids.s6, ids.s4, ids.s3, ids.s2, ids.s1]);
    assert.equal(short.totalCount, 6);
    // One character.
    const one = await found('?query=x');
    assert.deepEqual(names(one), [ids.s7], 'only "xAlPhAx" holds an x');
    // Prefix of the page name only.
    const ville = await found('?query=alphav');
    assert.deepEqual(names(ville), [ids.s4]);
  });

  test('effectiveName, not computedName: a custom-named audience is not found by "Audience"', async () => {
    const body = await found('?query=audience');
    assert.deepEqual(names(body), [ids.s4, ids.s3]);
    assert.equal(body.totalCount, 2);
    assert.equal((await found('?query=audience 2')).totalCount, 0, 's2 is computed "Audience 2" but named "Alpha one"');
  });

  test('limit: hasMore tells whether more matched; totalCount stays exact; nextCursor null', async () => {
    const four = await found('?query=alpha&limit=4');
    assert.deepEqual(names(four), [ids.s6, ids.s4, ids.s2, ids.s7]);
    assert.equal(four.hasMore, true);
    assert.equal(four.totalCount, 6);
    const five = await found('?query=alpha&limit=5');
    assert.equal(five.hasMore, true);
    assert.equal(five.items.length, 5);
    const six = await found('?query=alpha&limit=6');
    assert.equal(six.hasMore, false);
    assert.equal(six.totalCount, 6);
    const one = await found('?query=alpha&limit=1');
    assert.deepEqual(names(one), [ids.s6]);
    assert.equal(one.hasMore, true);
    const hundred = await found('?query=alpha&limit=100');
    assert.equal(hundred.items.length, 6);
    assert.equal(hundred.hasMore, false);
  });

  test('empty or absent query matches every audience, newest first; default limit 20', async () => {
    const all = [ids.s7, ids.s6, ids.s5, ids.s4, ids.s3, ids.s2, ids.s1];
    for (const qs of ['', '?query=', '?limit=100', '?query=&limit=7']) {
      const body = await found(qs);
      assert.deepEqual(names(body), all, qs);
      assert.equal(body.totalCount, 7, qs);
      assert.equal(body.hasMore, false, qs);
    }
    const three = await found('?limit=3');
    assert.deepEqual(names(three), all.slice(0, 3));
    assert.equal(three.hasMore, true);
    assert.equal(three.totalCount, 7);
    // Default limit: 20 of 23.
    const bulk = await t.newTenant('Search bulk tenant');
    const page = await newPage('Bulk', bulk.key);
    for (let i = 0; i < 23; i++) await newAudience(page.pageId, {}, bulk.key);
    const dflt = await found('', bulk.key);
    assert.equal(dflt.items.length, 20);
    assert.equal(dflt.hasMore, true);
    assert.equal(dflt.totalCount, 23);
  });

  test('no match: empty envelope', async () => {
    assert.deepEqual(await found('?query=zzzz-nothing'), { items: [], hasMore: false, nextCursor: null, totalCount: 0 });
  });

  test('"%", "_" and "\\" are matched literally', async () => {
    const k = (await t.newTenant('Search literal tenant')).key;
    const page = await newPage('Literal', k);
    const pct = (await newAudience(page.pageId, { customName: '100% match' }, k)).audienceId;
    const plain = (await newAudience(page.pageId, { customName: '1000 match' }, k)).audienceId;
    const under = (await newAudience(page.pageId, { customName: 'snake_case' }, k)).audienceId;
    const slash = (await newAudience(page.pageId, { customName: 'back\\slash' }, k)).audienceId;
    assert.deepEqual(names(await found(`?query=${encodeURIComponent('%')}`, k)), [pct]);
    assert.deepEqual(names(await found(`?query=${encodeURIComponent('0%')}`, k)), [pct]);
    assert.deepEqual(names(await found(`?query=${encodeURIComponent('00% m')}`, k)), [pct]);
    assert.deepEqual(names(await found(`?query=${encodeURIComponent('_')}`, k)), [under]);
    assert.deepEqual(names(await found(`?query=${encodeURIComponent('e_c')}`, k)), [under]);
    assert.deepEqual(names(await found(`?query=${encodeURIComponent('\\')}`, k)), [slash]);
    assert.deepEqual(names(await found(`?query=${encodeURIComponent('k\\s')}`, k)), [slash]);
    assert.deepEqual(names(await found('?query=match', k)), [plain, pct]);
    // Quotes and FTS-like operators are text too.
    const quoted = (await newAudience(page.pageId, { customName: 'say "hello" NEAR me*' }, k)).audienceId;
    assert.deepEqual(names(await found(`?query=${encodeURIComponent('"hello"')}`, k)), [quoted]);
    assert.deepEqual(names(await found(`?query=${encodeURIComponent('near me*')}`, k)), [quoted]);
    assert.deepEqual(names(await found(`?query=${encodeURIComponent('hello OR match')}`, k)), []);
  });

  test('non-ASCII text matches case-insensitively', async () => {
    const k = (await t.newTenant('Search unicode tenant')).key;
    const page = await newPage('Équipe', k);
    const a = (await newAudience(page.pageId, { customName: 'Zürich Öffices' }, k)).audienceId;
    assert.deepEqual(names(await found(`?query=${encodeURIComponent('zÜRICH')}`, k)), [a]);
    assert.deepEqual(names(await found(`?query=${encodeURIComponent('öff')}`, k)), [a]);
    assert.deepEqual(names(await found(`?query=${encodeURIComponent('équipe')}`, k)), [a]);
  });

  test('a page renamed: its audiences are found by the new name, not the old', async () => {
    const k = (await t.newTenant('Search rename tenant')).key;
    const page = await newPage('Quokka landing', k);
    const a = (await newAudience(page.pageId, { customName: 'Plain' }, k)).audienceId;
    assert.deepEqual(names(await found('?query=quokka', k)), [a]);
    const res = await t.req('PATCH', `/v0/pages/${page.pageId}`, { name: 'Wombat landing' }, { key: k });
    assert.equal(res.status, 200, res.text);
    assert.equal((await found('?query=quokka', k)).totalCount, 0);
    assert.deepEqual((await found('?query=wombat', k)).items, [
      { audienceId: a, effectiveName: 'Plain', pageId: page.pageId, pageName: 'Wombat landing' },
    ]);
  });

  test('audiences of deleted pages are excluded', async () => {
    const k = (await t.newTenant('Search delete tenant')).key;
    const kept = await newPage('Kept page', k);
    const gone = await newPage('Gone page', k);
    const keptId = (await newAudience(kept.pageId, { customName: 'shared word' }, k)).audienceId;
    await newAudience(gone.pageId, { customName: 'shared word' }, k);
    assert.equal((await found('?query=shared', k)).totalCount, 2);
    assert.equal((await t.req('DELETE', `/v0/pages/${gone.pageId}`, undefined, { key: k })).status, 204);
    const body = await found('?query=shared', k);
    assert.deepEqual(names(body), [keptId]);
    assert.equal(body.totalCount, 1);
    assert.equal((await found('?query=gone page', k)).totalCount, 0);
    assert.equal((await found('', k)).totalCount, 1);
  });

  test('version moves do not affect search (status is not a filter; only archived audiences are)', async () => {
    const k = (await t.newTenant('Search versions tenant')).key;
    const a = await newAudience(undefined, { customName: 'Versioned' }, k);
    const v = await newVersion(a, {}, k);
    const c = await cancel(a, v.versionId, {}, k);
    assert.equal(c.status, 200, c.text);
    assert.deepEqual(names(await found('?query=versioned', k)), [a.audienceId]);
  });

  test('archived audiences are excluded, and found again once restored', async () => {
    const k = (await t.newTenant('Search archive tenant')).key;
    const a = await newAudience(undefined, { customName: 'Shelved' }, k);
    const base = `/v0/pages/${a.pageId}/audiences/${a.audienceId}`;
    assert.deepEqual(names(await found('?query=shelved', k)), [a.audienceId]);
    assert.equal((await t.req('POST', `${base}/archive`, {}, opts(k))).status, 200);
    const gone = await found('?query=shelved', k);
    assert.deepEqual(names(gone), []);
    assert.equal(gone.totalCount, 0);
    assert.equal((await t.req('POST', `${base}/restore`, {}, opts(k))).status, 200);
    assert.deepEqual(names(await found('?query=shelved', k)), [a.audienceId]);
  });

  test("another tenant's audiences never appear", async () => {
    const body = await found('?query=alpha', t.key);
    assert.ok(!body.items.some((i: Json) => Object.values(ids).includes(i.audienceId)));
    const all = await found('?limit=100', t.key);
    assert.ok(!all.items.some((i: Json) => Object.values(ids).includes(i.audienceId)));
    const empty = await t.newTenant('Search empty tenant');
    assert.deepEqual(await found('', empty.key), { items: [], hasMore: false, nextCursor: null, totalCount: 0 });
    assert.deepEqual(await found('?query=alpha', empty.key), { items: [], hasMore: false, nextCursor: null, totalCount: 0 });
  });

  test('cursor is 400; limit outside 1-100 or not an integer is 400; unknown parameters are 400; no key is 401', async () => {
    expectProblem(await searchRes('?cursor=abc'), 400, 'validation_failed', ['/cursor']);
    expectProblem(await searchRes('?query=alpha&cursor='), 400, 'validation_failed', ['/cursor']);
    for (const limit of ['0', '101', '-1', '1.5', 'ten', '']) {
      expectProblem(await searchRes(`?limit=${limit}`), 400, 'validation_failed', ['/limit']);
    }
    expectProblem(await searchRes('?q=alpha'), 400, 'validation_failed', ['/q']);
    expectProblem(await searchRes('?pageId=x'), 400, 'validation_failed', ['/pageId']);
    expectProblem(await t.req('GET', '/v0/audiences/search', undefined, { key: null }), 401, 'unauthorized');
  });
});
