import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, ISO_MS, ok, startApp, type Json, type TestApp } from '../helpers.js';

// Page templates as resources (issue 38): the built-ins every tenant lists, and the templates a
// tenant saves from its pages; bounds just inside and outside, 409 on built-ins, tenant isolation,
// the list's pages across built-ins and rows, and the template.created / template.deleted events.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const FIELDS = ['actions', 'builtIn', 'content', 'createdAt', 'description', 'headerActionId', 'name', 'templateId', 'updatedAt'];
const BUILT_IN_NAMES = ['Product launch', 'Account-based outreach', 'Webinar or event', 'Demo request', 'Pricing page'];
const PAGE = { name: 'Source', title: 'Source', pageContext: 'We sell widgets', pageType: 'inbound' };
const CONTENT = {
  headline: 'Hello {{person.firstName | there}}',
  subheadline: 'For {{account.name | your team}}',
  sections: [{ heading: 'Why', body: '**Fast** <script>alert(1)</script>' }],
};
const ACTIONS = [
  { purpose: 'lead', buttonTitle: 'Call me', actionType: 'form' },
  { purpose: 'docs', buttonTitle: 'Read the docs', actionType: 'link', url: 'https://example.com/docs' },
];

const newPage = async (key?: string) =>
  ok(await t.req('POST', '/v0/pages', { ...PAGE, content: CONTENT, actions: ACTIONS }, key === undefined ? {} : { key }), 201);
const save = (body: Json, key?: string) => t.req('POST', '/v0/templates', body, key === undefined ? {} : { key });
const eventsOf = async (type: string, key?: string): Promise<Json[]> =>
  ok(await t.req('GET', `/v0/events?type=${type}&limit=100`, undefined, key === undefined ? {} : { key })).items;
const bad = async (res: Promise<Json>, path: string) => expectProblem(await res, 400, 'validation_failed', [path]);

describe('built-in templates', () => {
  test('at least four, listed first, each a real page in three layouts or more', async () => {
    const { key } = await t.newTenant('Fresh');
    // Their content too (issue 45: the list's summaries carry it only when asked, 10 at most).
    const list = ok(await t.req('GET', '/v0/templates?include=content&limit=10', undefined, { key }));
    assert.equal(list.totalCount, list.items.length);
    assert.equal(list.hasMore, false);
    assert.ok(list.items.length >= 4);
    assert.deepEqual(
      list.items.slice(0, 5).map((x: Json) => x.name),
      BUILT_IN_NAMES,
    );
    for (const template of list.items as Json[]) {
      assert.equal(template.builtIn, true);
      assert.deepEqual(Object.keys(template).sort(), FIELDS, template.name);
      assert.match(template.templateId, /^template_builtin[a-z0-9]+$/);
      assert.equal(template.createdAt, null);
      assert.equal(template.updatedAt, null);
      assert.ok(template.description.length > 40, template.name);
      const layouts = new Set(template.content.sections.map((s: Json) => s.layout ?? 'text'));
      assert.ok(layouts.size >= 3, `${template.name}: ${[...layouts].join(', ')}`);
      // No tenant's asset: any tenant can make a page of it.
      assert.doesNotMatch(JSON.stringify(template.content), /imageAssetId|asset_/);
      // Every cta names one of the template's actions, and the header action is one of them too.
      const ids = template.actions.map((a: Json) => a.actionId);
      for (const s of template.content.sections.filter((s: Json) => s.layout === 'cta')) assert.ok(ids.includes(s.actionId));
      assert.ok(ids.includes(template.headerActionId));
      assert.deepEqual(
        template.actions.map((a: Json) => a.actionIndex),
        ids.map((_: string, i: number) => i),
      );
      assert.deepEqual(ok(await t.req('GET', `/v0/templates/${template.templateId}`, undefined, { key })), template);
    }
    const outreach = list.items.find((x: Json) => x.name === 'Account-based outreach');
    const text = JSON.stringify(outreach.content);
    assert.match(text, /\{\{person\.firstName \| there\}\}/);
    assert.match(text, /\{\{account\.name \| [^}]+\}\}/);
  });

  test('answer 409 to PATCH and DELETE, and stay as they are', async () => {
    const [first] = ok(await t.req('GET', '/v0/templates?limit=1&include=content')).items;
    expectProblem(await t.req('PATCH', `/v0/templates/${first.templateId}`, { name: 'Mine now' }), 409, 'conflict');
    expectProblem(await t.req('PATCH', `/v0/templates/${first.templateId}`, first), 409, 'conflict');
    expectProblem(await t.req('DELETE', `/v0/templates/${first.templateId}`), 409, 'conflict');
    assert.deepEqual(ok(await t.req('GET', `/v0/templates/${first.templateId}`)), first);
    assert.deepEqual(await eventsOf('template.deleted'), []);
  });
});

describe("a tenant's own templates", () => {
  test("POST saves the page's content, actions and header action; GET, PATCH round trip, DELETE", async () => {
    const page = await newPage();
    ok(await t.req('PATCH', `/v0/pages/${page.pageId}`, { headerActionId: page.actions[0].actionId }));
    const made = ok(await save({ pageId: page.pageId, name: 'Our launch', description: 'For launches' }), 201);
    assert.deepEqual(Object.keys(made).sort(), FIELDS);
    assert.match(made.templateId, /^template_[0-9a-hjkmnp-tv-z]{26}$/);
    assert.equal(made.builtIn, false);
    assert.equal(made.name, 'Our launch');
    assert.equal(made.description, 'For launches');
    assert.deepEqual(made.content, CONTENT);
    assert.deepEqual(made.actions, page.actions);
    assert.equal(made.headerActionId, page.actions[0].actionId);
    assert.match(made.createdAt, ISO_MS);
    assert.equal(made.updatedAt, made.createdAt);

    // A copy: the page's later changes do not reach it.
    ok(await t.req('PATCH', `/v0/pages/${page.pageId}`, { content: { headline: 'Changed', subheadline: '', sections: [] } }));
    assert.deepEqual(ok(await t.req('GET', `/v0/templates/${made.templateId}`)), made);

    assert.deepEqual(ok(await t.req('PATCH', `/v0/templates/${made.templateId}`, made)), made, 'sent back as read: no change');
    const renamed = ok(await t.req('PATCH', `/v0/templates/${made.templateId}`, { ...made, name: 'Launch', description: '' }));
    assert.equal(renamed.name, 'Launch');
    assert.equal(renamed.description, '');
    assert.ok(renamed.updatedAt > made.updatedAt);
    assert.equal(renamed.createdAt, made.createdAt);
    // The content and actions are the page's as saved: read-only.
    await bad(t.req('PATCH', `/v0/templates/${made.templateId}`, { content: { ...CONTENT, headline: 'x' } }), '/content');
    await bad(t.req('PATCH', `/v0/templates/${made.templateId}`, { builtIn: true }), '/builtIn');
    await bad(t.req('PATCH', `/v0/templates/${made.templateId}`, { name: 'x', extra: 1 }), '/extra');

    // Listed as a summary (issue 45): everything but the content.
    const listed = ok(await t.req('GET', '/v0/templates?limit=100')).items as Json[];
    const { content: _content, ...summary } = renamed;
    assert.deepEqual(
      listed.find((x) => x.templateId === made.templateId),
      summary,
    );

    assert.equal((await t.req('DELETE', `/v0/templates/${made.templateId}`)).status, 204);
    expectProblem(await t.req('GET', `/v0/templates/${made.templateId}`), 404, 'not_found');
    expectProblem(await t.req('PATCH', `/v0/templates/${made.templateId}`, { name: 'x' }), 404, 'not_found');
    expectProblem(await t.req('DELETE', `/v0/templates/${made.templateId}`), 404, 'not_found');
    // The page it came from is untouched.
    assert.equal(ok(await t.req('GET', `/v0/pages/${page.pageId}`)).content.headline, 'Changed');
  });

  test('a page that never set content is saved with the content it shows', async () => {
    const page = ok(await t.req('POST', '/v0/pages', PAGE), 201);
    const made = ok(await save({ pageId: page.pageId, name: 'Bare' }), 201);
    assert.deepEqual(made.content, { headline: 'Source', subheadline: '', sections: [] });
    assert.deepEqual(made.actions, []);
    assert.equal(made.headerActionId, undefined);
    assert.equal(made.description, '');
  });

  test('bounds just inside and outside; the page must be a live page of the tenant (400 at /pageId)', async () => {
    const { pageId } = await newPage();
    ok(await save({ pageId, name: 'n' }), 201);
    ok(await save({ pageId, name: 'n'.repeat(255), description: 'd'.repeat(1000) }), 201);
    await bad(save({ pageId, name: '' }), '/name');
    await bad(save({ pageId, name: 'n'.repeat(256) }), '/name');
    await bad(save({ pageId, name: 'n', description: 'd'.repeat(1001) }), '/description');
    await bad(save({ pageId }), '/name');
    await bad(save({ name: 'n' }), '/pageId');
    await bad(save({ pageId: '', name: 'n' }), '/pageId');
    await bad(save({ pageId: 'p'.repeat(65), name: 'n' }), '/pageId');
    await bad(save({ pageId, name: 'n', content: CONTENT }), '/content');
    await bad(save({ pageId, name: 5 }), '/name');
    await bad(save({ pageId, name: 'n', description: null }), '/description');
    await bad(save({ pageId: 'page_00000000000000000000000000', name: 'n' }), '/pageId');
    await bad(save({ pageId: "'; drop table templates; --", name: 'n' }), '/pageId');
    const gone = await newPage();
    assert.equal((await t.req('DELETE', `/v0/pages/${gone.pageId}`)).status, 204);
    await bad(save({ pageId: gone.pageId, name: 'n' }), '/pageId');
    // Hostile words are stored and answered as given: JSON, never markup.
    const hostile = '<img src=x onerror=alert(1)> "\' {{person.name}} \u202e';
    const made = ok(await save({ pageId, name: hostile, description: hostile }), 201);
    assert.equal(ok(await t.req('GET', `/v0/templates/${made.templateId}`)).name, hostile);
    expectProblem(await t.req('GET', '/v0/templates/template_00000000000000000000000000'), 404, 'not_found');
    expectProblem(await t.req('GET', '/v0/templates?limit=101'), 400, 'validation_failed', ['/limit']);
    expectProblem(await t.req('GET', '/v0/templates?cursor=abc'), 400, 'validation_failed', ['/cursor']);
    expectProblem(await t.req('GET', '/v0/templates?name=x'), 400, 'validation_failed');
  });

  test("another tenant's templates are 404 on every verb, its pages 400, and neither list shows the other's", async () => {
    const other = await t.newTenant('Isolated');
    const mine = ok(await save({ pageId: (await newPage()).pageId, name: 'Mine' }), 201);
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { name: 'Theirs' }],
      ['DELETE', undefined],
    ] as const) {
      expectProblem(await t.req(method, `/v0/templates/${mine.templateId}`, body, { key: other.key }), 404, 'not_found');
    }
    const theirs = ok(await save({ pageId: (await newPage(other.key)).pageId, name: 'Theirs' }, other.key), 201);
    const listOf = async (key?: string) =>
      (ok(await t.req('GET', '/v0/templates?limit=100', undefined, key === undefined ? {} : { key })).items as Json[]).map(
        (x) => x.templateId,
      );
    assert.ok((await listOf()).includes(mine.templateId) && !(await listOf()).includes(theirs.templateId));
    assert.ok((await listOf(other.key)).includes(theirs.templateId) && !(await listOf(other.key)).includes(mine.templateId));
    assert.equal(ok(await t.req('GET', '/v0/templates', undefined, { key: other.key })).totalCount, 5 + 1);
    // Their page cannot be saved as my template.
    const theirPage = await newPage(other.key);
    await bad(save({ pageId: theirPage.pageId, name: 'Stolen' }), '/pageId');
    assert.equal(ok(await t.req('GET', `/v0/templates/${mine.templateId}`)).name, 'Mine');
  });

  test('the list pages through the built-ins and then the own templates, newest first, without a gap or a repeat', async () => {
    const { key } = await t.newTenant('Paging');
    const made: Json[] = [];
    const { pageId } = await newPage(key);
    for (let i = 0; i < 5; i++) made.push(ok(await save({ pageId, name: `T${i}` }, key), 201));
    const all = ok(await t.req('GET', '/v0/templates?limit=100', undefined, { key }));
    const builtIns = all.items.filter((x: Json) => x.builtIn).map((x: Json) => x.name);
    assert.deepEqual(
      all.items.map((x: Json) => x.name),
      [...builtIns, 'T4', 'T3', 'T2', 'T1', 'T0'],
    );
    for (const limit of [1, 2, 3, 4, 5, 7]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const url: string = `/v0/templates?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`;
        const page: Json = ok(await t.req('GET', url, undefined, { key }));
        assert.ok(page.items.length <= limit);
        assert.equal(page.totalCount, all.totalCount);
        seen.push(...page.items.map((x: Json) => x.name));
        assert.equal(page.hasMore, page.nextCursor !== null);
        cursor = page.nextCursor;
      } while (cursor !== null);
      assert.deepEqual(
        seen,
        all.items.map((x: Json) => x.name),
        `limit ${limit}`,
      );
    }
    // A cursor of another list is refused.
    const goals = await t.req('GET', '/v0/goals?limit=1', undefined, { key });
    assert.equal(goals.status, 200);
    const foreign = Buffer.from(JSON.stringify(['goals', '0', '2026-01-01T00:00:00.000Z', 'goal_00000000000000000000000000'])).toString(
      'base64url',
    );
    expectProblem(await t.req('GET', `/v0/templates?cursor=${foreign}`, undefined, { key }), 400, 'validation_failed', ['/cursor']);
  });

  test('template.created and template.deleted carry the template as the API shows it', async () => {
    const { key } = await t.newTenant('Events');
    const made = ok(await save({ pageId: (await newPage(key)).pageId, name: 'Evented' }, key), 201);
    const renamed = ok(await t.req('PATCH', `/v0/templates/${made.templateId}`, { name: 'Renamed' }, { key }));
    assert.equal((await t.req('DELETE', `/v0/templates/${made.templateId}`, undefined, { key })).status, 204);
    const [created] = await eventsOf('template.created', key);
    assert.deepEqual(created.payload.data, made);
    assert.deepEqual(Object.keys(created.payload).sort(), ['data', 'timestamp', 'type']);
    const [deleted] = await eventsOf('template.deleted', key);
    assert.deepEqual(deleted.payload.data, renamed);
    assert.equal(deleted.payload.type, 'template.deleted');
    // Nothing of another tenant's.
    assert.equal(
      (await eventsOf('template.created')).some((e) => e.payload.data.templateId === made.templateId),
      false,
    );
  });
});
