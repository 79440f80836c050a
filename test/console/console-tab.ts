import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Locator, type Page as Tab, type Request } from 'playwright-core';
import { buildConsole } from '../../scripts/build-console.js';
import { available, CHROMIUM, skip, until, USER_AGENT } from '../browser.js';
import { type Json, ok, onPostgres, startApp, type TestApp } from '../helpers.js';

// What the console's browser tests share: a suite's app and browser, a signed-in console tab,
// axe-core with a screenshot at each step (under test-artifacts/, gitignored, or $ARTIFACTS_DIR).

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export function artifactsDir(name: string): string {
  const dir = path.join(process.env.ARTIFACTS_DIR ?? path.join(ROOT, 'test-artifacts'), name, onPostgres ? 'postgres' : 'sqlite');
  // A run's screenshots only: none left from an earlier run with other steps.
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}

export interface ConsoleSuite {
  t: TestApp;
  origin: string;
  browser: Browser;
}

/**
 * Suites set up their app and browser by the same dozen lines each: here once, so they cannot
 * drift apart, and only the data a suite writes first (`seed`) is its own. Its fields are read in
 * tests, not at a file's top: `before` sets them.
 */
export function consoleSuite(seed: (t: TestApp) => Promise<void>): ConsoleSuite {
  const suite = {} as ConsoleSuite;
  before(async () => {
    if (skip) return;
    assert.ok(available, `no browser at ${CHROMIUM}: .ci/run installs Debian's chromium`);
    await buildConsole();
    suite.t = await startApp();
    suite.origin = await suite.t.app.listen({ port: 0, host: '127.0.0.1' });
    await seed(suite.t);
    suite.browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  after(async () => {
    await suite.browser?.close();
    await suite.t?.close();
  });
  return suite;
}

/** A page with one form button and no sections yet, as the editors' suites start from. */
export async function formPage(
  t: TestApp,
  page: { name: string; pageContext: string; headline: string; buttonTitle: string; purpose: string; status?: 'published' },
): Promise<Json> {
  const { name, pageContext, headline, buttonTitle, purpose, status } = page;
  return ok(
    await t.req('POST', '/v0/pages', {
      name,
      title: name,
      pageContext,
      pageType: 'inbound',
      ...(status ? { status } : {}),
      actions: [{ actionType: 'form', buttonTitle, purpose }],
      content: { headline, subheadline: '', sections: [] },
    }),
    201,
  );
}

export async function openConsole(
  browser: Browser,
  origin: string,
  key: string,
  width = 1280,
): Promise<{ context: BrowserContext; tab: Tab; errors: string[] }> {
  const context = await browser.newContext({ userAgent: USER_AGENT, viewport: { width, height: 900 } });
  const tab = await context.newPage();
  const errors: string[] = [];
  tab.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) errors.push(message.text());
  });
  tab.on('pageerror', (err) => errors.push(err.message));
  // Every confirmation is accepted, as a person who meant it would.
  tab.on('dialog', (dialog) => void dialog.accept());
  assert.equal((await tab.goto(`${origin}/console/`))?.status(), 200);
  await tab.getByLabel('API key').fill(key);
  await tab.getByRole('button', { name: 'Sign in' }).click();
  await tab.getByRole('button', { name: 'Sign out' }).waitFor();
  return { context, tab, errors };
}

/**
 * Waits for a heading in the live preview's frame. A wait that times out says what the preview
 * showed instead: the frame's address and text, the panel's own words, and any window opened
 * (a form post whose target frame was gone opens one).
 */
export async function previewHeading(tab: Tab, name: string, timeoutMs = 30_000): Promise<void> {
  try {
    await tab.frameLocator('iframe.preview').getByRole('heading', { name }).waitFor({ timeout: timeoutMs });
  } catch (err) {
    const frames = tab.frames().map((f) => f.url());
    const panel =
      (await tab
        .locator('.live-preview')
        .textContent({ timeout: 2000 })
        .catch((e: Error) => `(unread: ${e.message})`)) ?? '';
    const shown =
      (await tab
        .frameLocator('iframe.preview')
        .locator('body')
        .textContent({ timeout: 2000 })
        .catch((e: Error) => `(unread: ${e.message})`)) ?? '';
    const windows = tab.context().pages().length;
    throw new Error(
      `${(err as Error).message}\nframes: ${JSON.stringify(frames)}\nwindows: ${windows}\npanel: ${panel.slice(0, 600)}\npreview: ${shown.slice(0, 600)}`,
    );
  }
}

/** The API calls a tab made, latest last (`recordAnswers`): what a wait that timed out reports. */
const answers = new WeakMap<Tab, { request: Request; text: string }[]>();

/**
 * Keeps the tab's last 12 API calls, each as method, status and path, for `shown` to report. A call
 * still unanswered says `pending`, and one the browser gave up on says why, so a wait that timed out
 * tells a request never sent from one sent and never answered.
 */
export function recordAnswers(tab: Tab): void {
  const kept: { request: Request; text: string }[] = [];
  answers.set(tab, kept);
  const pathOf = (request: Request) => {
    const url = new URL(request.url());
    return url.pathname.startsWith('/v0/') ? url.pathname.replace(/[a-z]+_[0-9a-z]{26}/g, '…') : undefined;
  };
  const set = (request: Request, status: string) => {
    const path = pathOf(request);
    if (path === undefined) return;
    const text = `${request.method()} ${status} ${path}`;
    const entry = kept.find((e) => e.request === request);
    if (entry) entry.text = text;
    else kept.push({ request, text });
    if (kept.length > 12) kept.shift();
  };
  tab.on('request', (request) => set(request, 'pending'));
  tab.on('response', (response) => set(response.request(), String(response.status())));
  tab.on('requestfailed', (request) => set(request, `failed (${request.failure()?.errorText ?? 'unknown'})`));
}

/**
 * Waits for `target`. When it never shows, the failure's first line (the one CI's summary keeps)
 * says what the view showed instead: its heading, its notices and alerts, and the tab's last API
 * calls (`recordAnswers`).
 */
export async function shown(tab: Tab, target: Locator, timeoutMs = 30_000): Promise<void> {
  try {
    await target.waitFor({ timeout: timeoutMs });
  } catch (err) {
    const words = await tab
      .evaluate(
        `[...document.querySelectorAll('main h1, main [role=alert], main output')].filter((e) => e.textContent.trim()).map((e) => e.tagName.toLowerCase() + ' ' + JSON.stringify(e.textContent.trim())).join('; ')`,
      )
      .catch((e: Error) => `(unread: ${e.message})`);
    const calls = (answers.get(tab) ?? []).map((e) => e.text).join(', ');
    throw new Error(`${String((err as Error).message).split('\n')[0]}; the view showed ${words}; the last API calls: ${calls}`);
  }
}

export async function pageUntil(tab: Tab, expression: string, timeoutMs?: number): Promise<void> {
  await until(expression, async () => ((await tab.evaluate(expression)) ? true : undefined), timeoutMs);
}

/** The view has loaded and axe-core finds no serious or critical violation in it. */
export async function assertAccessible(tab: Tab, name: string): Promise<void> {
  await pageUntil(tab, `!document.body.textContent.includes('Loading…')`);
  // Evaluated, not injected as a script element: the console's CSP allows no inline script.
  if ((await tab.evaluate('typeof window.axe')) === 'undefined') await tab.evaluate(AXE);
  const violations = (await tab.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((result) =>
    result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) })))`)) as {
    id: string;
    impact: string;
    nodes: string[];
  }[];
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(serious, [], `${name}: axe finds no serious or critical violation`);
}

/** Checks a view (assertAccessible) and photographs it as `<dir>/<prefix><view>.png`. */
export function viewChecker(dir: string, prefix = '') {
  return async (tab: Tab, view: string): Promise<void> => {
    await assertAccessible(tab, view);
    await tab.screenshot({ path: path.join(dir, `${prefix}${view}.png`), fullPage: true });
  };
}

/** Steps of one test, each checked by axe-core (no serious or critical violation) and photographed. */
export function stepper(dir: string) {
  let step = 0;
  const shot = async (tab: Tab, name: string) => {
    step += 1;
    await tab.screenshot({ path: path.join(dir, `${String(step).padStart(2, '0')}-${name}.png`), fullPage: true });
  };
  const check = async (tab: Tab, name: string) => {
    await assertAccessible(tab, name);
    await shot(tab, name);
  };
  return { check, shot };
}

/**
 * Picks `name` in the picker labelled `label` (issue 46: fields that take ids are searched by
 * name): types it, then chooses the option of that name, as a person would.
 */
export async function pick(tab: Tab, label: string, name: string, within?: ReturnType<Tab['locator']>): Promise<void> {
  const scope = within ?? tab.locator('body');
  const box = scope.getByRole('combobox', { name: label, exact: true });
  await box.fill(name);
  await tab
    .getByRole('listbox', { name: `${label}: matches` })
    .getByRole('option', { name: new RegExp(`^${escapeRegExp(name)}( ·|$)`) })
    .click();
  // Closed, as a person leaves it: nothing of its list lies over the form below.
  await box.press('Escape');
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Opens one of a page's tabs (issue 46: Content, Audiences, Links, Experiments, Settings). */
export async function openPageTab(tab: Tab, name: string): Promise<void> {
  const chosen = tab.getByRole('tablist', { name: 'Editing the page' }).getByRole('tab', { name, exact: true });
  await chosen.click();
  await until(`the ${name} tab`, async () => ((await chosen.getAttribute('aria-selected')) === 'true' ? true : undefined));
}
