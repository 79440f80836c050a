import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { USER_AGENT } from '../browser.js';
import { expectProblem, ok, startApp, type Json, type TestApp } from '../helpers.js';
import { newAudience, newPage, postSession, qs } from '../analytics/helpers.js';
import { audienceOf, fallbackHost, link, publishedPage, unique, viewClaims, visit } from '../site/serve-helpers.js';

// Issue 40: the influenced pipeline through HTTP. Sessions are placed at chosen instants around a
// deal's createdAt (the window's edges), on audiences of persons whose domain is the deal's account.

let t: TestApp;
before(async () => {
  t = await startApp({ FORM_RATE_PER_MINUTE: '1000', COLLECT_RATE_PER_MINUTE: '1000' });
});
after(async () => {
  await t.close();
});

const DAY = 86_400_000;
const D = Date.parse('2026-06-01T12:00:00.000Z');
const at = (ms: number) => new Date(ms).toISOString();

const pipeline = async (query: Record<string, string | number | undefined>, key?: string): Promise<Json> =>
  ok(await t.req('GET', `/v0/analytics/pipeline${qs(query)}`, undefined, key ? { key } : {}));
const deal = async (fields: Record<string, unknown>, key?: string) =>
  ok(
    await t.req(
      'POST',
      '/v0/deals',
      { source: 'api', name: 'Deal', stage: 'open', currency: 'EUR', amount: 100, externalId: `x-${Math.random()}`, ...fields },
      key ? { key } : {},
    ),
    201,
  );
const person = async (name: string, domain: string, extra: Record<string, unknown> = {}, key?: string) =>
  ok(await t.req('POST', '/v0/persons', { name, domain, ...extra }, key ? { key } : {}), 201).personId as string;

const byKey = (answer: Json) => Object.fromEntries(answer.groups.map((g: Json) => [g.key, g]));

describe('models and window edges, by page and by audience', () => {
  let p1: string;
  let p2: string;
  let a1: string;
  let a2: string;
  const range = { startDate: at(D), endDate: at(D + 1) };

  before(async () => {
    await t.req('POST', '/v0/accounts', { name: 'Acme', domain: 'acme.com' });
    await t.req('POST', '/v0/accounts', { name: 'Globex', domain: 'globex.com' });
    const jane = await person('Jane Doe', 'ACME.com');
    const bob = await person('Bob Roe', 'acme.com');
    const gina = await person('Gina Globex', 'globex.com');
    p1 = await newPage(t, 'Spring launch');
    p2 = await newPage(t, 'Pricing');
    a1 = await newAudience(t, p1, { personId: jane });
    a2 = await newAudience(t, p2, { personId: bob });
    const a3 = await newAudience(t, p2, { personId: gina });
    const anonymous = await newAudience(t, p2);
    await postSession(t, p1, { audienceId: a1, start: at(D - 10 * DAY) });
    await postSession(t, p2, { audienceId: a2, start: at(D - 2 * DAY) });
    // After the deal was created: never a touch.
    await postSession(t, p1, { audienceId: a1, start: at(D + 1) });
    // One millisecond before a 30-day window.
    await postSession(t, p1, { audienceId: a1, start: at(D - 30 * DAY - 1) });
    // Another account's person, and nobody's audience: never a touch of Acme's deal.
    await postSession(t, p2, { audienceId: a3, start: at(D - DAY) });
    await postSession(t, p2, { audienceId: anonymous, start: at(D - DAY) });
    await deal({ accountDomain: 'acme.com', createdAt: at(D), amount: 1000, stage: 'won' });
    // Not matched to an account: never influenced.
    await deal({ accountDomain: 'nobody.example', createdAt: at(D), amount: 5 });
  });

  test('any: each touched page gets the deal; the totals count it once', async () => {
    const answer = await pipeline({ ...range, model: 'any', windowDays: 10 });
    assert.equal(answer.currency, 'EUR');
    assert.deepEqual(answer.totals, {
      deals: 1,
      amount: 1000,
      wonDeals: 1,
      wonAmount: 1000,
      byCurrency: [{ currency: 'EUR', deals: 1, amount: 1000, wonDeals: 1, wonAmount: 1000 }],
    });
    const groups = byKey(answer);
    assert.deepEqual(Object.keys(groups).sort(), [p1, p2].sort());
    assert.equal(groups[p1].label, 'Spring launch');
    assert.equal(groups[p2].label, 'Pricing');
    assert.deepEqual([groups[p1].deals, groups[p1].amount, groups[p1].wonAmount], [1, 1000, 1000]);
  });

  test('the window: a session exactly windowDays before counts, one millisecond earlier does not, after createdAt never', async () => {
    assert.deepEqual(Object.keys(byKey(await pipeline({ ...range, windowDays: 9 }))), [p2]);
    assert.deepEqual(Object.keys(byKey(await pipeline({ ...range, windowDays: 1 }))), []);
    assert.equal((await pipeline({ ...range, windowDays: 1 })).totals.deals, 0);
    // The 30-day window starts 1 ms after the earliest session; 31 days take it in.
    const last30 = await pipeline({ ...range, model: 'first', windowDays: 30 });
    assert.deepEqual(Object.keys(byKey(last30)), [p1], 'first touch: the session 10 days before');
    const last = await pipeline({ ...range, model: 'last', windowDays: 365 });
    assert.deepEqual(Object.keys(byKey(last)), [p2], 'last touch: 2 days before; the one after createdAt is not a touch');
  });

  test('first and last pick one group each; the default model is any and the default window 90 days', async () => {
    const first = await pipeline({ ...range, model: 'first', windowDays: 31 });
    assert.deepEqual(Object.keys(byKey(first)), [p1]);
    assert.equal(first.totals.deals, 1);
    const deflt = await pipeline(range);
    assert.deepEqual([deflt.model, deflt.windowDays, deflt.groupBy], ['any', 90, 'page']);
    assert.equal(deflt.groups.length, 2);
  });

  test('by audience; by segment, a person’s own audience is none', async () => {
    const byAudience = byKey(await pipeline({ ...range, groupBy: 'audience' }));
    assert.deepEqual(Object.keys(byAudience).sort(), [a1, a2].sort());
    assert.equal(byAudience[a1].label.length > 0, true);
    const bySegment = await pipeline({ ...range, groupBy: 'segment' });
    assert.deepEqual([bySegment.groups, bySegment.totals.deals], [[], 0]);
  });

  test('every window and model of one range answers as if asked alone', async () => {
    // The touches are read once per range and grouping; each window is its own pass over them.
    const answers = [];
    for (const windowDays of [1, 2, 9, 10, 30, 31, 365]) {
      for (const model of ['any', 'first', 'last'])
        answers.push([windowDays, model, Object.keys(byKey(await pipeline({ ...range, model, windowDays }))).sort()]);
    }
    const expected = (w: number, m: string) => {
      const touched = [w >= 2 ? { page: p2, at: 2 } : undefined, w >= 10 ? { page: p1, at: 10 } : undefined].filter((x) => x !== undefined);
      if (m === 'any') return touched.map((x) => x.page).sort();
      if (touched.length === 0) return [];
      const pick = m === 'first' ? touched.reduce((a, b) => (a.at > b.at ? a : b)) : touched.reduce((a, b) => (a.at < b.at ? a : b));
      return [pick.page];
    };
    assert.deepEqual(
      answers,
      answers.map(([w, m]) => [w, m, expected(w as number, m as string)]),
    );
  });

  test('groups: the top 50 (most deals, most won, then by key); the totals count every deal', async () => {
    await t.req('POST', '/v0/accounts', { name: 'Wide', domain: 'wide.example' });
    const wide = await person('Wendy Wide', 'wide.example');
    const when = D + 5 * DAY;
    const pages: string[] = [];
    for (let i = 0; i < 52; i++) {
      const page = await newPage(t, `Wide ${String(i).padStart(2, '0')}`);
      await postSession(t, page, { audienceId: await newAudience(t, page, { personId: wide }), start: at(when - DAY) });
      pages.push(page);
    }
    const favourite = pages[51] as string;
    await deal({ accountDomain: 'wide.example', createdAt: at(when), amount: 1 });
    const answer = await pipeline({ startDate: at(when), endDate: at(when + 1), windowDays: 2 });
    assert.equal(answer.totals.deals, 1);
    assert.equal(answer.groups.length, 50, 'at most 50 groups');
    assert.deepEqual(
      answer.groups.map((g: Json) => g.key),
      [...pages].sort().slice(0, 50),
      'one deal each: by key',
    );
    await t.req('POST', '/v0/accounts', { name: 'Fav', domain: 'fav.example' });
    // Another account's deal, touched through the last page only: that page has the most deals.
    const other = await person('Owen Fav', 'fav.example');
    await postSession(t, favourite, { audienceId: await newAudience(t, favourite, { personId: other }), start: at(when) });
    await deal({ accountDomain: 'fav.example', createdAt: at(when + 1), amount: 2, stage: 'won' });
    const two = await pipeline({ startDate: at(when), endDate: at(when + 2), windowDays: 2 });
    assert.equal(two.totals.deals, 2);
    assert.deepEqual([two.groups[0].key, two.groups[0].deals, two.groups[0].wonDeals], [favourite, 2, 1]);
    assert.equal(two.groups.length, 50);
  });

  test('amounts are summed per currency: one currency is named, several are grouped', async () => {
    await deal({ accountDomain: 'acme.com', createdAt: at(D + 1000), amount: 250.55 });
    await deal({ accountDomain: 'acme.com', createdAt: at(D + 2000), amount: 0.1, stage: 'lost' });
    await deal({ accountDomain: 'acme.com', createdAt: at(D + 2000), amount: 0.2, stage: 'lost' });
    const eur = await pipeline({ startDate: at(D), endDate: at(D + 3000) });
    assert.equal(eur.currency, 'EUR');
    assert.deepEqual([eur.totals.deals, eur.totals.amount, eur.totals.wonDeals, eur.totals.wonAmount], [4, 1250.85, 1, 1000]);
    await deal({ accountDomain: 'acme.com', createdAt: at(D + 3000), amount: 99.99, currency: 'USD', stage: 'won' });
    const both = await pipeline({ startDate: at(D), endDate: at(D + 4000) });
    assert.equal(both.currency, null);
    assert.equal(both.totals.amount, null);
    assert.equal(both.totals.wonAmount, null);
    assert.equal(both.totals.deals, 5);
    assert.deepEqual(both.totals.byCurrency, [
      { currency: 'EUR', deals: 4, amount: 1250.85, wonDeals: 1, wonAmount: 1000 },
      { currency: 'USD', deals: 1, amount: 99.99, wonDeals: 1, wonAmount: 99.99 },
    ]);
    const page2 = byKey(both)[p2];
    assert.equal(page2.amount, null);
    assert.equal(page2.byCurrency.length, 2);
  });

  test('a deal counts as last updated: an upsert to won moves it into wonDeals', async () => {
    const externalId = `upd-${Math.random()}`;
    await deal({ externalId, accountDomain: 'acme.com', createdAt: at(D + 5000), amount: 10 });
    const before = await pipeline({ startDate: at(D + 5000), endDate: at(D + 5001) });
    assert.deepEqual([before.totals.deals, before.totals.wonDeals], [1, 0]);
    ok(
      await t.req('POST', '/v0/deals', {
        source: 'api',
        externalId,
        name: 'Deal',
        stage: 'won',
        currency: 'EUR',
        amount: 20,
        accountDomain: 'acme.com',
        createdAt: at(D + 5000),
      }),
    );
    const after = await pipeline({ startDate: at(D + 5000), endDate: at(D + 5001) });
    assert.deepEqual([after.totals.deals, after.totals.wonDeals, after.totals.wonAmount], [1, 1, 20]);
  });

  test('another tenant sees none of it', async () => {
    const other = await t.newTenant('Elsewhere');
    const answer = await pipeline(range, other.key);
    assert.deepEqual([answer.totals.deals, answer.groups.length], [0, 0]);
  });
});

describe('bounds', () => {
  test('windowDays 1–365, the models and groupings named, experimentId with arm only', async () => {
    for (const windowDays of [1, 365]) await pipeline({ windowDays });
    for (const windowDays of [0, 366, 1.5, 'x']) {
      expectProblem(await t.req('GET', `/v0/analytics/pipeline${qs({ windowDays })}`), 400, 'validation_failed', ['/windowDays']);
    }
    expectProblem(await t.req('GET', '/v0/analytics/pipeline?model=u_shaped'), 400, 'validation_failed', ['/model']);
    expectProblem(await t.req('GET', '/v0/analytics/pipeline?groupBy=country'), 400, 'validation_failed', ['/groupBy']);
    expectProblem(await t.req('GET', '/v0/analytics/pipeline?groupBy=arm'), 400, 'validation_failed', ['/experimentId']);
    expectProblem(await t.req('GET', '/v0/analytics/pipeline?groupBy=page&experimentId=experiment_x'), 400, 'validation_failed', [
      '/experimentId',
    ]);
    expectProblem(await t.req('GET', '/v0/analytics/pipeline?groupBy=arm&experimentId=experiment_x'), 400, 'validation_failed', [
      '/experimentId',
    ]);
    expectProblem(
      await t.req('GET', '/v0/analytics/pipeline?startDate=2026-06-01T00:00:00Z&endDate=2025-01-01T00:00:00Z'),
      400,
      'validation_failed',
      ['/startDate'],
    );
    expectProblem(
      await t.req('GET', '/v0/analytics/pipeline?startDate=2024-01-01T00:00:00Z&endDate=2026-01-01T00:00:00Z'),
      400,
      'validation_failed',
      ['/endDate'],
    );
    expectProblem(await t.req('GET', '/v0/analytics/pipeline?owner=me'), 400, 'validation_failed');
    expectProblem(await t.req('GET', '/v0/analytics/pipeline', undefined, { key: null }), 401, 'unauthorized');
  });

  test('the first instant a database takes: an end in year 0001 answers, a bound in year 0000 is 400 (never 500)', async () => {
    // The default start, 30 days before, would fall in year 0000, which PostgreSQL has not.
    const early = await pipeline({ endDate: '0001-01-02T00:00:00.008Z' });
    assert.equal(early.startDate, '0001-01-01T00:00:00.000Z');
    assert.equal(early.totals.deals, 0);
    await pipeline({ startDate: '0001-01-01T00:00:00Z', endDate: '0001-02-01T00:00:00Z' });
    expectProblem(await t.req('GET', `/v0/analytics/pipeline${qs({ startDate: '0000-12-31T23:59:59.999Z' })}`), 400, 'validation_failed', [
      '/startDate',
    ]);
    expectProblem(await t.req('GET', `/v0/deals${qs({ startDate: '0000-06-01T00:00:00Z' })}`), 400, 'validation_failed', ['/startDate']);
  });
});

const hidden = (html: string, name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html)?.[1] ?? '';
let address = 1;
const nextAddress = () => `198.51.${100 + Math.floor(address / 250)}.${(address++ % 250) + 1}`;

describe('served visits: by arm, and through a lead’s person', () => {
  test('groupBy=arm credits each account’s deal to the arm its person was served; another tenant’s experiment is refused', async () => {
    const page = await publishedPage(t, { actions: [{ purpose: 'lead', buttonTitle: 'Send', actionType: 'form', url: '' }] });
    const host = await fallbackHost(t);
    const units: { domain: string; path: string }[] = [];
    for (let i = 0; i < 6; i++) {
      const domain = `arm${i}.example`;
      await t.req('POST', '/v0/accounts', { name: `Arm ${i}`, domain });
      const personId = await person(`Unit ${i}`, domain);
      const audience = await audienceOf(t, page.pageId, { personId });
      const path = unique(`arm${i}`);
      await link(t, path, { targetType: 'audience', audienceId: audience.audienceId });
      units.push({ domain, path });
    }
    const base = `/v0/pages/${page.pageId}/experiments`;
    const experiment = ok(
      await t.req('POST', base, {
        name: 'Holdout',
        kind: 'holdout',
        arms: [
          { key: 'control', weight: 1 },
          { key: 'personalised', weight: 1 },
        ],
      }),
      201,
    );
    ok(await t.req('POST', `${base}/${experiment.experimentId}/start`));
    const start = Date.now();
    const expected: Record<string, number> = {};
    for (const [i, unit] of units.entries()) {
      const res = await visit(t, host, unit.path, { remoteAddress: nextAddress(), headers: { 'user-agent': USER_AGENT } });
      assert.equal(res.statusCode, 200, res.body);
      const token = hidden(res.body, 'token');
      const report = await visit(t, host, '/_pam/collect', {
        method: 'POST',
        headers: { 'content-type': 'text/plain', 'user-agent': USER_AGENT },
        payload: JSON.stringify({ token, visibleMs: 1000, scroll: 10, clicks: 0, questions: 0, conversions: 0 }),
        remoteAddress: nextAddress(),
      });
      assert.equal(report.statusCode, 204, report.body);
      const arm = viewClaims(token).arm as string;
      expected[arm] = (expected[arm] ?? 0) + (i + 1) * 100;
      await deal({ accountDomain: unit.domain, amount: (i + 1) * 100, createdAt: at(start + 60_000), currency: 'CHF' });
    }
    const answer = await pipeline({
      startDate: at(start),
      endDate: at(start + 120_000),
      groupBy: 'arm',
      experimentId: experiment.experimentId,
    });
    const got = Object.fromEntries(answer.groups.map((g: Json) => [g.key, g.amount]));
    assert.deepEqual(got, expected);
    assert.equal(answer.currency, 'CHF');
    assert.equal(answer.totals.deals, 6);
    for (const g of answer.groups) assert.equal(g.label, g.key);

    const other = await t.newTenant('No experiments');
    expectProblem(
      await t.req('GET', `/v0/analytics/pipeline?groupBy=arm&experimentId=${experiment.experimentId}`, undefined, { key: other.key }),
      400,
      'validation_failed',
      ['/experimentId'],
    );
  });

  test('a lead sent in a session of nobody’s audience makes its person’s account touched', async () => {
    const page = await publishedPage(t, { actions: [{ purpose: 'lead', buttonTitle: 'Send', actionType: 'form', url: '' }] });
    const host = await fallbackHost(t);
    await t.req('POST', '/v0/accounts', { name: 'Initech', domain: 'initech.example' });
    await person('Peter Gibbons', 'initech.example', { email: 'peter@initech.example' });
    const audience = await audienceOf(t, page.pageId, {});
    const path = unique('lead');
    await link(t, path, { targetType: 'audience', audienceId: audience.audienceId });
    const start = Date.now();
    const html = (await visit(t, host, path, { remoteAddress: nextAddress() })).body as string;
    const sent = await visit(t, host, '/_pam/forms', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        token: hidden(html, 'token'),
        action: hidden(html, 'action'),
        path: hidden(html, 'path'),
        name: 'Peter',
        email: 'peter@initech.example',
      }).toString(),
      remoteAddress: nextAddress(),
    });
    assert.equal(sent.statusCode, 303, sent.body);
    await deal({ accountDomain: 'initech.example', amount: 42, createdAt: at(Date.now() + 60_000) });
    const answer = await pipeline({ startDate: at(start), endDate: at(Date.now() + 120_000), groupBy: 'audience' });
    // The deals of the arm test share the range: only this audience's group is this test's.
    const mine = answer.groups.find((g: Json) => g.key === audience.audienceId);
    assert.deepEqual([mine?.deals, mine?.amount], [1, 42]);
  });

  test('groupBy=segment credits the segment a visitor was matched to, once their lead names the account', async () => {
    const page = await publishedPage(t, { actions: [{ purpose: 'lead', buttonTitle: 'Send', actionType: 'form', url: '' }] });
    const host = await fallbackHost(t);
    await t.req('POST', '/v0/accounts', { name: 'Umbrella', domain: 'umbrella.example' });
    const rules = { match: 'all', conditions: [{ field: 'utm.source', operator: 'equals', value: 'linkedin' }] };
    const segment = await audienceOf(t, page.pageId, { customName: 'LinkedIn ads', priority: 10, rules });
    const versions = `/v0/pages/${page.pageId}/audiences/${segment.audienceId}/versions`;
    const v = ok(await t.req('POST', versions, { content: { headline: 'From LinkedIn', subheadline: '', sections: [] } }), 201);
    ok(await t.req('PATCH', `${versions}/${v.versionId}`, { status: 'published' }));
    const path = unique('segment');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    const start = Date.now();
    const html = (await visit(t, host, `${path}?utm_source=linkedin`, { remoteAddress: nextAddress() })).body as string;
    assert.match(html, /From LinkedIn/, 'the segment served');
    const sent = await visit(t, host, '/_pam/forms', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        token: hidden(html, 'token'),
        action: hidden(html, 'action'),
        path: hidden(html, 'path'),
        name: 'Alice',
        email: 'alice@umbrella.example',
      }).toString(),
      remoteAddress: nextAddress(),
    });
    assert.equal(sent.statusCode, 303, sent.body);
    await deal({ accountDomain: 'umbrella.example', amount: 7, createdAt: at(Date.now() + 60_000) });
    const answer = await pipeline({ startDate: at(start), endDate: at(Date.now() + 120_000), groupBy: 'segment' });
    const mine = answer.groups.find((g: Json) => g.key === segment.audienceId);
    assert.deepEqual([mine?.label, mine?.deals, mine?.amount], ['LinkedIn ads', 1, 7]);
    // Only segments: the other tests' audiences (a person's, the anonymous one the lead test used) are none.
    assert.deepEqual(
      answer.groups.map((g: Json) => g.key),
      [segment.audienceId],
    );
  });
});

describe('a kept answer', () => {
  test('is sent as the same JSON text while kept, and a new deal gives a new one', async () => {
    const D2 = D + 200 * DAY;
    await t.req('POST', '/v0/accounts', { name: 'Hooli', domain: 'hooli.example' });
    const gavin = await person('Gavin Belson', 'hooli.example');
    const page = await newPage(t, 'Kept "answer" <page>');
    const audience = await newAudience(t, page, { personId: gavin });
    await postSession(t, page, { audienceId: audience, start: at(D2 - DAY) });
    await deal({ accountDomain: 'hooli.example', createdAt: at(D2), amount: 250 });
    const url = `/v0/analytics/pipeline${qs({ startDate: at(D2), endDate: at(D2 + 1), model: 'linear' })}`;
    const first = await t.req('GET', url);
    const second = await t.req('GET', url);
    assert.equal(first.status, 200, first.text);
    assert.equal(first.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(second.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(second.text, first.text);
    const answer = first.body;
    assert.deepEqual(
      answer.groups.map((g: Json) => [g.label, g.deals, g.amount, g.attributedDeals]),
      [['Kept "answer" <page>', 1, 250, 1]],
    );
    await deal({ accountDomain: 'hooli.example', createdAt: at(D2), amount: 50, currency: 'EUR' });
    const third = ok(await t.req('GET', url));
    assert.deepEqual([third.totals.deals, third.totals.amount, third.groups[0].amount], [2, 300, 300]);
  });
});
