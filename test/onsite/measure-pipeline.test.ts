import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { DecisionTokens } from '../../src/onsite/decision-token.js';
import { ok, startApp, type Json, type TestApp } from '../helpers.js';
import { qs } from '../analytics/helpers.js';
import { beacon, claimsOf, experienceOf, signerOf, siteOf } from './measure-helpers.js';

// Issue 48 §4: the influenced pipeline counts an experience's views as touches (groupBy=experience),
// once the site identified the visitor as a person of the deal's account (pam.identify).

const ORIGIN = 'https://shop.example';
let t: TestApp;
let tokens: DecisionTokens;

before(async () => {
  t = await startApp({ COLLECT_RATE_PER_MINUTE: '100000' });
  tokens = await signerOf(t);
});
after(async () => {
  await t.close();
});

const iso = (ms: number) => new Date(ms).toISOString();

test("identified views touch their account's deals, by experience; unidentified ones touch none", async () => {
  const siteId = await siteOf(t, t.tenantId, [ORIGIN]);
  const pricing = await experienceOf(t, t.tenantId, siteId, { name: 'Pricing for SaaS' });
  const home = await experienceOf(t, t.tenantId, siteId, { name: 'Home hero', urlMatch: { type: 'exact', value: '/' } });
  const quiet = await experienceOf(t, t.tenantId, siteId, { name: 'Never identified' });
  ok(await t.req('POST', '/v0/accounts', { name: 'Acme', domain: 'acme.com' }), 201);
  ok(await t.req('POST', '/v0/accounts', { name: 'Globex', domain: 'globex.com' }), 201);
  ok(await t.req('POST', '/v0/persons', { name: 'Jane Doe', email: 'jane@acme.com', domain: 'acme.com' }), 201);
  ok(await t.req('POST', '/v0/persons', { name: 'Gina', email: 'gina@globex.com', domain: 'globex.com' }), 201);
  const view = (unit: string, experienceId: string, extra = {}) =>
    tokens.sign(claimsOf({ tenantId: t.tenantId, siteId, unit, experiences: [{ experienceId, arm: 'personalised' }], ...extra }));

  // Jane views two experiences, then the site identifies her on another page of the same day.
  assert.equal((await beacon(t, { token: view('v:jane', pricing) }, ORIGIN)).status, 204);
  assert.equal((await beacon(t, { token: view('v:jane', home, { path: '/', issuedAt: Date.now() + 1 }) }, ORIGIN)).status, 204);
  const signup = tokens.sign(claimsOf({ tenantId: t.tenantId, siteId, unit: 'v:jane', path: '/signup', issuedAt: Date.now() + 2 }));
  assert.equal((await beacon(t, { token: signup, identify: 'JANE@acme.com' }, ORIGIN)).status, 204);
  // Someone from Globex views an experience but is never identified; an unknown email names no one.
  assert.equal((await beacon(t, { token: view('v:anon', quiet) }, ORIGIN)).status, 204);
  assert.equal((await beacon(t, { token: view('v:stranger', quiet), identify: 'who@globex.com' }, ORIGIN)).status, 204);

  const created = Date.now() + 60_000;
  for (const [domain, amount] of [
    ['acme.com', 1000],
    ['globex.com', 500],
  ] as const) {
    ok(
      await t.req('POST', '/v0/deals', {
        source: 'api',
        name: `Deal ${domain}`,
        stage: 'open',
        currency: 'EUR',
        amount,
        externalId: `x-${domain}`,
        accountDomain: domain,
        createdAt: iso(created),
      }),
      201,
    );
  }
  const range = { startDate: iso(created - 86_400_000), endDate: iso(created + 1) };
  const any: Json = ok(await t.req('GET', `/v0/analytics/pipeline${qs({ ...range, groupBy: 'experience', model: 'any' })}`));
  assert.equal(any.groupBy, 'experience');
  assert.deepEqual(any.totals.deals, 1);
  assert.equal(any.totals.amount, 1000);
  assert.deepEqual(
    any.groups.map((g: Json) => [g.key, g.label, g.deals, g.amount]).sort(),
    [
      [home, 'Home hero', 1, 1000],
      [pricing, 'Pricing for SaaS', 1, 1000],
    ].sort(),
  );
  const linear: Json = ok(await t.req('GET', `/v0/analytics/pipeline${qs({ ...range, groupBy: 'experience', model: 'linear' })}`));
  assert.deepEqual(
    linear.groups.map((g: Json) => g.attributedAmount),
    [500, 500],
  );
  // The first touch is the earlier view: the pricing page's.
  const first: Json = ok(await t.req('GET', `/v0/analytics/pipeline${qs({ ...range, groupBy: 'experience', model: 'first' })}`));
  assert.deepEqual(
    first.groups.map((g: Json) => g.key),
    [pricing],
  );
  // Sessions never touch by experience, and experience views never touch by page.
  const byPage: Json = ok(await t.req('GET', `/v0/analytics/pipeline${qs({ ...range, groupBy: 'page' })}`));
  assert.equal(byPage.totals.deals, 0);
});
