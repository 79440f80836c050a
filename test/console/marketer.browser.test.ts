// Runs once (scripts/test.mjs): the console in a browser; its API is tested on both databases.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Dialog, type Page as Tab } from 'playwright-core';
import { buildConsole } from '../../scripts/build-console.js';
import { available, CHROMIUM, skip, until, USER_AGENT } from '../browser.js';
import { type Json, ok, startApp, type TestApp } from '../helpers.js';
import { openPageTab, pageUntil, pick, viewChecker } from './console-tab.js';

// Issue 38's console, as a marketer uses it, in headless Chromium: a page made through the New
// page form (labelled in words, the API's refusal beside its field), breadcrumbs and links that
// name whom they serve, a log in words, the note where Regenerate is when no model is
// configured, an experiment, a goal and a funnel made here, and every destructive action asking
// first (declined: nothing is sent). axe-core on each new view; screenshots in test-artifacts/.

const ARTIFACTS = path.resolve('test-artifacts', 'console');
const check = viewChecker(ARTIFACTS, 'marketer-');
const NO_MODEL = "the template generator copies and personalises the page's copy; configure a model for new copy";

let t: TestApp;
let browser: Browser;
let origin: string;
const seed = { personId: '', pageId: '', audienceId: '' };

before(async () => {
  if (skip) return;
  assert.ok(available, `no browser at ${CHROMIUM}: .ci/run installs Debian's chromium`);
  mkdirSync(ARTIFACTS, { recursive: true });
  await buildConsole();
  t = await startApp();
  origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
  seed.personId = ok(await t.req('POST', '/v0/persons', { name: 'Jane Doe', email: 'jane@example.org' }), 201).personId;
  ok(
    await t.req('POST', `/v0/persons/${seed.personId}/logs`, {
      source: 'crm',
      type: 'meeting-booked',
      payload: { dealStage: 'demo', attendees: ['Jane', 'Sam'], owner: { firstName: 'Ann' }, paid: false },
    }),
    201,
  );
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
after(async () => {
  await browser?.close();
  await t?.close();
});

const form = (tab: Tab, name: string) => tab.getByRole('form', { name, exact: true });
const field = (tab: Tab, formName: string, label: string) => form(tab, formName).getByLabel(label, { exact: true });
const go = (tab: Tab, hash: string) => tab.evaluate(`location.hash = ${JSON.stringify(hash)}`);

/** A signed-in tab whose confirmations are recorded and answered as `answer.next` says. */
async function signedIn() {
  const context = await browser.newContext({ userAgent: USER_AGENT, viewport: { width: 1280, height: 900 } });
  const tab = await context.newPage();
  const errors: string[] = [];
  tab.on('pageerror', (err) => errors.push(err.message));
  const dialogs: string[] = [];
  const answer = { next: 'accept' as 'accept' | 'dismiss' };
  tab.on('dialog', (dialog: Dialog) => {
    dialogs.push(dialog.message());
    void (answer.next === 'accept' ? dialog.accept() : dialog.dismiss());
  });
  const writes: string[] = [];
  tab.on('request', (r) => ['POST', 'PATCH', 'DELETE'].includes(r.method()) && writes.push(`${r.method()} ${new URL(r.url()).pathname}`));
  assert.equal((await tab.goto(`${origin}/console/`))?.status(), 200);
  await tab.getByLabel('API key').fill(t.key);
  await tab.getByRole('button', { name: 'Sign in' }).click();
  await tab.getByRole('button', { name: 'Sign out' }).waitFor();
  return { tab, dialogs, answer, writes, errors };
}

/** Declined, a confirmation sends nothing: asked once more than before, and no write went out. */
async function declined(s: Awaited<ReturnType<typeof signedIn>>, click: () => Promise<void>, asked: RegExp): Promise<void> {
  const before = s.dialogs.length;
  s.writes.length = 0;
  s.answer.next = 'dismiss';
  await click();
  await until('the confirmation', async () => (s.dialogs.length > before ? true : undefined));
  assert.match(s.dialogs.at(-1) ?? '', asked);
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(s.writes, [], 'declined: nothing sent');
  s.answer.next = 'accept';
}

describe('the console for a marketer', { skip }, () => {
  test('a page through the New page form, in words; links, crumbs and the no-model note', { timeout: 120_000 }, async () => {
    const s = await signedIn();
    const { tab } = s;
    await tab.getByRole('button', { name: 'New page', exact: true }).click();
    // The fixed accessible names, and no API name as a label.
    for (const label of ['Page name', 'Title', 'What the page is for', 'Page type'])
      assert.equal(await field(tab, 'New page', label).count(), 1, label);
    for (const apiName of ['name', 'title', 'pageType', 'pageContext', 'metadata.title', 'ogImageAssetId'])
      assert.equal(await form(tab, 'New page').getByLabel(apiName, { exact: true }).count(), 0, `no field labelled ${apiName}`);
    await check(tab, 'new-page');

    // Refused (no name): the API's words beside "Page name".
    await field(tab, 'New page', 'Title').fill('Spring launch');
    await field(tab, 'New page', 'Page type').selectOption({ label: 'Outbound: for people you reach out to' });
    await field(tab, 'New page', 'What the page is for').fill('A launch page for prospects');
    await form(tab, 'New page').getByRole('button', { name: 'Add a button' }).click();
    await field(tab, 'New page', 'What the button does').selectOption({ label: 'Opens a lead form' });
    await field(tab, 'New page', 'Button text').fill('Talk to us');
    await field(tab, 'New page', 'Purpose').fill('lead');
    await tab.getByRole('button', { name: 'Create page' }).click();
    const name = field(tab, 'New page', 'Page name');
    await pageUntil(tab, `document.querySelector('[data-pointer="/name"]')?.getAttribute('aria-invalid') === 'true'`);
    const describedBy = (await name.getAttribute('aria-describedby')) ?? '';
    const said = await tab.evaluate(
      `${JSON.stringify(describedBy.split(' '))}.map((id) => document.getElementById(id)?.textContent ?? '').join(' ')`,
    );
    assert.match(String(said), /\S/, 'the refusal is said beside the field');

    await name.fill('Spring');
    await tab.getByRole('button', { name: 'Create page' }).click();
    await tab.getByRole('heading', { level: 1, name: /Spring/ }).waitFor();
    seed.pageId = decodeURIComponent(tab.url().split('#/pages/')[1] ?? '');
    const page = ok(await t.req('GET', `/v0/pages/${seed.pageId}`));
    assert.equal(page.name, 'Spring');
    assert.equal(page.title, 'Spring launch');
    assert.equal(page.pageType, 'outbound');
    assert.equal(page.pageContext, 'A launch page for prospects');
    assert.equal(page.actions[0].actionType, 'form');
    assert.equal(page.actions[0].buttonTitle, 'Talk to us');

    // Where Regenerate is, the console says no model writes new copy.
    await openPageTab(tab, 'Audiences');
    const note = tab.locator('[data-agent="template"]');
    await note.waitFor();
    assert.ok(((await note.textContent()) ?? '').includes(NO_MODEL), (await note.textContent()) ?? '');

    // A link says whom it serves; the audience's breadcrumbs name the page.
    seed.audienceId = ok(await t.req('POST', `/v0/pages/${seed.pageId}/audiences`, { personId: seed.personId }), 201).audienceId;
    ok(
      await t.req('POST', '/v0/page_links', { path: '/spring/jane', target: { targetType: 'audience', audienceId: seed.audienceId } }),
      201,
    );
    ok(await t.req('POST', '/v0/page_links', { path: '/spring', target: { targetType: 'page', pageId: seed.pageId } }), 201);
    await tab.reload();
    await openPageTab(tab, 'Links');
    const janeLink = tab.locator('li[data-link]').filter({ hasText: '/spring/jane' });
    await janeLink.waitFor();
    assert.match((await janeLink.textContent()) ?? '', /Serves audience Jane Doe/);
    // Issue 45: a plain line of what the link serves; the page itself is measured like any audience.
    assert.match(
      (await tab
        .locator('li[data-link]')
        .filter({ hasText: /\/spring Serves / })
        .first()
        .textContent()) ?? '',
      /Serves the page itself/,
    );
    await check(tab, 'page');
    await janeLink.getByRole('link', { name: 'Jane Doe' }).click();
    await tab.getByRole('heading', { level: 1, name: /Jane Doe/ }).waitFor();
    const crumbs = tab.getByRole('navigation', { name: 'Breadcrumb' });
    await crumbs.getByRole('link', { name: 'Spring', exact: true }).waitFor();
    assert.equal(await crumbs.getByRole('link', { name: 'Page', exact: true }).count(), 0);
    assert.ok(((await tab.locator('[data-agent="template"]').textContent()) ?? '').includes(NO_MODEL), 'beside this Regenerate too');
    await check(tab, 'audience');

    // Archive asks first.
    await declined(s, () => tab.getByRole('button', { name: 'Archive' }).click(), /^Archive “Jane Doe”\?/);
    assert.equal(ok(await t.req('GET', `/v0/pages/${seed.pageId}/audiences/${seed.audienceId}`)).archivedAt, null);

    // A person's log in words, not JSON.
    await go(tab, `#/persons/${seed.personId}`);
    const entry = tab.locator('ol.timeline li').first();
    await entry.getByText('Meeting booked').waitFor();
    const text = (await entry.textContent()) ?? '';
    assert.match(text, /from Crm/);
    for (const fact of ['Deal stage', 'demo', 'Attendees', 'Jane, Sam', 'Owner › First name', 'Ann', 'Paid', 'no'])
      assert.ok(text.includes(fact), `${fact} in ${text}`);
    assert.doesNotMatch(text, /[{}"]/, 'no raw JSON');
    await check(tab, 'person');

    // Deleting the page asks first.
    await go(tab, `#/pages/${seed.pageId}`);
    await tab.getByRole('heading', { level: 1, name: /Spring/ }).waitFor();
    await declined(s, () => tab.getByRole('button', { name: 'Delete', exact: true }).click(), /^Delete “Spring” for good/);
    assert.equal((await t.req('GET', `/v0/pages/${seed.pageId}`)).status, 200);
    assert.deepEqual(s.errors, []);
    await tab.context().close();
  });

  test('experiments made in the console: a holdout, and versions of an audience', { timeout: 120_000 }, async () => {
    const s = await signedIn();
    const { tab } = s;
    const draft = ok(await t.req('POST', `/v0/pages/${seed.pageId}/audiences/${seed.audienceId}/versions`, {}), 201);
    const audience = ok(await t.req('GET', `/v0/pages/${seed.pageId}/audiences/${seed.audienceId}`));
    await go(tab, `#/pages/${seed.pageId}/experiments`);
    await tab.getByRole('button', { name: 'New experiment', exact: true }).click();
    await field(tab, 'New experiment', 'Experiment name').fill('Does personalisation pay?');
    await field(tab, 'New experiment', 'Weight of control').fill('20');
    await field(tab, 'New experiment', 'Weight of personalised').fill('80');
    await field(tab, 'New experiment', 'How visitors are split').selectOption('bandit');
    await field(tab, 'New experiment', 'Visitors each arm needs before a decision').fill('200');
    await tab.getByRole('button', { name: 'Create experiment' }).click();
    await tab.getByRole('heading', { level: 1, name: /Does personalisation pay\?/ }).waitFor();
    const holdoutId = decodeURIComponent(tab.url().split('/experiments/')[1] ?? '');
    const holdout = ok(await t.req('GET', `/v0/pages/${seed.pageId}/experiments/${holdoutId}`));
    assert.equal(holdout.kind, 'holdout');
    assert.equal(holdout.allocation, 'bandit');
    assert.equal(holdout.minimumUnitsPerArm, 200);
    assert.deepEqual(
      holdout.arms.map((a: Json) => [a.key, a.weight]),
      [
        ['control', 20],
        ['personalised', 80],
      ],
    );
    // Its breadcrumbs name the page; deleting the draft asks first.
    await tab.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'Spring', exact: true }).waitFor();
    await declined(
      s,
      () => tab.getByRole('button', { name: /^Delete the experiment/ }).click(),
      /^Delete the draft “Does personalisation pay\?”/,
    );
    assert.equal((await t.req('GET', `/v0/pages/${seed.pageId}/experiments/${holdoutId}`)).status, 200);
    await tab.getByRole('button', { name: /^Delete the experiment/ }).click();
    await pageUntil(tab, `location.hash === ${JSON.stringify(`#/pages/${seed.pageId}/experiments`)}`);
    assert.equal((await t.req('GET', `/v0/pages/${seed.pageId}/experiments/${holdoutId}`)).status, 404);

    // A holdout over a segment (issue 39): only segments are offered; the view says what control sees.
    const rules = { match: 'all', conditions: [{ field: 'utm.source', operator: 'equals', value: 'linkedin' }] };
    const segment = ok(await t.req('POST', `/v0/pages/${seed.pageId}/audiences`, { customName: 'LinkedIn ads', rules }), 201);
    await tab.reload();
    await tab.getByRole('button', { name: 'New experiment', exact: true }).click();
    await field(tab, 'New experiment', 'Experiment name').fill('LinkedIn holdout');
    const heldOut = field(tab, 'New experiment', 'Who is held out');
    await heldOut.locator('option', { hasText: 'LinkedIn ads (segment)' }).waitFor({ state: 'attached' });
    assert.deepEqual(await heldOut.locator('option').allTextContents(), ['Every audience with a person', 'LinkedIn ads (segment)']);
    await heldOut.selectOption({ label: 'LinkedIn ads (segment)' });
    await tab.getByRole('button', { name: 'Create experiment' }).click();
    await tab.getByRole('heading', { level: 1, name: /LinkedIn holdout/ }).waitFor();
    const segmentHoldoutId = decodeURIComponent(tab.url().split('/experiments/')[1] ?? '');
    const segmentHoldout = ok(await t.req('GET', `/v0/pages/${seed.pageId}/experiments/${segmentHoldoutId}`));
    assert.deepEqual([segmentHoldout.kind, segmentHoldout.audienceId], ['holdout', segment.audienceId]);
    await tab.getByText('Holdout over the segment LinkedIn ads: its version against the page as everyone sees it').waitFor();
    await tab.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'LinkedIn ads', exact: true }).waitFor();
    await tab.getByRole('button', { name: /^Delete the experiment/ }).click();
    await pageUntil(tab, `location.hash === ${JSON.stringify(`#/pages/${seed.pageId}/experiments`)}`);

    // Versions: an audience, two arms each on a version; a bad arm name is refused beside its field.
    await tab.getByRole('button', { name: 'New experiment', exact: true }).click();
    await field(tab, 'New experiment', 'Experiment name').fill('Headline');
    await field(tab, 'New experiment', 'What is compared').selectOption('versions');
    await field(tab, 'New experiment', 'Audience').selectOption({ label: 'Jane Doe' });
    await field(tab, 'New experiment', 'Arm 1 version').selectOption({ label: 'Version 1 (published)' });
    await field(tab, 'New experiment', 'Arm 2 version').selectOption({ label: `Version ${draft.versionNumber} (draft)` });
    await field(tab, 'New experiment', 'Arm 2 name').fill('Bold Headline');
    await tab.getByRole('button', { name: 'Create experiment' }).click();
    await pageUntil(tab, `document.querySelector('[data-pointer="/arms/1/key"]')?.getAttribute('aria-invalid') === 'true'`);
    await field(tab, 'New experiment', 'Arm 2 name').fill('bold');
    await tab.getByRole('button', { name: 'Create experiment' }).click();
    await tab.getByRole('heading', { level: 1, name: /Headline/ }).waitFor();
    const versionsId = decodeURIComponent(tab.url().split('/experiments/')[1] ?? '');
    const versions = ok(await t.req('GET', `/v0/pages/${seed.pageId}/experiments/${versionsId}`));
    assert.equal(versions.kind, 'versions');
    assert.equal(versions.audienceId, seed.audienceId);
    assert.equal(versions.allocation, 'fixed');
    assert.deepEqual(
      versions.arms.map((a: Json) => [a.key, a.versionId]),
      [
        ['current', audience.publishedVersion.versionId],
        ['bold', draft.versionId],
      ],
    );
    // Breadcrumbs: the page and the audience.
    const crumbs = tab.getByRole('navigation', { name: 'Breadcrumb' });
    await crumbs.getByRole('link', { name: 'Jane Doe', exact: true }).waitFor();
    await crumbs.getByRole('link', { name: 'Spring', exact: true }).waitFor();
    await check(tab, 'experiment-draft');

    // Conclude asks first.
    s.answer.next = 'accept';
    await tab.getByRole('button', { name: 'Start' }).click();
    await tab.getByRole('button', { name: 'Conclude' }).waitFor();
    await tab.getByLabel('Winner').selectOption('bold');
    await declined(s, () => tab.getByRole('button', { name: 'Conclude' }).click(), /^Conclude “Headline” with bold\?/);
    assert.equal(ok(await t.req('GET', `/v0/pages/${seed.pageId}/experiments/${versionsId}`)).status, 'running');
    assert.deepEqual(s.errors, []);
    await tab.context().close();
  });

  test('goals and funnels made in the console; deleting asks first', { timeout: 120_000 }, async () => {
    const s = await signedIn();
    const { tab } = s;
    await tab.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Goals', exact: true }).click();
    await tab.getByRole('heading', { level: 1, name: 'Goals and funnels' }).waitFor();
    await check(tab, 'goals-empty');

    await tab.getByRole('button', { name: 'New goal', exact: true }).click();
    await field(tab, 'New goal', 'Goal name').fill('Pricing seen');
    await field(tab, 'New goal', 'What counts').selectOption({ label: 'A link is visited' });
    await field(tab, 'New goal', 'Link path').fill('pricing');
    await tab.getByRole('button', { name: 'Create goal' }).click();
    // Refused: the API's message beside "Link path", not a raw pattern.
    await pageUntil(tab, `document.querySelector('[data-pointer="/path"]')?.getAttribute('aria-invalid') === 'true'`);
    await field(tab, 'New goal', 'Link path').fill('/pricing');
    await tab.getByRole('button', { name: 'Create goal' }).click();
    const row = tab.locator('tr[data-goal]').filter({ hasText: 'Pricing seen' });
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /A link is visited: \/pricing/);

    await tab.getByRole('button', { name: 'New goal', exact: true }).click();
    await field(tab, 'New goal', 'Goal name').fill('Demo requested');
    await field(tab, 'New goal', 'What counts').selectOption({ label: 'A button is clicked' });
    // A purpose is picked from the pages' buttons, or typed as it is (issue 46).
    await pick(tab, 'Button purpose', 'demo', form(tab, 'New goal'));
    await field(tab, 'New goal', 'Currency of its value').fill('eur');
    await tab.getByRole('button', { name: 'Create goal' }).click();
    await tab.locator('tr[data-goal]').filter({ hasText: 'Demo requested' }).waitFor();
    const goals = ok(await t.req('GET', '/v0/goals')).items as Json[];
    const demo = goals.find((g) => g.name === 'Demo requested');
    assert.equal(demo?.kind, 'action');
    assert.equal(demo?.actionPurpose, 'demo');
    assert.equal(demo?.currency, 'EUR');
    assert.equal(goals.find((g) => g.name === 'Pricing seen')?.path, '/pricing');

    await tab.getByRole('button', { name: 'New funnel', exact: true }).click();
    await field(tab, 'New funnel', 'Funnel name').fill('Visit to lead');
    await field(tab, 'New funnel', 'Step 1 counts').selectOption('path');
    await field(tab, 'New funnel', 'Link path').fill('/spring');
    await field(tab, 'New funnel', 'Step 1 name').fill('Opened the page');
    await field(tab, 'New funnel', 'Step 2 counts').selectOption('form');
    await pick(tab, 'On which page', 'Spring', form(tab, 'New funnel'));
    await field(tab, 'New funnel', 'Hours to finish').fill('48');
    await tab.getByRole('button', { name: 'Create funnel' }).click();
    await tab.locator('li[data-funnel]').filter({ hasText: 'Visit to lead' }).waitFor();
    const funnel = (ok(await t.req('GET', '/v0/funnels')).items as Json[])[0];
    assert.equal(funnel?.name, 'Visit to lead');
    assert.equal(funnel?.windowHours, 48);
    assert.deepEqual(
      funnel?.steps.map((st: Json) => [st.name, st.kind, st.path ?? st.pageId]),
      [
        ['Opened the page', 'path', '/spring'],
        [funnel?.steps[1].name, 'form', seed.pageId],
      ],
    );
    await check(tab, 'goals');

    await declined(s, () => tab.getByRole('button', { name: 'Delete goal Pricing seen' }).click(), /^Delete the goal “Pricing seen”\?/);
    assert.equal((ok(await t.req('GET', '/v0/goals')).items as Json[]).length, 2);
    await tab.getByRole('button', { name: 'Delete goal Pricing seen' }).click();
    await until('the goal gone', async () => ((await tab.locator('tr[data-goal]').count()) === 1 ? true : undefined));
    assert.deepEqual(
      (ok(await t.req('GET', '/v0/goals')).items as Json[]).map((g) => g.name),
      ['Demo requested'],
    );
    await declined(
      s,
      () => tab.getByRole('button', { name: 'Delete funnel Visit to lead' }).click(),
      /^Delete the funnel “Visit to lead”\?/,
    );
    assert.equal((ok(await t.req('GET', '/v0/funnels')).items as Json[]).length, 1);
    assert.deepEqual(s.errors, []);
    await tab.context().close();
  });
});
