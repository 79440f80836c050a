import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, ok, startApp, type Json, type TestApp } from '../helpers.js';
import { audienceOf, publishedPage } from '../site/serve-helpers.js';

// Issue 27: experiments through the API: the resource, its bounds, its lifecycle and its events.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const HOLDOUT = {
  name: 'Personalisation pays',
  kind: 'holdout',
  arms: [
    { key: 'control', weight: 50 },
    { key: 'personalised', weight: 50 },
  ],
};
const base = (pageId: string) => `/v0/pages/${pageId}/experiments`;
const events = async (type: string): Promise<Json[]> => ok(await t.req('GET', `/v0/events?type=${type}&limit=100`)).items;

async function versionsSetup() {
  const page = await publishedPage(t);
  const audience = await audienceOf(t, page.pageId, { customName: 'Buyers' });
  const draft = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences/${audience.audienceId}/versions`, {}), 201);
  return { page, audience, published: audience.publishedVersion, draft };
}

describe('creating an experiment', () => {
  test('a holdout: 201 draft, with defaults, control and personalised', async () => {
    const page = await publishedPage(t);
    const created = ok(await t.req('POST', base(page.pageId), HOLDOUT), 201);
    assert.match(created.experimentId, /^experiment_[0-9a-z]{26}$/);
    assert.deepEqual(
      { ...created, experimentId: undefined, createdAt: undefined, updatedAt: undefined },
      {
        experimentId: undefined,
        pageId: page.pageId,
        audienceId: null,
        name: HOLDOUT.name,
        kind: 'holdout',
        allocation: 'fixed',
        minimumUnitsPerArm: 100,
        status: 'draft',
        arms: HOLDOUT.arms.map((a) => ({ ...a, versionId: null })),
        winner: null,
        startedAt: null,
        concludedAt: null,
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    assert.deepEqual(ok(await t.req('GET', `${base(page.pageId)}/${created.experimentId}`)), created);
    const list = ok(await t.req('GET', base(page.pageId)));
    assert.equal(list.totalCount, 1);
    assert.deepEqual(list.items, [created]);
  });

  test('a versions experiment names a draft or published version of its audience per arm', async () => {
    const { page, audience, published, draft } = await versionsSetup();
    const body = {
      name: 'Headline test',
      kind: 'versions',
      audienceId: audience.audienceId,
      allocation: 'bandit',
      minimumUnitsPerArm: 1,
      arms: [
        { key: 'current', weight: 1, versionId: published.versionId },
        { key: 'new-headline', weight: 10000, versionId: draft.versionId },
      ],
    };
    const created = ok(await t.req('POST', base(page.pageId), body), 201);
    assert.equal(created.audienceId, audience.audienceId);
    assert.equal(created.allocation, 'bandit');
    assert.equal(created.minimumUnitsPerArm, 1);
    assert.deepEqual(created.arms, body.arms);
  });

  test('minimumVisitsPerArm, the former name, is an alias of minimumUnitsPerArm; answers name only the new one', async () => {
    const page = await publishedPage(t);
    const viaAlias = ok(await t.req('POST', base(page.pageId), { ...HOLDOUT, minimumVisitsPerArm: 250 }), 201);
    assert.equal(viaAlias.minimumUnitsPerArm, 250);
    assert.equal('minimumVisitsPerArm' in viaAlias, false);
    const both = ok(await t.req('POST', base(page.pageId), { ...HOLDOUT, minimumUnitsPerArm: 7, minimumVisitsPerArm: 7 }), 201);
    assert.equal(both.minimumUnitsPerArm, 7);
    // A body read back with the old name still goes: accepted when equal, 400 naming it otherwise.
    const url = `${base(page.pageId)}/${viaAlias.experimentId}`;
    const renamed = ok(await t.req('PATCH', url, { ...viaAlias, minimumVisitsPerArm: 250, name: 'Renamed' }));
    assert.equal(renamed.name, 'Renamed');
    expectProblem(await t.req('PATCH', url, { minimumVisitsPerArm: 251 }), 400, 'validation_failed', ['/minimumVisitsPerArm']);
    expectProblem(await t.req('PATCH', url, { minimumUnitsPerArm: 251 }), 400, 'validation_failed', ['/minimumUnitsPerArm']);
    assert.equal(ok(await t.req('GET', url)).minimumUnitsPerArm, 250);
  });

  test('bounds just inside and outside, each 400 naming its field', async () => {
    const page = await publishedPage(t);
    const post = (body: unknown) => t.req('POST', base(page.pageId), body);
    const bad: [unknown, string][] = [
      [{ ...HOLDOUT, name: '' }, '/name'],
      [{ ...HOLDOUT, name: 'x'.repeat(256) }, '/name'],
      [{ ...HOLDOUT, kind: 'split' }, '/kind'],
      [{ ...HOLDOUT, arms: [{ key: 'control', weight: 1 }] }, '/arms'],
      [{ ...HOLDOUT, arms: Array.from({ length: 9 }, (_, i) => ({ key: `a${i}`, weight: 1 })) }, '/arms'],
      [{ ...HOLDOUT, arms: [{ key: 'Control', weight: 1 }, HOLDOUT.arms[1]] }, '/arms/0/key'],
      [{ ...HOLDOUT, arms: [{ key: 'x'.repeat(41), weight: 1 }, HOLDOUT.arms[1]] }, '/arms/0/key'],
      [{ ...HOLDOUT, arms: [{ key: 'control', weight: 0 }, HOLDOUT.arms[1]] }, '/arms/0/weight'],
      [{ ...HOLDOUT, arms: [{ key: 'control', weight: 10001 }, HOLDOUT.arms[1]] }, '/arms/0/weight'],
      [{ ...HOLDOUT, arms: [{ key: 'control', weight: 1.5 }, HOLDOUT.arms[1]] }, '/arms/0/weight'],
      [{ ...HOLDOUT, arms: [HOLDOUT.arms[0], { key: 'control', weight: 5 }] }, '/arms/1/key'],
      [{ ...HOLDOUT, arms: [HOLDOUT.arms[0], { key: 'treated', weight: 5 }] }, '/arms'],
      [{ ...HOLDOUT, audienceId: 'audience_01h0000000000000000000000a' }, '/audienceId'],
      [{ ...HOLDOUT, arms: [{ ...HOLDOUT.arms[0], versionId: 'version_x' }, HOLDOUT.arms[1]] }, '/arms/0/versionId'],
      [{ ...HOLDOUT, allocation: 'greedy' }, '/allocation'],
      [{ ...HOLDOUT, minimumUnitsPerArm: 0 }, '/minimumUnitsPerArm'],
      [{ ...HOLDOUT, minimumUnitsPerArm: 1_000_000_001 }, '/minimumUnitsPerArm'],
      [{ ...HOLDOUT, minimumUnitsPerArm: 2.5 }, '/minimumUnitsPerArm'],
      [{ ...HOLDOUT, minimumVisitsPerArm: 0 }, '/minimumVisitsPerArm'],
      [{ ...HOLDOUT, minimumVisitsPerArm: 1_000_000_001 }, '/minimumVisitsPerArm'],
      [{ ...HOLDOUT, minimumUnitsPerArm: 5, minimumVisitsPerArm: 6 }, '/minimumVisitsPerArm'],
      [{ ...HOLDOUT, colour: 'red' }, '/colour'],
      [{ ...HOLDOUT, kind: 'versions' }, '/audienceId'],
    ];
    for (const [body, path] of bad) expectProblem(await post(body), 400, 'validation_failed', [path]);
    // Just inside: 255 characters, 40-character keys, weights 1 and 10000, 8 arms.
    ok(
      await post({
        ...HOLDOUT,
        name: 'x'.repeat(255),
        minimumUnitsPerArm: 1_000_000_000,
        arms: [
          { key: 'control', weight: 1 },
          { key: 'personalised', weight: 10000 },
        ],
      }),
      201,
    );
    const { page: vp, audience } = await versionsSetup();
    const versions = [];
    for (let i = 0; i < 8; i++)
      versions.push(ok(await t.req('POST', `/v0/pages/${vp.pageId}/audiences/${audience.audienceId}/versions`, {}), 201));
    const eight = versions.map((v, i) => ({ key: i === 0 ? 'k'.repeat(40) : `arm-${i}`, weight: 1, versionId: v.versionId }));
    ok(await t.req('POST', base(vp.pageId), { name: 'Eight', kind: 'versions', audienceId: audience.audienceId, arms: eight }), 201);
    assert.equal(ok(await t.req('GET', base(page.pageId))).totalCount, 1, 'nothing else was written');
  });

  test("a version of another audience is 400, a cancelled one 409, each naming the arm's versionId", async () => {
    const { page, audience, published, draft } = await versionsSetup();
    const other = await audienceOf(t, page.pageId, { customName: 'Others' });
    const body = (versionId: string) => ({
      name: 'V',
      kind: 'versions',
      audienceId: audience.audienceId,
      arms: [
        { key: 'a', weight: 1, versionId: published.versionId },
        { key: 'b', weight: 1, versionId },
      ],
    });
    expectProblem(await t.req('POST', base(page.pageId), body(other.publishedVersion.versionId)), 400, 'validation_failed', [
      '/arms/1/versionId',
    ]);
    expectProblem(await t.req('POST', base(page.pageId), body(published.versionId)), 400, 'validation_failed', ['/arms/1/versionId']);
    ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences/${audience.audienceId}/versions/${draft.versionId}/cancel`), 200);
    expectProblem(await t.req('POST', base(page.pageId), body(draft.versionId)), 409, 'conflict', ['/arms/1/versionId']);
    const foreign = await t.newTenant('Experiments other');
    expectProblem(await t.req('POST', base(page.pageId), HOLDOUT, { key: foreign.key }), 404, 'not_found');
    expectProblem(await t.req('POST', base('page_01h0000000000000000000000a'), HOLDOUT), 404, 'not_found');
  });
});

describe('the lifecycle: draft → running → concluded', () => {
  test('start, one running per audience, weights start a new period, conclude a holdout', async () => {
    const page = await publishedPage(t);
    const first = ok(await t.req('POST', base(page.pageId), HOLDOUT), 201);
    const second = ok(await t.req('POST', base(page.pageId), { ...HOLDOUT, name: 'Second' }), 201);
    const one = `${base(page.pageId)}/${first.experimentId}`;
    const started = ok(await t.req('POST', `${one}/start`));
    assert.equal(started.status, 'running');
    assert.ok(started.startedAt >= first.createdAt);
    const [event] = (await events('experiment.started')).filter((e) => e.payload.data.experimentId === first.experimentId);
    assert.deepEqual(event.payload.data, started);
    expectProblem(await t.req('POST', `${one}/start`), 409, 'conflict');
    expectProblem(await t.req('POST', `${base(page.pageId)}/${second.experimentId}/start`), 409, 'conflict');
    expectProblem(await t.req('DELETE', one), 409, 'conflict');

    const renamed = ok(
      await t.req('PATCH', one, {
        name: 'Renamed',
        arms: [
          { key: 'personalised', weight: 70 },
          { key: 'control', weight: 30 },
        ],
      }),
    );
    assert.equal(renamed.name, 'Renamed');
    assert.deepEqual(renamed.arms, [
      { key: 'control', weight: 30, versionId: null },
      { key: 'personalised', weight: 70, versionId: null },
    ]);
    // A read sent back whole is a valid PATCH.
    ok(await t.req('PATCH', one, renamed));
    expectProblem(
      await t.req('PATCH', one, {
        arms: [
          { key: 'control', weight: 1 },
          { key: 'other', weight: 1 },
        ],
      }),
      400,
      'validation_failed',
      ['/arms'],
    );
    expectProblem(
      await t.req('PATCH', one, {
        arms: [
          { key: 'control', weight: 0 },
          { key: 'personalised', weight: 1 },
        ],
      }),
      400,
      'validation_failed',
      ['/arms/0/weight'],
    );
    const results = ok(await t.req('GET', `${one}/results`));
    assert.equal(results.status, 'running');
    assert.equal(results.decision, 'collecting');
    assert.deepEqual(
      results.periods.map((p: Json) => [p.number, p.reason, p.weights]),
      [
        [1, 'start', { control: 50, personalised: 50 }],
        [2, 'weights_changed', { control: 30, personalised: 70 }],
      ],
    );
    assert.deepEqual(
      results.arms.map((a: Json) => [a.key, a.units, a.visits, a.conversions, a.lift, a.pValue]),
      [
        ['control', 0, 0, 0, null, null],
        ['personalised', 0, 0, 0, null, 1],
      ],
    );
    assert.equal(results.srm.mismatch, false);

    expectProblem(await t.req('POST', `${one}/conclude`, { winner: 'treated' }), 400, 'validation_failed', ['/winner']);
    expectProblem(await t.req('POST', `${one}/conclude`, {}), 400, 'validation_failed', ['/winner']);
    const concluded = ok(await t.req('POST', `${one}/conclude`, { winner: 'personalised' }));
    assert.equal(concluded.status, 'concluded');
    assert.equal(concluded.winner, 'personalised');
    assert.ok(concluded.concludedAt >= started.startedAt);
    const [done] = (await events('experiment.concluded')).filter((e) => e.payload.data.experimentId === first.experimentId);
    assert.deepEqual(done.payload.data, concluded);
    expectProblem(await t.req('POST', `${one}/conclude`, { winner: 'control' }), 409, 'conflict');
    expectProblem(await t.req('PATCH', one, { name: 'Late' }), 409, 'conflict');
    expectProblem(await t.req('POST', `${base(page.pageId)}/${second.experimentId}/conclude`, { winner: 'control' }), 409, 'conflict');
    // Concluded: the second may start now.
    assert.equal(ok(await t.req('POST', `${base(page.pageId)}/${second.experimentId}/start`)).status, 'running');
  });

  test('a versions experiment clashes with a running holdout, and its conclusion publishes the winner', async () => {
    const { page, audience, published, draft } = await versionsSetup();
    const holdout = ok(await t.req('POST', base(page.pageId), HOLDOUT), 201);
    const versions = ok(
      await t.req('POST', base(page.pageId), {
        name: 'Versions',
        kind: 'versions',
        audienceId: audience.audienceId,
        arms: [
          { key: 'a', weight: 1, versionId: published.versionId },
          { key: 'b', weight: 1, versionId: draft.versionId },
        ],
      }),
      201,
    );
    const one = `${base(page.pageId)}/${versions.experimentId}`;
    ok(await t.req('POST', `${base(page.pageId)}/${holdout.experimentId}/start`));
    expectProblem(await t.req('POST', `${one}/start`), 409, 'conflict');
    ok(await t.req('POST', `${base(page.pageId)}/${holdout.experimentId}/conclude`, { winner: 'personalised' }));
    ok(await t.req('POST', `${one}/start`));
    ok(await t.req('POST', `${one}/conclude`, { winner: 'b' }));
    const after = ok(await t.req('GET', `/v0/pages/${page.pageId}/audiences/${audience.audienceId}`));
    assert.equal(after.publishedVersion.versionId, draft.versionId);
    const old = ok(await t.req('GET', `/v0/pages/${page.pageId}/audiences/${audience.audienceId}/versions/${published.versionId}`));
    assert.equal(old.status, 'archived');
    const publishedEvents = (await events('page.version.published')).filter((e) => e.payload.data.versionId === draft.versionId);
    assert.equal(publishedEvents.length, 1);
    assert.equal(publishedEvents[0].payload.pageId, page.pageId);
  });

  test('only a draft is deleted', async () => {
    const page = await publishedPage(t);
    const created = ok(await t.req('POST', base(page.pageId), HOLDOUT), 201);
    assert.equal((await t.req('DELETE', `${base(page.pageId)}/${created.experimentId}`)).status, 204);
    expectProblem(await t.req('GET', `${base(page.pageId)}/${created.experimentId}`), 404, 'not_found');
  });
});
