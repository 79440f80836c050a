import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/types.js';
import { newId } from '../../src/ids.js';
import { ok, startApp, type Json, type TestApp } from '../helpers.js';
import { audienceOf, publishedPage } from '../site/serve-helpers.js';
import { NOT_COLLECTED } from '../../src/visits/repository.js';

// Issue 27: a bandit's weights follow its conversions (Thompson sampling, at most every 15
// minutes, never below 1%), each recomputation a period of its results; and analytics group by arm.

let t: TestApp;
before(async () => {
  t = await startApp({}, { reweighEveryMs: 100 });
});
after(async () => {
  await t.close();
});

/** Visits of `units` units of `arm`, `converted` of them converting, as the collector records them. */
async function visits(page: Json, audienceId: string, experimentId: string, arm: string, units: number, converted: number) {
  const db = t.app.db as Kysely<Database>;
  const at = new Date().toISOString();
  for (let i = 0; i < units; i++) {
    const id = newId('session');
    await db
      .insertInto('audience_sessions')
      .values({
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
        experiment_unit: `${arm}-${i}`,
        ...NOT_COLLECTED,
      })
      .execute();
  }
}

describe('a bandit experiment', () => {
  test('recomputes its weights toward the better arm, never below 1%, as a new period', { timeout: 30_000 }, async () => {
    const page = await publishedPage(t);
    const audience = await audienceOf(t, page.pageId, { customName: 'Bandit' });
    const draft = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences/${audience.audienceId}/versions`, {}), 201);
    const base = `/v0/pages/${page.pageId}/experiments`;
    const experiment = ok(
      await t.req('POST', base, {
        name: 'Bandit',
        kind: 'versions',
        allocation: 'bandit',
        audienceId: audience.audienceId,
        arms: [
          { key: 'old', weight: 5000, versionId: audience.publishedVersion.versionId },
          { key: 'new', weight: 5000, versionId: draft.versionId },
        ],
      }),
      201,
    );
    ok(await t.req('POST', `${base}/${experiment.experimentId}/start`));
    await visits(page, audience.audienceId, experiment.experimentId, 'old', 200, 2);
    await visits(page, audience.audienceId, experiment.experimentId, 'new', 200, 60);
    // Due now, not in 15 minutes.
    await (t.app.db as Kysely<Database>)
      .updateTable('experiments')
      .set({ next_reweigh_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', experiment.experimentId)
      .execute();
    let results: Json;
    for (let i = 0; i < 100; i++) {
      results = ok(await t.req('GET', `${base}/${experiment.experimentId}/results`));
      if (results.periods.length > 1) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(results.periods.length, 2);
    assert.equal(results.periods[1].reason, 'bandit');
    const weights = results.periods[1].weights;
    assert.equal(weights.old + weights.new, 10000);
    assert.ok(weights.old >= 100, `the floor: ${weights.old}`);
    assert.ok(weights.new > 9000, `the better arm: ${weights.new}`);
    const now = ok(await t.req('GET', `${base}/${experiment.experimentId}`));
    assert.deepEqual(
      now.arms.map((a: Json) => a.weight),
      [weights.old, weights.new],
    );
    // The next one is at least 15 minutes away.
    const row = await (t.app.db as Kysely<Database>)
      .selectFrom('experiments')
      .select('next_reweigh_at')
      .where('id', '=', experiment.experimentId)
      .executeTakeFirstOrThrow();
    assert.ok(Date.parse(row.next_reweigh_at ?? '') > Date.now() + 14 * 60_000);

    // Analytics by arm: the visits of each arm, from the sessions.
    const analytics = ok(await t.req('GET', `/v0/pages/${page.pageId}/analytics?groupBy=arm`));
    const byArm = Object.fromEntries(analytics.groups.map((g: Json) => [g.key, g.visits]));
    assert.deepEqual(byArm, { old: 200, new: 200 });
  });
});

describe('the first winner', () => {
  test('is recorded by the scheduled look, not by reading the results, and kept', { timeout: 30_000 }, async () => {
    const page = await publishedPage(t);
    const audience = await audienceOf(t, page.pageId, { customName: 'First winner' });
    const draft = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences/${audience.audienceId}/versions`, {}), 201);
    const base = `/v0/pages/${page.pageId}/experiments`;
    const experiment = ok(
      await t.req('POST', base, {
        name: 'Fixed',
        kind: 'versions',
        audienceId: audience.audienceId,
        minimumUnitsPerArm: 100,
        arms: [
          { key: 'old', weight: 1, versionId: audience.publishedVersion.versionId },
          { key: 'new', weight: 1, versionId: draft.versionId },
        ],
      }),
      201,
    );
    const url = `${base}/${experiment.experimentId}`;
    const started = ok(await t.req('POST', `${url}/start`));
    await visits(page, audience.audienceId, experiment.experimentId, 'old', 300, 3);
    await visits(page, audience.audienceId, experiment.experimentId, 'new', 300, 90);
    let results: Json;
    for (let i = 0; i < 100; i++) {
      results = ok(await t.req('GET', `${url}/results`));
      if (results.firstWinnerAt !== null) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(results.decision, 'winner');
    assert.equal(results.winner, 'new');
    assert.ok(results.firstWinnerAt >= started.startedAt, `${results.firstWinnerAt} after ${started.startedAt}`);
    // Looked at no more: its lease is gone, and the first winner stays whatever later looks say.
    const db = t.app.db as Kysely<Database>;
    const looks = await db.selectFrom('experiment_looks').selectAll().where('experiment_id', '=', experiment.experimentId).execute();
    assert.deepEqual(looks, []);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(ok(await t.req('GET', `${url}/results`)).firstWinnerAt, results.firstWinnerAt);
  });
});
