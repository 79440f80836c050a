import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, startApp, type Json, type TestApp, ok } from '../helpers.js';

// The `content` extension field of pages and audience versions, through HTTP only.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});
async function eventsOf(type: string): Promise<Json[]> {
  return ok(await t.req('GET', `/v0/events?type=${type}&limit=100`)).items;
}

const PAGE = { name: 'Landing', title: 'Welcome', pageContext: 'We sell widgets', pageType: 'inbound' };
const CONTENT = {
  headline: 'Hello {{person.firstName | there}}',
  subheadline: 'For {{account.name | your team}}',
  sections: [
    { heading: 'Why', body: '**Fast** and [safe](https://example.com).' },
    { heading: '', body: '' },
  ],
};
const DEFAULT = { headline: 'Welcome', subheadline: '', sections: [] };

const newPage = async (extra: Json = {}) => ok(await t.req('POST', '/v0/pages', { ...PAGE, ...extra }), 201);
const getPage = async (pageId: string) => ok(await t.req('GET', `/v0/pages/${pageId}`));
const patchPage = (pageId: string, body: unknown) => t.req('PATCH', `/v0/pages/${pageId}`, body);

const section = (body = 'x') => ({ heading: 'h', body });
/** Content valid but for one change, and the path its 400 names. */
const BOUNDS: [string, Json, Json, string][] = [
  // [what, just inside, just outside, path]
  ['headline', { ...DEFAULT, headline: 'h'.repeat(200) }, { ...DEFAULT, headline: 'h'.repeat(201) }, '/content/headline'],
  ['subheadline', { ...DEFAULT, subheadline: 's'.repeat(500) }, { ...DEFAULT, subheadline: 's'.repeat(501) }, '/content/subheadline'],
  [
    'heading',
    { ...DEFAULT, sections: [{ heading: 'h'.repeat(200), body: '' }] },
    { ...DEFAULT, sections: [{ heading: 'h'.repeat(201), body: '' }] },
    '/content/sections/0/heading',
  ],
  [
    'body',
    { ...DEFAULT, sections: [section(), section('b'.repeat(20_000))] },
    { ...DEFAULT, sections: [section(), section('b'.repeat(20_001))] },
    '/content/sections/1/body',
  ],
  [
    'sections',
    { ...DEFAULT, sections: Array.from({ length: 50 }, () => section()) },
    { ...DEFAULT, sections: Array.from({ length: 51 }, () => section()) },
    '/content/sections',
  ],
];
/** Content of the wrong shape, and the path its 400 names. */
const MALFORMED: [Json, string][] = [
  [{ subheadline: '', sections: [] }, '/content/headline'],
  [{ headline: '', sections: [] }, '/content/subheadline'],
  [{ headline: '', subheadline: '' }, '/content/sections'],
  [{ ...DEFAULT, extra: 1 }, '/content/extra'],
  [{ ...DEFAULT, sections: [{ heading: 'h' }] }, '/content/sections/0/body'],
  [{ ...DEFAULT, sections: [{ body: 'b' }] }, '/content/sections/0/heading'],
  [{ ...DEFAULT, sections: [{ heading: 'h', body: 'b', html: '<b>' }] }, '/content/sections/0/html'],
  [{ ...DEFAULT, headline: 5 }, '/content/headline'],
  [{ ...DEFAULT, headline: null }, '/content/headline'],
  [{ ...DEFAULT, sections: {} }, '/content/sections'],
  [{ ...DEFAULT, sections: ['x'] }, '/content/sections/0'],
  ['text', '/content'],
  [[], '/content'],
];

describe('page content', () => {
  test('a page without content shows the default: its title as headline, nothing else', async () => {
    const p = await newPage({ title: 'Hi {{person.name}} <b>' });
    assert.deepEqual(p.content, { headline: 'Hi {{person.name}} <b>', subheadline: '', sections: [] });
    assert.deepEqual((await getPage(p.pageId)).content, p.content);
    // Lists carry content only when asked (issue 45).
    const listed = ok(await t.req('GET', '/v0/pages?limit=10&include=content')).items.find((x: Json) => x.pageId === p.pageId);
    assert.deepEqual(listed.content, p.content);
    const summary = ok(await t.req('GET', '/v0/pages?limit=100')).items.find((x: Json) => x.pageId === p.pageId);
    assert.equal(summary.content, undefined);
  });

  test('set on create and PATCH, stored exactly; null on PATCH goes back to the default; the event carries it', async () => {
    const p = await newPage({ content: CONTENT });
    assert.deepEqual(p.content, CONTENT);
    assert.deepEqual((await getPage(p.pageId)).content, CONTENT);
    const next = { headline: '', subheadline: 'Only a subheadline', sections: [] };
    const patched = ok(await patchPage(p.pageId, { content: next }));
    assert.deepEqual(patched.content, next);
    assert.ok(patched.updatedAt > p.updatedAt);
    const updated = (await eventsOf('page.updated')).filter((e) => e.payload.data.pageId === p.pageId);
    assert.deepEqual(updated.at(0)?.payload.data.content, next);
    // Other fields leave the content alone.
    assert.deepEqual(ok(await patchPage(p.pageId, { name: 'Renamed' })).content, next);
    assert.deepEqual(ok(await patchPage(p.pageId, { content: null })).content, DEFAULT);
    assert.deepEqual((await getPage(p.pageId)).content, DEFAULT);
  });

  test('each bound just inside is stored and just outside is 400 naming the field, on create and on PATCH', async () => {
    const p = await newPage();
    for (const [what, inside, outside, path] of BOUNDS) {
      assert.deepEqual(ok(await t.req('POST', '/v0/pages', { ...PAGE, content: inside }), 201).content, inside, what);
      expectProblem(await t.req('POST', '/v0/pages', { ...PAGE, content: outside }), 400, 'validation_failed', [path]);
      assert.deepEqual(ok(await patchPage(p.pageId, { content: inside })).content, inside, what);
      expectProblem(await patchPage(p.pageId, { content: outside }), 400, 'validation_failed', [path]);
    }
  });

  test('lengths count characters, not bytes', async () => {
    const headline = '😀'.repeat(200);
    assert.equal((await newPage({ content: { ...DEFAULT, headline } })).content.headline, headline);
    expectProblem(
      await t.req('POST', '/v0/pages', { ...PAGE, content: { ...DEFAULT, headline: `${headline}é` } }),
      400,
      'validation_failed',
      ['/content/headline'],
    );
  });

  test('content of the wrong shape is 400 at its path and writes nothing', async () => {
    const p = await newPage({ content: CONTENT });
    const before = await getPage(p.pageId);
    const pages = ok(await t.req('GET', '/v0/pages?limit=1')).totalCount;
    for (const [content, path] of MALFORMED) {
      expectProblem(await t.req('POST', '/v0/pages', { ...PAGE, content }), 400, 'validation_failed', [path]);
      expectProblem(await patchPage(p.pageId, { content, name: 'Changed' }), 400, 'validation_failed', [path]);
    }
    expectProblem(await t.req('POST', '/v0/pages', { ...PAGE, content: null }), 400, 'validation_failed', ['/content']);
    assert.deepEqual(await getPage(p.pageId), before);
    assert.equal(ok(await t.req('GET', '/v0/pages?limit=1')).totalCount, pages);
  });
});

describe('audience version content', () => {
  async function newAudience(): Promise<{ page: Json; a: Json; versions: string }> {
    const page = await newPage({ content: CONTENT });
    const a = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, {}), 201);
    return { page, a, versions: `/v0/pages/${page.pageId}/audiences/${a.audienceId}/versions` };
  }
  const audienceOf = async (page: Json, a: Json) => ok(await t.req('GET', `/v0/pages/${page.pageId}/audiences/${a.audienceId}`));

  test("version 1 has none (the page's); create takes it, carries the latest's over when absent, null clears it", async () => {
    const { page, a, versions } = await newAudience();
    assert.equal(a.publishedVersion.content, null);
    const v2 = ok(await t.req('POST', versions, { content: CONTENT }), 201);
    assert.deepEqual(v2.content, CONTENT);
    assert.deepEqual(ok(await t.req('GET', `${versions}/${v2.versionId}`)).content, CONTENT);
    assert.deepEqual((await audienceOf(page, a)).latestVersion.content, CONTENT);
    assert.deepEqual(ok(await t.req('POST', versions, null), 201).content, CONTENT, 'carried over from the latest');
    assert.deepEqual(ok(await t.req('POST', versions, { supplementaryContext: 'x' }), 201).content, CONTENT);
    const cleared = ok(await t.req('POST', versions, { content: null }), 201);
    assert.equal(cleared.content, null);
    assert.equal(ok(await t.req('POST', versions, {}), 201).content, null, 'null carried over too');
    const created = (await eventsOf('audience_version.created')).filter((e) => e.payload.data.versionId === v2.versionId);
    assert.deepEqual(created.at(0)?.payload.data.content, CONTENT);
  });

  test('PATCH content while draft: stored, evented; with a status, content first then the move', async () => {
    const { page, a, versions } = await newAudience();
    const v = ok(await t.req('POST', versions, null), 201);
    const url = `${versions}/${v.versionId}`;
    assert.equal(v.origin, 'generated', 'made without content: it shows what the agent or the page wrote');
    const changed = ok(await t.req('PATCH', url, { content: CONTENT }));
    // A draft whose content is patched becomes a person's (issue 36).
    assert.deepEqual(changed, { ...v, content: CONTENT, origin: 'written' });
    const events = (await eventsOf('audience_version.updated')).filter((e) => e.payload.data.versionId === v.versionId);
    assert.equal(events.length, 1);
    assert.deepEqual(events[0].payload.data, changed);
    assert.equal(ok(await t.req('PATCH', url, { content: null })).content, null);
    const next = { ...DEFAULT, headline: 'Published headline' };
    const published = ok(await t.req('PATCH', url, { content: next, status: 'published' }));
    assert.equal(published.status, 'published');
    assert.deepEqual(published.content, next);
    const audience = await audienceOf(page, a);
    assert.deepEqual(audience.publishedVersion.content, next);
    assert.equal(audience.publishedVersion.versionId, v.versionId);
  });

  test('PATCH content of a version that is not draft is 409 naming /content and changes nothing, not even its status', async () => {
    const { a, page, versions } = await newAudience();
    const pending = ok(await t.req('POST', versions, { content: CONTENT }), 201);
    ok(await t.req('PATCH', `${versions}/${pending.versionId}`, { status: 'pending' }));
    const cancelled = ok(await t.req('POST', versions, null), 201);
    ok(await t.req('POST', `${versions}/${cancelled.versionId}/cancel`));
    const targets = [pending.versionId, cancelled.versionId, a.publishedVersion.versionId];
    for (const id of targets) {
      const before = ok(await t.req('GET', `${versions}/${id}`));
      for (const body of [{ content: DEFAULT }, { content: null }, { content: DEFAULT, status: 'published' }]) {
        if (body.content === before.content) {
          // The content it has, sent back as read, changes nothing (issue 19's round trip); nothing moves.
          if (body.status === undefined) assert.deepEqual(ok(await t.req('PATCH', `${versions}/${id}`, body)), before);
          continue;
        }
        const res = await t.req('PATCH', `${versions}/${id}`, body);
        expectProblem(res, 409, 'conflict', ['/content']);
        assert.match(res.body.detail, new RegExp(before.status));
      }
      assert.deepEqual(ok(await t.req('GET', `${versions}/${id}`)), before);
    }
    assert.equal((await audienceOf(page, a)).publishedVersion.versionId, a.publishedVersion.versionId);
    const updated = (await eventsOf('audience_version.updated')).filter((e) => targets.includes(e.payload.data.versionId));
    assert.equal(updated.length, 0);
  });

  test('an empty PATCH is 400 naming both fields; bounds and shapes as on pages, on create and PATCH', async () => {
    const { versions } = await newAudience();
    const v = ok(await t.req('POST', versions, null), 201);
    const url = `${versions}/${v.versionId}`;
    expectProblem(await t.req('PATCH', url, {}), 400, 'validation_failed', ['/status', '/content']);
    for (const [what, inside, outside, path] of BOUNDS) {
      assert.deepEqual(ok(await t.req('POST', versions, { content: inside }), 201).content, inside, what);
      expectProblem(await t.req('POST', versions, { content: outside }), 400, 'validation_failed', [path]);
      assert.deepEqual(ok(await t.req('PATCH', url, { content: inside })).content, inside, what);
      expectProblem(await t.req('PATCH', url, { content: outside, status: 'pending' }), 400, 'validation_failed', [path]);
    }
    for (const [content, path] of MALFORMED) {
      expectProblem(await t.req('POST', versions, { content }), 400, 'validation_failed', [path]);
      expectProblem(await t.req('PATCH', url, { content }), 400, 'validation_failed', [path]);
    }
    const got = ok(await t.req('GET', url));
    assert.equal(got.status, 'draft', 'no move happened beside a refused content');
    assert.deepEqual(got.content, BOUNDS.at(-1)?.[1]);
  });
});
