import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Json, startApp, type TestApp } from '../helpers.js';
import { imageAsset } from '../pages/layout-fixtures.js';
import { ok, until } from './common.js';
import { fakeOpenAi } from './fake-openai.js';

// Issue 38, "the page agent fills layouts too", through HTTP: a page whose sections are a hero
// with an image, features with items (one with an image), a FAQ, a quote with a portrait and a
// call to action is regenerated for an audience of a person. The generated version keeps every
// section's layout, image ids, item counts and cta action; its texts are personalised: by the
// template generator (no model), with the page's tokens filled for the person when served; by an
// OpenAI-compatible model (a fake server here), with texts written for the person.

const FORM = { purpose: 'demo', buttonTitle: 'Book a demo', actionType: 'form' };

/** A page with every layout the brief names, its texts holding tokens, and an audience of Ada. */
async function pageWithLayouts(t: TestApp) {
  const [hero, card, portrait] = [await imageAsset(t, t.key, 800, 600), await imageAsset(t), await imageAsset(t, t.key, 80, 80)];
  const page = ok(
    await t.req('POST', '/v0/pages', { name: 'Layouts', title: 'Layouts', pageContext: 'ctx', pageType: 'inbound', actions: [FORM] }),
    201,
  );
  const actionId = page.actions[0].actionId;
  const sections = [
    {
      layout: 'hero',
      heading: 'Hi {{person.firstName | there}}',
      body: 'Built for {{account.name | your team}}.',
      imageAssetId: hero.assetId,
      imageAlt: 'A dashboard',
    },
    {
      layout: 'features',
      heading: 'What you get',
      body: '',
      items: [
        { title: 'Fast for {{person.firstName | you}}', body: 'Pages in a second.', imageAssetId: card.assetId },
        { title: 'Personal', body: 'One page per visitor.' },
        { title: 'Measured', body: 'Every visit counted.' },
      ],
    },
    {
      layout: 'faq',
      heading: 'Questions',
      body: '',
      items: [
        { title: 'Who is it for?', body: 'For {{person.firstName | you}}.' },
        { title: 'Price?', body: 'Free to start.' },
      ],
    },
    {
      layout: 'quote',
      heading: '',
      body: 'It paid for itself.',
      author: 'Grace Hopper',
      role: 'CTO',
      imageAssetId: portrait.assetId,
    },
    { layout: 'cta', heading: 'Ready, {{person.firstName | friend}}?', body: '', actionId },
  ];
  const content = { headline: 'Hello {{person.firstName | there}}', subheadline: '', sections };
  ok(await t.req('PATCH', `/v0/pages/${page.pageId}`, { content }));
  const person = ok(await t.req('POST', '/v0/persons', { name: 'Ada Lovelace', domain: 'analytical.example' }), 201);
  const audience = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, { personId: person.personId }), 201);
  return { page, audience, content, images: { hero, card, portrait } };
}

/** Regenerates the page and waits for the audience's newest version to be published; its content. */
async function regenerated(t: TestApp, pageId: string, audienceId: string): Promise<Json> {
  ok(await t.req('POST', `/v0/pages/${pageId}/regenerate`, {}), 202);
  let version: Json;
  await until('the generated version published', async () => {
    const items = ok(await t.req('GET', `/v0/pages/${pageId}/audiences/${audienceId}/versions`)).items as Json[];
    version = items.find((v) => v.origin === 'generated' || v.origin === 'agent') ?? items[0];
    if (version?.status === 'cancelled') throw new Error(`cancelled: ${version.failureReason}`);
    return version?.status === 'published' && version.versionNumber > 1;
  });
  return version.content;
}

/** What a generator must keep of each section: its layout, images, item count and item images, and action. */
const structure = (sections: Json[]) =>
  sections.map((s) => ({
    layout: s.layout ?? 'text',
    imageAssetId: s.imageAssetId,
    items: s.items?.length,
    itemImages: s.items?.map((i: Json) => i.imageAssetId),
    actionId: s.actionId,
  }));

describe('the template generator (no model) fills layouts', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ AGENT: 'true' }, { agent: { pollMs: 20 } });
  });
  after(async () => t?.close());

  test("keeps every layout, image and item; the texts are the person's once served", async () => {
    const { page, audience, content } = await pageWithLayouts(t);
    const generated = await regenerated(t, page.pageId, audience.audienceId);
    assert.deepEqual(structure(generated.sections), structure(content.sections));
    assert.deepEqual(generated.sections, content.sections, 'the sections copied as they are, tokens included');
    const served = await t.req('GET', `/v0/pages/${page.pageId}/preview?audienceId=${audience.audienceId}`);
    assert.equal(served.status, 200);
    const html = served.text.replaceAll('\n', '');
    for (const text of ['<h1>Hello Ada</h1>', '<h2>Hi Ada</h2>', 'Fast for Ada', 'For Ada.', 'Ready, Ada?']) {
      assert.ok(html.includes(text), `${text} in the served version`);
    }
    assert.equal((html.match(/<img /g) ?? []).length, 3, 'hero, card and portrait');
    assert.match(html, /<details><summary>Who is it for\?<\/summary>/);
  });
});

describe('an OpenAI-compatible model fills layouts', () => {
  let t: TestApp;
  let fake: Awaited<ReturnType<typeof fakeOpenAi>>;
  before(async () => {
    // Answers as a model following the prompt: each section's layout kept, every text written for the person.
    fake = await fakeOpenAi((request) => {
      const name = String(request.inputs?.person?.name ?? 'you');
      const sections = (request.inputs?.page?.content?.sections ?? []) as Json[];
      return {
        content: JSON.stringify({
          headline: `Welcome, ${name}`,
          subheadline: '',
          sections: sections.map((s, i) => ({
            layout: s.layout ?? 'text',
            heading: `Heading ${i} for ${name}`,
            body: `Body ${i} for ${name}`,
            imageAlt: s.imageAlt === undefined ? '' : `Alt ${i} for ${name}`,
            author: s.author ?? '',
            role: s.role ?? '',
            items: (s.items ?? []).map((_: Json, j: number) => ({ title: `Item ${i}.${j} for ${name}`, body: `Answer ${i}.${j}` })),
          })),
        }),
      };
    });
    t = await startApp(
      {
        AGENT: 'true',
        AGENT_GENERATOR: 'openai',
        AGENT_OPENAI_BASE_URL: fake.url,
        AGENT_OPENAI_API_KEY: 'sk-test-layouts-0123456789',
        AGENT_OPENAI_MODEL: 'test-model-1',
      },
      { agent: { pollMs: 20, retryBaseMs: 20 } },
    );
  });
  after(async () => {
    await t?.close();
    await fake?.close();
  });

  test("keeps every layout, image, item count and action; the model's texts are the person's", async () => {
    const { page, audience, content, images } = await pageWithLayouts(t);
    const generated = await regenerated(t, page.pageId, audience.audienceId);
    const [request] = fake.requests;
    assert.ok(request, 'the model was asked');
    // The prompt carries the page's sections with their layouts, and the answer's schema asks for them.
    assert.deepEqual(
      request.inputs.page.content.sections.map((s: Json) => s.layout),
      ['hero', 'features', 'faq', 'quote', 'cta'],
    );
    const system = request.body.messages.find((m: Json) => m.role === 'system').content;
    assert.match(system, /Keep the page's sections in their order, each with its layout/);
    assert.deepEqual(request.body.response_format.json_schema.schema.properties.sections.items.required, [
      'layout',
      'heading',
      'body',
      'imageAlt',
      'author',
      'role',
      'items',
    ]);

    assert.deepEqual(structure(generated.sections), structure(content.sections));
    assert.equal(generated.headline, 'Welcome, Ada Lovelace');
    const [hero, features, faq, quote, cta] = generated.sections;
    assert.deepEqual(
      [hero.heading, hero.imageAssetId, hero.imageAlt],
      ['Heading 0 for Ada Lovelace', images.hero.assetId, 'Alt 0 for Ada Lovelace'],
    );
    assert.deepEqual(features.items, [
      { title: 'Item 1.0 for Ada Lovelace', body: 'Answer 1.0', imageAssetId: images.card.assetId },
      { title: 'Item 1.1 for Ada Lovelace', body: 'Answer 1.1' },
      { title: 'Item 1.2 for Ada Lovelace', body: 'Answer 1.2' },
    ]);
    assert.deepEqual(
      faq.items.map((i: Json) => i.title),
      ['Item 2.0 for Ada Lovelace', 'Item 2.1 for Ada Lovelace'],
    );
    assert.deepEqual([quote.author, quote.role, quote.imageAssetId], ['Grace Hopper', 'CTO', images.portrait.assetId]);
    assert.deepEqual([cta.heading, cta.actionId], ['Heading 4 for Ada Lovelace', page.actions[0].actionId]);
    const served = await t.req('GET', `/v0/pages/${page.pageId}/preview?audienceId=${audience.audienceId}`);
    assert.ok(served.text.includes('<h2>Heading 0 for Ada Lovelace</h2>'));
    assert.equal((served.text.match(/<img /g) ?? []).length, 3, 'hero, card and portrait');
  });
});
