import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, ok, startApp, type Json, type TestApp } from '../helpers.js';
import { BUILT_INS } from '../../src/templates/built-ins/index.js';

// Issue 45 §3 "Lists": a page's or template's content is at most 512 KB (413 naming the bound and
// the field, on every write that takes content), and the lists of pages and templates answer
// summaries without content unless `include=content` asks for it, 10 at most then.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const LIMIT = 512 * 1024;
const PAGE = { name: 'Big', title: 'Big', pageContext: 'We sell widgets', pageType: 'inbound' };
const SMALL = { headline: 'Small', subheadline: '', sections: [{ heading: 'h', body: 'b' }] };

/** A valid content whose JSON is exactly `bytes` bytes (sections of at most 20,000 characters each). */
function contentOf(bytes: number): Json {
  const sections = Array.from({ length: 27 }, () => ({ heading: 'h', body: 'b'.repeat(20_000) }));
  const content = { headline: 'Big', subheadline: '', sections };
  const over = Buffer.byteLength(JSON.stringify(content)) - bytes;
  const last = sections[sections.length - 1] as { body: string };
  last.body = 'b'.repeat(20_000 - over);
  assert.equal(Buffer.byteLength(JSON.stringify(content)), bytes);
  return content;
}

/** A 413 naming the bound and the field. */
function tooLarge(res: Awaited<ReturnType<TestApp['req']>>, path: string) {
  expectProblem(res, 413, 'payload_too_large', [path]);
  assert.match(res.body.detail, /512 KB/);
  assert.ok(res.body.detail.includes(path), res.body.detail);
}

const PAGE_FIELDS = [
  'actionCardWidgets',
  'actions',
  'archivedAt',
  'audiencesCount',
  'brandId',
  'createdAt',
  'deletedAt',
  'flags',
  'footerLinks',
  'name',
  'pageContext',
  'pageId',
  'pageType',
  'scripts',
  'status',
  'title',
  'updatedAt',
];

describe('a content is at most 512 KB', () => {
  test('page create and PATCH: 512 KB is kept, a byte more is 413 at /content', async () => {
    const atBound = contentOf(LIMIT);
    const page = ok(await t.req('POST', '/v0/pages', { ...PAGE, content: atBound }), 201);
    assert.deepEqual(page.content, atBound);
    tooLarge(await t.req('POST', '/v0/pages', { ...PAGE, content: contentOf(LIMIT + 1) }), '/content');

    const small = ok(await t.req('POST', '/v0/pages', { ...PAGE, content: SMALL }), 201);
    tooLarge(await t.req('PATCH', `/v0/pages/${small.pageId}`, { content: contentOf(LIMIT + 1) }), '/content');
    assert.deepEqual(ok(await t.req('GET', `/v0/pages/${small.pageId}`)).content, SMALL, 'nothing written');
    assert.deepEqual(ok(await t.req('PATCH', `/v0/pages/${small.pageId}`, { content: atBound })).content, atBound);
  });

  test('a body over the request limit (1 MB) is 413 naming that limit, and the content bound on a route that takes content', async () => {
    const huge = {
      headline: 'Huge',
      subheadline: '',
      sections: Array.from({ length: 50 }, () => ({ heading: 'h', body: 'b'.repeat(20_000) })),
    };
    const scripts = [{ name: 's', description: '', content: 'x'.repeat(60_000), enabled: false }];
    const res = await t.req('POST', '/v0/pages', { ...PAGE, content: huge, scripts });
    expectProblem(res, 413, 'payload_too_large');
    assert.match(res.body.detail, /1048576 bytes/);
    assert.match(res.body.detail, /512 KB/);
    const small = ok(await t.req('POST', '/v0/pages', { ...PAGE, content: SMALL }), 201);
    const patched = await t.req('PATCH', `/v0/pages/${small.pageId}`, { content: huge, scripts });
    expectProblem(patched, 413, 'payload_too_large');
    assert.match(patched.body.detail, /\/content.*512 KB/);
    const other = await t.req('POST', '/v0/persons', { name: 'x'.repeat(1_100_000) });
    expectProblem(other, 413, 'payload_too_large');
    assert.doesNotMatch(other.body.detail, /512 KB/);
  });

  test('a multi-byte character counts by its UTF-8 bytes', async () => {
    // "é" is two bytes: the same number of characters as the bound, more bytes than it.
    const content = contentOf(LIMIT);
    const last = content.sections[content.sections.length - 1];
    last.body = `é${last.body.slice(1)}`;
    tooLarge(await t.req('POST', '/v0/pages', { ...PAGE, content }), '/content');
  });

  test('preview: a draft over the bound is 413 at /content', async () => {
    const page = ok(await t.req('POST', '/v0/pages', { ...PAGE, content: SMALL }), 201);
    const shown = await t.req('POST', `/v0/pages/${page.pageId}/preview`, { content: contentOf(LIMIT) });
    assert.equal(shown.status, 200, shown.text.slice(0, 300));
    tooLarge(await t.req('POST', `/v0/pages/${page.pageId}/preview`, { content: contentOf(LIMIT + 1) }), '/content');
  });

  test("an audience version's content: 413 at /content", async () => {
    const page = ok(await t.req('POST', '/v0/pages', { ...PAGE, content: SMALL }), 201);
    const audience = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, {}), 201);
    const versions = `/v0/pages/${page.pageId}/audiences/${audience.audienceId}/versions`;
    tooLarge(await t.req('POST', versions, { content: contentOf(LIMIT + 1) }), '/content');
    ok(await t.req('POST', versions, { content: contentOf(LIMIT) }), 201);
  });

  test('a template saved from a page written before the bound is 413 at /pageId, and so is a page made from such a template', async () => {
    const page = ok(await t.req('POST', '/v0/pages', { ...PAGE, content: SMALL }), 201);
    const template = ok(await t.req('POST', '/v0/templates', { pageId: page.pageId, name: 'Small' }), 201);
    // Rows as an older version of the service could have written them.
    const legacy = JSON.stringify(contentOf(LIMIT + 1));
    await t.app.db.updateTable('pages').set({ content: legacy }).where('id', '=', page.pageId).execute();
    tooLarge(await t.req('POST', '/v0/templates', { pageId: page.pageId, name: 'Too big' }), '/pageId');
    await t.app.db.updateTable('templates').set({ content: legacy }).where('id', '=', template.templateId).execute();
    tooLarge(await t.req('POST', '/v0/pages', { ...PAGE, templateId: template.templateId }), '/templateId');
  });
});

describe('lists answer summaries', () => {
  test('GET /v0/pages: no content; include=content adds it, 10 at most', async () => {
    const { key } = await t.newTenant('Pages');
    const made: Json[] = [];
    for (let i = 0; i < 12; i++) {
      made.push(ok(await t.req('POST', '/v0/pages', { ...PAGE, name: `P${i}`, content: { ...SMALL, headline: `H${i}` } }, { key }), 201));
    }
    const list = ok(await t.req('GET', '/v0/pages?limit=100', undefined, { key }));
    assert.equal(list.totalCount, 12);
    assert.equal(list.items.length, 12);
    for (const item of list.items) {
      assert.deepEqual(Object.keys(item).sort(), PAGE_FIELDS);
      const full = made.find((p) => p.pageId === item.pageId);
      const { content, ...rest } = full;
      assert.deepEqual(item, rest);
      assert.ok(content);
    }
    const defaulted = ok(await t.req('GET', '/v0/pages', undefined, { key }));
    assert.equal(defaulted.items.length, 12, 'the usual default of 20 without include');

    const withContent = ok(await t.req('GET', '/v0/pages?include=content', undefined, { key }));
    assert.equal(withContent.items.length, 10, 'default 10 with include=content');
    assert.equal(withContent.hasMore, true);
    for (const item of withContent.items)
      assert.deepEqual(
        item,
        made.find((p) => p.pageId === item.pageId),
      );
    const rest = ok(await t.req('GET', `/v0/pages?include=content&limit=10&cursor=${withContent.nextCursor}`, undefined, { key }));
    assert.deepEqual(
      [...withContent.items, ...rest.items].map((p: Json) => p.name),
      list.items.map((p: Json) => p.name),
    );
    assert.equal(ok(await t.req('GET', '/v0/pages?include=content&limit=1', undefined, { key })).items.length, 1);

    const refused = await t.req('GET', '/v0/pages?include=content&limit=11', undefined, { key });
    expectProblem(refused, 400, 'validation_failed', ['/limit']);
    assert.match(refused.body.errors[0].message, /at most 10/);
    expectProblem(await t.req('GET', '/v0/pages?include=actions', undefined, { key }), 400, 'validation_failed', ['/include']);
    expectProblem(await t.req('GET', '/v0/pages?limit=101', undefined, { key }), 400, 'validation_failed', ['/limit']);
    expectProblem(await t.req('GET', '/v0/pages?limit=0', undefined, { key }), 400, 'validation_failed', ['/limit']);
  });

  test('GET /v0/templates: no content; include=content adds it, 10 at most; 30 saves of a 512 KB page list in kilobytes', async () => {
    const { key } = await t.newTenant('Templates');
    const page = ok(await t.req('POST', '/v0/pages', { ...PAGE, content: contentOf(LIMIT) }, { key }), 201);
    for (let i = 0; i < 30; i++) ok(await t.req('POST', '/v0/templates', { pageId: page.pageId, name: `T${i}` }, { key }), 201);

    const res = await t.req('GET', '/v0/templates?limit=100', undefined, { key });
    const list = ok(res);
    assert.equal(list.items.length, 30 + BUILT_INS.length);
    assert.ok(res.text.length < 64 * 1024, `${res.text.length} bytes`);
    for (const item of list.items) {
      assert.equal(item.content, undefined);
      const one = ok(await t.req('GET', `/v0/templates/${item.templateId}`, undefined, { key }));
      const { content, ...rest } = one;
      assert.deepEqual(item, rest);
      assert.ok(content.headline);
    }

    const withContent = ok(await t.req('GET', '/v0/templates?include=content', undefined, { key }));
    assert.equal(withContent.items.length, 10);
    assert.equal(withContent.hasMore, true);
    for (const item of withContent.items) {
      assert.deepEqual(item, ok(await t.req('GET', `/v0/templates/${item.templateId}`, undefined, { key })));
    }
    // Past the built-ins, the tenant's own carry their content too.
    const own = ok(await t.req('GET', `/v0/templates?include=content&limit=10&cursor=${withContent.nextCursor}`, undefined, { key }));
    assert.equal(own.items.length, 10);
    assert.equal(Buffer.byteLength(JSON.stringify(own.items[0].content)), LIMIT);

    const refused = await t.req('GET', '/v0/templates?include=content&limit=11', undefined, { key });
    expectProblem(refused, 400, 'validation_failed', ['/limit']);
    assert.match(refused.body.errors[0].message, /at most 10/);
    expectProblem(await t.req('GET', '/v0/templates?include=name', undefined, { key }), 400, 'validation_failed', ['/include']);
  });
});
