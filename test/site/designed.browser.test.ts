import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { available, CHROMIUM, skip, USER_AGENT } from '../browser.js';
import { type Json, ok, startApp, type TestApp } from '../helpers.js';
import { imageAsset } from '../pages/layout-fixtures.js';
import { link, publishedPage, unique } from './serve-helpers.js';

// Issue 46 §8, in real headless Chromium at 1385×900 and 390×844: the hero's width, the one h1
// inside the hero, balanced rows, the bands' contrast (axe) and no sideways scroll on a phone, on a
// page of every new layout and band and on a page of each built-in template. Each page is also
// photographed (test-artifacts/designed/, git-ignored) for a person to look at.

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const SHOTS = path.resolve('test-artifacts/designed');
const SIZES = [
  { width: 1385, height: 900 },
  { width: 390, height: 844 },
] as const;

let t: TestApp;
let browser: Browser;
let origin: string;
/** The pages to look at: a name for the screenshot and the path it is served at. */
const pages: { name: string; path: string; showcase?: boolean }[] = [];

const n = (count: number, item: (i: number) => Json) => Array.from({ length: count }, (_, i) => item(i));

before(async () => {
  if (skip) return;
  assert.ok(available, `no browser at ${CHROMIUM}: .ci/run installs Debian's chromium`);
  t = await startApp({ FILE_STORE: 'database' });
  const { port } = new URL(await t.app.listen({ port: 0, host: '127.0.0.1' }));
  const fallback = ((await t.req('GET', '/v0/tenant_domains')).body.items as Json[]).find((d) => d.isFallback).hostname;
  origin = `http://${fallback}:${port}`;
  const image = (await imageAsset(t, t.key, 1600, 900, 'Hero')).assetId;
  const face = (await imageAsset(t, t.key, 120, 120, 'Face')).assetId;
  const showcase = await publishedPage(t, {
    actions: [
      { purpose: 'trial', buttonTitle: 'Start a trial', actionType: 'form' },
      { purpose: 'docs', buttonTitle: 'Read the docs', actionType: 'link', url: 'https://example.com/docs' },
    ],
  });
  const [trial, docs] = (showcase.actions as Json[]).map((a) => a.actionId as string);
  const sections = [
    { layout: 'hero', variant: 'background', heading: '', body: 'Plan, track and report in one place.', imageAssetId: image, imageAlt: '' },
    {
      layout: 'stats',
      background: 'brand',
      heading: 'In numbers',
      body: '',
      items: n(5, (i) => ({ value: `${i + 2}×`, title: `Stat ${i}` })),
    },
    {
      layout: 'features',
      heading: 'Four cards',
      body: '',
      items: n(4, (i) => ({ title: `Card ${i}`, body: 'A short line about it.' })),
    },
    {
      layout: 'steps',
      background: 'muted',
      heading: 'Seven steps',
      body: '',
      items: n(7, (i) => ({ title: `Step ${i + 1}`, body: 'Do this next.' })),
    },
    {
      layout: 'testimonials',
      background: 'dark',
      heading: 'Customers',
      body: 'What they say, [in their words](https://example.com/stories).',
      items: n(3, (i) => ({
        body: `Quote ${i}: it changed how we work.`,
        author: `Person ${i}`,
        ...(i === 0 ? { role: 'CTO', imageAssetId: face } : {}),
      })),
    },
    {
      layout: 'pricing',
      heading: 'Plans',
      body: '',
      items: [
        { title: 'Free', price: '$0', body: '- One user', actionId: docs },
        { title: 'Team', price: '$12', period: 'per user / month', body: '- Everyone', actionId: trial, highlighted: true },
        { title: 'Enterprise', price: 'Custom', body: '- Single sign-on' },
      ],
    },
    { layout: 'faq', heading: 'Questions', body: '', items: [{ title: 'Is it free?', body: 'To start.' }] },
    { layout: 'cta', background: 'brand', heading: 'Ready?', body: 'Start today.', actionId: trial },
  ];
  ok(
    await t.req('PATCH', `/v0/pages/${showcase.pageId}`, {
      headerActionId: trial,
      content: { headline: 'Everything in one place', subheadline: 'For teams that ship.', sections },
    }),
  );
  pages.push({ name: 'showcase', path: unique('showcase'), showcase: true });
  await link(t, pages[0]?.path ?? '', { targetType: 'page', pageId: showcase.pageId });
  const split = await publishedPage(t, {
    content: {
      headline: 'A split hero',
      subheadline: 'Text beside the image.',
      sections: [{ layout: 'hero', heading: '', body: 'Beside it.', imageAssetId: image, imageAlt: 'The product' }],
    },
  });
  pages.push({ name: 'split-hero', path: unique('split') });
  await link(t, pages[1]?.path ?? '', { targetType: 'page', pageId: split.pageId });
  const templates = ok(await t.req('GET', '/v0/templates?limit=20')).items as Json[];
  for (const template of templates.filter((x) => x.builtIn)) {
    const page = ok(
      await t.req('POST', '/v0/pages', {
        name: template.name,
        title: template.name,
        pageContext: 'ctx',
        pageType: 'inbound',
        templateId: template.templateId,
        status: 'published',
      }),
      201,
    );
    const name = String(template.name)
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-');
    pages.push({ name: `template-${name}`, path: unique(name) });
    await link(t, pages.at(-1)?.path ?? '', { targetType: 'page', pageId: page.pageId });
  }
  assert.equal(pages.length, 7, 'the showcase, the split hero and five built-ins');
  mkdirSync(SHOTS, { recursive: true });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
after(async () => {
  await browser?.close();
  await t?.close();
});

/** Each grid's items counted per row (items sharing a top edge), in order. */
const rowsOf = (tab: Page) =>
  tab.evaluate(`[...document.querySelectorAll('.cards,.stats,.steps,.plans')].map((list) => {
    const rows = new Map();
    for (const li of list.children) {
      const top = Math.round(li.getBoundingClientRect().top);
      rows.set(top, (rows.get(top) ?? 0) + 1);
    }
    return [...rows.values()];
  })`) as Promise<number[][]>;
const clientWidth = (tab: Page) => tab.evaluate('document.documentElement.clientWidth') as Promise<number>;

async function axeSerious(tab: Page) {
  await tab.evaluate(AXE);
  const violations = (await tab.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((result) =>
    result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) })))`)) as {
    id: string;
    impact: string;
  }[];
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

describe('pages that look designed, in a real browser', { skip }, () => {
  for (const size of SIZES) {
    const wide = size.width >= 1024;
    test(`${size.width}×${size.height}: one h1 in the hero, the hero's width, balanced rows, bands' contrast, no sideways scroll`, {
      timeout: 240_000,
    }, async () => {
      const context = await browser.newContext({ userAgent: USER_AGENT, viewport: size });
      try {
        const offDomain: string[] = [];
        await context.route('**/*', (route) => {
          if (new URL(route.request().url()).origin === origin) return route.continue();
          offDomain.push(route.request().url());
          return route.abort();
        });
        const tab = await context.newPage();
        for (const shown of pages) {
          await tab.goto(`${origin}${shown.path}`, { waitUntil: 'load' });
          await tab.screenshot({ path: path.join(SHOTS, `${shown.name}-${size.width}x${size.height}.png`), fullPage: true });
          const where = `${shown.name} at ${size.width}`;
          // One h1, and it is in the hero: the first hero section, or the headline's own block above the sections.
          assert.equal(await tab.locator('h1').count(), 1, `${where}: one h1`);
          assert.equal(await tab.locator(':is(.l-hero, .hero) h1').count(), 1, `${where}: the h1 in the hero`);
          const viewportWidth = await clientWidth(tab);
          const scrollWidth = (await tab.evaluate('document.documentElement.scrollWidth')) as number;
          assert.ok(scrollWidth <= viewportWidth, `${where}: no sideways scroll (${scrollWidth} > ${viewportWidth})`);
          assert.deepEqual(await axeSerious(tab), [], `${where}: axe`);
          for (const rows of await rowsOf(tab)) {
            const total = rows.reduce((a, b) => a + b, 0);
            if (wide && total > 1) assert.ok((rows.at(-1) ?? 0) >= 2, `${where}: never one alone on the last row (${rows.join(' + ')})`);
            if (!wide)
              assert.ok(
                rows.every((r) => r === 1),
                `${where}: one item a row on a phone (${rows.join(' + ')})`,
              );
          }
          if (!shown.showcase && shown.name !== 'split-hero') {
            // A template's grid uses the wide container, not the reading column.
            const grid = await tab.locator(':is(.cards, .stats, .steps, .plans)').first().boundingBox();
            if (wide) assert.ok(grid && grid.width > 1000 && grid.width <= 1200, `${where}: a grid ${grid?.width} px wide`);
          }
        }
        assert.deepEqual(offDomain, [], 'nothing off the page domain');
        // The showcase: 5 stats are 3 + 2, 4 cards 4 (or 2 + 2), 7 steps 4 + 3, 3 testimonials and 3 plans in one row.
        await tab.goto(`${origin}${pages[0]?.path}`, { waitUntil: 'load' });
        if (wide) assert.deepEqual(await rowsOf(tab), [[3, 2], [4], [4, 3], [3], [3]]);
        const hero = (await tab.locator('.l-hero').boundingBox()) ?? { x: -1, y: 0, width: 0, height: 0 };
        const viewportWidth = await clientWidth(tab);
        assert.equal(Math.round(hero.x), 0, 'a background hero starts at the window’s edge');
        assert.ok(Math.abs(hero.width - viewportWidth) <= 1, `a background hero is the window's width (${hero.width} of ${viewportWidth})`);
        if (wide) assert.ok(hero.height <= size.height, `no taller than the window (${hero.height})`);
        // The headline and subheadline are in the hero, with the header action's button.
        assert.equal(await tab.locator('.l-hero h1').textContent(), 'Everything in one place');
        assert.equal(await tab.locator('.l-hero .sub').textContent(), 'For teams that ship.');
        // Over the image, not under it: what is drawn at the headline's middle is the headline.
        const onTop = await tab.evaluate(`(() => {
          const h1 = document.querySelector('.l-hero h1');
          const box = h1.getBoundingClientRect();
          return h1.contains(document.elementFromPoint(box.x + 10, box.y + box.height / 2));
        })()`);
        assert.ok(onTop, 'the headline drawn over the image');
        const button = await tab.locator('.l-hero .button').boundingBox();
        assert.ok(button && button.y + button.height <= hero.y + hero.height, 'the action inside the hero');
        if (wide) assert.ok(button && button.y + button.height <= size.height, 'the action on the first screen');
        // The image is behind the text, edge to edge.
        const img = await tab.locator('.l-hero img').boundingBox();
        assert.ok(img && Math.abs(img.width - hero.width) <= 1 && Math.abs(img.height - hero.height) <= 1, 'the image fills the hero');
        // Text sections keep a reading width; the wide layouts a container of at most 1,200 px.
        const faq = await tab.locator('.faq').boundingBox();
        const cards = await tab.locator('.cards').first().boundingBox();
        if (wide) {
          assert.ok(faq && faq.width <= 760, `the FAQ at a reading width (${faq?.width})`);
          assert.ok(cards && cards.width > 1000 && cards.width <= 1200, `the cards up to 1,200 px (${cards?.width})`);
        }
        // The split hero: text and image side by side in the wide container on a desktop, stacked on a phone.
        await tab.goto(`${origin}${pages[1]?.path}`, { waitUntil: 'load' });
        const text = (await tab.locator('.l-hero .l-text').boundingBox()) ?? { x: 0, y: 0, width: 0, height: 0 };
        const picture = (await tab.locator('.l-hero .l-img').boundingBox()) ?? { x: 0, y: 0, width: 0, height: 0 };
        if (wide) {
          assert.ok(picture.x >= text.x + text.width - 1 && Math.abs(picture.y - text.y) < picture.height, 'side by side');
          assert.ok(picture.x + picture.width - text.x > 1000, 'across the wide container');
          assert.ok(((await tab.locator('.l-hero').boundingBox())?.height ?? 0) <= size.height, 'within the first screen');
        } else assert.ok(picture.y >= text.y + text.height - 1, 'stacked on a phone');
      } finally {
        await context.close();
      }
    });
  }
});
