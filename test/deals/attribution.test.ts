import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, ok, startApp, type Json, type TestApp } from '../helpers.js';
import { newAudience, newPage, postSession, qs } from '../analytics/helpers.js';

// Issue 49 §4: linear, time_decay and position on one deal of three touches, each share worked out
// by hand below; ties in time by session id; the new groupings; halfLifeDays' bounds.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const DAY = 86_400_000;
const D = Date.parse('2026-06-01T12:00:00.000Z');
const at = (ms: number) => new Date(ms).toISOString();
const range = { startDate: at(D), endDate: at(D + 1), windowDays: 10 };

const pipeline = async (query: Record<string, string | number | undefined>): Promise<Json> =>
  ok(await t.req('GET', `/v0/analytics/pipeline${qs({ ...range, ...query })}`));
const person = async (name: string, domain: string) => ok(await t.req('POST', '/v0/persons', { name, domain }), 201).personId as string;
const deal = (fields: Record<string, unknown>) =>
  t.req('POST', '/v0/deals', { source: 'api', name: 'Deal', currency: 'EUR', externalId: `x-${Math.random()}`, ...fields });

/** A group's [attributedDeals, attributedAmount, attributedWonAmount] by key. */
const shares = (answer: Json): Record<string, [number, number, number]> =>
  Object.fromEntries(answer.groups.map((g: Json) => [g.key, [g.attributedDeals, g.attributedAmount, g.attributedWonAmount]]));

describe('one deal of 1,000.00 EUR (won), touched 8, 4 and 2 days before its createdAt', () => {
  // Pages named so that their ids, not their names, decide ties: pages[i] is touched by session i.
  const pages: string[] = [];
  const sessions: Json[] = [];

  before(async () => {
    await t.req('POST', '/v0/accounts', { name: 'Acme', domain: 'acme.com' });
    const jane = await person('Jane Doe', 'acme.com');
    const utm = [
      { utmSource: 'linkedin', utmMedium: 'paid_social', utmCampaign: 'spring' },
      { utmSource: 'google', utmMedium: 'cpc', utmCampaign: 'spring' },
      {},
    ];
    for (const [i, days] of [8, 4, 2].entries()) {
      const page = await newPage(t, `Touch ${i}`);
      pages.push(page);
      const audienceId = await newAudience(t, page, { personId: jane });
      sessions.push(await postSession(t, page, { audienceId, start: at(D - days * DAY), ...utm[i] }));
    }
    ok(await deal({ accountDomain: 'acme.com', createdAt: at(D), amount: 1000, stage: 'won' }), 201);
  });

  test('linear: a third each; the cent left over goes to the smallest key', async () => {
    const answer = await pipeline({ model: 'linear' });
    assert.deepEqual([answer.model, answer.halfLifeDays], ['linear', null]);
    const got = shares(answer);
    // 100,000 cents / 3 = 33,333.33…: each gets 33,333 and the one cent left goes to the first key.
    const [smallest, ...rest] = [...pages].sort();
    assert.deepEqual(got[smallest as string], [0.3334, 333.34, 333.34]);
    for (const k of rest) assert.deepEqual(got[k], [0.3333, 333.33, 333.33]);
    for (const g of answer.groups) assert.deepEqual([g.deals, g.amount, g.wonDeals, g.wonAmount], [1, 1000, 1, 1000]);
  });

  test('time_decay: 2^(−age/halfLife) normalised; the default half-life is windowDays / 4', async () => {
    // halfLife 2 days: weights 2^−4, 2^−2, 2^−1 = 1/16, 4/16, 8/16; normalised 1/13, 4/13, 8/13.
    // 100,000 cents × (1, 4, 8) / 13 = 7,692.31, 30,769.23, 61,538.46: floors 99,999, the last
    // cent to the largest remainder (.46): 76.92, 307.69, 615.39.
    const answer = await pipeline({ model: 'time_decay', halfLifeDays: 2 });
    assert.equal(answer.halfLifeDays, 2);
    assert.deepEqual(
      pages.map((p) => shares(answer)[p]),
      [
        [0.0769, 76.92, 76.92],
        [0.3077, 307.69, 307.69],
        [0.6154, 615.39, 615.39],
      ],
    );
    // Ranked by share: the latest touch first.
    assert.deepEqual(
      answer.groups.map((g: Json) => g.key),
      [...pages].reverse(),
    );
    // halfLife 2.5 days (10 / 4): 2^−3.2, 2^−1.6, 2^−0.8.
    const deflt = await pipeline({ model: 'time_decay' });
    assert.equal(deflt.halfLifeDays, 2.5);
    const w = [8, 4, 2].map((days) => 2 ** (-days / 2.5));
    const sum = w.reduce((a, b) => a + b, 0);
    pages.forEach((p, i) => {
      const exact = (100_000 * (w[i] as number)) / sum;
      assert.ok(Math.abs((shares(deflt)[p]?.[1] as number) * 100 - exact) < 1, `${p}: ${exact}`);
    });
  });

  test('position: the first and last touches 0.4 each, the one between 0.2', async () => {
    const got = shares(await pipeline({ model: 'position' }));
    assert.deepEqual(
      pages.map((p) => got[p]),
      [
        [0.4, 400, 400],
        [0.2, 200, 200],
        [0.4, 400, 400],
      ],
    );
    // Two touches (the 4- and 2-day ones, in a 5-day window): 0.5 each; one touch: all of it.
    const two = shares(await pipeline({ model: 'position', windowDays: 5 }));
    assert.deepEqual(
      [two[pages[1] as string], two[pages[2] as string], two[pages[0] as string]],
      [[0.5, 500, 500], [0.5, 500, 500], undefined],
    );
    const one = shares(await pipeline({ model: 'position', windowDays: 3 }));
    assert.deepEqual(one, { [pages[2] as string]: [1, 1000, 1000] });
  });

  test('any, first and last: attributed shares too (any: equal per touched group; first and last: all)', async () => {
    const any = shares(await pipeline({ model: 'any' }));
    assert.deepEqual(
      Object.values(any)
        .map((s) => s[1])
        .sort(),
      [333.33, 333.33, 333.34],
    );
    assert.deepEqual(shares(await pipeline({ model: 'first' })), { [pages[0] as string]: [1, 1000, 1000] });
    assert.deepEqual(shares(await pipeline({ model: 'last' })), { [pages[2] as string]: [1, 1000, 1000] });
  });

  test('groupBy utmSource, utmCampaign and channelGroup: the session’s value, "(not set)" for none', async () => {
    const bySource = await pipeline({ model: 'linear', groupBy: 'utmSource' });
    assert.deepEqual(Object.fromEntries(bySource.groups.map((g: Json) => [g.key, [g.label, g.attributedAmount]])), {
      '': ['(not set)', 333.34],
      google: ['google', 333.33],
      linkedin: ['linkedin', 333.33],
    });
    const byCampaign = await pipeline({ model: 'position', groupBy: 'utmCampaign' });
    assert.deepEqual(
      byCampaign.groups.map((g: Json) => [g.key, g.deals, g.attributedDeals, g.attributedAmount]),
      [
        ['spring', 1, 0.6, 600],
        ['', 1, 0.4, 400],
      ],
    );
    const byChannel = await pipeline({ model: 'linear', groupBy: 'channelGroup' });
    const expected = new Map<string, number>();
    for (const s of sessions) expected.set(s.channelGroup, (expected.get(s.channelGroup) ?? 0) + 1);
    assert.deepEqual(
      Object.fromEntries(byChannel.groups.map((g: Json) => [g.key, Math.round(g.attributedDeals * 3)])),
      Object.fromEntries(expected),
    );
    assert.ok(expected.has('Paid Social') && expected.has('Direct'), JSON.stringify([...expected]));
  });
});

describe('ties in time are ordered by session id', () => {
  test('position: of two touches at the first instant, the smaller session id is the first', async () => {
    await t.req('POST', '/v0/accounts', { name: 'Tie', domain: 'tie.example' });
    const tom = await person('Tom Tie', 'tie.example');
    const touched: { page: string; session: string }[] = [];
    for (const i of [0, 1]) {
      const page = await newPage(t, `Tie ${i}`);
      const audienceId = await newAudience(t, page, { personId: tom });
      const s = await postSession(t, page, { audienceId, start: at(D - 3 * DAY) });
      touched.push({ page, session: s.audienceSessionId });
    }
    const lastPage = await newPage(t, 'Tie last');
    await postSession(t, lastPage, { audienceId: await newAudience(t, lastPage, { personId: tom }), start: at(D - DAY) });
    ok(await deal({ accountDomain: 'tie.example', createdAt: at(D), amount: 10, stage: 'open' }), 201);
    const [firstOne, between] = [...touched].sort((a, b) => (a.session < b.session ? -1 : 1));
    const got = shares(await pipeline({ model: 'position' }));
    assert.deepEqual(
      [got[firstOne?.page as string], got[between?.page as string], got[lastPage]],
      [
        [0.4, 4, 0],
        [0.2, 2, 0],
        [0.4, 4, 0],
      ],
    );
  });
});

describe('halfLifeDays', () => {
  test('1–365 with time_decay, just inside answers, just outside is 400 at /halfLifeDays; refused with other models', async () => {
    for (const halfLifeDays of [1, 1.5, 365]) {
      assert.equal((await pipeline({ model: 'time_decay', halfLifeDays })).halfLifeDays, halfLifeDays);
    }
    for (const halfLifeDays of [0.999, 365.001, 0, 'x']) {
      expectProblem(await t.req('GET', `/v0/analytics/pipeline${qs({ model: 'time_decay', halfLifeDays })}`), 400, 'validation_failed', [
        '/halfLifeDays',
      ]);
    }
    expectProblem(await t.req('GET', `/v0/analytics/pipeline${qs({ model: 'linear', halfLifeDays: 2 })}`), 400, 'validation_failed', [
      '/halfLifeDays',
    ]);
    for (const model of ['linear', 'time_decay', 'position']) assert.equal((await pipeline({ model })).model, model);
  });
});
