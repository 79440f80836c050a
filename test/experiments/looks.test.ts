import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/types.js';
import { lookForFirstWinners } from '../../src/experiments/looks.js';
import { newId } from '../../src/ids.js';
import { NOT_COLLECTED } from '../../src/visits/repository.js';
import { ok, startApp, type Json, type TestApp } from '../helpers.js';
import { audienceOf, publishedPage } from '../site/serve-helpers.js';

// Issue 45: strong effects survive moving traffic, and a decision never goes back. The scheduled
// looks are run by the tests themselves (the app's own rounds are an hour apart here).

let t: TestApp;
let db: Kysely<Database>;
before(async () => {
  t = await startApp({}, { reweighEveryMs: 3_600_000 });
  db = t.app.db as Kysely<Database>;
});
after(async () => {
  await t.close();
});

const pageOf = new Map<string, string>();
const audienceOfExperiment = new Map<string, string>();

/** `units` new units of `arm`, one visit each, the first `converted` of them converting, starting now. */
async function visits(experimentId: string, arm: string, units: number, converted: number) {
  const at = new Date().toISOString();
  const rows = Array.from({ length: units }, (_, i) => {
    const id = newId('session');
    return {
      id,
      tenant_id: t.tenantId,
      page_id: pageOf.get(experimentId) ?? '',
      audience_id: audienceOfExperiment.get(experimentId) ?? '',
      analytics_session_id: id,
      page_title: '',
      page_url: 'https://example.com/',
      session_started_at: at,
      session_ended_at: at,
      time_spent_seconds: 1,
      max_scroll_depth_percentage: 0,
      total_clicks_count: 0,
      questions_asked_count: 0,
      is_bounce: 0,
      has_form_submit: 0,
      has_conversion: i < converted ? 1 : 0,
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
      experiment_unit: `unit-${id}`,
      ...NOT_COLLECTED,
    };
  });
  for (let i = 0; i < rows.length; i += 200)
    await db
      .insertInto('audience_sessions')
      .values(rows.slice(i, i + 200))
      .execute();
}

/** A running holdout of `control` (the baseline) and `personalised`, deciding from `minimumUnitsPerArm` units. */
async function holdout(minimumUnitsPerArm: number): Promise<{ id: string; url: string }> {
  const page = await publishedPage(t);
  const base = `/v0/pages/${page.pageId}/experiments`;
  const experiment = ok(
    await t.req('POST', base, {
      name: 'Holdout',
      kind: 'holdout',
      minimumUnitsPerArm,
      arms: [
        { key: 'control', weight: 50 },
        { key: 'personalised', weight: 50 },
      ],
    }),
    201,
  );
  const url = `${base}/${experiment.experimentId}`;
  pageOf.set(experiment.experimentId, page.pageId);
  audienceOfExperiment.set(experiment.experimentId, (await audienceOf(t, page.pageId, { customName: 'Someone' })).audienceId);
  ok(await t.req('POST', `${url}/start`));
  return { id: experiment.experimentId, url };
}

const weights = (control: number, personalised: number) => ({
  arms: [
    { key: 'control', weight: control },
    { key: 'personalised', weight: personalised },
  ],
});

describe('traffic moved to 1/99', () => {
  test('a winner at 50/50 stays a winner after two periods with 1 and 3 control units', { timeout: 60_000 }, async () => {
    const { id, url } = await holdout(1);
    await visits(id, 'control', 92, 5);
    await visits(id, 'personalised', 108, 51);
    const before = ok(await t.req('GET', `${url}/results`));
    assert.equal(before.decision, 'winner');
    assert.equal(before.winner, 'personalised');
    assert.ok(Math.abs(before.arms[1].pValue - 0.0021) < 0.0001, `p = ${before.arms[1].pValue}`);

    ok(await t.req('PATCH', url, weights(1, 99)));
    await visits(id, 'control', 1, 1);
    await visits(id, 'personalised', 399, 188);
    ok(await t.req('PATCH', url, weights(2, 198)));
    await visits(id, 'control', 3, 0);
    await visits(id, 'personalised', 1197, 563);
    const results = ok(await t.req('GET', `${url}/results`));
    assert.equal(results.periods.length, 3);
    assert.deepEqual(
      results.arms.map((a: Json) => a.units),
      [96, 1704],
    );
    // No look has run: this is the current look alone, and it only gained evidence.
    assert.equal(results.firstWinnerAt, null);
    assert.deepEqual(results.current, { decision: 'winner', winner: 'personalised' });
    assert.equal(results.decision, 'winner');
    assert.ok(results.arms[1].pValue < before.arms[1].pValue, `p = ${results.arms[1].pValue}`);
    assert.equal(results.arms[1].current.pValue, results.arms[1].pValue);
  });
});

describe('a decision never goes back', () => {
  test('once a look said winner, the decision, its arm and firstWinnerAt stay; the current look shows beside', {
    timeout: 60_000,
  }, async () => {
    const { id, url } = await holdout(100);
    await visits(id, 'control', 300, 3);
    await visits(id, 'personalised', 300, 90);
    await lookForFirstWinners(db, 0);
    const won = ok(await t.req('GET', `${url}/results`));
    assert.equal(won.decision, 'winner');
    assert.equal(won.winner, 'personalised');
    assert.notEqual(won.firstWinnerAt, null);
    const row = await db.selectFrom('experiments').select(['first_winner']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.first_winner, 'personalised');

    // Control catches up: this look alone no longer sees a difference.
    await visits(id, 'control', 1000, 400);
    await lookForFirstWinners(db, 0);
    const later = ok(await t.req('GET', `${url}/results`));
    assert.equal(later.current.decision, 'collecting');
    assert.equal(later.current.winner, null);
    assert.ok(later.arms[1].current.pValue >= 0.05, `current p = ${later.arms[1].current.pValue}`);
    assert.equal(later.decision, 'winner');
    assert.equal(later.winner, 'personalised');
    assert.equal(later.firstWinnerAt, won.firstWinnerAt);
    // The always-valid p-value is the smallest so far, not this look's.
    assert.equal(later.arms[1].pValue, won.arms[1].pValue);
    assert.ok(later.arms[1].pValue < 0.05);
    assert.equal(later.arms[0].pValue, null);
    assert.equal(later.arms[0].current.pValue, null);
  });

  test('the p-value is the running minimum over the looks, before any winner too', { timeout: 60_000 }, async () => {
    const { id, url } = await holdout(100);
    await visits(id, 'control', 400, 40);
    await visits(id, 'personalised', 400, 56);
    await lookForFirstWinners(db, 0);
    const first = ok(await t.req('GET', `${url}/results`));
    const p = first.arms[1].pValue;
    assert.ok(p > 0.05 && p < 1, `p = ${p}`);
    assert.equal(first.decision, 'collecting');
    const stored = await db.selectFrom('experiment_look_minima').selectAll().where('experiment_id', '=', id).execute();
    assert.equal(stored.length, 1);
    assert.equal(stored[0]?.arm, 'personalised');
    assert.equal(stored[0]?.p_value, p);

    // The arms converge: this look's p-value rises, the one shown does not.
    await visits(id, 'control', 400, 56);
    await visits(id, 'personalised', 400, 40);
    await lookForFirstWinners(db, 0);
    const second = ok(await t.req('GET', `${url}/results`));
    assert.ok(second.arms[1].current.pValue > p, `current p = ${second.arms[1].current.pValue}`);
    assert.equal(second.arms[1].pValue, p);
    assert.equal(second.decision, 'collecting');
    assert.equal(second.firstWinnerAt, null);
  });

  test('below minimumUnitsPerArm, no look keeps a p-value', { timeout: 60_000 }, async () => {
    const { id, url } = await holdout(101);
    await visits(id, 'control', 100, 1);
    await visits(id, 'personalised', 101, 60);
    await lookForFirstWinners(db, 0);
    const stored = await db.selectFrom('experiment_look_minima').selectAll().where('experiment_id', '=', id).execute();
    assert.deepEqual(stored, []);
    const results = ok(await t.req('GET', `${url}/results`));
    assert.equal(results.decision, 'collecting');
    assert.equal(results.firstWinnerAt, null);
    // One more control unit: decided, and the look records it.
    await visits(id, 'control', 1, 0);
    await lookForFirstWinners(db, 0);
    const decided = ok(await t.req('GET', `${url}/results`));
    assert.equal(decided.decision, 'winner');
    assert.notEqual(decided.firstWinnerAt, null);
  });
});
