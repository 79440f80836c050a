import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DECISION_TOKEN_PURPOSE, decisionTokens, type DecisionTokens } from '../../src/onsite/decision-token.js';
import { expectProblem, ok, signAnything, startApp, type Json, type TestApp } from '../helpers.js';
import { beacon, claimsOf, experienceOf, signerOf, siteOf, today } from './measure-helpers.js';

// Issue 48 §4: the site script's reports (POST /_pam/x) and an experience's analytics from them.

const ORIGIN = 'https://shop.example';
let t: TestApp;
let tokens: DecisionTokens;
let siteId: string;

before(async () => {
  t = await startApp({ COLLECT_RATE_PER_MINUTE: '100000' });
  tokens = await signerOf(t);
  siteId = await siteOf(t, t.tenantId, [ORIGIN, 'http://localhost:8080']);
});
after(async () => {
  await t.close();
});

const analytics = async (experienceId: string, query = ''): Promise<Json> =>
  ok(await t.req('GET', `/v0/experiences/${experienceId}/analytics${query}`));

describe('the report door', () => {
  let exp: string;
  let token: string;
  before(async () => {
    exp = await experienceOf(t, t.tenantId, siteId);
    token = tokens.sign(
      claimsOf({ tenantId: t.tenantId, siteId, unit: 'v:door', experiences: [{ experienceId: exp, arm: 'personalised' }] }),
    );
  });

  test("a beacon from one of the site's origins is recorded, and may be read by that origin", async () => {
    const res = await beacon(t, { token }, ORIGIN);
    assert.equal(res.status, 204, res.text);
    assert.equal(res.headers['access-control-allow-origin'], ORIGIN);
    assert.match(String(res.headers.vary), /Origin/);
    const a = await analytics(exp);
    assert.deepEqual(a.totals, { views: 1, visitors: 1, clicks: 0, conversions: 0 });
  });

  test('another origin, or none, is refused and counts nothing', async () => {
    for (const origin of ['https://evil.example', 'https://shop.example:8443', 'http://shop.example', null]) {
      const res = await beacon(
        t,
        {
          token: tokens.sign(
            claimsOf({ tenantId: t.tenantId, siteId, unit: 'v:foreign', experiences: [{ experienceId: exp, arm: 'personalised' }] }),
          ),
        },
        origin,
      );
      assert.equal(res.status, 403, `${origin}: ${res.text}`);
      assert.equal(res.headers['access-control-allow-origin'], undefined);
    }
    assert.equal((await analytics(exp)).totals.views, 1);
  });

  test('a forged, altered, foreign-secret or stale token is a 400', async () => {
    const claims = claimsOf({ tenantId: t.tenantId, siteId, unit: 'v:forged', experiences: [{ experienceId: exp, arm: 'personalised' }] });
    const [body, signature] = tokens.sign(claims).split('.');
    const altered = `${Buffer.from(JSON.stringify({ ...claims, unit: 'v:other' })).toString('base64url')}.${signature}`;
    const stranger = decisionTokens('another secret of at least thirty-two characters').sign(claims);
    const stale = tokens.sign({ ...claims, issuedAt: Date.now() - 25 * 3_600_000 });
    for (const bad of [altered, stranger, stale, `${body}.`, 'x', `${body}.${signature}.x`]) {
      const res = await beacon(t, { token: bad }, ORIGIN);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.text, 'The token is not valid here.');
    }
    assert.equal((await analytics(exp)).totals.views, 1);
  });

  test("a token of another tenant's site is refused at that site's origins only", async () => {
    const other = await t.newTenant('Other');
    const otherSite = await siteOf(t, other.tenantId, ['https://other.example']);
    const theirs = tokens.sign(claimsOf({ tenantId: other.tenantId, siteId: otherSite, experiences: [] }));
    assert.equal((await beacon(t, { token: theirs }, ORIGIN)).status, 403);
    // The site named with another tenant: no such site of that tenant.
    const mixed = tokens.sign(claimsOf({ tenantId: t.tenantId, siteId: otherSite, experiences: [] }));
    assert.equal((await beacon(t, { token: mixed }, 'https://other.example')).status, 403);
  });

  test('bounds: 2 KB just inside is taken, just outside is a 400', async () => {
    const fresh = tokens.sign(
      claimsOf({ tenantId: t.tenantId, siteId, unit: 'v:bounds', experiences: [{ experienceId: exp, arm: 'personalised' }] }),
    );
    const text = JSON.stringify({ token: fresh });
    const inside = text + ' '.repeat(2048 - Buffer.byteLength(text));
    assert.equal((await beacon(t, inside, ORIGIN)).status, 204);
    const outside = await beacon(t, `${inside} `, ORIGIN);
    assert.equal(outside.status, 400);
    assert.equal(outside.text, 'A report is at most 2048 bytes.');
  });

  test('bad input is a 400 naming the field, never echoing a value', async () => {
    const cases: [unknown, RegExp][] = [
      ['{not json', /not JSON/],
      [{ token }, /^$/],
      [{ token, extra: 1 }, /body/],
      [{}, /token|body/],
      [{ token, clicks: { [exp]: -1 } }, /\/clicks/],
      [{ token, clicks: { [exp]: 10_001 } }, /\/clicks/],
      [{ token, conversions: 10_001 }, /\/conversions/],
      [{ token, conversions: 1.5 }, /\/conversions/],
      [{ token, identify: 'x'.repeat(255) }, /\/identify/],
      [{ token: 'x'.repeat(1601) }, /\/token/],
      [{ token: `${token}\u0000` }, /NUL/],
    ];
    for (const [body, message] of cases) {
      const res = await beacon(t, body, ORIGIN);
      if (message.source === '^$') {
        assert.equal(res.status, 204);
        continue;
      }
      assert.equal(res.status, 400, `${JSON.stringify(body).slice(0, 80)}: ${res.text}`);
      assert.match(res.text, message);
      assert.doesNotMatch(res.text, /xxxxxxxx/);
    }
    // Just inside the counts' bounds.
    assert.equal((await beacon(t, { token, clicks: { [exp]: 10_000 }, conversions: 10_000 }, ORIGIN)).status, 204);
  });

  test('a bot is answered and not counted; a preview is not measured', async () => {
    const exp2 = await experienceOf(t, t.tenantId, siteId, { name: 'Not measured' });
    const one = tokens.sign(
      claimsOf({ tenantId: t.tenantId, siteId, unit: 'v:bot', experiences: [{ experienceId: exp2, arm: 'personalised' }] }),
    );
    assert.equal(
      (await beacon(t, { token: one }, ORIGIN, { 'user-agent': 'Googlebot/2.1 (+http://www.google.com/bot.html)' })).status,
      204,
    );
    const preview = tokens.sign(
      claimsOf({
        tenantId: t.tenantId,
        siteId,
        unit: 'v:preview',
        preview: true,
        experiences: [{ experienceId: exp2, arm: 'personalised' }],
      }),
    );
    assert.equal((await beacon(t, { token: preview, clicks: { [exp2]: 2 } }, ORIGIN)).status, 204);
    assert.deepEqual((await analytics(exp2)).totals, { views: 0, visitors: 0, clicks: 0, conversions: 0 });
  });
});

describe('totals so far, visitors and conversions', () => {
  let a: string;
  let b: string;
  before(async () => {
    a = await experienceOf(t, t.tenantId, siteId, { name: 'A' });
    b = await experienceOf(t, t.tenantId, siteId, { name: 'B', urlMatch: { type: 'prefix', value: '/' }, conversionUrl: '/thanks' });
  });
  const sign = (unit: string, experiences: { experienceId: string; arm: 'personalised' | 'holdout' }[], extra = {}) =>
    tokens.sign(claimsOf({ tenantId: t.tenantId, siteId, unit, experiences, ...extra }));

  test('repeated, grown and reordered reports of one view count its view once and its clicks by their total', async () => {
    const token = sign('v:1', [
      { experienceId: a, arm: 'personalised' },
      { experienceId: b, arm: 'personalised' },
    ]);
    for (const clicks of [{}, { [a]: 1 }, { [a]: 1 }, { [a]: 3, [b]: 1 }, { [a]: 2 }]) {
      assert.equal((await beacon(t, { token, clicks }, ORIGIN)).status, 204);
    }
    assert.deepEqual((await analytics(a)).totals, { views: 1, visitors: 1, clicks: 3, conversions: 0 });
    assert.deepEqual((await analytics(b)).totals, { views: 1, visitors: 1, clicks: 1, conversions: 0 });
  });

  test('a second page view of the same visitor is a view, not a visitor', async () => {
    await beacon(
      t,
      { token: sign('v:1', [{ experienceId: a, arm: 'personalised' }], { path: '/pricing', issuedAt: Date.now() + 1 }) },
      ORIGIN,
    );
    assert.deepEqual((await analytics(a)).totals, { views: 2, visitors: 1, clicks: 3, conversions: 0 });
  });

  test("the conversionUrl converts a visitor who viewed that day, once; one who didn't is not counted", async () => {
    const thanks = sign('v:1', [], { path: '/thanks', converting: [b] });
    await beacon(t, { token: thanks }, ORIGIN);
    await beacon(t, { token: thanks }, ORIGIN);
    await beacon(t, { token: sign('v:1', [], { path: '/thanks', converting: [b], issuedAt: Date.now() + 2 }) }, ORIGIN);
    await beacon(t, { token: sign('v:never-viewed', [], { path: '/thanks', converting: [b] }) }, ORIGIN);
    assert.equal((await analytics(b)).totals.conversions, 1);
    // A conversion page converts only its own experiences: A has no conversionUrl matching.
    assert.equal((await analytics(a)).totals.conversions, 0);
  });

  test('pam.conversion() converts every experience the visitor viewed that day, once each, in its arm', async () => {
    await beacon(t, { token: sign('v:2', [{ experienceId: a, arm: 'holdout' }]) }, ORIGIN);
    const later = sign('v:2', [], { path: '/signup', issuedAt: Date.now() + 3 });
    await beacon(t, { token: later, conversions: 1 }, ORIGIN);
    await beacon(t, { token: later, conversions: 2 }, ORIGIN);
    const answer = await analytics(a);
    assert.deepEqual(answer.totals, { views: 3, visitors: 2, clicks: 3, conversions: 1 });
    assert.deepEqual(answer.arms, [{ arm: 'personalised', views: 2, visitors: 1, conversions: 0, conversionRate: 0 }]);
    // A has no holdout: the arms list the personalised one only, and no comparison is made.
    assert.equal(answer.decision, undefined);
    assert.equal(answer.pValue, undefined);
  });

  test('the range takes whole UTC days; its dates are checked as the other analytics do', async () => {
    const old = sign('v:3', [{ experienceId: a, arm: 'personalised' }], { day: '2026-01-15' });
    await beacon(t, { token: old }, ORIGIN);
    const day = today();
    const views = async (q: string) => (await analytics(a, q)).totals.views;
    assert.equal(await views(''), 3);
    assert.equal(await views('?startDate=2026-01-15T23:59:59.999Z&endDate=2026-01-16T00:00:00.000Z'), 1);
    assert.equal(await views('?startDate=2026-01-16T00:00:00.000Z&endDate=2026-01-17T00:00:00.000Z'), 0);
    assert.equal(await views('?startDate=2026-01-14T00:00:00.000Z&endDate=2026-01-15T00:00:00.000Z'), 0);
    assert.equal(await views(`?startDate=2026-01-01T00:00:00.000Z&endDate=${day}T23:00:00.000Z`), 4);
    expectProblem(
      await t.req('GET', `/v0/experiences/${a}/analytics?startDate=2026-02-01T00:00:00.000Z&endDate=2026-01-01T00:00:00.000Z`),
      400,
      'validation_failed',
      ['/startDate'],
    );
    expectProblem(
      await t.req('GET', `/v0/experiences/${a}/analytics?startDate=2024-01-01T00:00:00.000Z&endDate=2026-01-01T00:00:00.000Z`),
      400,
      'validation_failed',
      ['/endDate'],
    );
    expectProblem(await t.req('GET', `/v0/experiences/${a}/analytics?startDate=yesterday`), 400, 'validation_failed');
    expectProblem(await t.req('GET', `/v0/experiences/${a}/analytics?other=1`), 400, 'validation_failed');
  });

  test("another tenant's or an unknown experience is a 404", async () => {
    const other = await t.newTenant('Elsewhere');
    expectProblem(await t.req('GET', `/v0/experiences/${a}/analytics`, undefined, { key: other.key }), 404, 'not_found');
    expectProblem(await t.req('GET', '/v0/experiences/experience_nope/analytics'), 404, 'not_found');
    assert.equal((await t.req('GET', `/v0/experiences/${a}/analytics`, undefined, { key: null })).status, 401);
  });
});

describe('a conversion reported before its view', () => {
  let c: string;
  let d: string;
  before(async () => {
    c = await experienceOf(t, t.tenantId, siteId, { name: 'Early C', conversionUrl: '/done' });
    d = await experienceOf(t, t.tenantId, siteId, { name: 'Early D' });
  });
  const sign = (unit: string, experiences: { experienceId: string; arm: 'personalised' | 'holdout' }[], extra = {}) =>
    tokens.sign(claimsOf({ tenantId: t.tenantId, siteId, unit, experiences, ...extra }));
  const conversions = async (id: string) => (await analytics(id)).totals.conversions;

  test('counts when the view decided before it reports after it, once; a view decided after it does not', async () => {
    const at = Date.now();
    const done = sign('v:early-1', [], { path: '/done', converting: [c], issuedAt: at });
    await beacon(t, { token: done }, ORIGIN);
    assert.equal(await conversions(c), 0, 'no view yet: nothing to convert');
    await beacon(t, { token: sign('v:early-1', [{ experienceId: c, arm: 'personalised' }], { issuedAt: at - 1000 }) }, ORIGIN);
    assert.equal(await conversions(c), 1, 'the view that came late is converted');
    await beacon(t, { token: done }, ORIGIN);
    await beacon(t, { token: sign('v:early-1', [{ experienceId: c, arm: 'personalised' }], { path: '/x', issuedAt: at - 500 }) }, ORIGIN);
    assert.equal(await conversions(c), 1, 'once per unit and day');

    await beacon(t, { token: sign('v:early-2', [], { path: '/done', converting: [c], issuedAt: at }) }, ORIGIN);
    await beacon(t, { token: sign('v:early-2', [{ experienceId: c, arm: 'personalised' }], { issuedAt: at + 1000 }) }, ORIGIN);
    assert.equal(await conversions(c), 1, 'a view decided after the conversion is not converted by it');
    assert.deepEqual((await analytics(c)).totals, { views: 3, visitors: 2, clicks: 0, conversions: 1 });
  });

  test('pam.conversion() before the views: each experience viewed before it converts when its view comes', async () => {
    const at = Date.now();
    await beacon(t, { token: sign('v:early-3', [], { path: '/signup', issuedAt: at }), conversions: 1 }, ORIGIN);
    await beacon(
      t,
      {
        token: sign(
          'v:early-3',
          [
            { experienceId: c, arm: 'personalised' },
            { experienceId: d, arm: 'personalised' },
          ],
          { issuedAt: at - 1 },
        ),
      },
      ORIGIN,
    );
    assert.equal(await conversions(c), 2);
    assert.equal(await conversions(d), 1);
    // Another unit's conversion converts nothing of this one's.
    await beacon(t, { token: sign('v:early-4', [], { path: '/signup', issuedAt: at }), conversions: 1 }, ORIGIN);
    await beacon(t, { token: sign('v:early-5', [{ experienceId: d, arm: 'personalised' }], { issuedAt: at - 1 }) }, ORIGIN);
    assert.equal(await conversions(d), 1);
  });

  test('a view and its conversion reported at once count the conversion (the unit taken one report at a time)', async () => {
    const at = Date.now();
    for (let i = 0; i < 10; i++) {
      const unit = `v:early-race-${i}`;
      const view = () => beacon(t, { token: sign(unit, [{ experienceId: d, arm: 'personalised' }], { issuedAt: at - 10 }) }, ORIGIN);
      const conversion = () => beacon(t, { token: sign(unit, [], { path: '/signup', issuedAt: at }), conversions: 1 }, ORIGIN);
      // Started in turn, each first half the time.
      const answers = await Promise.all(i % 2 ? [view(), conversion()] : [conversion(), view()]);
      assert.deepEqual(
        answers.map((r) => r.status),
        [204, 204],
      );
    }
    assert.equal(await conversions(d), 11);
  });
});

describe('with a holdout', () => {
  test("the arms and the experiments' anytime-valid decision, p-value and lift", async () => {
    const h = await experienceOf(t, t.tenantId, siteId, { name: 'Held', holdoutPercent: 50, conversionUrl: '/thanks' });
    // 120 visitors an arm: 60% convert when personalised, 10% when held out.
    for (let i = 0; i < 240; i++) {
      const arm = i % 2 === 0 ? 'personalised' : 'holdout';
      const unit = `v:h${i}`;
      const view = tokens.sign(claimsOf({ tenantId: t.tenantId, siteId, unit, experiences: [{ experienceId: h, arm }] }));
      assert.equal((await beacon(t, { token: view }, ORIGIN)).status, 204);
      const converts = arm === 'personalised' ? i % 10 < 6 : i % 20 === 1;
      if (converts) {
        const thanks = tokens.sign(
          claimsOf({ tenantId: t.tenantId, siteId, unit, path: '/thanks', converting: [h], issuedAt: Date.now() + 1 }),
        );
        assert.equal((await beacon(t, { token: thanks }, ORIGIN)).status, 204);
      }
    }
    const answer = await analytics(h);
    assert.deepEqual(answer.totals, { views: 240, visitors: 240, clicks: 0, conversions: 72 + 12 });
    assert.deepEqual(
      answer.arms.map((x: Json) => [x.arm, x.visitors, x.conversions, x.conversionRate]),
      [
        ['personalised', 120, 72, 0.6],
        ['holdout', 120, 12, 0.1],
      ],
    );
    assert.equal(answer.decision, 'winner');
    assert.equal(answer.winner, 'personalised');
    assert.ok(answer.pValue < 0.05, String(answer.pValue));
    assert.ok(answer.lift.estimate > 0 && answer.lift.low <= answer.lift.estimate && answer.lift.estimate <= answer.lift.high);
  });

  test('too few visitors: collecting, with the figures present', async () => {
    const h = await experienceOf(t, t.tenantId, siteId, { name: 'Young', holdoutPercent: 10 });
    await beacon(
      t,
      { token: tokens.sign(claimsOf({ tenantId: t.tenantId, siteId, unit: 'v:y', experiences: [{ experienceId: h, arm: 'holdout' }] })) },
      ORIGIN,
    );
    const answer = await analytics(h);
    assert.equal(answer.decision, 'collecting');
    assert.ok('pValue' in answer && 'lift' in answer);
    assert.deepEqual(
      answer.arms.map((x: Json) => x.arm),
      ['personalised', 'holdout'],
    );
  });
});

test("a genuinely signed decision token whose claims are not a decision's is refused", () => {
  // Signed as decisionTokens signs (its key derived from the secret), over JSON it would never
  // write: the signature alone does not make the claims a decision's.
  const secret = 'a secret of at least thirty-two characters, for claims';
  const signed = signAnything(secret, DECISION_TOKEN_PURPOSE);
  const own = decisionTokens(secret);
  const at = 1_000_000;
  const good = {
    tenantId: 't',
    siteId: 's',
    unit: 'u',
    day: '2026-12-06',
    path: '/',
    experiences: [{ experienceId: 'e', arm: 'holdout' }],
    converting: [],
    utm: { utmSource: 'news' },
    issuedAt: at,
  };
  assert.deepEqual(own.verify(signed(good), at), good);
  assert.deepEqual(own.verify(own.sign({ ...good, experiences: [{ experienceId: 'e', arm: 'personalised' }] }), at)?.experiences, [
    { experienceId: 'e', arm: 'personalised' },
  ]);
  for (const bad of [
    { ...good, experiences: [{ experienceId: 'e', arm: 'control' }] },
    { ...good, experiences: [{ arm: 'holdout' }] },
    { ...good, experiences: {} },
    { ...good, converting: [1] },
    { ...good, utm: { utmSource: 1 } },
    { ...good, utm: { other: null } },
    { ...good, utm: 'news' },
    { ...good, preview: 'yes' },
    { ...good, referrerHost: null },
    { ...good, issuedAt: at + 0.5 },
    { ...good, day: undefined },
    null,
  ])
    assert.equal(own.verify(signed(bad), at), undefined, JSON.stringify(bad));
});
