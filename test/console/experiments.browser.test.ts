// Runs once (scripts/test.mjs): the console in a browser; its API is tested on both databases.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import { type Browser, chromium, type Page as Tab } from 'playwright-core';
import { buildConsole } from '../../scripts/build-console.js';
import { createApiKey } from '../../src/admin/repository.js';
import type { Database } from '../../src/db/types.js';
import { newId } from '../../src/ids.js';
import { available, CHROMIUM, skip, until, USER_AGENT } from '../browser.js';
import { type Json, ok, startApp, type TestApp } from '../helpers.js';
import { audienceOf, publishedPage } from '../site/serve-helpers.js';
import { NOT_COLLECTED } from '../../src/visits/repository.js';
import { pageUntil, viewChecker } from './console-tab.js';

// Issue 27 in the console: a page's experiments, the experiment view (arms against the results
// endpoint, the SRM warning, the cumulative rate chart), Start and Conclude through the UI with
// their confirmations and the API's problems, a read-only key, and axe-core on the view.

const ARTIFACTS = path.resolve('test-artifacts', 'console');
const DAY = 86_400_000;
const HOSTILE = '<img src=x onerror="window.pwned=1">Button colour';

let t: TestApp;
let browser: Browser;
let origin: string;
let readKey: string;
const seed = {
  page: {} as Json,
  pageId: '',
  headline: '',
  skewed: '',
  button: '',
  blocked: '',
  buttonAudienceId: '',
  buttonDraftId: '',
  long: '',
  busy: '',
  busyAudienceId: '',
  /** When the busy experiment's 9,999 recent visits were made: the i-th is i × 100 ms before. */
  busyAt: 0,
  oneDay: '',
};

/** One session row of `arm`, started at `at`, as the collector records it. */
function sessionRow(page: Json, audienceId: string, experimentId: string, arm: string, unit: string, at: string, converts: boolean) {
  const id = newId('session');
  return {
    id,
    tenant_id: t.tenantId,
    page_id: page.pageId,
    audience_id: audienceId,
    analytics_session_id: id,
    page_title: page.title,
    page_url: 'https://example.com/',
    session_started_at: at,
    session_ended_at: at,
    time_spent_seconds: 1,
    max_scroll_depth_percentage: 0,
    total_clicks_count: 0,
    questions_asked_count: 0,
    is_bounce: 0,
    has_form_submit: 0,
    has_conversion: converts ? 1 : 0,
    form_submission_id: '',
    form_submission_identifier: '',
    form_submission_email: '',
    form_submission_phone: '',
    utm_campaign: '',
    utm_content: '',
    utm_medium: '',
    utm_source: '',
    utm_term: '',
    created_at: at,
    visit_id: null,
    experiment_id: experimentId,
    experiment_arm: arm,
    experiment_unit: unit,
    ...NOT_COLLECTED,
  };
}

/** `units` visits of `arm`, one per unit, the first `converted` converting, spread over the last `days` days (or at `at(i)`). */
async function visits(
  page: Json,
  audienceId: string,
  experimentId: string,
  arm: string,
  units: number,
  converted: number,
  days: number,
  at = (i: number) => new Date(Date.now() - (i % days) * DAY - 60_000).toISOString(),
) {
  const rows = Array.from({ length: units }, (_, i) =>
    sessionRow(page, audienceId, experimentId, arm, `${arm}-${i}`, at(i), i < converted),
  );
  for (let i = 0; i < rows.length; i += 500)
    await (t.app.db as Kysely<Database>)
      .insertInto('audience_sessions')
      .values(rows.slice(i, i + 500))
      .execute();
}

/** A versions experiment of a new audience (or of `audience`): its published version against a new draft. */
async function versionsExperiment(page: Json, name: string, audience?: Json) {
  const of = audience ?? (await audienceOf(t, page.pageId, { customName: `${name} buyers` }));
  const draft = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences/${of.audienceId}/versions`, {}), 201);
  const experiment = ok(
    await t.req('POST', `/v0/pages/${page.pageId}/experiments`, {
      name,
      kind: 'versions',
      audienceId: of.audienceId,
      arms: [
        { key: 'current', weight: 50, versionId: of.publishedVersion.versionId },
        { key: 'new', weight: 50, versionId: draft.versionId },
      ],
    }),
    201,
  );
  return { audience: of, draft, experimentId: experiment.experimentId as string };
}

/** Started through the API, its start moved `days` days back so seeded visits fall inside it. */
async function startedDaysAgo(experimentId: string, days: number): Promise<void> {
  ok(await t.req('POST', `/v0/pages/${seed.pageId}/experiments/${experimentId}/start`));
  const at = new Date(Date.now() - days * DAY).toISOString();
  const db = t.app.db as Kysely<Database>;
  await db.updateTable('experiments').set({ started_at: at }).where('id', '=', experimentId).execute();
  await db.updateTable('experiment_periods').set({ started_at: at }).where('experiment_id', '=', experimentId).execute();
}

async function seedData(): Promise<void> {
  const page = await publishedPage(t, { name: 'Experiments page' });
  seed.page = page;
  seed.pageId = page.pageId;
  const headline = await versionsExperiment(page, 'Headline test');
  seed.headline = headline.experimentId;
  await startedDaysAgo(seed.headline, 6);
  await visits(page, headline.audience.audienceId, seed.headline, 'current', 300, 30, 6);
  await visits(page, headline.audience.audienceId, seed.headline, 'new', 300, 75, 6);
  // Weights 50/50, units 150 against 50: a sample ratio mismatch.
  const skewed = await versionsExperiment(page, 'Skewed split');
  seed.skewed = skewed.experimentId;
  await startedDaysAgo(seed.skewed, 2);
  await visits(page, skewed.audience.audienceId, seed.skewed, 'current', 150, 15, 2);
  await visits(page, skewed.audience.audienceId, seed.skewed, 'new', 50, 5, 2);
  const button = await versionsExperiment(page, HOSTILE);
  seed.button = button.experimentId;
  seed.buttonAudienceId = button.audience.audienceId;
  seed.buttonDraftId = button.draft.versionId;
  // A draft on the headline test's audience: starting it is refused while that one runs.
  seed.blocked = (await versionsExperiment(page, 'Blocked', headline.audience)).experimentId;
  // Started 100 days ago: only its last 90 days are drawn (a visit 95 days ago is left out).
  const long = await versionsExperiment(page, 'Long runner');
  seed.long = long.experimentId;
  await startedDaysAgo(seed.long, 100);
  const ago = [95, 89, 1].map((d) => new Date(Date.now() - d * DAY).toISOString());
  await visits(page, long.audience.audienceId, seed.long, 'new', 3, 1, 1, (i) => ago[i] ?? '');
  // Started a minute ago, every visit converting: one day, at 100% (issue 38's chart drew such a
  // day on an axis from 2027 to 2029, up to 200%).
  const oneDay = await versionsExperiment(page, 'One day');
  seed.oneDay = oneDay.experimentId;
  ok(await t.req('POST', `/v0/pages/${seed.pageId}/experiments/${seed.oneDay}/start`));
  const startedAt = new Date(Date.now() - 120_000).toISOString();
  await (t.app.db as Kysely<Database>).updateTable('experiments').set({ started_at: startedAt }).where('id', '=', seed.oneDay).execute();
  await (t.app.db as Kysely<Database>)
    .updateTable('experiment_periods')
    .set({ started_at: startedAt })
    .where('experiment_id', '=', seed.oneDay)
    .execute();
  await visits(page, oneDay.audience.audienceId, seed.oneDay, 'new', 3, 3, 1, () => new Date(Date.now() - 60_000).toISOString());
  // Exactly 10,000 visits: all read. The test adds one more to go past the bound.
  const busy = await versionsExperiment(page, 'Busy');
  seed.busy = busy.experimentId;
  seed.busyAudienceId = busy.audience.audienceId;
  await startedDaysAgo(seed.busy, 3);
  seed.busyAt = Date.now();
  const busyAt = (i: number) => new Date(i === 0 ? seed.busyAt - 2 * DAY : seed.busyAt - i * 100).toISOString();
  await visits(page, busy.audience.audienceId, seed.busy, 'current', 10_000, 0, 1, busyAt);
}

before(async () => {
  if (skip) return;
  assert.ok(available, `no browser at ${CHROMIUM}: .ci/run installs Debian's chromium`);
  mkdirSync(ARTIFACTS, { recursive: true });
  await buildConsole();
  t = await startApp();
  origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
  readKey = (await createApiKey(t.app.db, t.tenantId, { scopes: ['read'] })).apiKey;
  await seedData();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
after(async () => {
  await browser?.close();
  await t?.close();
});

async function signedIn(key: string): Promise<Tab> {
  const context = await browser.newContext({ userAgent: USER_AGENT, viewport: { width: 1280, height: 900 } });
  const tab = await context.newPage();
  assert.equal((await tab.goto(`${origin}/console/`))?.status(), 200);
  await tab.getByLabel('API key').fill(key);
  await tab.getByRole('button', { name: 'Sign in' }).click();
  await tab.getByRole('button', { name: 'Sign out' }).waitFor();
  return tab;
}

async function loaded(tab: Tab, timeoutMs?: number): Promise<void> {
  await pageUntil(tab, `!document.body.textContent.includes('Loading…')`, timeoutMs);
}

const axe = viewChecker(ARTIFACTS);

const open = async (tab: Tab, experimentId: string, timeoutMs?: number) => {
  await tab.evaluate(`location.hash = ${JSON.stringify(`#/pages/${seed.pageId}/experiments/${experimentId}`)}`);
  await tab.locator(`[data-decision]`).waitFor();
  await loaded(tab, timeoutMs);
};
const midnight = (at: number) => new Date(at).setHours(0, 0, 0, 0);
const experimentUrl = (id: string) => `/v0/pages/${seed.pageId}/experiments/${id}`;

// The console's formats, written again here so a change to either shows.
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const signed = (x: number) => `${x >= 0 ? '+' : ''}${pct(x)}`;
const lift = (l: Json) => (l ? `${signed(l.estimate)} (${signed(l.low)} to ${signed(l.high)})` : '—');
const pValue = (p: number | null) => (p === null ? '—' : p < 0.001 ? '< 0.001' : p.toFixed(3));

describe('experiments in the console', { skip }, () => {
  test('the list, the arms against the results, the chart, the SRM warning', { timeout: 120_000 }, async () => {
    const tab = await signedIn(t.key);
    await tab.evaluate(`location.hash = ${JSON.stringify(`#/pages/${seed.pageId}/experiments`)}`);
    const list = tab.getByRole('table', { name: 'Experiments on this page' });
    await list.waitFor();
    assert.equal(await list.locator('tbody tr').count(), 7);
    const row = list.getByRole('row', { name: /Headline test/ });
    assert.match((await row.textContent()) ?? '', /versions.*running/);
    await row.getByRole('link', { name: 'Headline test' }).click();
    await tab.getByRole('heading', { level: 1, name: /Headline test/ }).waitFor();
    assert.match(tab.url(), new RegExp(`#/pages/${seed.pageId}/experiments/${seed.headline}$`));
    await loaded(tab);

    const results = ok(await t.req('GET', `${experimentUrl(seed.headline)}/results`));
    assert.equal(results.srm.mismatch, false);
    assert.ok(
      results.arms.some((a: Json) => a.lift !== null),
      'a bounded lift, to check its format',
    );
    const arms = tab.getByRole('table', { name: /^Arms/ });
    assert.equal(await arms.locator('tbody tr').count(), results.arms.length);
    for (const a of results.arms) {
      const cells = await arms.locator(`tr[data-arm="${a.key}"]`).locator('th, td').allTextContents();
      assert.deepEqual(
        cells,
        [a.key, String(a.weight), String(a.units), String(a.visits), String(a.conversions)].concat([
          pct(a.conversionRate),
          lift(a.lift),
          pct(a.probabilityBest),
          pValue(a.pValue),
        ]),
        `arm ${a.key}`,
      );
    }
    assert.equal(await tab.locator('[data-decision]').getAttribute('data-decision'), results.decision);
    assert.equal(await tab.locator('[data-results-winner]').textContent(), results.winner ?? '—');
    assert.equal(await tab.locator('[data-srm]').count(), 0, 'no SRM warning when the split matches');

    // The chart: a day from the start to today (7), each arm's cumulative rate; "—" before any visit.
    await pageUntil(tab, `document.querySelector('.plot')?.getAttribute('data-points') === '7'`);
    await tab.getByText('Show the numbers').click();
    const rows = await tab
      .locator('figure.chart details tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(1).map((td) => td.textContent)));
    assert.equal(rows.length, 7, JSON.stringify(rows));
    assert.deepEqual(rows[0], ['—', '—'], 'no visits on the day it started');
    assert.deepEqual(rows.at(-1), ['10', '25'], 'current 30 of 300, new 75 of 300');
    assert.match((await tab.locator('[data-chart-note]').textContent()) ?? '', /from 600 sessions/);
    // The axes: the experiment's days only, and a rate axis from 0 that never passes 100%.
    const domain = async (axis: 'x' | 'y') => ((await tab.locator('.plot').getAttribute(`data-${axis}`)) ?? '').split(' ').map(Number);
    const first = midnight(Date.now() - 6 * DAY) / 1000;
    assert.deepEqual(await domain('x'), [first, midnight(Date.now()) / 1000], 'from the first day to today');
    const [low, high] = await domain('y');
    assert.equal(low, 0);
    assert.ok(high !== undefined && high >= 25 && high <= 100, `the rate axis ends at ${high}`);
    await axe(tab, 'experiment');

    await open(tab, seed.skewed);
    const warning = tab.getByRole('alert').filter({ hasText: 'Sample ratio mismatch' });
    await warning.waitFor();
    assert.match((await warning.textContent()) ?? '', /^Sample ratio mismatch \(p < 0\.001\): the arms' units are not in the proportion/);
    assert.equal(ok(await t.req('GET', `${experimentUrl(seed.skewed)}/results`)).srm.mismatch, true);
    await axe(tab, 'experiment-srm');

    // One day at 100%: that day alone, up to 100%.
    await open(tab, seed.oneDay);
    await pageUntil(tab, `document.querySelector('.plot')?.getAttribute('data-points') === '1'`);
    const today = midnight(Date.now()) / 1000;
    assert.deepEqual(await domain('x'), [today, today + DAY / 1000], 'one day, not years');
    assert.deepEqual(await domain('y'), [0, 100], 'a 100% rate is drawn up to 100%, not 200%');
    await tab.getByText('Show the numbers').click();
    assert.deepEqual(
      await tab
        .locator('figure.chart details tbody tr td')
        .allTextContents()
        .then((cells) => cells.slice(1)),
      ['—', '100'],
      'the current arm has no visits; the new one converts every one',
    );

    // The bounds: 90 days of a longer experiment; 10,000 sessions read, then no more.
    const note = () => tab.locator('[data-chart-note]').textContent();
    await open(tab, seed.long);
    await pageUntil(tab, `document.querySelector('.plot')?.getAttribute('data-points') === '91'`);
    assert.match((await note()) ?? '', /from 2 sessions/);
    assert.doesNotMatch((await note()) ?? '', /Only the newest/);
    // Its chart reads 10,000 sessions a page at a time: seconds on a quiet machine, more on a loaded one.
    await open(tab, seed.busy, 60_000);
    await pageUntil(tab, `document.querySelector('.plot')?.getAttribute('data-points') === '4'`);
    assert.match((await note()) ?? '', /from 10,000 sessions/);
    assert.doesNotMatch((await note()) ?? '', /Only the newest/, 'exactly 10,000: all read');
    const late = new Date(seed.busyAt + 1000).toISOString();
    await (t.app.db as Kysely<Database>)
      .insertInto('audience_sessions')
      .values(sessionRow(seed.page, seed.busyAudienceId, seed.busy, 'current', 'late', late, false))
      .execute();
    await tab.reload();
    await tab.locator('[data-chart-note]').waitFor();
    assert.match((await note()) ?? '', /from 10,000 sessions/);
    assert.match((await note()) ?? '', /Only the newest 10,000 sessions are read: the chart begins at/);
    // The 10,000th newest is the 9,999th recent visit: the chart starts on its day.
    const oldestRead = new Date(seed.busyAt - 9_999 * 100);
    const days = Math.round((midnight(Date.now()) - midnight(oldestRead.getTime())) / DAY) + 1;
    await pageUntil(tab, `document.querySelector('.plot')?.getAttribute('data-points') === '${days}'`);
    assert.equal(await tab.locator('[data-chart-note] time').getAttribute('datetime'), oldestRead.toISOString());

    // An unknown experiment: the API's problem, not a blank view.
    await tab.evaluate(`location.hash = ${JSON.stringify(`#/pages/${seed.pageId}/experiments/experiment_nope`)}`);
    await tab.getByRole('alert').filter({ hasText: '(404)' }).waitFor();
    await tab.context().close();
  });

  test('Start and Conclude, confirmed, with the API’s problems beside them', { timeout: 120_000 }, async () => {
    const tab = await signedIn(t.key);
    const dialogs: string[] = [];
    const answer = (accept: boolean) =>
      tab.once('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void (accept ? dialog.accept() : dialog.dismiss());
      });
    const sent: string[] = [];
    tab.on('request', (r) => r.method() === 'POST' && sent.push(new URL(r.url()).pathname));

    // Refused by the API (another experiment runs on this audience): its detail beside Start.
    await open(tab, seed.blocked);
    answer(true);
    await tab.getByRole('button', { name: 'Start' }).click();
    await tab
      .getByRole('alert')
      .filter({ hasText: `Experiment ${seed.headline} is running on this audience` })
      .waitFor();
    assert.match((await tab.getByRole('alert').textContent()) ?? '', /\(409\)/);
    assert.equal(ok(await t.req('GET', experimentUrl(seed.blocked))).status, 'draft');

    // A hostile name is text; declining the confirmation sends nothing.
    await open(tab, seed.button);
    assert.equal(await tab.getByRole('heading', { level: 1 }).locator('img').count(), 0);
    assert.match((await tab.getByRole('heading', { level: 1 }).textContent()) ?? '', /<img src=x onerror=/);
    sent.length = 0;
    answer(false);
    await tab.getByRole('button', { name: 'Start' }).click();
    await until('the dialog', async () => (dialogs.length === 2 ? true : undefined));
    assert.match(dialogs[1] ?? '', /^Start “<img/);
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(sent, [], 'declined: no request');
    assert.equal(ok(await t.req('GET', experimentUrl(seed.button))).status, 'draft');

    answer(true);
    await tab.getByRole('button', { name: 'Start' }).click();
    await tab.getByRole('button', { name: 'Conclude' }).waitFor();
    assert.equal(ok(await t.req('GET', experimentUrl(seed.button))).status, 'running');
    assert.equal(await tab.getByRole('button', { name: 'Start' }).count(), 0, 'Start only for a draft');
    await axe(tab, 'experiment-running');

    // No winner chosen: said beside the button, nothing asked or sent.
    sent.length = 0;
    await tab.getByRole('button', { name: 'Conclude' }).click();
    await tab.getByRole('alert').filter({ hasText: 'Choose the winner first.' }).waitFor();
    assert.deepEqual(sent, []);
    assert.equal(dialogs.length, 3);

    await tab.getByLabel('Winner').selectOption('new');
    answer(true);
    await tab.getByRole('button', { name: 'Conclude' }).click();
    await tab.locator('[data-winner]').waitFor();
    assert.match(dialogs[3] ?? '', /with new\? Its version is published/);
    const concluded = ok(await t.req('GET', experimentUrl(seed.button)));
    assert.equal(concluded.status, 'concluded');
    assert.equal(concluded.winner, 'new');
    assert.equal(await tab.locator('[data-winner]').textContent(), 'new');
    const audience = ok(await t.req('GET', `/v0/pages/${seed.pageId}/audiences/${seed.buttonAudienceId}`));
    assert.equal(audience.publishedVersion.versionId, seed.buttonDraftId, "the winner's version is published");
    assert.equal(await tab.locator('button[data-write]').count(), 0, 'no Start or Conclude once concluded');
    assert.equal(await tab.evaluate('window.pwned'), undefined);
    await axe(tab, 'experiment-concluded');
    await tab.context().close();
  });

  test('a read-only key: Start and Conclude disabled, with the reason', { timeout: 90_000 }, async () => {
    const tab = await signedIn(readKey);
    await tab.getByText('read-only key').waitFor();
    const reason = 'This API key may only read';
    await open(tab, seed.blocked);
    const start = tab.getByRole('button', { name: 'Start' });
    assert.equal(await start.isDisabled(), true);
    assert.equal(await start.getAttribute('title'), reason);
    await tab.getByText(`${reason}: Start and Conclude are off.`).waitFor();

    await open(tab, seed.headline);
    const conclude = tab.getByRole('button', { name: 'Conclude' });
    assert.equal(await conclude.isDisabled(), true);
    assert.equal(await conclude.getAttribute('title'), reason);
    assert.equal(await tab.getByLabel('Winner').isDisabled(), true);
    await tab.getByText(`${reason}: Start and Conclude are off.`).waitFor();
    await axe(tab, 'experiment-read-only');
    assert.equal(ok(await t.req('GET', experimentUrl(seed.headline))).status, 'running');
    await tab.context().close();
  });

  test('a decision that stays, with what the data now say beside it (issue 45)', { timeout: 90_000 }, async () => {
    // As if a look had found `new` the winner at p = 0.01; the data now no longer show it.
    const db = t.app.db as Kysely<Database>;
    const at = new Date().toISOString();
    await db.updateTable('experiments').set({ first_winner_at: at, first_winner: 'new' }).where('id', '=', seed.skewed).execute();
    await db
      .insertInto('experiment_look_minima')
      .values({ experiment_id: seed.skewed, arm: 'new', p_value: 0.01, difference: 0.05, looked_at: at })
      .execute();
    const results = ok(await t.req('GET', `${experimentUrl(seed.skewed)}/results`));
    assert.deepEqual([results.decision, results.winner], ['winner', 'new']);
    assert.equal(results.current.decision, 'collecting');
    const tab = await signedIn(t.key);
    await open(tab, seed.skewed);
    assert.equal(await tab.locator('[data-decision]').getAttribute('data-decision'), 'winner');
    assert.equal(await tab.locator('[data-results-winner]').textContent(), 'new');
    const now = tab.locator('[data-current-decision]');
    assert.equal(await now.getAttribute('data-current-decision'), 'collecting');
    assert.match((await now.textContent()) ?? '', /^Collecting: a decision stays once made$/);
    const cell = await tab.getByRole('table', { name: /^Arms/ }).locator('tr[data-arm="new"] td').last().textContent();
    assert.equal(cell, `0.010 (now ${pValue(results.arms[1].current.pValue)})`);
    await axe(tab, 'experiment-kept-winner');
    await tab.context().close();
  });
});
