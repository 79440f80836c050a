import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Json, ok, startApp, type TestApp } from '../helpers.js';
import { everyLayout, imageAsset } from '../pages/layout-fixtures.js';
import { audienceOf, fallbackHost, link, publishedPage, unique, visit } from '../site/serve-helpers.js';

// Issue 46 §1–§3 as served: the headline in the first hero, one h1 in every case, bands, balanced
// grids' column counts, and the four new layouts' markup, escaped and with tokens filled.

let t: TestApp;
let host: string;
let image: string;
before(async () => {
  t = await startApp();
  host = await fallbackHost(t);
  image = (await imageAsset(t, t.key, 800, 600)).assetId;
});
after(async () => {
  await t.close();
});

const HOSTILE = `"'><script>alert(1)</script>`;
const LINK = { purpose: 'docs', buttonTitle: 'Read the docs', actionType: 'link', url: 'https://example.com/docs' };
const FORM = { purpose: 'trial', buttonTitle: 'Try it', actionType: 'form' };
const n = (count: number, item: (i: number) => Json) => Array.from({ length: count }, (_, i) => item(i));

/** A published page of `sections` (a function of the page's action ids), served; its markup without Markdown's line breaks. */
async function served(sections: (actions: string[]) => Json[], fields: Json = {}, audience?: Json) {
  const page = await publishedPage(t, { actions: [LINK, FORM] });
  const actions = (page.actions as Json[]).map((a) => a.actionId as string);
  const content = { headline: 'The headline', subheadline: 'The subheadline', sections: sections(actions), ...fields };
  ok(await t.req('PATCH', `/v0/pages/${page.pageId}`, { headerActionId: actions[0], content }));
  const a = audience ? await audienceOf(t, page.pageId, audience) : undefined;
  const path = unique('designed');
  await link(t, path, a ? { targetType: 'audience', audienceId: a.audienceId } : { targetType: 'page', pageId: page.pageId });
  const res = await visit(t, host, path);
  assert.equal(res.statusCode, 200, res.body);
  return res.body.replaceAll('\n', '');
}

const hero = (extra: Json = {}) => ({ layout: 'hero', heading: '', body: 'Hero body', imageAssetId: image, imageAlt: 'alt', ...extra });
const h1s = (html: string) => html.match(/<h1>/g)?.length ?? 0;

describe('designed pages as served', () => {
  test('a first hero with no heading carries the headline and subheadline: the one h1, with the header button', async () => {
    const html = await served(() => [hero({ variant: 'background' }), { heading: 'Next', body: 'Text' }]);
    assert.equal(h1s(html), 1);
    assert.ok(!html.includes('<div class="hero">'), 'no headline above the hero');
    assert.match(
      html,
      /<section class="s l-hero v-background"[^>]*><div class="l-text"><h1>The headline<\/h1><p class="sub">The subheadline<\/p><p>Hero body<\/p><a class="button" href="https:\/\/example.com\/docs">Read the docs<\/a><\/div><div class="l-img"><picture><source type="image\/webp" [^>]*sizes="100vw"><img [^>]*fetchpriority="high"/,
    );
  });

  test('otherwise the headline stays above the sections, still the one h1; a Markdown h1 in a section is an h2', async () => {
    for (const sections of [
      [hero({ heading: 'A heading of its own', variant: 'centered' })],
      [{ heading: 'First', body: '# Big\n\ntext' }, hero()],
      [],
    ]) {
      const html = await served(() => sections);
      assert.equal(h1s(html), 1, JSON.stringify(sections));
      assert.match(html, /<main><div class="hero"><h1>The headline<\/h1><p class="sub">The subheadline<\/p><\/div>/);
    }
    const html = await served(() => [{ heading: 'First', body: '# Big\n\ntext' }, hero()]);
    assert.ok(html.includes('<h2>Big</h2>'), 'the Markdown heading is an h2');
    assert.match(html, /<section class="s l-hero"[^>]*><div class="l-text"><p>Hero body<\/p>/, 'a later hero without a heading shows none');
    const centered = await served(() => [hero({ heading: 'Own', variant: 'centered' })]);
    assert.match(centered, /<section class="s l-hero v-centered"[^>]*><div class="l-text"><h2>Own<\/h2>/);
  });

  test('bands: each background as a class, none for plain; the brand band takes the text colour that reads on it', async () => {
    const html = await served(() =>
      ['plain', 'muted', 'brand', 'dark'].map((background) => ({ heading: background, body: '', background })),
    );
    assert.match(html, /<section class="s"[^>]*><h2>plain<\/h2>/);
    for (const band of ['muted', 'brand', 'dark']) assert.match(html, new RegExp(`<section class="s b-${band}"[^>]*><h2>${band}</h2>`));
    ok(await t.req('PATCH', '/v0/site_settings', { brandColor: '#1d4ed8', backgroundColor: '#ffffff', textColor: '#1f2328' }));
    const branded = await served(() => [{ heading: 'b', body: '', background: 'brand' }]);
    assert.match(branded, /\.b-brand\{background:#1d4ed8;color:#ffffff\}/, 'white on a dark brand colour');
    assert.match(branded, /\.b-muted\{background:#[0-9a-f]{6}\}/);
    ok(await t.req('PATCH', '/v0/site_settings', { brandColor: '#0b57d0' }));
  });

  test('grids: 4 → 4 columns, 5 → 3, 7 → 4, 6 → 3, 1 plan → 1; a stats, steps, testimonials and pricing section each as designed', async () => {
    const html = await served(([docs, trial]) => [
      { layout: 'features', heading: 'F', body: '', items: n(4, (i) => ({ title: `f${i}`, body: 'b' })) },
      { layout: 'stats', heading: 'S', body: '', items: n(5, (i) => ({ value: `${i}×`, title: `s${i}` })) },
      { layout: 'steps', heading: 'P', body: '', items: n(7, (i) => ({ title: `p${i}`, body: 'b' })) },
      {
        layout: 'testimonials',
        heading: 'T',
        body: '',
        items: n(6, (i) => ({ body: `q${i}`, author: `a${i}`, ...(i ? {} : { role: 'CTO', imageAssetId: image }) })),
      },
      { layout: 'pricing', heading: 'One plan', body: '', items: [{ title: 'Only', price: '$9', body: '- x', actionId: trial }] },
      {
        layout: 'pricing',
        heading: 'Plans',
        body: '',
        items: [
          { title: 'Free', price: '$0', period: 'forever', body: '- One user', actionId: docs },
          { title: 'Team', price: '$12', body: '- All', highlighted: true },
        ],
      },
    ]);
    assert.match(html, /<ul class="cards g4"><li class="card"><h3>f0<\/h3>/);
    assert.match(html, /<section class="s l-wide"[^>]*><h2>S<\/h2><ul class="stats g3"><li><strong>0×<\/strong><span>s0<\/span><\/li>/);
    assert.match(html, /<ol class="steps g4"><li><h3>p0<\/h3><p>b<\/p><\/li>/);
    assert.match(
      html,
      /<ul class="cards g3"><li class="card"><figure class="quote"><blockquote><p>q0<\/p><\/blockquote><figcaption>(?:<picture><source [^>]+>)?<img [^>]*alt=""[^>]*>(?:<\/picture>)?<span><strong>a0<\/strong><br>CTO<\/span><\/figcaption><\/figure><\/li><li class="card"><figure class="quote"><blockquote><p>q1<\/p><\/blockquote><figcaption><span><strong>a1<\/strong><\/span>/,
    );
    // A plan's button: a link, or the way to its form (shown once, among the page's actions).
    assert.match(
      html,
      /<ul class="plans g1"><li class="plan"><h3>Only<\/h3><p class="price"><strong>\$9<\/strong><\/p><ul><li>x<\/li><\/ul><a class="button" href="#pam-form-action_/,
    );
    assert.match(
      html,
      /<ul class="plans g2"><li class="plan"><h3>Free<\/h3><p class="price"><strong>\$0<\/strong> <span>forever<\/span><\/p><ul><li>One user<\/li><\/ul><a class="button" href="https:\/\/example.com\/docs">Read the docs<\/a><\/li><li class="plan hi"><h3>Team<\/h3>/,
    );
    assert.equal(html.match(/<form method="post"/g)?.length, 1, 'the form shown once');
  });

  test('hostile text in every new field is escaped, and tokens are filled in each', async () => {
    const person = ok(await t.req('POST', '/v0/persons', { name: 'Jane Doe' }), 201);
    const v = (field: string) => `[${field}] {{person.firstName | there}} ${HOSTILE}`;
    const short = (field: string) => `${field}<{{person.name}}`;
    const html = await served(
      () => [
        hero({ variant: 'background', body: v('hero body'), imageAlt: v('hero alt') }),
        { layout: 'stats', heading: v('stats heading'), body: '', items: n(2, (i) => ({ value: short(`v${i}`), title: v(`stat ${i}`) })) },
        { layout: 'steps', heading: '', body: '', items: n(2, (i) => ({ title: v(`step ${i}`), body: v(`step body ${i}`) })) },
        {
          layout: 'testimonials',
          heading: '',
          body: '',
          items: n(2, (i) => ({ body: v(`quote ${i}`), author: v(`author ${i}`), role: v(`role ${i}`) })),
        },
        {
          layout: 'pricing',
          heading: '',
          body: '',
          items: [{ title: v('plan'), price: short('p'), period: short('q'), body: v('plan body') }],
        },
      ],
      { headline: v('headline'), subheadline: v('subheadline') },
      { personId: person.personId },
    );
    assert.ok(!html.includes('<script>alert'), 'no hostile script');
    for (const field of [
      'headline',
      'subheadline',
      'hero body',
      'hero alt',
      'stats heading',
      'stat 1',
      'step 0',
      'step body 1',
      'quote 1',
      'author 0',
      'role 1',
      'plan',
      'plan body',
    ]) {
      assert.ok(html.includes(`[${field}] Jane`), `${field}: shown, its token filled`);
    }
    for (const shown of ['v1&lt;Jane Doe', 'p&lt;Jane Doe', 'q&lt;Jane Doe'])
      assert.ok(html.includes(shown), `${shown}: a value, price and period escaped and filled`);
    assert.ok(!html.includes('{{'), 'no token left');
    assert.equal(h1s(html), 1);
  });

  test('a page of every layout, a background hero and bands is at most 30 KB of HTML and CSS', async () => {
    const html = await served(([docs, trial]) => [
      hero({ variant: 'background' }),
      ...everyLayout([image, image], trial ?? '')
        .slice(1)
        .map((s, i) => ({ ...s, background: ['muted', 'brand', 'dark', 'plain'][i % 4] })),
      { layout: 'stats', heading: 'S', body: '', items: n(4, (i) => ({ value: `${i}%`, title: `Stat ${i}` })) },
      { layout: 'steps', heading: 'P', body: '', items: n(4, (i) => ({ title: `Step ${i}`, body: 'Do it.' })) },
      { layout: 'testimonials', heading: 'T', body: '', items: n(3, (i) => ({ body: `Quote ${i}.`, author: `A${i}`, role: 'CTO' })) },
      {
        layout: 'pricing',
        heading: 'Plans',
        body: '',
        items: n(3, (i) => ({ title: `Plan ${i}`, price: `$${i}`, body: '- a\n- b', actionId: docs, highlighted: i === 1 })),
      },
    ]);
    const bytes = Buffer.byteLength(html, 'utf8');
    assert.ok(bytes <= 30 * 1024, `${bytes} bytes`);
  });
});
