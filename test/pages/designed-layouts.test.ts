import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, type Json, ok, startApp, type TestApp } from '../helpers.js';
import { imageAsset } from './layout-fixtures.js';

// Issue 46 §1–§3: a hero's variant, every section's band, and the stats, steps, testimonials and
// pricing layouts, checked at their pointers wherever content is written.

let t: TestApp;
let image: string;
let page: Json;
let actionId: string;
before(async () => {
  t = await startApp();
  image = (await imageAsset(t)).assetId;
  page = ok(
    await t.req('POST', '/v0/pages', {
      name: 'Designed',
      title: 'Designed',
      pageContext: 'ctx',
      pageType: 'inbound',
      actions: [{ purpose: 'trial', buttonTitle: 'Try it', actionType: 'form' }],
    }),
    201,
  );
  actionId = page.actions[0].actionId;
});
after(async () => {
  await t.close();
});

const patch = (sections: Json[]) => t.req('PATCH', `/v0/pages/${page.pageId}`, { content: { headline: 'H', subheadline: '', sections } });
const accepted = async (sections: Json[]) => {
  const saved = ok(await patch(sections)).content.sections as Json[];
  assert.deepEqual(saved, sections, 'stored as written');
};
const refused = async (sections: Json[], pointer: string) => expectProblem(await patch(sections), 400, 'validation_failed', [pointer]);
const n = (count: number, item: (i: number) => Json) => Array.from({ length: count }, (_, i) => item(i));
const section = (layout: string, items: Json[], extra: Json = {}) => [{ layout, heading: '', body: '', items, ...extra }];

const ITEMS = {
  stats: [2, 6, (i) => ({ value: `${i}%`, title: `stat ${i}` })],
  steps: [2, 8, (i) => ({ title: `step ${i}`, body: `do ${i}` })],
  testimonials: [2, 9, (i) => ({ body: `quote ${i}`, author: `person ${i}` })],
  pricing: [1, 4, (i) => ({ title: `plan ${i}`, price: `$${i}`, body: `- feature ${i}` })],
} satisfies Record<string, [number, number, (i: number) => Json]>;

describe('designed layouts', () => {
  test('item counts: stats 2–6, steps 2–8, testimonials 2–9, pricing 1–4, just inside and just outside', async () => {
    for (const [layout, [min, max, item]] of Object.entries(ITEMS)) {
      await accepted(section(layout, n(min, item)));
      await accepted(section(layout, n(max, item)));
      await refused(section(layout, n(min - 1, item)), '/content/sections/0/items');
      await refused(section(layout, n(max + 1, item)), '/content/sections/0/items');
    }
  });

  test("each item's fields: optional ones accepted, a missing required one or one of another layout at its pointer", async () => {
    await accepted(
      section('testimonials', [
        { body: 'q', author: 'a', role: 'CTO, Acme', imageAssetId: image },
        { body: 'q', author: 'b' },
      ]),
    );
    await accepted(
      section('pricing', [
        { title: 'Team', price: '$12', period: 'per month', body: '- All', actionId, highlighted: true },
        { title: 'Free', price: '$0', body: '', highlighted: false },
      ]),
    );
    const stat = ITEMS.stats[2];
    await refused(section('stats', [stat(0), { title: 'no value' }]), '/content/sections/0/items/1/value');
    await refused(section('stats', [stat(0), { value: '1', title: 't', body: 'x' }]), '/content/sections/0/items/1/body');
    await refused(section('steps', [{ title: 'a', body: 'b' }, { title: 'no body' }]), '/content/sections/0/items/1/body');
    await refused(
      section('steps', [
        { title: 'a', body: 'b' },
        { title: 'c', body: 'd', imageAssetId: image },
      ]),
      '/content/sections/0/items/1/imageAssetId',
    );
    await refused(section('testimonials', [{ body: 'q', author: 'a' }, { body: 'no author' }]), '/content/sections/0/items/1/author');
    await refused(
      section('testimonials', [
        { body: 'q', author: 'a', title: 't' },
        { body: 'q', author: 'b' },
      ]),
      '/content/sections/0/items/0/title',
    );
    await refused(section('pricing', [{ title: 'p', body: '' }]), '/content/sections/0/items/0/price');
    await refused(section('pricing', [{ title: 'p', price: '1', body: '', author: 'x' }]), '/content/sections/0/items/0/author');
    await refused(
      section('features', [
        { title: 'a', body: 'b', value: '1' },
        { title: 'c', body: 'd' },
      ]),
      '/content/sections/0/items/0/value',
    );
  });

  test('text lengths: a value and a price at most 20 characters, a period 40', async () => {
    await accepted(section('stats', [{ value: 'x'.repeat(20), title: 't' }, ITEMS.stats[2](1)]));
    await refused(section('stats', [{ value: 'x'.repeat(21), title: 't' }, ITEMS.stats[2](1)]), '/content/sections/0/items/0/value');
    await accepted(section('pricing', [{ title: 't', price: 'p'.repeat(20), period: 'q'.repeat(40), body: '' }]));
    await refused(section('pricing', [{ title: 't', price: 'p'.repeat(21), body: '' }]), '/content/sections/0/items/0/price');
    await refused(section('pricing', [{ title: 't', price: 'p', period: 'q'.repeat(41), body: '' }]), '/content/sections/0/items/0/period');
    await refused(
      section('testimonials', [{ body: 'q', author: 'a'.repeat(201) }, ITEMS.testimonials[2](1)]),
      '/content/sections/0/items/0/author',
    );
  });

  test("pricing: a plan's action is one of the page's, and at most one plan is highlighted", async () => {
    const plan = ITEMS.pricing[2];
    await refused(section('pricing', [{ ...plan(0), actionId: 'action_unknown' }]), '/content/sections/0/items/0/actionId');
    await refused(
      section('pricing', [
        { ...plan(0), highlighted: true },
        { ...plan(1), highlighted: false },
        { ...plan(2), highlighted: true },
      ]),
      '/content/sections/0/items/2/highlighted',
    );
    await refused(section('pricing', [{ ...plan(0), highlighted: 'yes' }]), '/content/sections/0/items/0/highlighted');
  });

  test("a testimonial's picture is a live image asset of the tenant", async () => {
    const other = await t.newTenant('Elsewhere');
    const theirs = (await imageAsset(t, other.key)).assetId;
    await refused(
      section('testimonials', [ITEMS.testimonials[2](0), { body: 'q', author: 'b', imageAssetId: theirs }]),
      '/content/sections/0/items/1/imageAssetId',
    );
  });

  test("a hero's variant, and a band on every layout", async () => {
    const hero = (extra: Json) => [{ layout: 'hero', heading: '', body: '', imageAssetId: image, imageAlt: '', ...extra }];
    for (const variant of ['split', 'background', 'centered']) await accepted(hero({ variant }));
    await refused(hero({ variant: 'banner' }), '/content/sections/0/variant');
    await refused([{ heading: '', body: '', variant: 'split' }], '/content/sections/0/variant');
    await refused(section('stats', n(2, ITEMS.stats[2]), { variant: 'centered' }), '/content/sections/0/variant');
    for (const background of ['plain', 'muted', 'brand', 'dark']) {
      await accepted([
        { heading: 'a', body: '', background },
        ...hero({ background }),
        ...section('steps', n(2, ITEMS.steps[2]), { background }),
        { layout: 'cta', heading: '', body: '', actionId, background },
      ]);
    }
    await refused([{ heading: '', body: '', background: 'red' }], '/content/sections/0/background');
  });

  test('a page from the pricing template: its plans name the new page’s actions', async () => {
    const templates = ok(await t.req('GET', '/v0/templates?limit=10&include=content')).items as Json[];
    const pricing = templates.find((x) => x.name === 'Pricing page');
    assert.ok(pricing, 'a fifth built-in, "Pricing page"');
    const layouts = (pricing.content.sections as Json[]).map((s) => s.layout);
    for (const layout of ['stats', 'pricing', 'testimonials', 'faq']) assert.ok(layouts.includes(layout), layout);
    const made = ok(
      await t.req('POST', '/v0/pages', { name: 'P', title: 'P', pageContext: 'c', pageType: 'inbound', templateId: pricing.templateId }),
      201,
    );
    const ids = (made.actions as Json[]).map((a) => a.actionId);
    const plans = (made.content.sections as Json[]).find((s) => s.layout === 'pricing').items as Json[];
    assert.equal(plans.filter((p) => p.highlighted).length, 1);
    for (const plan of plans) assert.ok(ids.includes(plan.actionId), `${plan.title}: ${plan.actionId}`);
    for (const id of ids) assert.doesNotMatch(id, /builtin/, 'the page has actions of its own');
  });
});
