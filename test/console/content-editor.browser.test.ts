// Runs once (scripts/test.mjs): the console in a browser; its API is tested on both databases.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Page as Tab } from 'playwright-core';
import sharp from 'sharp';
import { skip, until } from '../browser.js';
import { type Json, ok } from '../helpers.js';
import { artifactsDir, consoleSuite, formPage, openConsole, pageUntil, pick, previewHeading, stepper } from './console-tab.js';

// Issue 38, the block editor in real headless Chromium: sections added in several layouts,
// reordered and removed; an image picked from the assets and another uploaded in place; Save sends
// the sections in the order shown, and the preview beside the editor follows the typing before
// Save (for the page and for an audience); an audience's content written and published from its own view.

const { check } = stepper(artifactsDir('content-editor'));

const seed = { pageId: '', assetId: '', actionId: '', audienceId: '' };

const png = (r: number, g: number, b: number) =>
  sharp({ create: { width: 800, height: 500, channels: 3, background: { r, g, b } } })
    .png()
    .toBuffer();

const suite = consoleSuite(async (t) => {
  const page = await formPage(t, {
    name: 'Launch',
    pageContext: 'A product launch',
    headline: 'Before',
    buttonTitle: 'Book a demo',
    purpose: 'demo',
  });
  seed.pageId = page.pageId;
  seed.actionId = page.actions[0].actionId;
  const file = await t.app.inject({
    method: 'POST',
    url: '/v0/files',
    headers: { 'content-type': 'image/png', 'x-api-key': t.key },
    payload: await png(20, 120, 60),
  });
  assert.equal(file.statusCode, 201, file.body);
  seed.assetId = ok(
    await t.req('POST', '/v0/assets', { assetType: 'image', name: 'Team photo', fileId: JSON.parse(file.body).fileId }),
    201,
  ).assetId;
  ok(await t.req('POST', '/v0/persons', { name: 'Jane Doe', email: 'jane@acme.example' }), 201);
  const person = ok(await t.req('GET', '/v0/persons/search?query=jane')).items[0];
  seed.audienceId = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, { personId: person.personId }), 201).audienceId;
});

const editor = (tab: Tab, name = 'Page content') => tab.getByRole('form', { name, exact: true });
const section = (tab: Tab, n: number, form = 'Page content') => editor(tab, form).getByRole('group', { name: `Section ${n}`, exact: true });
/** The section headings, in the order the editor shows them. */
const headings = (tab: Tab) =>
  tab.evaluate(`[...document.querySelectorAll('form[aria-label="Page content"] [data-pointer$="/heading"]')].map((e) => e.value)`);
const pageContent = async () => ok(await suite.t.req('GET', `/v0/pages/${seed.pageId}`)).content;

describe('the block editor', { skip }, () => {
  test('sections added, moved and removed, images picked and uploaded, the preview follows typing and Save', {
    timeout: 180_000,
  }, async () => {
    const { t, browser, origin } = suite;
    const { context, tab, errors } = await openConsole(browser, origin, t.key);
    await tab.evaluate(`location.hash = ${JSON.stringify(`#/pages/${seed.pageId}`)}`);
    await editor(tab).waitFor();
    const preview = tab.frameLocator('iframe.preview');
    await preview.getByRole('heading', { name: 'Before' }).waitFor();

    await editor(tab).getByLabel('Headline', { exact: true }).fill('Hello {{person.firstName | there}}');
    await editor(tab).getByLabel('Subheadline', { exact: true }).fill('The launch, in short');
    // Four sections: the new one's Layout is focused, for the keyboard.
    for (let i = 0; i < 4; i++) await editor(tab).getByRole('button', { name: 'Add section', exact: true }).click();
    // Focus moves once the new section has rendered: waited for, as a keyboard user would.
    const focused = `document.activeElement?.closest('fieldset')?.querySelector('legend')?.textContent`;
    await until('the new section focused', async () => ((await tab.evaluate(focused)) === 'Section 4' ? true : undefined));
    // 1: a hero, its image picked from the assets.
    await section(tab, 1).getByLabel('Layout', { exact: true }).selectOption('hero');
    await section(tab, 1).getByLabel('Section heading', { exact: true }).fill('Hero');
    await section(tab, 1).getByLabel('Section text', { exact: true }).fill('Ship **faster**.');
    await pick(tab, 'Image', 'Team photo', section(tab, 1));
    await section(tab, 1).getByLabel('What the image shows', { exact: true }).fill('Our team at work');
    // 2: features, two cards, the first with an image uploaded in place.
    await section(tab, 2).getByLabel('Layout', { exact: true }).selectOption('features');
    await section(tab, 2).getByLabel('Section heading', { exact: true }).fill('Features');
    const card = (n: number) => section(tab, 2).getByRole('group', { name: `Card ${n}`, exact: true });
    await card(1).getByLabel('Card title', { exact: true }).fill('Fast');
    await card(1).getByLabel('Card text', { exact: true }).fill('Pages in a second');
    await card(2).getByLabel('Card title', { exact: true }).fill('Personal');
    await card(2).getByLabel('Card text', { exact: true }).fill('For {{person.firstName | you}}');
    await card(1)
      .getByLabel('Upload an image', { exact: true })
      .setInputFiles({ name: 'fast.png', mimeType: 'image/png', buffer: await png(200, 40, 40) });
    const uploaded = await until('the uploaded image chosen', async () => {
      const value = await card(1).locator('[data-picker="imageAssetId"] [data-chosen]').getAttribute('data-chosen');
      return value && value !== seed.assetId ? value : undefined;
    });
    assert.equal((ok(await t.req('GET', `/v0/assets/${uploaded}`)) as Json).name, 'fast', 'an asset of the tenant, named after its file');
    // 3: a FAQ; 4: a text section that is then removed.
    await section(tab, 3).getByLabel('Layout', { exact: true }).selectOption('faq');
    await section(tab, 3).getByLabel('Section heading', { exact: true }).fill('Questions');
    await section(tab, 3).getByRole('group', { name: 'Question 1', exact: true }).getByLabel('Question', { exact: true }).fill('Price?');
    await section(tab, 3).getByRole('group', { name: 'Question 1', exact: true }).getByLabel('Answer', { exact: true }).fill('Free.');
    await section(tab, 3).getByRole('button', { name: 'Remove question', exact: true }).last().click();
    await section(tab, 4).getByLabel('Section heading', { exact: true }).fill('Doomed');
    assert.equal(await section(tab, 1).getByRole('button', { name: 'Move up', exact: true }).isDisabled(), true);
    assert.equal(await section(tab, 4).getByRole('button', { name: 'Move down', exact: true }).isDisabled(), true);
    await check(tab, 'sections-added');

    // The FAQ moved up above the features, keeping its fields and the focus on its button.
    await section(tab, 3).getByRole('button', { name: 'Move up', exact: true }).click();
    const moved = JSON.stringify(['Hero', 'Questions', 'Features', 'Doomed']);
    await until('the FAQ moved up', async () => (JSON.stringify(await headings(tab)) === moved ? true : undefined));
    await until('the focus kept on Move up', async () =>
      (await tab.evaluate('document.activeElement?.textContent')) === 'Move up' ? true : undefined,
    );
    assert.equal(await section(tab, 2).getByLabel('Layout', { exact: true }).inputValue(), 'faq');
    await section(tab, 4).getByRole('button', { name: 'Move up', exact: true }).click();
    await section(tab, 3).getByRole('button', { name: 'Move down', exact: true }).click();
    assert.deepEqual(await headings(tab), ['Hero', 'Questions', 'Features', 'Doomed']);
    await section(tab, 4).getByRole('button', { name: 'Remove section', exact: true }).click();
    assert.deepEqual(await headings(tab), ['Hero', 'Questions', 'Features']);
    await check(tab, 'sections-moved');

    // Live: the preview follows the typing, before any Save, rendered by the server as served.
    await editor(tab).getByLabel('Headline', { exact: true }).fill('Typed, not saved <b>{{person.firstName | there}}</b>');
    await preview.getByRole('heading', { name: 'Typed, not saved <b>there</b>' }).waitFor();
    await preview.getByText('Price?').waitFor();
    assert.equal(await preview.locator('h1 b').count(), 0, 'typed markup is text, never markup');
    assert.equal((await pageContent()).headline, 'Before', 'nothing stored by the preview');
    // The hero's image is on no live page yet: it loads all the same, before Save (the cards' load lazily).
    await until('the unsaved hero image loaded in the preview', async () =>
      (await preview
        .locator('img[alt="Our team at work"]')
        .evaluateAll((imgs) => imgs.some((i) => (i as unknown as { naturalWidth: number }).naturalWidth > 0)))
        ? true
        : undefined,
    );
    await check(tab, 'live-preview');
    await editor(tab).getByLabel('Headline', { exact: true }).fill('Hello {{person.firstName | there}}');

    await editor(tab).getByRole('button', { name: 'Save', exact: true }).click();
    await editor(tab).getByText('Saved.').waitFor();
    const saved = await pageContent();
    assert.equal(saved.headline, 'Hello {{person.firstName | there}}');
    assert.deepEqual(
      saved.sections.map((s: Json) => [s.layout ?? 'text', s.heading]),
      [
        ['hero', 'Hero'],
        ['faq', 'Questions'],
        ['features', 'Features'],
      ],
    );
    assert.deepEqual([saved.sections[0].imageAssetId, saved.sections[0].imageAlt], [seed.assetId, 'Our team at work']);
    assert.deepEqual(saved.sections[1].items, [{ title: 'Price?', body: 'Free.' }]);
    assert.deepEqual(saved.sections[2].items, [
      { title: 'Fast', body: 'Pages in a second', imageAssetId: uploaded },
      { title: 'Personal', body: 'For {{person.firstName | you}}' },
    ]);
    // The preview, fetched again after Save: the page as served, its sections in their layouts.
    await previewHeading(tab, 'Hello there');
    await preview.getByText('Price?').waitFor();
    await preview.getByText('For you').waitFor();
    await until('the hero image in the preview', async () =>
      (await preview.locator('img[alt="Our team at work"]').count()) > 0 ? true : undefined,
    );
    // For an audience: the person's name filled in.
    await tab.getByLabel('Preview for').selectOption({ index: 1 });
    await previewHeading(tab, 'Hello Jane');
    await preview.getByText('For Jane').waitFor();
    await check(tab, 'saved-preview');

    // A problem of the API shows beside its field: a call to action with no button chosen.
    await editor(tab).getByRole('button', { name: 'Add section', exact: true }).click();
    await section(tab, 4).getByLabel('Layout', { exact: true }).selectOption('cta');
    await editor(tab).getByRole('button', { name: 'Save', exact: true }).click();
    await editor(tab).getByRole('alert').waitFor();
    await pageUntil(
      tab,
      `document.querySelector('[data-pointer="/content/sections/3/actionId"]')?.getAttribute('aria-invalid') === 'true'`,
    );
    await section(tab, 4).getByLabel('Button', { exact: true }).selectOption(seed.actionId);
    // Publish: saves and publishes at once, confirmed first.
    await editor(tab).getByRole('button', { name: 'Publish', exact: true }).click();
    await tab.getByRole('button', { name: 'Unpublish', exact: true }).waitFor();
    const published = ok(await t.req('GET', `/v0/pages/${seed.pageId}`));
    assert.equal(published.status, 'published');
    assert.equal(published.content.sections[3].actionId, seed.actionId);
    assert.equal(await editor(tab).getByRole('button', { name: 'Publish', exact: true }).count(), 0, 'nothing left to publish');
    await check(tab, 'published');
    assert.deepEqual(errors, [], 'no script error and no Content-Security-Policy violation');
    await context.close();
  });

  test("an audience's own content, written and published from its view, narrow screen", { timeout: 120_000 }, async () => {
    const { t, browser, origin } = suite;
    const { context, tab, errors } = await openConsole(browser, origin, t.key, 390);
    await tab.evaluate(`location.hash = ${JSON.stringify(`#/pages/${seed.pageId}/audiences/${seed.audienceId}`)}`);
    const form = 'Content for Jane Doe';
    await editor(tab, form).waitFor();
    // A published version (the first): the editor starts from the page's content.
    assert.equal(await editor(tab, form).getByLabel('Headline', { exact: true }).inputValue(), 'Hello {{person.firstName | there}}');
    const pageHeadings = (await pageContent()).sections.map((s: Json) => s.heading);
    assert.equal(pageHeadings[1], 'Questions');
    await editor(tab, form).getByLabel('Headline', { exact: true }).fill('Jane, this is yours');
    await section(tab, 2, form).getByRole('button', { name: 'Remove section', exact: true }).click();
    await editor(tab, form).getByRole('button', { name: 'Publish', exact: true }).click();
    // The live preview shows the typed headline before the publish lands: the new version first.
    await tab.getByText('Version 2 (published)', { exact: true }).waitFor();
    const preview = tab.frameLocator('iframe.preview');
    await preview.getByRole('heading', { name: 'Jane, this is yours' }).waitFor();
    const audience = ok(await t.req('GET', `/v0/pages/${seed.pageId}/audiences/${seed.audienceId}`));
    assert.equal(audience.publishedVersion.versionNumber, 2);
    assert.equal(audience.publishedVersion.origin, 'written');
    assert.deepEqual(
      audience.publishedVersion.content.sections.map((s: Json) => s.heading),
      pageHeadings.filter((h: string) => h !== 'Questions'),
      'the FAQ removed, for this audience only',
    );
    assert.deepEqual(
      (await pageContent()).sections.map((s: Json) => s.heading),
      pageHeadings,
      "the page's own content unchanged",
    );
    await check(tab, 'audience-published');
    assert.deepEqual(errors, []);
    await context.close();
  });
});
