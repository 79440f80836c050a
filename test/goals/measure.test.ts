import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { USER_AGENT } from '../browser.js';
import { expectProblem, startApp, type Json, type TestApp, ok } from '../helpers.js';
import { fallbackHost, link, publishedPage, unique, visit } from '../site/serve-helpers.js';

// Goals and funnels counted from real visits: documents served on the tenant's fallback domain,
// and the reports their measuring script would send with the document's own view token.

let t: TestApp;
let host: string;
before(async () => {
  t = await startApp();
  host = await fallbackHost(t);
});
after(async () => {
  await t.close();
});

let address = 1;
/** Serves `path` and returns the document's view token. */
async function serve(path: string): Promise<string> {
  const res = await visit(t, host, path, { headers: { 'user-agent': USER_AGENT } });
  assert.equal(res.statusCode, 200, res.body);
  const token = JSON.parse(/id="pam-view">([^<]*)</.exec(res.body)?.[1] ?? '{}').token;
  assert.equal(typeof token, 'string');
  return token;
}

/** One report of the measuring script (totals so far), from its own address (no rate limit between tests). */
async function report(token: string, extra: Json = {}): Promise<void> {
  const res = await visit(t, host, '/_pam/collect', {
    method: 'POST',
    headers: { 'content-type': 'text/plain', 'user-agent': USER_AGENT },
    payload: JSON.stringify({ token, visibleMs: 1000, scroll: 10, clicks: 0, questions: 0, conversions: 0, ...extra }),
    remoteAddress: `198.51.100.${address++ % 250}`,
  });
  assert.equal(res.statusCode, 204, res.body);
}

/** Per visitor, an audience for the person on each page, reached at `<link>/<key>` of a page_routing link. */
async function routedVisitors(pages: string[], n: number, tag: string): Promise<string[]> {
  const keys = [];
  for (let i = 0; i < n; i++) {
    const person = ok(await t.req('POST', '/v0/persons', { name: `Visitor ${tag} ${i}` }), 201);
    const key = `${tag}-${i}`;
    for (const pageId of pages)
      ok(await t.req('POST', `/v0/pages/${pageId}/audiences`, { personId: person.personId, personRouteKey: key }), 201);
    keys.push(key);
  }
  return keys;
}

const DEMO = { purpose: 'demo', buttonTitle: 'Book a demo', actionType: 'link', url: 'https://example.com/demo' };

describe('funnels over served pages', () => {
  test('a three-step funnel over two pages counts each step, in order', async () => {
    const a = await publishedPage(t, { actions: [DEMO] });
    const b = await publishedPage(t);
    const [pathA, pathB] = [unique('fa'), unique('fb')];
    await link(t, pathA, { targetType: 'page_routing', pageId: a.pageId });
    await link(t, pathB, { targetType: 'page_routing', pageId: b.pageId });
    const [v0, v1, v2, v3] = await routedVisitors([a.pageId, b.pageId], 4, pathA.slice(1, 12));
    const funnel = ok(
      await t.req('POST', '/v0/funnels', {
        name: 'Demo to pricing',
        steps: [
          { kind: 'path', path: pathA },
          { kind: 'action', actionPurpose: 'demo' },
          { kind: 'path', path: pathB, name: 'Pricing' },
        ],
      }),
      201,
    );
    const visitA = async (key: string | undefined, demo: boolean) => {
      const token = await serve(`${pathA}/${key}`);
      await report(token);
      if (demo) await report(token, { clicks: 1, actions: [['demo', 1]] });
    };
    const visitB = async (key: string | undefined) => report(await serve(`${pathB}/${key}`));
    // v0: A, demo, then B (three steps). v1: A, demo (two). v2: A (one). v3: B first, then A and demo (two: B came before A).
    await visitA(v0, true);
    await visitB(v0);
    await visitA(v1, true);
    await visitA(v2, false);
    await visitB(v3);
    await visitA(v3, true);

    const results = ok(await t.req('GET', `/v0/funnels/${funnel.funnelId}/results`));
    assert.deepEqual(
      results.steps.map((s: Json) => [s.index, s.name, s.visitors, s.conversionFromPrevious, s.conversionFromStart]),
      [
        [0, `Visited ${pathA}`, 4, 1, 1],
        [1, 'Clicked demo', 3, 0.75, 0.75],
        [2, 'Pricing', 1, 0.333333, 0.25],
      ],
    );
    assert.equal(results.steps[0].medianSecondsFromPrevious, null);
    for (const s of results.steps.slice(1))
      assert.ok(s.medianSecondsFromPrevious >= 0 && s.medianSecondsFromPrevious < 120, JSON.stringify(s));
    assert.equal(results.windowHours, 24);

    // Grouped by the first step's audience: one visitor each, adding up to the totals.
    const grouped = ok(await t.req('GET', `/v0/funnels/${funnel.funnelId}/results?groupBy=audience`));
    assert.deepEqual(grouped.steps, results.steps);
    assert.equal(grouped.groups.length, 4);
    for (const i of [0, 1, 2])
      assert.equal(
        grouped.groups.reduce((n: number, g: Json) => n + g.steps[i].visitors, 0),
        results.steps[i].visitors,
      );
    assert.ok(grouped.groups.every((g: Json) => g.label.length > 0));

    // A range that ends before the visits holds none of them.
    const before = ok(
      await t.req(
        'GET',
        `/v0/funnels/${funnel.funnelId}/results?endDate=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`,
      ),
    );
    assert.deepEqual(
      before.steps.map((s: Json) => s.visitors),
      [0, 0, 0],
    );
    // The same path twice in a row is two visits, never one occurrence counted twice.
    const twice = ok(
      await t.req('POST', '/v0/funnels', {
        name: 'Twice',
        steps: [
          { kind: 'path', path: pathA },
          { kind: 'path', path: pathA },
        ],
      }),
      201,
    );
    assert.deepEqual(
      ok(await t.req('GET', `/v0/funnels/${twice.funnelId}/results`)).steps.map((s: Json) => s.visitors),
      [4, 0],
    );
  });
});

describe('funnels grouped by the visit classes', () => {
  const IPHONE =
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';

  test("groupBy channel, deviceType, browser and the other classes: by the first step's visit", async () => {
    const page = await publishedPage(t, { actions: [DEMO] });
    const path = unique('fc');
    await link(t, path, { targetType: 'page_routing', pageId: page.pageId });
    const [searcher, social] = await routedVisitors([page.pageId], 2, path.slice(1, 12));
    const funnel = ok(
      await t.req('POST', '/v0/funnels', {
        name: 'Landing to demo',
        steps: [
          { kind: 'path', path },
          { kind: 'action', actionPurpose: 'demo' },
        ],
      }),
      201,
    );
    /** A visit's report as the script sends it, from this user agent. */
    const send = async (token: string, userAgent: string, extra: Json) => {
      const res = await visit(t, host, '/_pam/collect', {
        method: 'POST',
        headers: { 'content-type': 'text/plain', 'user-agent': userAgent },
        payload: JSON.stringify({ token, visibleMs: 1000, scroll: 10, clicks: 0, questions: 0, conversions: 0, ...extra }),
        remoteAddress: `198.51.100.${address++ % 250}`,
      });
      assert.equal(res.statusCode, 204, res.body);
    };
    // From a search engine on a desktop, then the demo; from a social site on a phone, no demo.
    const first = await serve(`${path}/${searcher}`);
    await send(first, USER_AGENT, { referrer: 'https://www.google.com/' });
    await send(first, USER_AGENT, { clicks: 1, actions: [['demo', 1]] });
    await send(await serve(`${path}/${social}`), IPHONE, { referrer: 'https://facebook.com/' });

    const grouped = async (groupBy: string) => {
      const body = ok(await t.req('GET', `/v0/funnels/${funnel.funnelId}/results?groupBy=${groupBy}`));
      assert.deepEqual(
        body.steps.map((s: Json) => s.visitors),
        [2, 1],
      );
      return (body.groups as Json[]).map((g) => [g.key, g.label, g.steps.map((s: Json) => s.visitors)]);
    };
    assert.deepEqual(await grouped('channel'), [
      ['search', 'search', [1, 1]],
      ['social', 'social', [1, 0]],
    ]);
    assert.deepEqual(await grouped('channelGroup'), [
      ['Organic Search', 'Organic Search', [1, 1]],
      ['Organic Social', 'Organic Social', [1, 0]],
    ]);
    assert.deepEqual(await grouped('referrerHost'), [
      ['facebook.com', 'facebook.com', [1, 0]],
      ['google.com', 'google.com', [1, 1]],
    ]);
    assert.deepEqual(await grouped('deviceType'), [
      ['desktop', 'desktop', [1, 1]],
      ['mobile', 'mobile', [1, 0]],
    ]);
    assert.deepEqual(await grouped('country'), [['', '', [2, 1]]]);
    assert.equal((await grouped('browser')).length, 2);
    assert.equal((await grouped('os')).length, 2);
    expectProblem(await t.req('GET', `/v0/funnels/${funnel.funnelId}/results?groupBy=arm`), 400, 'validation_failed', ['/groupBy']);
  });
});

describe('goals over served pages', () => {
  test('pam.track with a value sums; a goal counts once per visit; a lower total never lowers the count', async () => {
    const page = await publishedPage(t, { actions: [DEMO] });
    const path = unique('g');
    await link(t, path, { targetType: 'page_routing', pageId: page.pageId });
    const [k0, k1, k2] = await routedVisitors([page.pageId], 3, path.slice(1, 12));
    const signup = ok(await t.req('POST', '/v0/goals', { name: 'Signup', kind: 'event', eventName: 'signup', currency: 'EUR' }), 201);
    const demo = ok(await t.req('POST', '/v0/goals', { name: 'Demo', kind: 'action', actionPurpose: 'demo' }), 201);
    const landed = ok(await t.req('POST', '/v0/goals', { name: 'Landed', kind: 'path', path }), 201);

    const t0 = await serve(`${path}/${k0}`);
    await report(t0, { events: [['signup', 1, 20]] });
    await report(t0, { events: [['signup', 2, 70]], actions: [['demo', 1]] });
    // A report that lost a call (or a hostile one) lowers nothing.
    await report(t0, { events: [['signup', 1, 5]] });
    const t1 = await serve(`${path}/${k1}`);
    await report(t1, { events: [['signup', 1, 30.5]] });
    await report(await serve(`${path}/${k2}`));
    // A visit on which the same person comes back is the same visitor.
    const again = await serve(`${path}/${k1}`);
    await report(again, { events: [['signup', 1, 10]] });

    const analytics = ok(await t.req('GET', `/v0/pages/${page.pageId}/analytics`));
    assert.equal(analytics.totals.visits, 4);
    const byId = new Map((analytics.goals as Json[]).map((g) => [g.goalId, g]));
    assert.deepEqual(byId.get(signup.goalId), {
      goalId: signup.goalId,
      name: 'Signup',
      // Three visits tracked it (one of them three calls): once per visit (issue 36).
      completions: 3,
      uniqueCompletions: 2,
      value: 110.5,
      currency: 'EUR',
      conversionRate: 0.75,
    });
    assert.deepEqual(
      [
        byId.get(demo.goalId).completions,
        byId.get(demo.goalId).uniqueCompletions,
        byId.get(demo.goalId).value,
        byId.get(demo.goalId).conversionRate,
      ],
      [1, 1, 0, 0.25],
    );
    assert.deepEqual([byId.get(landed.goalId).completions, byId.get(landed.goalId).uniqueCompletions], [4, 3]);

    // The pages overview carries the same goals for the page.
    const overview = ok(await t.req('GET', '/v0/analytics/pages?limit=100')).items as Json[];
    const row = overview.find((p) => p.pageId === page.pageId);
    assert.deepEqual(
      row.goals.find((g: Json) => g.goalId === signup.goalId),
      byId.get(signup.goalId),
    );
    // An audience's share only.
    const audiences = ok(await t.req('GET', `/v0/pages/${page.pageId}/audiences?limit=100`)).items as Json[];
    const first = audiences.find((a) => a.personRouteKey === k0);
    const one = ok(await t.req('GET', `/v0/pages/${page.pageId}/analytics?audienceId=${first.audienceId}`));
    assert.deepEqual(
      (one.goals as Json[]).find((g) => g.goalId === signup.goalId),
      { ...byId.get(signup.goalId), completions: 1, uniqueCompletions: 1, value: 70, conversionRate: 1 },
    );
  });

  test('a report naming too much is refused whole; values are bounded', async () => {
    const page = await publishedPage(t);
    const path = unique('b');
    await link(t, path, { targetType: 'page_routing', pageId: page.pageId });
    const [key] = await routedVisitors([page.pageId], 1, path.slice(1, 12));
    const token = await serve(`${path}/${key}`);
    const refused = async (extra: Json) => {
      const res = await visit(t, host, '/_pam/collect', {
        method: 'POST',
        headers: { 'content-type': 'text/plain', 'user-agent': USER_AGENT },
        payload: JSON.stringify({ token, visibleMs: 0, scroll: 0, clicks: 0, questions: 0, conversions: 0, ...extra }),
        remoteAddress: `203.0.113.${address++ % 250}`,
      });
      assert.equal(res.statusCode, 400, JSON.stringify(extra));
    };
    await refused({ events: Array.from({ length: 17 }, (_, i) => [`e${i}`, 1, 1]) });
    await refused({ events: [['', 1, 1]] });
    await refused({ events: [['x'.repeat(101), 1, 1]] });
    await refused({ events: [['x', 1, -1]] });
    await refused({ events: [['x', 1]] });
    await refused({ actions: [['x', 1, 1]] });
    await refused({ events: { x: 1 } });
    // Just inside: 16 names of 100 characters is still under 2 KB? No: the script drops names to fit; the collector takes 16.
    await report(token, { events: Array.from({ length: 16 }, (_, i) => [`e${i}`, 5000, 1e15]) });
    const goal = ok(await t.req('POST', '/v0/goals', { name: 'E0', kind: 'event', eventName: 'e0' }), 201);
    assert.equal(goal.maxValue, 1_000_000);
    const got = async (goalId: string) =>
      (ok(await t.req('GET', `/v0/pages/${page.pageId}/analytics`)).goals as Json[]).find((g) => g.goalId === goalId);
    // Issue 36: one visit's 5,000 calls of 1e15 count once, with the goal's maxValue (1,000,000 by default).
    assert.deepEqual([(await got(goal.goalId)).completions, (await got(goal.goalId)).value], [1, 1_000_000]);
    // A goal's own bound, just under and over what the visit stored (its 1,000 counted calls of 1e9 at most).
    const high = ok(await t.req('POST', '/v0/goals', { name: 'E1', kind: 'event', eventName: 'e1', maxValue: 1e15 }), 201);
    assert.deepEqual([(await got(high.goalId)).completions, (await got(high.goalId)).value], [1, 1e12]);
    ok(await t.req('PATCH', `/v0/goals/${high.goalId}`, { maxValue: 2.5e11 }));
    assert.equal((await got(high.goalId)).value, 2.5e11, 'a new bound applies to past visits');
  });

  test('goals: a visit adding 1,000 completions and 1e12 EUR counts once, up to maxValue; maxValue is validated', async () => {
    const page = await publishedPage(t);
    const path = unique('m');
    await link(t, path, { targetType: 'page_routing', pageId: page.pageId });
    const [key] = await routedVisitors([page.pageId], 1, path.slice(1, 12));
    const goal = ok(
      await t.req('POST', '/v0/goals', { name: 'Order', kind: 'event', eventName: 'order', currency: 'EUR', maxValue: 500 }),
      201,
    );
    assert.equal(goal.maxValue, 500);
    const token = await serve(`${path}/${key}`);
    await report(token, { events: [['order', 1000, 1e12]] });
    const [got] = (ok(await t.req('GET', `/v0/pages/${page.pageId}/analytics`)).goals as Json[]).filter((g) => g.goalId === goal.goalId);
    assert.deepEqual([got.completions, got.value, got.conversionRate], [1, 500, 1]);
    // Just inside and outside the bound; a refusal writes nothing.
    for (const maxValue of [0, -1, 1e15 + 1e3, '10', null]) {
      expectProblem(await t.req('POST', '/v0/goals', { name: 'Bad', kind: 'event', eventName: 'x', maxValue }), 400, 'validation_failed', [
        '/maxValue',
      ]);
      expectProblem(await t.req('PATCH', `/v0/goals/${goal.goalId}`, { maxValue }), 400, 'validation_failed', ['/maxValue']);
    }
    assert.equal(ok(await t.req('GET', `/v0/goals/${goal.goalId}`)).maxValue, 500);
    for (const maxValue of [0.01, 1e15])
      assert.equal(ok(await t.req('PATCH', `/v0/goals/${goal.goalId}`, { maxValue })).maxValue, maxValue);
  });
});

describe('experiment results with a goal', () => {
  test('?goalId= counts the goal as the conversion', async () => {
    const page = await publishedPage(t);
    const path = unique('x');
    await link(t, path, { targetType: 'page_routing', pageId: page.pageId });
    const keys = await routedVisitors([page.pageId], 6, path.slice(1, 12));
    const base = `/v0/pages/${page.pageId}/experiments`;
    const experiment = ok(
      await t.req('POST', base, {
        name: 'Holdout',
        kind: 'holdout',
        arms: [
          { key: 'control', weight: 50 },
          { key: 'personalised', weight: 50 },
        ],
      }),
      201,
    );
    const one = `${base}/${experiment.experimentId}`;
    ok(await t.req('POST', `${one}/start`));
    const goal = ok(await t.req('POST', '/v0/goals', { name: 'Signup', kind: 'event', eventName: 'signup' }), 201);
    for (const [i, key] of keys.entries()) await report(await serve(`${path}/${key}`), i < 4 ? { events: [['signup', 1, 0]] } : {});

    const plain = ok(await t.req('GET', `${one}/results`));
    const withGoal = ok(await t.req('GET', `${one}/results?goalId=${goal.goalId}`));
    const sum = (r: Json, f: string) => r.arms.reduce((n: number, a: Json) => n + a[f], 0);
    assert.equal(sum(plain, 'units'), 6);
    assert.equal(sum(plain, 'conversions'), 0);
    assert.equal(plain.goalId, undefined);
    assert.equal(sum(withGoal, 'units'), 6);
    assert.equal(sum(withGoal, 'conversions'), 4);
    assert.equal(withGoal.goalId, goal.goalId);
    expectProblem(await t.req('GET', `${one}/results?goalId=goal_00000000000000000000000000`), 404, 'not_found');
    const other = await t.newTenant('Goals elsewhere');
    const theirs = ok(await t.req('POST', '/v0/goals', { name: 'T', kind: 'form' }, { key: other.key }), 201);
    expectProblem(await t.req('GET', `${one}/results?goalId=${theirs.goalId}`), 404, 'not_found');
  });
});
