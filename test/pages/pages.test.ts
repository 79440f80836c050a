import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, ISO_MS, startApp, type Json, type Res, type TestApp } from '../helpers.js';

// Black-box tests of reference endpoints 1 (list pages) and 2 (update page), and of the page
// extensions: POST /v0/pages, GET /v0/pages/{page_id}, DELETE /v0/pages/{page_id}; and of the
// derived audiencesCount. Through HTTP only.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const PAGE_ID = /^page_[0-9a-z]{26}$/;
const ACTION_ID = /^action_[0-9a-z]{26}$/;
const PAGE_FIELDS = [
  'actionCardWidgets',
  'actions',
  'archivedAt',
  'audiencesCount',
  'brandId',
  'content',
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
const ACTION_FIELDS = ['actionId', 'actionIndex', 'actionType', 'buttonTitle', 'purpose', 'url'];
const ENVELOPE_FIELDS = ['hasMore', 'items', 'nextCursor', 'totalCount'];
const PAGE_TYPES = ['inbound', 'outbound', 'call_followup', 'sales_deck', 'custom'];
const IMAGE_FIELDS = ['ogImageUrl', 'ogImageFileId', 'twitterImageUrl', 'twitterImageFileId'];

/** Every Metadata field with its unset value. */
const EMPTY_METADATA = {
  title: '',
  description: '',
  keywords: [],
  author: '',
  robots: [],
  canonicalUrl: '',
  ogTitle: '',
  ogDescription: '',
  ogImageUrl: '',
  ogImageFileId: '',
  ogImageAlt: '',
  ogSiteName: '',
  ogUrl: '',
  twitterTitle: '',
  twitterDescription: '',
  twitterImageUrl: '',
  twitterImageFileId: '',
  twitterImageAlt: '',
  twitterSite: '',
  twitterCreator: '',
  themeColor: '',
};

/** Well-formed ids that name nothing (TypeID body: first character 0-7). */
const UNKNOWN_PAGE = 'page_01h0000000000000000000000a';
const UNKNOWN_ACTION = 'action_01h0000000000000000000000a';

const MINIMAL = { name: 'Landing', title: 'Welcome', pageContext: 'We sell widgets', pageType: 'inbound' };

const ACTION_A = { purpose: 'Book a meeting', buttonTitle: 'Book now', actionType: 'calendar', url: 'https://example.com/book' };
const ACTION_B = { purpose: 'Download', buttonTitle: 'Get the PDF', actionType: 'download', url: 'https://example.com/pdf' };
const ACTION_C = { purpose: 'Contact', buttonTitle: 'Talk to us', actionType: 'form', url: 'https://example.com/contact' };
/** A form action as stored and answered: it has no URL of its own (issue 38), so any sent is dropped. */
const STORED_C = { ...ACTION_C, url: '' };
const WIDGET = {
  type: 'logo_cloud',
  title: 'Trusted by',
  logos: [{ image: { altText: 'Acme logo', url: 'https://cdn.example.com/acme.png', fileId: 'file_acme', assetId: 'asset_acme' } }],
};
const FOOTER = { id: 'company', title: 'Company', links: [{ id: 'about', text: 'About us', url: 'https://example.com/about' }] };
const SCRIPT = { name: 'analytics', description: 'Page analytics', content: '<script>track()</script>', enabled: true };

function assertJson(res: Res, status: number): void {
  assert.equal(res.status, status, res.text);
  assert.match(String(res.headers['content-type']), /^application\/json/);
}

/** A page as lists show it (issue 45): every field but content. */
const summary = ({ content: _content, ...rest }: Json) => rest;

/** The exact key set of a page (of a list's summary: without content): headerActionId and metadata only when present. */
function assertPageShape(p: Json, listed = false): void {
  const expected = PAGE_FIELDS.filter((f) => !listed || f !== 'content');
  if ('headerActionId' in p) expected.push('headerActionId');
  if ('metadata' in p) expected.push('metadata');
  assert.deepEqual(Object.keys(p).sort(), expected.sort());
  assert.match(p.pageId, PAGE_ID);
  assert.ok(PAGE_TYPES.includes(p.pageType), p.pageType);
  assert.ok(['archived', 'draft', 'published'].includes(p.status), p.status);
  assert.ok(Number.isInteger(p.audiencesCount) && p.audiencesCount >= 0);
  p.actions.forEach((a: Json, i: number) => {
    assert.deepEqual(Object.keys(a).sort(), ACTION_FIELDS);
    assert.match(a.actionId, ACTION_ID);
    assert.equal(a.actionIndex, i);
  });
  if ('headerActionId' in p) assert.equal(typeof p.headerActionId, 'string');
  if ('metadata' in p) assert.deepEqual(Object.keys(p.metadata).sort(), Object.keys(EMPTY_METADATA).sort());
  assert.ok(p.archivedAt === null || ISO_MS.test(p.archivedAt));
  assert.equal(p.deletedAt, null);
  assert.match(p.createdAt, ISO_MS);
  assert.match(p.updatedAt, ISO_MS);
}

/** Actions as a request would carry them (no actionIndex). */
const strip = (actions: Json[], keepIds = true) =>
  actions.map(({ actionIndex: _i, actionId, ...rest }: Json) => (keepIds ? { actionId, ...rest } : rest));

async function create(body: Json = {}, key?: string): Promise<Json> {
  const res = await t.req('POST', '/v0/pages', { ...MINIMAL, ...body }, key === undefined ? {} : { key });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

async function get(pageId: string, key?: string): Promise<Res> {
  return t.req('GET', `/v0/pages/${pageId}`, undefined, key === undefined ? {} : { key });
}

async function patch(pageId: string, body: Json, key?: string): Promise<Res> {
  return t.req('PATCH', `/v0/pages/${pageId}`, body, key === undefined ? {} : { key });
}

async function patchOk(pageId: string, body: Json, key?: string): Promise<Json> {
  const res = await patch(pageId, body, key);
  assertJson(res, 200);
  assertPageShape(res.body);
  return res.body;
}

async function list(query: string, key?: string): Promise<Res> {
  return t.req('GET', `/v0/pages${query}`, undefined, key === undefined ? {} : { key });
}

/** A PATCH that must fail leaves the page exactly as it was (updatedAt included). */
async function expectUnchanged(before: Json, key?: string): Promise<void> {
  const res = await get(before.pageId, key);
  assertJson(res, 200);
  assert.deepEqual(res.body, before);
}

function errorPaths(res: Res): string[] {
  return (res.body?.errors ?? []).map((e: { path: string }) => e.path);
}

describe('POST /v0/pages (extension)', () => {
  test('201 with every Page field, defaults for the optional ones', async () => {
    const res = await t.req('POST', '/v0/pages', MINIMAL);
    assertJson(res, 201);
    const p = res.body;
    assertPageShape(p);
    assert.deepEqual(Object.keys(p).sort(), PAGE_FIELDS, 'no metadata and no headerActionId when none given');
    const { pageId, createdAt, updatedAt, ...rest } = p;
    assert.match(pageId, PAGE_ID);
    assert.deepEqual(rest, {
      name: 'Landing',
      title: 'Welcome',
      pageContext: 'We sell widgets',
      pageType: 'inbound',
      status: 'draft',
      flags: [],
      brandId: '',
      actions: [],
      actionCardWidgets: [],
      footerLinks: [],
      scripts: [],
      content: { headline: 'Welcome', subheadline: '', sections: [] },
      audiencesCount: 0,
      archivedAt: null,
      deletedAt: null,
    });
    assert.equal(createdAt, updatedAt);
    assert.ok(Math.abs(Date.parse(createdAt) - Date.now()) < 60_000, 'createdAt is now');
    assert.ok(res.headers['x-request-id']);
  });

  test('201 with every optional field set echoes them exactly', async () => {
    const body = {
      name: 'Full page 😀',
      title: 'Full title',
      pageContext: 'Full context',
      pageType: 'sales_deck',
      status: 'published',
      flags: ['home_page'],
      brandId: 'brand_123',
      headerActionId: null,
      actions: [ACTION_A, ACTION_B, { purpose: '', buttonTitle: '', actionType: 'Any Type At All', url: '' }],
      actionCardWidgets: [WIDGET, { type: 'x', title: '', logos: [] }],
      footerLinks: [FOOTER, { id: '', title: '', links: [] }],
      scripts: [SCRIPT, { name: '', description: '', content: '', enabled: false }],
      metadata: { title: 'Meta title', keywords: ['a', 'b'], robots: ['noindex', 'nofollow'], themeColor: '#ffffff', twitterSite: '@acme' },
    };
    const res = await t.req('POST', '/v0/pages', body);
    assertJson(res, 201);
    const p = res.body;
    assertPageShape(p);
    assert.equal('headerActionId' in p, false, 'headerActionId null on create leaves it unset');
    assert.equal(p.name, body.name);
    assert.equal(p.title, body.title);
    assert.equal(p.pageContext, body.pageContext);
    assert.equal(p.pageType, 'sales_deck');
    assert.equal(p.status, 'published');
    assert.deepEqual(p.flags, ['home_page']);
    assert.equal(p.brandId, 'brand_123');
    assert.deepEqual(strip(p.actions, false), body.actions);
    assert.deepEqual(
      p.actions.map((a: Json) => a.actionIndex),
      [0, 1, 2],
    );
    assert.equal(new Set(p.actions.map((a: Json) => a.actionId)).size, 3);
    assert.deepEqual(p.actionCardWidgets, body.actionCardWidgets);
    assert.deepEqual(p.footerLinks, body.footerLinks);
    assert.deepEqual(p.scripts, body.scripts);
    assert.deepEqual(p.metadata, { ...EMPTY_METADATA, ...body.metadata });
    assert.equal(p.archivedAt, null);
    assert.equal(p.audiencesCount, 0);
    const got = await get(p.pageId);
    assertJson(got, 200);
    assert.deepEqual(got.body, p);
  });

  test('ids are distinct and a later page sorts after an earlier one', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create({ name: `Order ${i}` })).pageId);
    assert.equal(new Set(ids).size, 5);
    assert.deepEqual([...ids].sort(), ids);
  });

  test('each required field missing is 400 at its own path', async () => {
    for (const field of ['name', 'title', 'pageContext', 'pageType']) {
      const body: Json = { ...MINIMAL };
      delete body[field];
      expectProblem(await t.req('POST', '/v0/pages', body), 400, 'validation_failed', [`/${field}`]);
    }
    expectProblem(await t.req('POST', '/v0/pages', {}), 400, 'validation_failed', ['/name', '/title', '/pageContext', '/pageType']);
  });

  test('name and pageContext: "" is 400 at the field, "x" is accepted', async () => {
    expectProblem(await t.req('POST', '/v0/pages', { ...MINIMAL, name: '' }), 400, 'validation_failed', ['/name']);
    expectProblem(await t.req('POST', '/v0/pages', { ...MINIMAL, pageContext: '' }), 400, 'validation_failed', ['/pageContext']);
    const p = await create({ name: 'x', pageContext: 'x' });
    assert.equal(p.name, 'x');
    assert.equal(p.pageContext, 'x');
  });

  test('pageType: every enum value is accepted, anything else is 400 at /pageType', async () => {
    for (const pageType of PAGE_TYPES) assert.equal((await create({ pageType })).pageType, pageType);
    for (const pageType of ['Inbound', 'other', '', 5, null]) {
      expectProblem(await t.req('POST', '/v0/pages', { ...MINIMAL, pageType }), 400, 'validation_failed', ['/pageType']);
    }
  });

  test('status: draft and published leave archivedAt null; archived sets it', async () => {
    const draft = await create({ status: 'draft' });
    assert.equal(draft.status, 'draft');
    assert.equal(draft.archivedAt, null);
    const published = await create({ status: 'published' });
    assert.equal(published.status, 'published');
    assert.equal(published.archivedAt, null);
    const archived = await create({ status: 'archived' });
    assert.equal(archived.status, 'archived');
    assert.match(archived.archivedAt, ISO_MS);
    assert.equal(archived.archivedAt, archived.createdAt);
    assert.deepEqual((await get(archived.pageId)).body, archived);
    for (const status of ['deleted', 'Draft', '', 1, null]) {
      expectProblem(await t.req('POST', '/v0/pages', { ...MINIMAL, status }), 400, 'validation_failed', ['/status']);
    }
  });

  test('flags: home_page is accepted, an unknown value or a repeat is 400', async () => {
    assert.deepEqual((await create({ flags: [] })).flags, []);
    assert.deepEqual((await create({ flags: ['home_page'] })).flags, ['home_page']);
    expectProblem(await t.req('POST', '/v0/pages', { ...MINIMAL, flags: ['landing'] }), 400, 'validation_failed', ['/flags/0']);
    expectProblem(await t.req('POST', '/v0/pages', { ...MINIMAL, flags: ['home_page', 'nope'] }), 400, 'validation_failed', ['/flags/1']);
    expectProblem(await t.req('POST', '/v0/pages', { ...MINIMAL, flags: ['home_page', 'home_page'] }), 400, 'validation_failed', [
      '/flags',
    ]);
    expectProblem(await t.req('POST', '/v0/pages', { ...MINIMAL, flags: 'home_page' }), 400, 'validation_failed', ['/flags']);
    expectProblem(await t.req('POST', '/v0/pages', { ...MINIMAL, flags: null }), 400, 'validation_failed', ['/flags']);
  });

  test('actions get action_ ids and actionIndex 0..n-1 in request order', async () => {
    const p = await create({ actions: [ACTION_A, ACTION_B, ACTION_C] });
    assert.equal(p.actions.length, 3);
    for (const a of p.actions) assert.match(a.actionId, ACTION_ID);
    assert.deepEqual(
      p.actions.map((a: Json) => a.actionIndex),
      [0, 1, 2],
    );
    assert.deepEqual(strip(p.actions, false), [ACTION_A, ACTION_B, STORED_C]);
    assert.equal(new Set(p.actions.map((a: Json) => a.actionId)).size, 3);
  });

  test('action items: purpose, buttonTitle, actionType and url are required; actionType non-empty', async () => {
    for (const field of ['purpose', 'buttonTitle', 'actionType', 'url']) {
      const item: Json = { ...ACTION_A };
      delete item[field];
      expectProblem(await t.req('POST', '/v0/pages', { ...MINIMAL, actions: [ACTION_B, item] }), 400, 'validation_failed', [
        `/actions/1/${field}`,
      ]);
    }
    expectProblem(await t.req('POST', '/v0/pages', { ...MINIMAL, actions: [{ ...ACTION_A, actionType: '' }] }), 400, 'validation_failed', [
      '/actions/0/actionType',
    ]);
    expectProblem(await t.req('POST', '/v0/pages', { ...MINIMAL, actions: [{ ...ACTION_A, url: 5 }] }), 400, 'validation_failed', [
      '/actions/0/url',
    ]);
    expectProblem(await t.req('POST', '/v0/pages', { ...MINIMAL, actions: [{ ...ACTION_A, purpose: null }] }), 400, 'validation_failed', [
      '/actions/0/purpose',
    ]);
    const p = await create({ actions: [{ ...ACTION_A, actionType: 'z' }] });
    assert.equal(p.actions[0].actionType, 'z');
  });

  test('actionIndex in a request is 400 at its path', async () => {
    const res = await t.req('POST', '/v0/pages', { ...MINIMAL, actions: [{ ...ACTION_A, actionIndex: 0 }] });
    expectProblem(res, 400, 'validation_failed', ['/actions/0/actionIndex']);
  });

  test('an actionId on create names nothing: 400 at /actions/<i>/actionId', async () => {
    const res = await t.req('POST', '/v0/pages', { ...MINIMAL, actions: [ACTION_A, { ...ACTION_B, actionId: UNKNOWN_ACTION }] });
    expectProblem(res, 400, 'validation_failed', ['/actions/1/actionId']);
    const other = await create({ actions: [ACTION_A] });
    const res2 = await t.req('POST', '/v0/pages', { ...MINIMAL, actions: [{ ...ACTION_A, actionId: other.actions[0].actionId }] });
    expectProblem(res2, 400, 'validation_failed', ['/actions/0/actionId']);
  });

  test('a headerActionId string on create is 400 at /headerActionId', async () => {
    expectProblem(await t.req('POST', '/v0/pages', { ...MINIMAL, headerActionId: UNKNOWN_ACTION }), 400, 'validation_failed', [
      '/headerActionId',
    ]);
    const res = await t.req('POST', '/v0/pages', { ...MINIMAL, actions: [ACTION_A], headerActionId: UNKNOWN_ACTION });
    expectProblem(res, 400, 'validation_failed', ['/headerActionId']);
    expectProblem(await t.req('POST', '/v0/pages', { ...MINIMAL, headerActionId: '' }), 400, 'validation_failed', ['/headerActionId']);
  });

  test('widget, footer link and script items must carry all their fields; widget type non-empty', async () => {
    const cases: [string, Json, string][] = [
      ['actionCardWidgets', [{ title: 'x', logos: [] }], '/actionCardWidgets/0/type'],
      ['actionCardWidgets', [{ type: 'x', logos: [] }], '/actionCardWidgets/0/title'],
      ['actionCardWidgets', [{ type: 'x', title: 'x' }], '/actionCardWidgets/0/logos'],
      ['actionCardWidgets', [{ type: '', title: 'x', logos: [] }], '/actionCardWidgets/0/type'],
      ['actionCardWidgets', [{ type: 'x', title: 'x', logos: [{}] }], '/actionCardWidgets/0/logos/0/image'],
      [
        'actionCardWidgets',
        [{ type: 'x', title: 'x', logos: [{ image: { altText: 'a', url: 'u', fileId: 'f' } }] }],
        '/actionCardWidgets/0/logos/0/image/assetId',
      ],
      [
        'actionCardWidgets',
        [{ type: 'x', title: 'x', logos: [{ image: { url: 'u', fileId: 'f', assetId: 'a' } }] }],
        '/actionCardWidgets/0/logos/0/image/altText',
      ],
      ['footerLinks', [{ title: 'x', links: [] }], '/footerLinks/0/id'],
      ['footerLinks', [{ id: 'x', links: [] }], '/footerLinks/0/title'],
      ['footerLinks', [{ id: 'x', title: 'x' }], '/footerLinks/0/links'],
      ['footerLinks', [FOOTER, { id: 'x', title: 'x', links: [{ id: 'l', text: 't' }] }], '/footerLinks/1/links/0/url'],
      ['footerLinks', [{ id: 'x', title: 'x', links: [{ text: 't', url: 'u' }] }], '/footerLinks/0/links/0/id'],
      ['scripts', [{ description: '', content: '', enabled: true }], '/scripts/0/name'],
      ['scripts', [{ name: '', content: '', enabled: true }], '/scripts/0/description'],
      ['scripts', [{ name: '', description: '', enabled: true }], '/scripts/0/content'],
      ['scripts', [SCRIPT, { name: '', description: '', content: '' }], '/scripts/1/enabled'],
      ['scripts', [{ ...SCRIPT, enabled: 'true' }], '/scripts/0/enabled'],
    ];
    for (const [field, value, path] of cases) {
      expectProblem(await t.req('POST', '/v0/pages', { ...MINIMAL, [field]: value }), 400, 'validation_failed', [path]);
    }
  });

  test('metadata: every field is returned, unset strings "" and unset arrays []', async () => {
    const empty = await create({ metadata: {} });
    assert.deepEqual(empty.metadata, EMPTY_METADATA);
    const some = await create({ metadata: { description: 'D', keywords: ['k'] } });
    assert.deepEqual(some.metadata, { ...EMPTY_METADATA, description: 'D', keywords: ['k'] });
    const all = {
      title: 't',
      description: 'd',
      keywords: ['k1', 'k2'],
      author: 'a',
      robots: ['index'],
      canonicalUrl: 'https://c',
      ogTitle: 'ot',
      ogDescription: 'od',
      ogImageAlt: 'oia',
      ogSiteName: 'osn',
      ogUrl: 'https://o',
      twitterTitle: 'tt',
      twitterDescription: 'td',
      twitterImageAlt: 'tia',
      twitterSite: '@s',
      twitterCreator: '@c',
      themeColor: '#000',
    };
    const full = await create({ metadata: all });
    assert.deepEqual(full.metadata, { ...EMPTY_METADATA, ...all });
    assert.deepEqual((await get(full.pageId)).body.metadata, full.metadata);
  });

  test('metadata with an image url or file id field is 400 naming it', async () => {
    for (const field of IMAGE_FIELDS) {
      const res = await t.req('POST', '/v0/pages', { ...MINIMAL, metadata: { title: 'x', [field]: 'v' } });
      expectProblem(res, 400, 'validation_failed', [`/metadata/${field}`]);
    }
    const all = Object.fromEntries(IMAGE_FIELDS.map((f) => [f, '']));
    expectProblem(
      await t.req('POST', '/v0/pages', { ...MINIMAL, metadata: all }),
      400,
      'validation_failed',
      IMAGE_FIELDS.map((f) => `/metadata/${f}`),
    );
  });

  test('metadata fields of the wrong type are 400 at their path', async () => {
    expectProblem(await t.req('POST', '/v0/pages', { ...MINIMAL, metadata: { keywords: 'a' } }), 400, 'validation_failed', [
      '/metadata/keywords',
    ]);
    expectProblem(await t.req('POST', '/v0/pages', { ...MINIMAL, metadata: { title: 1 } }), 400, 'validation_failed', ['/metadata/title']);
    expectProblem(await t.req('POST', '/v0/pages', { ...MINIMAL, metadata: null }), 400, 'validation_failed', ['/metadata']);
  });

  test('unknown fields are 400 at their own paths, top level and nested', async () => {
    const cases: [Json, string][] = [
      [{ foo: 1 }, '/foo'],
      [{ pageId: UNKNOWN_PAGE }, '/pageId'],
      [{ audiencesCount: 3 }, '/audiencesCount'],
      [{ archivedAt: null }, '/archivedAt'],
      [{ actions: [{ ...ACTION_A, foo: 1 }] }, '/actions/0/foo'],
      [{ scripts: [{ ...SCRIPT, foo: 1 }] }, '/scripts/0/foo'],
      [{ actionCardWidgets: [{ ...WIDGET, foo: 1 }] }, '/actionCardWidgets/0/foo'],
      [
        { actionCardWidgets: [{ ...WIDGET, logos: [{ image: { ...WIDGET.logos[0]!.image, foo: 1 } }] }] },
        '/actionCardWidgets/0/logos/0/image/foo',
      ],
      [{ actionCardWidgets: [{ ...WIDGET, logos: [{ ...WIDGET.logos[0], foo: 1 }] }] }, '/actionCardWidgets/0/logos/0/foo'],
      [{ footerLinks: [{ ...FOOTER, foo: 1 }] }, '/footerLinks/0/foo'],
      [{ footerLinks: [{ ...FOOTER, links: [{ ...FOOTER.links[0], foo: 1 }] }] }, '/footerLinks/0/links/0/foo'],
      [{ metadata: { foo: 'x' } }, '/metadata/foo'],
    ];
    for (const [extra, path] of cases) {
      expectProblem(await t.req('POST', '/v0/pages', { ...MINIMAL, ...extra }), 400, 'validation_failed', [path]);
    }
  });

  test('every offending field is named at once', async () => {
    const res = await t.req('POST', '/v0/pages', {
      name: '',
      pageType: 'nope',
      status: 'gone',
      extra: 1,
      actions: [{ ...ACTION_A, actionIndex: 0 }],
      metadata: { ogImageUrl: 'x' },
    });
    expectProblem(res, 400, 'validation_failed', [
      '/name',
      '/title',
      '/pageContext',
      '/pageType',
      '/status',
      '/extra',
      '/actions/0/actionIndex',
      '/metadata/ogImageUrl',
    ]);
  });

  test('bad JSON, a non-object body and a non-JSON content type are rejected', async () => {
    expectProblem(await t.req('POST', '/v0/pages', '{"name": '), 400, 'validation_failed');
    for (const body of ['[]', '"x"', '5', 'null']) expectProblem(await t.req('POST', '/v0/pages', body), 400, 'validation_failed');
    expectProblem(await t.req('POST', '/v0/pages'), 400, 'validation_failed');
    expectProblem(
      await t.req('POST', '/v0/pages', JSON.stringify(MINIMAL), { headers: { 'content-type': 'text/plain' } }),
      415,
      'unsupported_media_type',
    );
  });

  test('without an API key: 401', async () => {
    expectProblem(await t.req('POST', '/v0/pages', MINIMAL, { key: null }), 401, 'unauthorized');
  });
});

describe('GET /v0/pages/{page_id} (extension)', () => {
  test('200 with the page exactly as created', async () => {
    const p = await create({ actions: [ACTION_A], scripts: [SCRIPT], metadata: { author: 'me' } });
    const res = await get(p.pageId);
    assertJson(res, 200);
    assert.deepEqual(res.body, p);
  });

  test("unknown, malformed and another tenant's page are 404", async () => {
    expectProblem(await get(UNKNOWN_PAGE), 404, 'not_found');
    for (const id of ['nope', 'page_', 'page_NOTLOWERCASE0000000000000', 'person_01h0000000000000000000000a', `${UNKNOWN_PAGE}x`]) {
      expectProblem(await get(id), 404, 'not_found');
    }
    const other = await t.newTenant('Get other');
    const theirs = await create({}, other.key);
    expectProblem(await get(theirs.pageId), 404, 'not_found');
    assertJson(await get(theirs.pageId, other.key), 200);
  });
});

describe('PATCH /v0/pages/{page_id}', () => {
  test('each field replaces the stored value on its own; updatedAt moves later, createdAt stays', async () => {
    const p = await create({
      actionCardWidgets: [WIDGET],
      footerLinks: [FOOTER],
      scripts: [SCRIPT],
      brandId: 'b0',
      metadata: { title: 'm0' },
    });
    const changes: Record<string, Json> = {
      name: 'Renamed',
      pageContext: 'New context',
      pageType: 'call_followup',
      brandId: 'brand_new',
      actionCardWidgets: [{ type: 'quote', title: 'Q', logos: [] }],
      footerLinks: [
        {
          id: 'g2',
          title: 'Legal',
          links: [
            { id: 'l2', text: 'Terms', url: '/terms' },
            { id: 'l3', text: 'Privacy', url: '/privacy' },
          ],
        },
      ],
      scripts: [{ name: 's2', description: 'd2', content: 'c2', enabled: false }],
      status: 'published',
    };
    let current = p;
    for (const [field, value] of Object.entries(changes)) {
      const body = await patchOk(p.pageId, { [field]: value });
      const { updatedAt: _u1, ...expected } = { ...current, [field]: value };
      const { updatedAt: _u2, ...actual } = body;
      assert.deepEqual(actual, expected, field);
      assert.ok(Date.parse(body.updatedAt) > Date.parse(current.updatedAt), `${field}: updatedAt moves strictly later`);
      assert.equal(body.createdAt, p.createdAt);
      current = body;
    }
    assert.deepEqual((await get(p.pageId)).body, current);
  });

  test('arrays are replaced whole, also by []', async () => {
    const p = await create({
      actionCardWidgets: [WIDGET, WIDGET],
      footerLinks: [FOOTER, FOOTER],
      scripts: [SCRIPT, SCRIPT],
      actions: [ACTION_A, ACTION_B],
    });
    const one = await patchOk(p.pageId, { scripts: [{ ...SCRIPT, name: 'only' }] });
    assert.deepEqual(one.scripts, [{ ...SCRIPT, name: 'only' }]);
    const none = await patchOk(p.pageId, { actionCardWidgets: [], footerLinks: [], scripts: [], actions: [] });
    assert.deepEqual(none.actionCardWidgets, []);
    assert.deepEqual(none.footerLinks, []);
    assert.deepEqual(none.scripts, []);
    assert.deepEqual(none.actions, []);
  });

  test('several fields at once', async () => {
    const p = await create();
    const body = await patchOk(p.pageId, { name: 'N2', pageType: 'outbound', brandId: 'b2', scripts: [SCRIPT] });
    assert.equal(body.name, 'N2');
    assert.equal(body.pageType, 'outbound');
    assert.equal(body.brandId, 'b2');
    assert.deepEqual(body.scripts, [SCRIPT]);
    assert.equal(body.title, p.title);
    assert.equal(body.pageContext, p.pageContext);
  });

  test('an empty body {} changes nothing: the page as it was, updatedAt unchanged', async () => {
    const p = await create({ actions: [ACTION_A], metadata: { title: 'x' } });
    const res = await patch(p.pageId, {});
    assertJson(res, 200);
    assert.deepEqual(res.body, p);
    await expectUnchanged(p);
  });

  test('metadata is merged (issue 19): {title:"a"} then {description:"b"} keeps title; null resets a field', async () => {
    const p = await create();
    assert.equal('metadata' in p, false);
    const first = await patchOk(p.pageId, { metadata: { title: 'a', keywords: ['k'] } });
    assert.deepEqual(first.metadata, { ...EMPTY_METADATA, title: 'a', keywords: ['k'] });
    const second = await patchOk(p.pageId, { metadata: { description: 'b' } });
    assert.deepEqual(second.metadata, { ...EMPTY_METADATA, title: 'a', keywords: ['k'], description: 'b' });
    const same = await patchOk(p.pageId, { metadata: {} });
    assert.deepEqual(same, second, '{} merges nothing');
    const cleared = await patchOk(p.pageId, { metadata: { title: null, keywords: null } });
    assert.deepEqual(cleared.metadata, { ...EMPTY_METADATA, description: 'b' });
    assert.deepEqual((await get(p.pageId)).body.metadata, cleared.metadata);
  });

  test('a page without metadata keeps none when other fields change', async () => {
    const p = await create();
    const body = await patchOk(p.pageId, { name: 'No meta' });
    assert.equal('metadata' in body, false);
  });

  test('metadata with an image url or file id field is 400 naming it, and nothing changes', async () => {
    const p = await create({ metadata: { title: 'keep' } });
    for (const field of IMAGE_FIELDS) {
      expectProblem(await patch(p.pageId, { metadata: { [field]: 'x' } }), 400, 'validation_failed', [`/metadata/${field}`]);
    }
    expectProblem(await patch(p.pageId, { metadata: { foo: 'x' } }), 400, 'validation_failed', ['/metadata/foo']);
    await expectUnchanged(p);
  });

  test('name and pageContext: "" is 400, "x" is accepted', async () => {
    const p = await create();
    expectProblem(await patch(p.pageId, { name: '' }), 400, 'validation_failed', ['/name']);
    expectProblem(await patch(p.pageId, { pageContext: '' }), 400, 'validation_failed', ['/pageContext']);
    await expectUnchanged(p);
    const body = await patchOk(p.pageId, { name: 'x', pageContext: 'x' });
    assert.equal(body.name, 'x');
    assert.equal(body.pageContext, 'x');
  });

  test('pageType and status outside their enums are 400', async () => {
    const p = await create();
    expectProblem(await patch(p.pageId, { pageType: 'webinar' }), 400, 'validation_failed', ['/pageType']);
    expectProblem(await patch(p.pageId, { status: 'deleted' }), 400, 'validation_failed', ['/status']);
    await expectUnchanged(p);
  });

  test('null is 400 for every field but headerActionId and content', async () => {
    const p = await create();
    for (const f of [
      'name',
      'pageContext',
      'pageType',
      'brandId',
      'actions',
      'actionCardWidgets',
      'footerLinks',
      'scripts',
      'metadata',
      'status',
    ]) {
      expectProblem(await patch(p.pageId, { [f]: null }), 400, 'validation_failed', [`/${f}`]);
    }
    await expectUnchanged(p);
  });

  test('title and flags are not patchable; unknown fields are 400 at their paths', async () => {
    const p = await create({ actions: [ACTION_A] });
    expectProblem(await patch(p.pageId, { title: 'New title' }), 400, 'validation_failed', ['/title']);
    expectProblem(await patch(p.pageId, { flags: ['home_page'] }), 400, 'validation_failed', ['/flags']);
    expectProblem(await patch(p.pageId, { foo: 1 }), 400, 'validation_failed', ['/foo']);
    expectProblem(await patch(p.pageId, { audiencesCount: 1 }), 400, 'validation_failed', ['/audiencesCount']);
    expectProblem(await patch(p.pageId, { actions: [{ ...ACTION_B, foo: 1 }] }), 400, 'validation_failed', ['/actions/0/foo']);
    expectProblem(await patch(p.pageId, { scripts: [{ ...SCRIPT, foo: 1 }] }), 400, 'validation_failed', ['/scripts/0/foo']);
    expectProblem(
      await patch(p.pageId, { footerLinks: [{ ...FOOTER, links: [{ ...FOOTER.links[0], foo: 1 }] }] }),
      400,
      'validation_failed',
      ['/footerLinks/0/links/0/foo'],
    );
    expectProblem(await patch(p.pageId, { actionCardWidgets: [{ ...WIDGET, type: '' }] }), 400, 'validation_failed', [
      '/actionCardWidgets/0/type',
    ]);
    await expectUnchanged(p);
  });

  test('actions: an existing actionId keeps its id with its new index; an item without one gets a new id', async () => {
    const p = await create({ actions: [ACTION_A, ACTION_B] });
    const [a, b] = p.actions;
    const edited = { ...ACTION_C, purpose: 'Edited' };
    const body = await patchOk(p.pageId, {
      actions: [{ ...ACTION_B, actionId: b.actionId }, ACTION_C, { ...edited, actionId: a.actionId }],
    });
    assert.equal(body.actions.length, 3);
    assert.deepEqual(body.actions[0], { ...ACTION_B, actionId: b.actionId, actionIndex: 0 });
    assert.match(body.actions[1].actionId, ACTION_ID);
    assert.notEqual(body.actions[1].actionId, a.actionId);
    assert.notEqual(body.actions[1].actionId, b.actionId);
    assert.deepEqual(body.actions[1], { ...STORED_C, actionId: body.actions[1].actionId, actionIndex: 1 });
    assert.deepEqual(body.actions[2], { ...edited, url: '', actionId: a.actionId, actionIndex: 2 });
    assert.deepEqual((await get(p.pageId)).body.actions, body.actions);

    // An item without an id is new even when its fields equal an existing action's.
    const again = await patchOk(p.pageId, { actions: [ACTION_B] });
    assert.equal(again.actions.length, 1);
    assert.ok(![a.actionId, b.actionId, body.actions[1].actionId].includes(again.actions[0].actionId));
  });

  test("actions: an actionId that is not one of the page's actions is 400 at /actions/<i>/actionId", async () => {
    const p = await create({ actions: [ACTION_A] });
    const other = await create({ actions: [ACTION_B] });
    const keep = { ...ACTION_A, actionId: p.actions[0].actionId };
    expectProblem(await patch(p.pageId, { actions: [keep, { ...ACTION_B, actionId: UNKNOWN_ACTION }] }), 400, 'validation_failed', [
      '/actions/1/actionId',
    ]);
    expectProblem(await patch(p.pageId, { actions: [{ ...ACTION_B, actionId: other.actions[0].actionId }] }), 400, 'validation_failed', [
      '/actions/0/actionId',
    ]);
    expectProblem(await patch(p.pageId, { actions: [{ ...ACTION_B, actionId: 'garbage' }] }), 400, 'validation_failed', [
      '/actions/0/actionId',
    ]);
    await expectUnchanged(p);

    // Once removed, an action's id is no longer one of the page's.
    const removed = p.actions[0].actionId;
    await patchOk(p.pageId, { actions: [ACTION_C] });
    expectProblem(await patch(p.pageId, { actions: [{ ...ACTION_A, actionId: removed }] }), 400, 'validation_failed', [
      '/actions/0/actionId',
    ]);
  });

  test('actions: the same actionId twice is 400', async () => {
    const p = await create({ actions: [ACTION_A, ACTION_B] });
    const id = p.actions[0].actionId;
    const res = await patch(p.pageId, {
      actions: [
        { ...ACTION_A, actionId: id },
        { ...ACTION_B, actionId: id },
      ],
    });
    expectProblem(res, 400, 'validation_failed');
    const paths = errorPaths(res);
    assert.ok(paths.includes('/actions/1/actionId') || paths.includes('/actions/0/actionId'), paths.join(', '));
    await expectUnchanged(p);
  });

  test("actions: actionIndex other than the item's position is 400 (issue 19: its position is accepted); action items need their fields", async () => {
    const p = await create({ actions: [ACTION_A] });
    const keep = { ...ACTION_A, actionId: p.actions[0].actionId };
    for (const actionIndex of [1, -1, 0.5, '0', null]) {
      expectProblem(await patch(p.pageId, { actions: [{ ...keep, actionIndex }] }), 400, 'validation_failed', ['/actions/0/actionIndex']);
    }
    expectProblem(await patch(p.pageId, { actions: [ACTION_B, { ...keep, actionIndex: 0 }] }), 400, 'validation_failed', [
      '/actions/1/actionIndex',
    ]);
    for (const field of ['purpose', 'buttonTitle', 'actionType', 'url']) {
      const item: Json = { ...keep };
      delete item[field];
      expectProblem(await patch(p.pageId, { actions: [item] }), 400, 'validation_failed', [`/actions/0/${field}`]);
    }
    expectProblem(await patch(p.pageId, { actions: [{ ...keep, actionType: '' }] }), 400, 'validation_failed', ['/actions/0/actionType']);
    await expectUnchanged(p);
  });

  test("headerActionId: set to one of the page's actions, then null clears it", async () => {
    const p = await create({ actions: [ACTION_A, ACTION_B] });
    const b = p.actions[1].actionId;
    const set = await patchOk(p.pageId, { headerActionId: b });
    assert.equal(set.headerActionId, b);
    assert.ok(Date.parse(set.updatedAt) > Date.parse(p.updatedAt));
    assert.equal((await get(p.pageId)).body.headerActionId, b);
    const listed = (await list('?limit=100')).body.items.find((i: Json) => i.pageId === p.pageId);
    assert.equal(listed.headerActionId, b);

    // Other changes keep it, and so does reordering the actions.
    const renamed = await patchOk(p.pageId, { name: 'Still header' });
    assert.equal(renamed.headerActionId, b);
    const reordered = await patchOk(p.pageId, { actions: strip([set.actions[1], set.actions[0]]) });
    assert.equal(reordered.headerActionId, b);
    assert.equal(reordered.actions[0].actionId, b);
    assert.equal(reordered.actions[0].actionIndex, 0);

    const cleared = await patchOk(p.pageId, { headerActionId: null });
    assert.equal('headerActionId' in cleared, false);
    assert.ok(Date.parse(cleared.updatedAt) > Date.parse(reordered.updatedAt));
    assert.equal('headerActionId' in (await get(p.pageId)).body, false);
  });

  test("headerActionId: a string that is not one of the page's actions after the update is 400", async () => {
    const p = await create({ actions: [ACTION_A, ACTION_B] });
    const other = await create({ actions: [ACTION_C] });
    const [a, b] = p.actions;
    expectProblem(await patch(p.pageId, { headerActionId: UNKNOWN_ACTION }), 400, 'validation_failed', ['/headerActionId']);
    expectProblem(await patch(p.pageId, { headerActionId: other.actions[0].actionId }), 400, 'validation_failed', ['/headerActionId']);
    expectProblem(await patch(p.pageId, { headerActionId: '' }), 400, 'validation_failed', ['/headerActionId']);
    expectProblem(await patch(p.pageId, { headerActionId: 5 }), 400, 'validation_failed', ['/headerActionId']);
    // An action that this very update removes.
    expectProblem(
      await patch(p.pageId, { actions: [{ ...ACTION_A, actionId: a.actionId }], headerActionId: b.actionId }),
      400,
      'validation_failed',
      ['/headerActionId'],
    );
    await expectUnchanged(p);
    // One that this update keeps.
    const ok = await patchOk(p.pageId, { actions: [{ ...ACTION_B, actionId: b.actionId }], headerActionId: b.actionId });
    assert.equal(ok.headerActionId, b.actionId);
    assert.deepEqual(ok.actions, [{ ...ACTION_B, actionId: b.actionId, actionIndex: 0 }]);
  });

  test("an update that removes the header's action without setting headerActionId is 400 at /headerActionId; nothing changes", async () => {
    const p = await create({ actions: [ACTION_A, ACTION_B] });
    const [a, b] = p.actions;
    const withHeader = await patchOk(p.pageId, { headerActionId: a.actionId });
    expectProblem(await patch(p.pageId, { actions: [{ ...ACTION_B, actionId: b.actionId }] }), 400, 'validation_failed', [
      '/headerActionId',
    ]);
    expectProblem(await patch(p.pageId, { actions: [] }), 400, 'validation_failed', ['/headerActionId']);
    expectProblem(
      await patch(p.pageId, { actions: [{ ...ACTION_B, actionId: b.actionId }], name: 'Should not stick' }),
      400,
      'validation_failed',
      ['/headerActionId'],
    );
    await expectUnchanged(withHeader);

    // Removing it while clearing the header in the same request is fine.
    const cleared = await patchOk(p.pageId, { actions: [{ ...ACTION_B, actionId: b.actionId }], headerActionId: null });
    assert.equal('headerActionId' in cleared, false);
    assert.deepEqual(cleared.actions, [{ ...ACTION_B, actionId: b.actionId, actionIndex: 0 }]);
    assert.ok(Date.parse(cleared.updatedAt) > Date.parse(withHeader.updatedAt));
  });

  test("removing the header's action while pointing the header at a kept action is 200", async () => {
    const p = await create({ actions: [ACTION_A, ACTION_B] });
    const [a, b] = p.actions;
    await patchOk(p.pageId, { headerActionId: a.actionId });
    const moved = await patchOk(p.pageId, { actions: [{ ...ACTION_B, actionId: b.actionId }], headerActionId: b.actionId });
    assert.equal(moved.headerActionId, b.actionId);
  });

  test('status (extension): archived sets archivedAt, back to draft clears it', async () => {
    const p = await create();
    const archived = await patchOk(p.pageId, { status: 'archived' });
    assert.equal(archived.status, 'archived');
    assert.match(archived.archivedAt, ISO_MS);
    assert.equal(archived.archivedAt, archived.updatedAt);
    assert.ok(Date.parse(archived.archivedAt) > Date.parse(p.createdAt) - 1);

    // Other changes while archived keep archivedAt.
    const renamed = await patchOk(p.pageId, { name: 'Archived page' });
    assert.equal(renamed.archivedAt, archived.archivedAt);
    const again = await patchOk(p.pageId, { status: 'archived' });
    assert.equal(again.archivedAt, archived.archivedAt, 'archived to archived keeps the time it was archived');

    const draft = await patchOk(p.pageId, { status: 'draft' });
    assert.equal(draft.status, 'draft');
    assert.equal(draft.archivedAt, null);
    const published = await patchOk(p.pageId, { status: 'published' });
    assert.equal(published.archivedAt, null);
    const rearchived = await patchOk(p.pageId, { status: 'archived' });
    assert.equal(rearchived.archivedAt, rearchived.updatedAt);
    const republished = await patchOk(p.pageId, { status: 'published' });
    assert.equal(republished.status, 'published');
    assert.equal(republished.archivedAt, null);
    assert.deepEqual((await get(p.pageId)).body, republished);
  });

  test('a page created archived leaves archived on PATCH', async () => {
    const p = await create({ status: 'archived' });
    const body = await patchOk(p.pageId, { status: 'published' });
    assert.equal(body.archivedAt, null);
  });

  test('updatedAt moves strictly later on each of many quick updates', async () => {
    const p = await create();
    let prev = p.updatedAt;
    for (let i = 0; i < 8; i++) {
      const body = await patchOk(p.pageId, { brandId: `b${i}` });
      assert.ok(Date.parse(body.updatedAt) > Date.parse(prev), `${body.updatedAt} > ${prev}`);
      assert.equal(body.createdAt, p.createdAt);
      prev = body.updatedAt;
    }
  });

  test("unknown page, malformed id and another tenant's page are 404; theirs stays unchanged", async () => {
    expectProblem(await patch(UNKNOWN_PAGE, { name: 'x' }), 404, 'not_found');
    expectProblem(await patch(UNKNOWN_PAGE, {}), 404, 'not_found');
    for (const id of ['nope', 'page_', 'person_01h0000000000000000000000a', `${UNKNOWN_PAGE}x`]) {
      expectProblem(await patch(id, { name: 'x' }), 404, 'not_found');
    }
    const other = await t.newTenant('Patch other');
    const theirs = await create({ actions: [ACTION_A] }, other.key);
    expectProblem(await patch(theirs.pageId, { name: 'Hijacked' }), 404, 'not_found');
    expectProblem(await patch(theirs.pageId, {}), 404, 'not_found');
    expectProblem(await patch(theirs.pageId, { headerActionId: theirs.actions[0].actionId }), 404, 'not_found');
    await expectUnchanged(theirs, other.key);
  });
});

describe('GET /v0/pages', () => {
  test('the list envelope exactly, newest first', async () => {
    const { key } = await t.newTenant('List order');
    const empty = await list('', key);
    assertJson(empty, 200);
    assert.deepEqual(empty.body, { items: [], hasMore: false, nextCursor: null, totalCount: 0 });

    const made: Json[] = [];
    for (let i = 0; i < 4; i++) made.push(await create({ name: `Page ${i}` }, key));
    const res = await list('', key);
    assertJson(res, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ENVELOPE_FIELDS);
    assert.deepEqual(res.body, { items: [...made].reverse().map(summary), hasMore: false, nextCursor: null, totalCount: 4 });
    for (const item of res.body.items) assertPageShape(item, true);
  });

  test('items are the whole pages but their content, as GET and PATCH return them', async () => {
    const { key } = await t.newTenant('List full');
    const p = await create(
      {
        actions: [ACTION_A],
        actionCardWidgets: [WIDGET],
        footerLinks: [FOOTER],
        scripts: [SCRIPT],
        metadata: { title: 'm' },
        flags: ['home_page'],
      },
      key,
    );
    const patched = await patchOk(p.pageId, { headerActionId: p.actions[0].actionId, status: 'archived' }, key);
    const res = await list('', key);
    assert.deepEqual(res.body.items, [summary(patched)]);
    assert.deepEqual((await list('?include=content', key)).body.items, [patched]);
  });

  test('limit 1 and 100 are accepted; 0, 101 and non-integers are 400 at /limit; default 20', async () => {
    const { key } = await t.newTenant('List limits');
    for (let i = 0; i < 21; i++) await create({ name: `L${i}` }, key);
    const one = await list('?limit=1', key);
    assertJson(one, 200);
    assert.equal(one.body.items.length, 1);
    assert.equal(one.body.hasMore, true);
    assert.equal(typeof one.body.nextCursor, 'string');
    assert.equal(one.body.totalCount, 21);
    const hundred = await list('?limit=100', key);
    assertJson(hundred, 200);
    assert.equal(hundred.body.items.length, 21);
    assert.equal(hundred.body.hasMore, false);
    assert.equal(hundred.body.nextCursor, null);
    const dflt = await list('', key);
    assert.equal(dflt.body.items.length, 20);
    assert.equal(dflt.body.hasMore, true);
    assert.equal(dflt.body.totalCount, 21);
    for (const limit of ['0', '101', '-1', '1.5', 'abc', '', '1e1']) {
      expectProblem(await list(`?limit=${limit}`, key), 400, 'validation_failed', ['/limit']);
    }
  });

  test('walked with limit 2 while pages are created between requests: no duplicate, no skip', async () => {
    const { key } = await t.newTenant('List walk');
    const made: string[] = [];
    for (let i = 0; i < 7; i++) made.push((await create({ name: `W${i}` }, key)).pageId);
    const expected = [...made].reverse();
    const seen: string[] = [];
    let cursor: string | null = null;
    let created = 0;
    let requests = 0;
    do {
      const url: string = cursor === null ? '?limit=2' : `?limit=2&cursor=${encodeURIComponent(cursor)}`;
      const res = await list(url, key);
      assertJson(res, 200);
      requests++;
      assert.ok(res.body.items.length <= 2);
      assert.equal(res.body.totalCount, 7 + created, 'totalCount counts every page, those created meanwhile too');
      seen.push(...res.body.items.map((i: Json) => i.pageId));
      cursor = res.body.nextCursor;
      assert.equal(res.body.hasMore, cursor !== null);
      await create({ name: `Between ${created}` }, key);
      created++;
    } while (cursor !== null && requests < 20);
    assert.deepEqual(seen, expected);
    assert.equal(requests, 4);
  });

  test('deleted pages never appear, also in the middle of a walk, and are not counted', async () => {
    const { key } = await t.newTenant('List deleted');
    const made: string[] = [];
    for (let i = 0; i < 6; i++) made.push((await create({ name: `D${i}` }, key)).pageId);
    // Newest first: D5 D4 | D3 D2 | D1 D0
    const first = await list('?limit=2', key);
    assert.deepEqual(
      first.body.items.map((i: Json) => i.pageId),
      [made[5], made[4]],
    );
    assert.equal((await t.req('DELETE', `/v0/pages/${made[2]}`, undefined, { key })).status, 204);
    assert.equal((await t.req('DELETE', `/v0/pages/${made[5]}`, undefined, { key })).status, 204);
    const second = await list(`?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`, key);
    assertJson(second, 200);
    assert.deepEqual(
      second.body.items.map((i: Json) => i.pageId),
      [made[3], made[1]],
    );
    assert.equal(second.body.totalCount, 4);
    assert.equal(second.body.hasMore, true);
    const third = await list(`?limit=2&cursor=${encodeURIComponent(second.body.nextCursor)}`, key);
    assert.deepEqual(
      third.body.items.map((i: Json) => i.pageId),
      [made[0]],
    );
    assert.equal(third.body.hasMore, false);
    assert.equal(third.body.nextCursor, null);
    const all = await list('?limit=100', key);
    assert.deepEqual(
      all.body.items.map((i: Json) => i.pageId),
      [made[4], made[3], made[1], made[0]],
    );
    assert.equal(all.body.totalCount, 4);
  });

  test("another tenant's pages are absent", async () => {
    const a = await t.newTenant('Iso A');
    const b = await t.newTenant('Iso B');
    const mine = await create({ name: 'Mine' }, a.key);
    assert.deepEqual((await list('', b.key)).body, { items: [], hasMore: false, nextCursor: null, totalCount: 0 });
    assert.deepEqual((await list('', a.key)).body, { items: [summary(mine)], hasMore: false, nextCursor: null, totalCount: 1 });
  });

  test('a bad cursor is 400 at /cursor, also one of another list', async () => {
    const { key } = await t.newTenant('Cursors');
    for (let i = 0; i < 3; i++) await create({ name: `C${i}` }, key);
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    for (const cursor of ['garbage', '!!!', b64([]), b64({ a: 1 }), b64(['pages']), b64(['pages', 'x', 'not-a-time', 'page_x'])]) {
      expectProblem(await list(`?cursor=${encodeURIComponent(cursor)}`, key), 400, 'validation_failed', ['/cursor']);
    }
    await t.req('POST', '/v0/persons', { name: 'P1' }, { key });
    await t.req('POST', '/v0/persons', { name: 'P2' }, { key });
    const persons = await t.req('GET', '/v0/persons?limit=1', undefined, { key });
    assertJson(persons, 200);
    assert.equal(typeof persons.body.nextCursor, 'string');
    expectProblem(await list(`?cursor=${encodeURIComponent(persons.body.nextCursor)}`, key), 400, 'validation_failed', ['/cursor']);
    // A good cursor still works.
    const pages = await list('?limit=1', key);
    assertJson(await list(`?limit=1&cursor=${encodeURIComponent(pages.body.nextCursor)}`, key), 200);
  });

  test('an unknown query parameter is 400; no key is 401', async () => {
    expectProblem(await list('?status=draft'), 400, 'validation_failed', ['/status']);
    expectProblem(await list('?offset=2'), 400, 'validation_failed', ['/offset']);
    expectProblem(await t.req('GET', '/v0/pages', undefined, { key: null }), 401, 'unauthorized');
    expectProblem(await t.req('GET', '/v0/pages', undefined, { key: 'pak_wrong' }), 401, 'unauthorized');
  });
});

describe('DELETE /v0/pages/{page_id} (extension)', () => {
  test('204 with no body; the page is then 404 everywhere and absent from the list', async () => {
    const { key } = await t.newTenant('Deletes');
    const keep = await create({ name: 'Keep' }, key);
    const p = await create({ name: 'Doomed', actions: [ACTION_A] }, key);
    const aud = await t.req('POST', `/v0/pages/${p.pageId}/audiences`, {}, { key });
    assert.equal(aud.status, 201, aud.text);

    const res = await t.req('DELETE', `/v0/pages/${p.pageId}`, undefined, { key });
    assert.equal(res.status, 204, res.text);
    assert.equal(res.text, '');

    expectProblem(await get(p.pageId, key), 404, 'not_found');
    expectProblem(await patch(p.pageId, { name: 'Zombie' }, key), 404, 'not_found');
    expectProblem(await patch(p.pageId, {}, key), 404, 'not_found');
    expectProblem(await t.req('DELETE', `/v0/pages/${p.pageId}`, undefined, { key }), 404, 'not_found');
    expectProblem(await t.req('GET', `/v0/pages/${p.pageId}/audiences`, undefined, { key }), 404, 'not_found');
    expectProblem(await t.req('GET', `/v0/pages/${p.pageId}/audiences/${aud.body.audienceId}`, undefined, { key }), 404, 'not_found');
    expectProblem(await t.req('POST', `/v0/pages/${p.pageId}/audiences`, {}, { key }), 404, 'not_found');
    assert.deepEqual((await list('', key)).body, { items: [summary(keep)], hasMore: false, nextCursor: null, totalCount: 1 });
  });

  test('unknown or malformed page: 404', async () => {
    expectProblem(await t.req('DELETE', `/v0/pages/${UNKNOWN_PAGE}`), 404, 'not_found');
    expectProblem(await t.req('DELETE', '/v0/pages/nope'), 404, 'not_found');
  });

  test('another tenant cannot delete a page (404), and the page survives', async () => {
    const other = await t.newTenant('Delete other');
    const theirs = await create({ name: 'Theirs' }, other.key);
    expectProblem(await t.req('DELETE', `/v0/pages/${theirs.pageId}`), 404, 'not_found');
    await expectUnchanged(theirs, other.key);
    assert.deepEqual((await list('', other.key)).body.items, [summary(theirs)]);
  });
});

describe('audiencesCount', () => {
  test("counts the page's audiences, and only its own", async () => {
    const { key } = await t.newTenant('Counts');
    const p = await create({ name: 'Counted' }, key);
    const q = await create({ name: 'Other' }, key);
    assert.equal(p.audiencesCount, 0);
    for (let n = 1; n <= 3; n++) {
      const res = await t.req('POST', `/v0/pages/${p.pageId}/audiences`, {}, { key });
      assert.equal(res.status, 201, res.text);
      assert.equal((await get(p.pageId, key)).body.audiencesCount, n);
    }
    assert.equal((await t.req('POST', `/v0/pages/${q.pageId}/audiences`, {}, { key })).status, 201);
    assert.equal((await get(p.pageId, key)).body.audiencesCount, 3);
    assert.equal((await get(q.pageId, key)).body.audiencesCount, 1);
    const listed = (await list('', key)).body.items;
    assert.deepEqual(
      listed.map((i: Json) => [i.pageId, i.audiencesCount]),
      [
        [q.pageId, 1],
        [p.pageId, 3],
      ],
    );
    const patched = await patchOk(p.pageId, { name: 'Counted still' }, key);
    assert.equal(patched.audiencesCount, 3);
    const unchanged = await patch(p.pageId, {}, key);
    assert.equal(unchanged.body.audiencesCount, 3);
  });
});
