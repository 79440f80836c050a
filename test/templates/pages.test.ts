import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { makeImage } from '../fixtures.js';
import { expectProblem, ok, startApp, type Json, type TestApp } from '../helpers.js';
import { call, httpClient, listening, ok as toolOk, textOf } from '../mcp/helpers.js';
import { audienceOf, fallbackHost, link, unique, visit } from '../site/serve-helpers.js';

// Pages made from templates (issue 38): POST /v0/pages with templateId starts the page with the
// template's content and actions (new action ids, the references following them); each built-in
// makes a page that renders, in the preview and served, for nobody and for a person of an
// account; and the MCP create_page tool takes templateId, beside a list_templates tool.

let t: TestApp;
let base: string;
let client: Client;
before(async () => {
  t = await startApp();
  base = await listening(t);
  client = await httpClient(base, t.key);
});
after(async () => {
  await client.close();
  await t.close();
});

const PAGE = { name: 'From a template', title: 'From a template', pageContext: 'We sell widgets', pageType: 'inbound' };
const builtIns = async (key?: string): Promise<Json[]> =>
  (ok(await t.req('GET', '/v0/templates?include=content&limit=10', undefined, key === undefined ? {} : { key })).items as Json[]).filter(
    (x) => x.builtIn,
  );
const fromTemplate = (templateId: string, extra: Json = {}, key?: string) =>
  t.req('POST', '/v0/pages', { ...PAGE, templateId, ...extra }, key === undefined ? {} : { key });
const bad = async (res: Promise<Json>, path: string) => expectProblem(await res, 400, 'validation_failed', [path]);

/** The page's content is the template's, but for the action ids, which map one to one. */
function assertStartedFrom(page: Json, template: Json): void {
  assert.equal(page.actions.length, template.actions.length);
  const renamed = new Map<string, string>(template.actions.map((a: Json, i: number) => [a.actionId, page.actions[i].actionId]));
  for (const [i, action] of (page.actions as Json[]).entries()) {
    assert.match(action.actionId, /^action_[0-9a-hjkmnp-tv-z]{26}$/, 'a new id of the page');
    assert.notEqual(action.actionId, template.actions[i].actionId);
    assert.deepEqual({ ...action, actionId: '' }, { ...template.actions[i], actionId: '' });
  }
  const followed = (x: Json) => (x.actionId === undefined ? x : { ...x, actionId: renamed.get(x.actionId) });
  // A section's action and (issue 46) a pricing plan's follow the new ids alike.
  const follow = (s: Json) => (s.items === undefined ? followed(s) : { ...followed(s), items: s.items.map(followed) });
  assert.deepEqual(page.content, { ...template.content, sections: template.content.sections.map(follow) });
  assert.equal(page.headerActionId, template.headerActionId === undefined ? undefined : renamed.get(template.headerActionId));
}

/** The document's body as text reads it (the head's CSS has braces of its own). */
const decoded = (html: string) =>
  html
    .slice(html.indexOf('<body'))
    .replace(/&#39;|&#x27;|&apos;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');

describe('a page from a template', () => {
  test('each built-in makes a page that renders in the preview and served, tokens filled or their fallback', async () => {
    const host = await fallbackHost(t);
    const account = ok(await t.req('POST', '/v0/accounts', { name: 'Globex Corporation', domain: 'globex.example' }), 201);
    const person = ok(
      await t.req('POST', '/v0/persons', { name: 'Hank Scorpio', email: 'hank@globex.example', domain: 'globex.example' }),
      201,
    );
    assert.ok(account.accountId && person.personId);
    for (const template of await builtIns()) {
      const page = ok(await fromTemplate(template.templateId, { status: 'published' }), 201);
      assertStartedFrom(page, template);
      assert.deepEqual(ok(await t.req('GET', `/v0/pages/${page.pageId}`)).content, page.content);

      const preview = await t.req('GET', `/v0/pages/${page.pageId}/preview`);
      assert.equal(preview.status, 200, preview.text);
      const previewed = decoded(preview.text);
      assert.doesNotMatch(previewed, /\{\{|\}\}/, `${template.name}: every token filled`);
      assert.match(previewed, /<details/, `${template.name}: its faq`);
      for (const s of template.content.sections as Json[]) {
        for (const item of s.items ?? [])
          assert.ok(
            previewed.includes(
              (item.title ?? item.author)
                .replace(/\{\{[^}]*\}\}/g, '')
                .split('[')[0]
                .trim(),
            ),
          );
      }
      // Issue 46: cards, numbered steps or plans side by side.
      assert.match(previewed, /class="(card|steps g\d|plans g\d)"/, `${template.name}: its grid`);
      assert.match(previewed, /<blockquote/, `${template.name}: its quote`);

      const path = unique('tpl');
      await link(t, path, { targetType: 'page', pageId: page.pageId });
      const served = await visit(t, host, path);
      assert.equal(served.statusCode, 200, served.body);
      const text = decoded(served.body);
      assert.doesNotMatch(text, /\{\{|\}\}/);

      assert.ok(
        text.includes(
          template.content.sections
            .at(-1)
            .heading.replace(/\{\{[^}]*\}\}/g, '')
            .split(',')[0]
            .trim(),
        ),
      );

      // For a person of an account, served at their audience's link: the page's lead form (each
      // built-in's actions are lead forms, which work without a URL), and the outreach page greets
      // them and names their company.
      const audience = await audienceOf(t, page.pageId, { personId: person.personId });
      const personal = unique('hank');
      await link(t, personal, { targetType: 'audience', audienceId: audience.audienceId });
      const toHank = await visit(t, host, personal);
      assert.equal(toHank.statusCode, 200, toHank.body);
      const servedToHank = decoded(toHank.body);
      assert.match(servedToHank, /<form/, `${template.name}: its lead form`);
      assert.doesNotMatch(servedToHank, /\{\{|\}\}/);
      if (template.name === 'Account-based outreach') {
        assert.match(previewed, /Hi there, here's how we'd help your team/);
        const forHank = decoded((await t.req('GET', `/v0/pages/${page.pageId}/preview?audienceId=${audience.audienceId}`)).text);
        assert.match(forHank, /Hi Hank, here's how we'd help Globex Corporation/);
        assert.match(servedToHank, /Hi Hank, here's how we'd help Globex Corporation/);
        assert.match(servedToHank, /Questions teams like Globex Corporation usually ask/);
      }
    }
  });

  test("a saved template's page gets new action ids, its cta and header action following them", async () => {
    const source = ok(
      await t.req('POST', '/v0/pages', {
        ...PAGE,
        actions: [
          { purpose: 'docs', buttonTitle: 'Read the docs', actionType: 'link', url: 'https://example.com/docs' },
          { purpose: 'lead', buttonTitle: 'Call me', actionType: 'form' },
        ],
      }),
      201,
    );
    const [docs, lead] = source.actions;
    const content = {
      headline: 'Ours',
      subheadline: '',
      sections: [
        { heading: 'Read', body: 'The docs.', layout: 'cta', actionId: docs.actionId },
        { heading: 'Talk', body: 'To us.', layout: 'cta', actionId: lead.actionId },
        { heading: 'Plain', body: 'Text.' },
      ],
    };
    ok(await t.req('PATCH', `/v0/pages/${source.pageId}`, { content, headerActionId: lead.actionId }));
    const template = ok(await t.req('POST', '/v0/templates', { pageId: source.pageId, name: 'Ours' }), 201);
    const page = ok(await fromTemplate(template.templateId), 201);
    assertStartedFrom(page, template);
    assert.equal(page.content.sections[1].actionId, page.headerActionId);
    assert.equal(page.status, 'draft');
    assert.equal(page.name, PAGE.name);
    // The template and its source page are unchanged; a second page gets ids of its own.
    assert.deepEqual(ok(await t.req('GET', `/v0/templates/${template.templateId}`)), template);
    const second = ok(await fromTemplate(template.templateId), 201);
    assert.notDeepEqual(
      second.actions.map((a: Json) => a.actionId),
      page.actions.map((a: Json) => a.actionId),
    );
    // Deleting the template leaves its pages as they are.
    assert.equal((await t.req('DELETE', `/v0/templates/${template.templateId}`)).status, 204);
    assert.deepEqual(ok(await t.req('GET', `/v0/pages/${page.pageId}`)).content, page.content);
    await bad(fromTemplate(template.templateId), '/templateId');
  });

  test('an unknown or foreign template is 400 at /templateId; what the template brings is not sent beside it', async () => {
    const [launch] = await builtIns();
    const other = await t.newTenant('Foreign');
    const theirPage = ok(await t.req('POST', '/v0/pages', PAGE, { key: other.key }), 201);
    const theirs = ok(await t.req('POST', '/v0/templates', { pageId: theirPage.pageId, name: 'Theirs' }, { key: other.key }), 201);
    const count = async () => ok(await t.req('GET', '/v0/pages')).totalCount;
    const before = await count();
    await bad(fromTemplate(theirs.templateId), '/templateId');
    await bad(fromTemplate('template_00000000000000000000000000'), '/templateId');
    await bad(fromTemplate('page_00000000000000000000000000'), '/templateId');
    await bad(fromTemplate(''), '/templateId');
    await bad(fromTemplate('t'.repeat(65)), '/templateId');
    await bad(fromTemplate("'; drop table templates; --"), '/templateId');
    await bad(fromTemplate(launch.templateId, { content: launch.content }), '/content');
    await bad(fromTemplate(launch.templateId, { actions: [] }), '/actions');
    await bad(fromTemplate(launch.templateId, { headerActionId: null }), '/headerActionId');
    assert.equal(await count(), before, 'nothing made');
    // The built-ins are every tenant's.
    assertStartedFrom(ok(await fromTemplate(launch.templateId, {}, other.key), 201), launch);
    assert.ok(ok(await fromTemplate(theirs.templateId, {}, other.key), 201).pageId);
  });

  test("a saved template naming an image deleted since is 400 at /templateId, not at the request's /content", async () => {
    const upload = await t.app.inject({
      method: 'POST',
      url: '/v0/files',
      headers: { 'x-api-key': t.key, 'content-type': 'image/png' },
      payload: await makeImage('png', 320, 200),
    });
    assert.equal(upload.statusCode, 201, upload.body);
    const asset = ok(await t.req('POST', '/v0/assets', { assetType: 'image', name: 'Shot', fileId: JSON.parse(upload.body).fileId }), 201);
    const section = { heading: 'See it', body: 'Here.', layout: 'image_text', imageAssetId: asset.assetId, imageAlt: 'The product' };
    const source = ok(
      await t.req('POST', '/v0/pages', { ...PAGE, content: { headline: 'Pictured', subheadline: '', sections: [section] } }),
      201,
    );
    const template = ok(await t.req('POST', '/v0/templates', { pageId: source.pageId, name: 'Pictured' }), 201);
    assert.deepEqual(template.content.sections[0], section);
    assert.deepEqual(ok(await fromTemplate(template.templateId), 201).content.sections[0], section, 'the same tenant may use its image');
    assert.equal((await t.req('DELETE', `/v0/assets/${asset.assetId}`)).status, 204);
    const refused = await fromTemplate(template.templateId);
    expectProblem(refused, 400, 'validation_failed', ['/templateId']);
    assert.match(refused.body.errors[0].message, /\/content\/sections\/0\/imageAssetId/);
    assert.equal(refused.body.errors.length, 1);
  });

  test('a retried create with the same Idempotency-Key makes one page', async () => {
    const [launch] = await builtIns();
    const headers = { 'idempotency-key': 'tpl-retry-0001' };
    const first = ok(await t.req('POST', '/v0/pages', { ...PAGE, templateId: launch.templateId }, { headers }), 201);
    const again = ok(await t.req('POST', '/v0/pages', { ...PAGE, templateId: launch.templateId }, { headers }), 201);
    assert.deepEqual(again, first);
  });
});

describe('MCP', () => {
  test('list_templates lists them; create_page takes templateId', async () => {
    const { tools } = await client.listTools();
    const createPage = tools.find((x) => x.name === 'create_page');
    assert.equal((createPage?.inputSchema.properties?.templateId as Json)?.type, 'string');
    assert.equal(tools.find((x) => x.name === 'list_templates')?.annotations?.readOnlyHint, true);

    const listed = await toolOk(client, 'list_templates', { limit: 2, include: 'content' });
    assert.equal(listed.items.length, 2);
    assert.equal(listed.hasMore, true);
    const [, outreach] = listed.items;
    assert.equal(outreach.name, 'Account-based outreach');
    const page = await toolOk(client, 'create_page', { ...PAGE, templateId: outreach.templateId });
    assertStartedFrom(page, outreach);
    assert.deepEqual(ok(await t.req('GET', `/v0/pages/${page.pageId}`)), page);

    const refused = await call(client, 'create_page', { ...PAGE, templateId: 'template_00000000000000000000000000' });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /templateId/);
  });
});
