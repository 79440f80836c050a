import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, ISO_MS, startApp, type Json, type Res, type TestApp } from '../helpers.js';

// Black-box tests of reference endpoints 3 (list audiences of a page) and 4 (get audience), the
// POST /v0/pages/{page_id}/audiences extension, and the audience's derived fields (computedName,
// effectiveName, effectiveMetadata, status, publishedVersion), through HTTP only.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const AUDIENCE_ID = /^audience_[0-9a-z]{26}$/;
const VERSION_ID = /^version_[0-9a-z]{26}$/;
const AUDIENCE_FIELDS = [
  'actionFormIdOverride',
  'actionFormInstructionsOverride',
  'actionUrlOverride',
  'archivedAt',
  'audienceId',
  'computedName',
  'createdAt',
  'customName',
  'effectiveName',
  'flags',
  'isNewPageAgent',
  'latestVersion',
  'pageId',
  'personId',
  'personRouteKey',
  'priority',
  'publishedVersion',
  'rules',
  'status',
  'supplementaryContext',
];
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
const ENVELOPE_FIELDS = ['hasMore', 'items', 'nextCursor', 'totalCount'];
/** Every Metadata field, unset: what a response's metadata carries when nothing sets a field. */
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
const METADATA_FIELDS = Object.keys(EMPTY_METADATA).sort();

/** Well-formed ids that name nothing (TypeID body: first character 0-7). */
const UNKNOWN_AUDIENCE = 'audience_01h0000000000000000000000a';
const UNKNOWN_PAGE = 'page_01h0000000000000000000000a';
const UNKNOWN_PERSON = 'person_01h0000000000000000000000a';

const opts = (key?: string) => (key === undefined ? {} : { key });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function assertJson(res: Res, status: number): void {
  assert.equal(res.status, status, res.text);
  assert.match(String(res.headers['content-type']), /^application\/json/);
}

async function newPage(name = 'Landing page', extra: Json = {}, key?: string): Promise<Json> {
  const res = await t.req(
    'POST',
    '/v0/pages',
    { name, title: `${name} title`, pageContext: 'Context', pageType: 'inbound', ...extra },
    opts(key),
  );
  assert.equal(res.status, 201, res.text);
  return res.body;
}

async function newAudience(pageId: string, body: Json = {}, key?: string): Promise<Json> {
  const res = await t.req('POST', `/v0/pages/${pageId}/audiences`, body, opts(key));
  assertJson(res, 201);
  return res.body;
}

async function newPerson(body: Json, key?: string): Promise<Json> {
  const res = await t.req('POST', '/v0/persons', body, opts(key));
  assert.equal(res.status, 201, res.text);
  return res.body;
}

async function getAudience(pageId: string, audienceId: string, key?: string): Promise<Json> {
  const res = await t.req('GET', `/v0/pages/${pageId}/audiences/${audienceId}`, undefined, opts(key));
  assertJson(res, 200);
  return res.body;
}

async function newVersion(a: Json, body: Json = {}): Promise<Json> {
  const res = await t.req('POST', `/v0/pages/${a.pageId}/audiences/${a.audienceId}/versions`, body);
  assert.equal(res.status, 201, res.text);
  return res.body;
}

async function move(a: Json, versionId: string, status: string): Promise<Json> {
  const res = await t.req('PATCH', `/v0/pages/${a.pageId}/audiences/${a.audienceId}/versions/${versionId}`, { status });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

async function search(query: string, key?: string): Promise<Json> {
  const res = await t.req('GET', `/v0/audiences/search?query=${encodeURIComponent(query)}&limit=100`, undefined, opts(key));
  assertJson(res, 200);
  return res.body;
}

function assertVersionShape(v: Json): void {
  assert.deepEqual(Object.keys(v).sort(), VERSION_FIELDS);
  assert.match(v.versionId, VERSION_ID);
  assert.match(v.audienceId, AUDIENCE_ID);
  assert.ok(Number.isInteger(v.versionNumber) && v.versionNumber >= 1);
  assert.equal(typeof v.isNewPageAgent, 'boolean');
  assert.match(v.createdAt, ISO_MS);
  for (const f of ['becameDraftAt', 'queuedAt', 'publishedAt', 'cancelledAt', 'obsoleteAt', 'archivedAt']) {
    assert.ok(v[f] === null || ISO_MS.test(v[f]), `${f} is null or an ISO timestamp: ${v[f]}`);
  }
}

/** Every field of Audience, with the two metadata fields present exactly when `metadata` says. */
function assertAudienceShape(a: Json, metadata: boolean): void {
  const fields = metadata ? [...AUDIENCE_FIELDS, 'effectiveMetadata', 'metadataOverride'].sort() : AUDIENCE_FIELDS;
  assert.deepEqual(Object.keys(a).sort(), fields);
  assert.match(a.audienceId, AUDIENCE_ID);
  assert.match(a.createdAt, ISO_MS);
  assertVersionShape(a.latestVersion);
  assertVersionShape(a.publishedVersion);
  assert.equal(a.latestVersion.audienceId, a.audienceId);
  assert.equal(a.publishedVersion.audienceId, a.audienceId);
}

/** Version 1 as an audience is created with it: published at once, never a draft. */
function assertFirstVersion(a: Json, isNewPageAgent: boolean, supplementaryContext: string | null): void {
  const v = a.publishedVersion;
  assert.deepEqual(a.latestVersion, v);
  assert.deepEqual(v, {
    versionId: v.versionId,
    audienceId: a.audienceId,
    versionNumber: 1,
    status: 'published',
    isNewPageAgent,
    supplementaryContext,
    content: null,
    origin: 'generated',
    queueDurationMs: null,
    createdAt: a.createdAt,
    becameDraftAt: null,
    queuedAt: null,
    publishedAt: a.createdAt,
    cancelledAt: null,
    obsoleteAt: null,
    archivedAt: null,
    failureReason: null,
  });
}

describe('POST /v0/pages/{page_id}/audiences (extension)', () => {
  test('201 with every field: defaults null/false/[], version 1 published, computedName "Audience 1"', async () => {
    const page = await newPage('Defaults page');
    const startedAt = Date.now();
    const res = await t.req('POST', `/v0/pages/${page.pageId}/audiences`, {});
    assertJson(res, 201);
    const a = res.body;
    assertAudienceShape(a, false);
    assert.ok(!('effectiveMetadata' in a) && !('metadataOverride' in a), 'no metadata fields without page metadata or override');
    assert.deepEqual(
      { ...a, audienceId: 'x', createdAt: 'x', latestVersion: 'x', publishedVersion: 'x' },
      {
        audienceId: 'x',
        pageId: page.pageId,
        computedName: 'Audience 1',
        customName: null,
        effectiveName: 'Audience 1',
        status: 'published',
        flags: [],
        isNewPageAgent: false,
        latestVersion: 'x',
        publishedVersion: 'x',
        personId: null,
        personRouteKey: null,
        actionFormIdOverride: null,
        actionFormInstructionsOverride: null,
        actionUrlOverride: null,
        supplementaryContext: null,
        rules: null,
        priority: null,
        archivedAt: null,
        createdAt: 'x',
      },
    );
    assert.ok(Date.parse(a.createdAt) >= startedAt - 1 && Date.parse(a.createdAt) <= Date.now() + 1, 'createdAt is now');
    assertFirstVersion(a, false, null);
    assert.ok(res.headers['x-request-id']);
    // What was returned is what is stored.
    assert.deepEqual(await getAudience(page.pageId, a.audienceId), a);
  });

  test('every optional field is stored and echoed; version 1 carries isNewPageAgent and supplementaryContext', async () => {
    const page = await newPage('Full page');
    const body = {
      customName: 'Enterprise buyers',
      personRouteKey: 'route-42',
      flags: ['home_page'],
      isNewPageAgent: true,
      supplementaryContext: 'They care about SSO.',
      actionFormIdOverride: 'form-1',
      actionFormInstructionsOverride: 'Ask for the budget.',
      actionUrlOverride: 'https://example.com/demo',
    };
    const a = await newAudience(page.pageId, body);
    assertAudienceShape(a, false);
    for (const [k, v] of Object.entries(body)) assert.deepEqual(a[k], v, k);
    assert.equal(a.computedName, 'Audience 1');
    assert.equal(a.effectiveName, 'Enterprise buyers');
    assert.equal(a.personId, null);
    assert.equal(a.status, 'published');
    assertFirstVersion(a, true, 'They care about SSO.');
    assert.deepEqual(await getAudience(page.pageId, a.audienceId), a);
  });

  test('ids are distinct and a later audience sorts after an earlier one', async () => {
    const page = await newPage('Id order page');
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await newAudience(page.pageId)).audienceId);
    assert.equal(new Set(ids).size, 4);
    assert.deepEqual([...ids].sort(), ids);
  });

  test('computedName "Audience <n>" counts creations per page; the number never changes', async () => {
    const pageA = await newPage('Numbering A');
    const pageB = await newPage('Numbering B');
    const person = await newPerson({ name: 'Numbered Person' });
    const a1 = await newAudience(pageA.pageId);
    const a2 = await newAudience(pageA.pageId);
    const b1 = await newAudience(pageB.pageId);
    const a3 = await newAudience(pageA.pageId, { personId: person.personId }); // takes number 3 even though it shows the person
    const a4 = await newAudience(pageA.pageId, { customName: 'Custom four' });
    const a5 = await newAudience(pageA.pageId);
    const b2 = await newAudience(pageB.pageId);
    assert.equal(a1.computedName, 'Audience 1');
    assert.equal(a2.computedName, 'Audience 2');
    assert.equal(b1.computedName, 'Audience 1');
    assert.equal(a3.computedName, 'Numbered Person');
    assert.equal(a4.computedName, 'Audience 4');
    assert.equal(a4.effectiveName, 'Custom four');
    assert.equal(a5.computedName, 'Audience 5');
    assert.equal(a5.effectiveName, 'Audience 5');
    assert.equal(b2.computedName, 'Audience 2');
    // Later creations, new versions and reads never renumber the earlier audiences.
    await newVersion(a1);
    await move(a2, (await newVersion(a2)).versionId, 'published');
    for (const [a, name] of [
      [a1, 'Audience 1'],
      [a2, 'Audience 2'],
      [a4, 'Audience 4'],
      [a5, 'Audience 5'],
      [b1, 'Audience 1'],
      [b2, 'Audience 2'],
    ] as const) {
      const got = await getAudience(a.pageId, a.audienceId);
      assert.equal(got.computedName, name);
    }
    // The list shows the same names, newest first.
    const list = await t.req('GET', `/v0/pages/${pageA.pageId}/audiences`);
    assert.deepEqual(
      list.body.items.map((a: Json) => a.computedName),
      ['Audience 5', 'Audience 4', 'Numbered Person', 'Audience 2', 'Audience 1'],
    );
  });

  test('concurrent creations on one page get distinct numbers 1..n', async () => {
    const page = await newPage('Concurrent page');
    const made = await Promise.all(Array.from({ length: 8 }, () => t.req('POST', `/v0/pages/${page.pageId}/audiences`, {})));
    for (const res of made) assert.equal(res.status, 201, res.text);
    const numbers = made.map((r) => Number(/^Audience (\d+)$/.exec(r.body.computedName)?.[1])).sort((x, y) => x - y);
    assert.deepEqual(numbers, [1, 2, 3, 4, 5, 6, 7, 8]);
    assert.equal((await newAudience(page.pageId)).computedName, 'Audience 9');
  });

  test('personId: computedName "Name (domain)", or the name alone without a domain; customName still wins', async () => {
    const page = await newPage('Person page');
    const jane = await newPerson({ name: 'Jane Doe', domain: 'acme.com' });
    const bare = await newPerson({ name: 'Jane Doe' });
    const a = await newAudience(page.pageId, { personId: jane.personId });
    assertAudienceShape(a, false);
    assert.equal(a.personId, jane.personId);
    assert.equal(a.computedName, 'Jane Doe (acme.com)');
    assert.equal(a.customName, null);
    assert.equal(a.effectiveName, 'Jane Doe (acme.com)');
    const b = await newAudience(page.pageId, { personId: bare.personId });
    assert.equal(b.computedName, 'Jane Doe');
    assert.equal(b.effectiveName, 'Jane Doe');
    const c = await newAudience(page.pageId, { personId: jane.personId, customName: 'Jane at Acme' });
    assert.equal(c.computedName, 'Jane Doe (acme.com)');
    assert.equal(c.customName, 'Jane at Acme');
    assert.equal(c.effectiveName, 'Jane at Acme');
    assert.deepEqual(await getAudience(page.pageId, a.audienceId), a);
  });

  test('computedName follows a PATCH of the person: GET, the list and search show the new name', async () => {
    const page = await newPage('Renamed person page');
    const person = await newPerson({ name: 'Zanzibar Quill', domain: 'quill-old.example' });
    const plain = await newAudience(page.pageId, { personId: person.personId });
    const custom = await newAudience(page.pageId, { personId: person.personId, customName: 'Kept custom name' });
    assert.equal((await search('zanzibar')).totalCount, 1);

    let res = await t.req('PATCH', `/v0/persons/${person.personId}`, { name: 'Xylo Brightwater', domain: 'brightwater.example' });
    assert.equal(res.status, 200, res.text);
    let got = await getAudience(page.pageId, plain.audienceId);
    assert.equal(got.computedName, 'Xylo Brightwater (brightwater.example)');
    assert.equal(got.effectiveName, 'Xylo Brightwater (brightwater.example)');
    got = await getAudience(page.pageId, custom.audienceId);
    assert.equal(got.computedName, 'Xylo Brightwater (brightwater.example)');
    assert.equal(got.effectiveName, 'Kept custom name');
    const list = await t.req('GET', `/v0/pages/${page.pageId}/audiences`);
    assert.deepEqual(
      list.body.items.map((a: Json) => a.computedName),
      ['Xylo Brightwater (brightwater.example)', 'Xylo Brightwater (brightwater.example)'],
    );

    // Search matches the new effective name, never the old one.
    assert.deepEqual(await search('zanzibar'), { items: [], hasMore: false, nextCursor: null, totalCount: 0 });
    assert.deepEqual(await search('quill-old'), { items: [], hasMore: false, nextCursor: null, totalCount: 0 });
    assert.deepEqual(await search('BRIGHTWATER.example'), {
      items: [
        {
          audienceId: plain.audienceId,
          effectiveName: 'Xylo Brightwater (brightwater.example)',
          pageId: page.pageId,
          pageName: 'Renamed person page',
        },
      ],
      hasMore: false,
      nextCursor: null,
      totalCount: 1,
    });

    // Clearing the domain leaves the name alone; a name-only PATCH keeps the domain rule.
    res = await t.req('PATCH', `/v0/persons/${person.personId}`, { domain: null });
    assert.equal(res.status, 200, res.text);
    assert.equal((await getAudience(page.pageId, plain.audienceId)).computedName, 'Xylo Brightwater');
    res = await t.req('PATCH', `/v0/persons/${person.personId}`, { name: 'Yarrow Brightwater' });
    assert.equal(res.status, 200, res.text);
    got = await getAudience(page.pageId, plain.audienceId);
    assert.equal(got.computedName, 'Yarrow Brightwater');
    assert.equal(got.effectiveName, 'Yarrow Brightwater');
    const found = await search('yarrow');
    assert.deepEqual(
      found.items.map((i: Json) => [i.audienceId, i.effectiveName]),
      [[plain.audienceId, 'Yarrow Brightwater']],
    );
    assert.equal((await search('xylo')).totalCount, 0);
  });

  test('personId that names no person of the tenant is 400 at /personId, and nothing is created', async () => {
    const page = await newPage('Bad person page');
    const other = await t.newTenant('Other person tenant');
    const foreign = await newPerson({ name: 'Foreign Person', domain: 'foreign.example' }, other.key);
    for (const personId of [foreign.personId, UNKNOWN_PERSON, 'not-a-person-id']) {
      expectProblem(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, { personId }), 400, 'validation_failed', ['/personId']);
    }
    const list = await t.req('GET', `/v0/pages/${page.pageId}/audiences`);
    assert.equal(list.body.totalCount, 0);
    // Refused attempts create nothing, so the first audience created is still number 1.
    const a = await newAudience(page.pageId);
    assert.equal(a.computedName, 'Audience 1');
  });

  test('an empty personId names no person either: 400 at /personId, nothing created', async () => {
    const page = await newPage('Empty person page');
    expectProblem(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, { personId: '' }), 400, 'validation_failed', ['/personId']);
    assert.equal((await t.req('GET', `/v0/pages/${page.pageId}/audiences`)).body.totalCount, 0);
  });

  test('metadataOverride is returned as given and laid over the page metadata in effectiveMetadata', async () => {
    const page = await newPage('Metadata page', {
      metadata: { title: 'Page title', description: 'Page description', keywords: ['a', 'b'] },
    });
    // Page metadata, no override: effectiveMetadata is the page's, metadataOverride is absent.
    const plain = await newAudience(page.pageId);
    assert.deepEqual(Object.keys(plain).sort(), [...AUDIENCE_FIELDS, 'effectiveMetadata'].sort());
    assert.deepEqual(plain.effectiveMetadata, {
      ...EMPTY_METADATA,
      title: 'Page title',
      description: 'Page description',
      keywords: ['a', 'b'],
    });

    const override = { description: 'Audience description', ogTitle: 'OG for them', robots: ['noindex'], keywords: [] };
    const a = await newAudience(page.pageId, { metadataOverride: override });
    assertAudienceShape(a, true);
    assert.deepEqual(a.metadataOverride, override);
    assert.deepEqual(Object.keys(a.effectiveMetadata).sort(), METADATA_FIELDS);
    assert.deepEqual(a.effectiveMetadata, {
      ...EMPTY_METADATA,
      title: 'Page title',
      description: 'Audience description',
      keywords: [],
      ogTitle: 'OG for them',
      robots: ['noindex'],
    });
    assert.deepEqual(await getAudience(page.pageId, a.audienceId), a);

    // The page's metadata is read when the audience is: a page update shows through (metadata is merged, issue 19).
    const res = await t.req('PATCH', `/v0/pages/${page.pageId}`, {
      metadata: { title: 'New page title', author: 'Ann', description: null, keywords: null },
    });
    assert.equal(res.status, 200, res.text);
    const after = await getAudience(page.pageId, a.audienceId);
    assert.deepEqual(after.metadataOverride, override);
    assert.deepEqual(after.effectiveMetadata, {
      ...EMPTY_METADATA,
      title: 'New page title',
      author: 'Ann',
      description: 'Audience description',
      ogTitle: 'OG for them',
      robots: ['noindex'],
    });
    const listed = (await t.req('GET', `/v0/pages/${page.pageId}/audiences`)).body.items;
    assert.deepEqual(
      listed.find((x: Json) => x.audienceId === a.audienceId),
      after,
    );
    assert.deepEqual(listed.find((x: Json) => x.audienceId === plain.audienceId).effectiveMetadata, {
      ...EMPTY_METADATA,
      title: 'New page title',
      author: 'Ann',
    });
  });

  test('an override on a page without metadata: effectiveMetadata is the override over empty fields', async () => {
    const page = await newPage('No metadata page');
    assert.equal(page.metadata, undefined);
    const override = { title: 'Only title', ogImageUrl: 'https://cdn.example.com/og.png', twitterCreator: '@them' };
    const a = await newAudience(page.pageId, { metadataOverride: override });
    assertAudienceShape(a, true);
    assert.deepEqual(a.metadataOverride, override);
    assert.deepEqual(a.effectiveMetadata, { ...EMPTY_METADATA, ...override });
    // An empty override is an override all the same, returned as given.
    const b = await newAudience(page.pageId, { metadataOverride: {} });
    assertAudienceShape(b, true);
    assert.deepEqual(b.metadataOverride, {});
    assert.deepEqual(b.effectiveMetadata, EMPTY_METADATA);
  });

  test('metadataOverride rejects unknown fields and wrong types at their paths', async () => {
    const page = await newPage('Bad metadata page');
    const url = `/v0/pages/${page.pageId}/audiences`;
    expectProblem(await t.req('POST', url, { metadataOverride: { colour: 'red' } }), 400, 'validation_failed', [
      '/metadataOverride/colour',
    ]);
    expectProblem(await t.req('POST', url, { metadataOverride: { keywords: 'a,b' } }), 400, 'validation_failed', [
      '/metadataOverride/keywords',
    ]);
    expectProblem(await t.req('POST', url, { metadataOverride: { title: 5 } }), 400, 'validation_failed', ['/metadataOverride/title']);
    expectProblem(await t.req('POST', url, { metadataOverride: 'title' }), 400, 'validation_failed', ['/metadataOverride']);
  });

  test('flags take only "home_page"', async () => {
    const page = await newPage('Flags page');
    const url = `/v0/pages/${page.pageId}/audiences`;
    assert.deepEqual((await newAudience(page.pageId, { flags: ['home_page'] })).flags, ['home_page']);
    assert.deepEqual((await newAudience(page.pageId, { flags: [] })).flags, []);
    expectProblem(await t.req('POST', url, { flags: ['landing'] }), 400, 'validation_failed', ['/flags/0']);
    expectProblem(await t.req('POST', url, { flags: ['home_page', 'HOME_PAGE'] }), 400, 'validation_failed', ['/flags/1']);
    expectProblem(await t.req('POST', url, { flags: 'home_page' }), 400, 'validation_failed', ['/flags']);
  });

  test('unknown body fields and wrong types are 400 at their own paths', async () => {
    const page = await newPage('Strict page');
    const url = `/v0/pages/${page.pageId}/audiences`;
    expectProblem(await t.req('POST', url, { nickname: 'x' }), 400, 'validation_failed', ['/nickname']);
    expectProblem(await t.req('POST', url, { audienceId: UNKNOWN_AUDIENCE }), 400, 'validation_failed', ['/audienceId']);
    expectProblem(await t.req('POST', url, { status: 'draft' }), 400, 'validation_failed', ['/status']);
    expectProblem(await t.req('POST', url, { computedName: 'Mine' }), 400, 'validation_failed', ['/computedName']);
    expectProblem(await t.req('POST', url, { isNewPageAgent: 'yes' }), 400, 'validation_failed', ['/isNewPageAgent']);
    expectProblem(await t.req('POST', url, { customName: 5 }), 400, 'validation_failed', ['/customName']);
    expectProblem(await t.req('POST', url, { supplementaryContext: {} }), 400, 'validation_failed', ['/supplementaryContext']);
    const res = await t.req('POST', url, { extra: 1, isNewPageAgent: 1, flags: ['x'] });
    expectProblem(res, 400, 'validation_failed', ['/extra', '/isNewPageAgent', '/flags/0']);
    expectProblem(await t.req('POST', url, '{"customName": '), 400, 'validation_failed');
    expectProblem(await t.req('POST', url, '[]'), 400, 'validation_failed');
    expectProblem(await t.req('POST', url, '{}', { headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
    assert.equal((await t.req('GET', url)).body.totalCount, 0, 'nothing was created');
  });

  test("an unknown, deleted or other tenant's page is 404; no key is 401", async () => {
    expectProblem(await t.req('POST', `/v0/pages/${UNKNOWN_PAGE}/audiences`, {}), 404, 'not_found');
    expectProblem(await t.req('POST', '/v0/pages/nonsense/audiences', {}), 404, 'not_found');
    const other = await t.newTenant('Other page tenant');
    const foreign = await newPage('Foreign page', {}, other.key);
    expectProblem(await t.req('POST', `/v0/pages/${foreign.pageId}/audiences`, {}), 404, 'not_found');
    const gone = await newPage('Gone page');
    assert.equal((await t.req('DELETE', `/v0/pages/${gone.pageId}`)).status, 204);
    expectProblem(await t.req('POST', `/v0/pages/${gone.pageId}/audiences`, {}), 404, 'not_found');
    const page = await newPage('Keyless page');
    expectProblem(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, {}, { key: null }), 401, 'unauthorized');
    // The foreign tenant's page got nothing.
    assert.equal((await t.req('GET', `/v0/pages/${foreign.pageId}/audiences`, undefined, { key: other.key })).body.totalCount, 0);
  });
});

describe('GET /v0/pages/{page_id}/audiences (endpoint 3)', () => {
  test('envelope, newest first, items equal to GET one, totalCount exact', async () => {
    const page = await newPage('List page');
    const empty = await t.req('GET', `/v0/pages/${page.pageId}/audiences`);
    assertJson(empty, 200);
    assert.deepEqual(empty.body, { items: [], hasMore: false, nextCursor: null, totalCount: 0 });
    const created: Json[] = [];
    for (let i = 0; i < 3; i++) created.push(await newAudience(page.pageId, { customName: `Listed ${i}` }));
    const other = await newPage('List page other');
    await newAudience(other.pageId);
    const res = await t.req('GET', `/v0/pages/${page.pageId}/audiences`);
    assertJson(res, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ENVELOPE_FIELDS);
    assert.equal(res.body.hasMore, false);
    assert.equal(res.body.nextCursor, null);
    assert.equal(res.body.totalCount, 3);
    assert.deepEqual(
      res.body.items.map((a: Json) => a.audienceId),
      created.map((a) => a.audienceId).reverse(),
    );
    for (const item of res.body.items) {
      assertAudienceShape(item, false);
      assert.deepEqual(item, await getAudience(page.pageId, item.audienceId));
    }
  });

  test('pagination walked to the end with limit 2: no duplicate, no skip, rows added meanwhile do not shift it', async () => {
    const page = await newPage('Paged page');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await newAudience(page.pageId)).audienceId);
    const expected = [...ids].reverse();
    const seen: string[] = [];
    let cursor: string | null = null;
    const shapes: [number, boolean, boolean, number][] = [];
    let round = 0;
    do {
      const url: string = `/v0/pages/${page.pageId}/audiences?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await t.req('GET', url);
      assertJson(res, 200);
      shapes.push([res.body.items.length, res.body.hasMore, res.body.nextCursor !== null, res.body.totalCount]);
      seen.push(...res.body.items.map((a: Json) => a.audienceId));
      cursor = res.body.nextCursor;
      if (round++ === 0) await newAudience(page.pageId); // newer than everything: must not appear in later pages
    } while (cursor !== null && round < 10);
    assert.deepEqual(seen, expected);
    assert.deepEqual(shapes, [
      [2, true, true, 5],
      [2, true, true, 6],
      [1, false, false, 6],
    ]);
  });

  test('limit bounds and unknown query parameters', async () => {
    const page = await newPage('Limit page');
    for (let i = 0; i < 3; i++) await newAudience(page.pageId);
    const url = `/v0/pages/${page.pageId}/audiences`;
    const one = await t.req('GET', `${url}?limit=1`);
    assertJson(one, 200);
    assert.equal(one.body.items.length, 1);
    assert.equal(one.body.hasMore, true);
    assert.equal(one.body.totalCount, 3);
    const hundred = await t.req('GET', `${url}?limit=100`);
    assert.equal(hundred.body.items.length, 3);
    assert.equal(hundred.body.hasMore, false);
    for (const limit of ['0', '101', 'abc', '1.5', '-1', '']) {
      expectProblem(await t.req('GET', `${url}?limit=${limit}`), 400, 'validation_failed', ['/limit']);
    }
    // `status` is a filter since the audience operations (issue 14); other parameters are still refused.
    expectProblem(await t.req('GET', `${url}?sort=name`), 400, 'validation_failed', ['/sort']);
  });

  test("a cursor of another page's list, or one that does not decode, is 400 at /cursor", async () => {
    const pageA = await newPage('Cursor A');
    const pageB = await newPage('Cursor B');
    for (let i = 0; i < 3; i++) {
      await newAudience(pageA.pageId);
      await newAudience(pageB.pageId);
    }
    const first = await t.req('GET', `/v0/pages/${pageA.pageId}/audiences?limit=1`);
    const cursor = first.body.nextCursor;
    assert.equal(typeof cursor, 'string');
    // The same cursor works on its own list...
    const next = await t.req('GET', `/v0/pages/${pageA.pageId}/audiences?limit=1&cursor=${encodeURIComponent(cursor)}`);
    assertJson(next, 200);
    // ...but not on another page's.
    expectProblem(
      await t.req('GET', `/v0/pages/${pageB.pageId}/audiences?limit=1&cursor=${encodeURIComponent(cursor)}`),
      400,
      'validation_failed',
      ['/cursor'],
    );
    // Nor a cursor of the page list.
    const pages = await t.req('GET', '/v0/pages?limit=1');
    assert.equal(typeof pages.body.nextCursor, 'string');
    expectProblem(
      await t.req('GET', `/v0/pages/${pageA.pageId}/audiences?cursor=${encodeURIComponent(pages.body.nextCursor)}`),
      400,
      'validation_failed',
      ['/cursor'],
    );
    for (const bad of ['garbage', 'W10', Buffer.from('{"a":1}').toString('base64url')]) {
      expectProblem(await t.req('GET', `/v0/pages/${pageA.pageId}/audiences?cursor=${bad}`), 400, 'validation_failed', ['/cursor']);
    }
  });

  test("unknown, deleted or other tenant's page is 404", async () => {
    expectProblem(await t.req('GET', `/v0/pages/${UNKNOWN_PAGE}/audiences`), 404, 'not_found');
    expectProblem(await t.req('GET', '/v0/pages/nonsense/audiences'), 404, 'not_found');
    const page = await newPage('Deleted list page');
    await newAudience(page.pageId);
    const other = await t.newTenant('List other tenant');
    expectProblem(await t.req('GET', `/v0/pages/${page.pageId}/audiences`, undefined, { key: other.key }), 404, 'not_found');
    assert.equal((await t.req('DELETE', `/v0/pages/${page.pageId}`)).status, 204);
    expectProblem(await t.req('GET', `/v0/pages/${page.pageId}/audiences`), 404, 'not_found');
    expectProblem(await t.req('GET', `/v0/pages/${page.pageId}/audiences`, undefined, { key: null }), 401, 'unauthorized');
  });
});

describe('GET /v0/pages/{page_id}/audiences/{audience_id} (endpoint 4)', () => {
  test('200 with the audience', async () => {
    const page = await newPage('Get page');
    const a = await newAudience(page.pageId, { customName: 'Fetched' });
    const res = await t.req('GET', `/v0/pages/${page.pageId}/audiences/${a.audienceId}`);
    assertJson(res, 200);
    assert.deepEqual(res.body, a);
  });

  test('an audience of another page, of another tenant, unknown or malformed is 404', async () => {
    const pageA = await newPage('Owner page');
    const pageB = await newPage('Stranger page');
    const a = await newAudience(pageA.pageId);
    expectProblem(await t.req('GET', `/v0/pages/${pageB.pageId}/audiences/${a.audienceId}`), 404, 'not_found');
    expectProblem(await t.req('GET', `/v0/pages/${pageA.pageId}/audiences/${UNKNOWN_AUDIENCE}`), 404, 'not_found');
    expectProblem(await t.req('GET', `/v0/pages/${pageA.pageId}/audiences/not-an-id`), 404, 'not_found');

    const other = await t.newTenant('Get other tenant');
    // The other tenant, through our page id or through a page of its own.
    expectProblem(
      await t.req('GET', `/v0/pages/${pageA.pageId}/audiences/${a.audienceId}`, undefined, { key: other.key }),
      404,
      'not_found',
    );
    const theirs = await newPage('Their page', {}, other.key);
    expectProblem(
      await t.req('GET', `/v0/pages/${theirs.pageId}/audiences/${a.audienceId}`, undefined, { key: other.key }),
      404,
      'not_found',
    );
    const theirAudience = await newAudience(theirs.pageId, {}, other.key);
    expectProblem(await t.req('GET', `/v0/pages/${theirs.pageId}/audiences/${theirAudience.audienceId}`), 404, 'not_found');
    expectProblem(await t.req('GET', `/v0/pages/${pageA.pageId}/audiences/${theirAudience.audienceId}`), 404, 'not_found');
    // Their audience is theirs: numbered from 1 on their page, and readable by them.
    assert.equal(theirAudience.computedName, 'Audience 1');
    assert.deepEqual(await getAudience(theirs.pageId, theirAudience.audienceId, other.key), theirAudience);
  });

  test('an audience of a deleted page is 404', async () => {
    const page = await newPage('Soon deleted page');
    const a = await newAudience(page.pageId);
    await getAudience(page.pageId, a.audienceId);
    assert.equal((await t.req('DELETE', `/v0/pages/${page.pageId}`)).status, 204);
    expectProblem(await t.req('GET', `/v0/pages/${page.pageId}/audiences/${a.audienceId}`), 404, 'not_found');
  });
});

describe('derived fields: status, publishedVersion, isNewPageAgent, supplementaryContext', () => {
  test("status is the latest version's; isNewPageAgent and supplementaryContext are the published version's", async () => {
    const page = await newPage('Derived page');
    const a = await newAudience(page.pageId, { isNewPageAgent: false, supplementaryContext: 'v1 context' });
    const v1 = a.publishedVersion;

    const v2 = await newVersion(a, { isNewPageAgent: true, supplementaryContext: 'v2 context' });
    let got = await getAudience(page.pageId, a.audienceId);
    assert.equal(got.status, 'draft');
    assert.deepEqual(got.latestVersion, v2);
    assert.deepEqual(got.publishedVersion, v1);
    assert.equal(got.isNewPageAgent, false);
    assert.equal(got.supplementaryContext, 'v1 context');

    for (const status of ['pending', 'queued', 'processing']) {
      const moved = await move(a, v2.versionId, status);
      got = await getAudience(page.pageId, a.audienceId);
      assert.equal(got.status, status);
      assert.deepEqual(got.latestVersion, moved);
      assert.equal(got.isNewPageAgent, false, "not published yet: still version 1's");
      assert.equal(got.supplementaryContext, 'v1 context');
    }

    const published = await move(a, v2.versionId, 'published');
    got = await getAudience(page.pageId, a.audienceId);
    assert.equal(got.status, 'published');
    assert.deepEqual(got.latestVersion, published);
    assert.deepEqual(got.publishedVersion, published);
    assert.equal(got.isNewPageAgent, true);
    assert.equal(got.supplementaryContext, 'v2 context');

    // A newer draft that is then cancelled: status cancelled, the published version stays in charge.
    const v3 = await newVersion(a, { isNewPageAgent: false, supplementaryContext: null });
    const cancel = await t.req('POST', `/v0/pages/${page.pageId}/audiences/${a.audienceId}/versions/${v3.versionId}/cancel`, {});
    assert.equal(cancel.status, 200, cancel.text);
    got = await getAudience(page.pageId, a.audienceId);
    assert.equal(got.status, 'cancelled');
    assert.deepEqual(got.latestVersion, cancel.body);
    assert.deepEqual(got.publishedVersion, published);
    assert.equal(got.isNewPageAgent, true);
    assert.equal(got.supplementaryContext, 'v2 context');
    // The list says the same as GET one.
    const listed = (await t.req('GET', `/v0/pages/${page.pageId}/audiences`)).body.items[0];
    assert.deepEqual(listed, got);

    // Publishing a version whose supplementaryContext is null makes the audience's null.
    const v4 = await newVersion(a, { supplementaryContext: null, isNewPageAgent: false });
    await move(a, v4.versionId, 'published');
    got = await getAudience(page.pageId, a.audienceId);
    assert.equal(got.supplementaryContext, null);
    assert.equal(got.isNewPageAgent, false);
    assert.equal(got.publishedVersion.versionNumber, 4);
  });

  test("the audience's own fields do not change as versions move", async () => {
    const page = await newPage('Stable page');
    const a = await newAudience(page.pageId, { customName: 'Stable', personRouteKey: 'rk', flags: ['home_page'] });
    const v2 = await newVersion(a);
    await sleep(2);
    await move(a, v2.versionId, 'published');
    const got = await getAudience(page.pageId, a.audienceId);
    const own = (x: Json) => ({ ...x, status: '', latestVersion: '', publishedVersion: '' });
    assert.deepEqual(own(got), own(a));
  });
});
