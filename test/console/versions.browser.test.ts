// Runs once (scripts/test.mjs): the console in a browser; its API is tested on both databases.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium, type Dialog } from 'playwright-core';
import { buildConsole } from '../../scripts/build-console.js';
import { available, CHROMIUM, skip, until, USER_AGENT } from '../browser.js';
import { type Json, ok, onPostgres, startApp, type TestApp } from '../helpers.js';
import { viewChecker } from './console-tab.js';

// Issue 36 in real headless Chromium: Regenerate on a page asks first, naming how many audiences it
// will queue and how many written ones it skips, and declined it sends nothing; an audience's
// history shows each version's content, origin and dates, with Restore; Regenerate on one audience
// regenerates that audience alone. The page agent is off, so queued versions stay queued.

const ARTIFACTS = path.join(process.env.ARTIFACTS_DIR ?? os.tmpdir(), 'console-versions', onPostgres ? 'postgres' : 'sqlite');
const check = viewChecker(ARTIFACTS);

const WRITTEN = { headline: 'Written by Jane <b>for</b> Globex', subheadline: 'By hand', sections: [{ heading: 'Why', body: 'Because.' }] };
const LATER = { headline: 'A later draft', subheadline: 'Also by hand', sections: [] };

let t: TestApp;
let browser: Browser;
let origin: string;
const seed = { pageId: '', generated: [] as Json[], written: {} as Json, restored: {} as Json, firstWritten: '' };

const base = (a: Json) => `/v0/pages/${a.pageId}/audiences/${a.audienceId}`;

async function publishWritten(a: Json, content: Json): Promise<Json> {
  const draft = ok(await t.req('POST', `${base(a)}/versions`, { content }), 201);
  return ok(await t.req('PATCH', `${base(a)}/versions/${draft.versionId}`, { status: 'published' }));
}

before(async () => {
  if (skip) return;
  assert.ok(available, `no browser at ${CHROMIUM}: .ci/run installs Debian's chromium`);
  mkdirSync(ARTIFACTS, { recursive: true });
  await buildConsole();
  t = await startApp();
  origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const page = ok(await t.req('POST', '/v0/pages', { name: 'Spring', title: 'Spring', pageContext: 'ctx', pageType: 'inbound' }), 201);
  seed.pageId = page.pageId;
  for (const customName of ['Generated one', 'Generated two']) {
    seed.generated.push(ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, { customName }), 201));
  }
  seed.written = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, { customName: 'Written' }), 201);
  seed.firstWritten = (await publishWritten(seed.written, WRITTEN)).versionId;
  await publishWritten(seed.written, LATER);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
after(async () => {
  await browser?.close();
  await t?.close();
});

const versionsOf = async (a: Json): Promise<Json[]> => ok(await t.req('GET', `${base(a)}/versions`)).items;

describe('regenerate, version history and restore in a real browser', { skip }, () => {
  test('the page asks first with the counts; history shows content and origin; Restore; one audience alone', {
    timeout: 120_000,
  }, async () => {
    const context = await browser.newContext({ userAgent: USER_AGENT, viewport: { width: 1280, height: 900 } });
    const tab = await context.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (err) => errors.push(err.message));
    // Each confirmation is recorded, then accepted or declined as the step says.
    const dialogs: string[] = [];
    let answer: 'accept' | 'dismiss' = 'accept';
    tab.on('dialog', (dialog: Dialog) => {
      dialogs.push(dialog.message());
      void (answer === 'accept' ? dialog.accept() : dialog.dismiss());
    });
    assert.equal((await tab.goto(`${origin}/console/`))?.status(), 200);
    await tab.getByLabel('API key').fill(t.key);
    await tab.getByRole('button', { name: 'Sign in' }).click();
    await tab.getByRole('button', { name: 'Sign out' }).waitFor();

    // 1. Regenerate on the page, declined: the question names 2 to queue and 1 written to skip; nothing is sent.
    await tab.evaluate(`location.hash = '#/pages/${seed.pageId}/audiences'`);
    await tab.getByRole('heading', { level: 1, name: /Spring/ }).waitFor();
    await check(tab, 'page');
    const regenerate = tab.getByRole('button', { name: "Regenerate the page's audiences" });
    answer = 'dismiss';
    await regenerate.click();
    await until('the confirmation', async () => (dialogs.length === 1 ? true : undefined));
    assert.match(dialogs[0] ?? '', /rewrite 2 audiences\./);
    assert.match(dialogs[0] ?? '', /1 audience written by a person will be skipped/);
    await tab.waitForTimeout(300);
    for (const a of [...seed.generated, seed.written])
      assert.equal((await versionsOf(a))[0].status, 'published', 'declined: nothing queued');

    // 2. Accepted: the two generated audiences are queued, the written one is left alone.
    answer = 'accept';
    await regenerate.click();
    await tab.getByText('2 versions queued for the page agent; 1 written audience skipped.').waitFor();
    assert.equal(dialogs.length, 2);
    for (const a of seed.generated) {
      const [latest] = await versionsOf(a);
      assert.equal(latest.status, 'queued');
      assert.equal(latest.versionNumber, 2);
    }
    const written = await versionsOf(seed.written);
    assert.equal(written.length, 3, 'the written audience got no new version');
    assert.equal(written[0].status, 'published');
    assert.deepEqual(written[0].content, LATER);
    assert.equal(errors.length, 0, errors.join('\n'));

    // 3. The written audience's history: content, origin and dates of each version, Restore on the archived one.
    await tab.evaluate(`location.hash = '#/pages/${seed.pageId}/audiences/${seed.written.audienceId}'`);
    await tab.getByRole('heading', { level: 1, name: /Written/ }).waitFor();
    const history = tab.getByRole('region', { name: 'Versions' });
    const v2 = history.locator('li[data-version="2"]');
    await v2.waitFor();
    const v2Text = (await v2.textContent()) ?? '';
    assert.match(v2Text, /archived/);
    assert.match(v2Text, /written by a person/);
    assert.ok(v2Text.includes(WRITTEN.headline), 'the archived version shows its content, as text');
    assert.match(v2Text, /Because\./);
    assert.equal(await v2.locator('b').count(), 0, 'stored markup is shown, never rendered');
    assert.ok((await v2.locator('time').count()) >= 3, 'its dates: created, published, archived and the steps between');
    assert.match(v2Text, /created.*published.*archived/s);
    const v1Text = (await history.locator('li[data-version="1"]').textContent()) ?? '';
    assert.match(v1Text, /generated by the page agent/);
    assert.match(v1Text, /the page's content/);
    assert.equal(
      await history
        .locator('li[data-version="1"]')
        .getByRole('button', { name: /^Restore/ })
        .count(),
      0,
      'nothing to restore',
    );
    assert.equal(
      await history
        .locator('li[data-version="3"]')
        .getByRole('button', { name: /^Restore/ })
        .count(),
      0,
      'it is the published one',
    );
    await check(tab, 'history');

    await tab.getByRole('button', { name: 'Restore version 2' }).click();
    await tab.getByText('Restored: a new version is published.').waitFor();
    assert.match(dialogs.at(-1) ?? '', /Restore version 2\?/);
    const audience = ok(await t.req('GET', base(seed.written)));
    assert.equal(audience.publishedVersion.versionNumber, 4);
    assert.equal(audience.publishedVersion.origin, 'written');
    assert.deepEqual(audience.publishedVersion.content, WRITTEN);
    const after = await versionsOf(seed.written);
    assert.equal(after.find((v: Json) => v.versionNumber === 3).status, 'archived');
    assert.equal(after.find((v: Json) => v.versionId === seed.firstWritten).status, 'archived', 'the source stays as it was');
    await history.locator('li[data-version="4"]').waitFor();
    await check(tab, 'restored');

    // 4. Regenerate on this one audience: it asks (a person wrote it), then queues this audience alone.
    const before = dialogs.length;
    await tab.getByRole('button', { name: 'Regenerate', exact: true }).click();
    await tab.getByText('A new version is queued.').waitFor();
    assert.equal(dialogs.length, before + 1);
    assert.match(dialogs.at(-1) ?? '', /A person wrote this audience/);
    const [queued] = await versionsOf(seed.written);
    assert.equal(queued.status, 'queued');
    assert.equal(queued.versionNumber, 5);
    for (const a of seed.generated) assert.equal((await versionsOf(a)).length, 2, 'the other audiences were not queued again');
    assert.equal(errors.length, 0, errors.join('\n'));
    await context.close();
  });
});
