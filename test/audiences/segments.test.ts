import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, ok, startApp, type Json, type TestApp } from '../helpers.js';
import { publishedPage } from '../site/serve-helpers.js';

// Segment audiences through the API (issue 39): rules and priority, their bounds at their pointers, kinds.

let t: TestApp;
let pageId: string;
before(async () => {
  t = await startApp();
  pageId = (await publishedPage(t)).pageId;
});
after(async () => {
  await t.close();
});

const url = () => `/v0/pages/${pageId}/audiences`;
const cond = (field: string, operator: string, value?: unknown) => ({ field, operator, ...(value === undefined ? {} : { value }) });
const rules = (...conditions: unknown[]) => ({ match: 'all', conditions });
const create = (body: Record<string, unknown>) => t.req('POST', url(), body);

describe('segment audiences', () => {
  test('created with rules and priority; the answer carries both, null for others', async () => {
    const body = {
      customName: 'LinkedIn ads',
      priority: 10,
      rules: { match: 'all', conditions: [cond('utm.source', 'equals', 'linkedin')] },
    };
    const a = ok(await create(body), 201);
    assert.deepEqual(a.rules, body.rules);
    assert.equal(a.priority, 10);
    assert.equal(a.personId, null);
    const plain = ok(await create({ customName: 'Plain' }), 201);
    assert.equal(plain.rules, null);
    assert.equal(plain.priority, null);
    const defaulted = ok(await create({ rules: rules(cond('visitor.device', 'equals', 'mobile')) }), 201);
    assert.equal(defaulted.priority, 0);
    assert.deepEqual(ok(await t.req('GET', `${url()}/${a.audienceId}`)).rules, body.rules);
  });

  test('every field and operator the issue names is accepted', async () => {
    const all = [
      ...['source', 'medium', 'campaign', 'term', 'content'].map((p) => cond(`utm.${p}`, 'contains', 'x')),
      cond('query.a', 'starts_with', 'x'),
      cond(`query.${'q'.repeat(40)}`, 'ends_with', 'x'),
      cond('referrer.host', 'not_equals', 'example.com'),
      cond('referrer.channel', 'in', ['social', 'SEARCH']),
      cond('visitor.country', 'equals', 'de'),
      cond('visitor.language', 'exists'),
      cond('visitor.returning', 'equals', true),
      cond('company.name', 'exists', false),
      cond('company.domain', 'equals', 'acme.com'),
      cond('company.industry', 'contains', 'soft'),
      cond('company.employees', 'gte', 50),
      cond('company.employees', 'lte', 5000),
      cond('company.country', 'in', ['DE', 'at']),
    ];
    assert.equal(all.length, 18);
    ok(await create({ rules: { match: 'any', conditions: all } }), 201);
  });

  test('bounds just inside and just outside, each at its pointer', async () => {
    const twenty = Array.from({ length: 20 }, () => cond('utm.source', 'equals', 'a'));
    ok(await create({ rules: rules(...twenty) }), 201);
    expectProblem(await create({ rules: rules(...twenty, cond('utm.source', 'equals', 'a')) }), 400, 'validation_failed', [
      '/rules/conditions',
    ]);
    expectProblem(await create({ rules: rules() }), 400, 'validation_failed', ['/rules/conditions']);
    const hundred = Array.from({ length: 100 }, (_, i) => `v${i}`);
    ok(await create({ rules: rules(cond('utm.campaign', 'in', hundred)) }), 201);
    expectProblem(await create({ rules: rules(cond('utm.campaign', 'in', [...hundred, 'x'])) }), 400, 'validation_failed', [
      '/rules/conditions/0/value',
    ]);
    ok(await create({ rules: rules(cond('utm.source', 'equals', 'a')), priority: 0 }), 201);
    ok(await create({ rules: rules(cond('utm.source', 'equals', 'a')), priority: 1000 }), 201);
    expectProblem(await create({ rules: rules(cond('utm.source', 'equals', 'a')), priority: 1001 }), 400, 'validation_failed', [
      '/priority',
    ]);
    expectProblem(await create({ rules: rules(cond('utm.source', 'equals', 'a')), priority: -1 }), 400, 'validation_failed', ['/priority']);
    expectProblem(await create({ rules: rules(cond('utm.source', 'equals', 'a')), priority: 1.5 }), 400, 'validation_failed', [
      '/priority',
    ]);
    expectProblem(await create({ rules: rules(cond(`query.${'q'.repeat(41)}`, 'equals', 'a')) }), 400, 'validation_failed', [
      '/rules/conditions/0/field',
    ]);
    expectProblem(await create({ rules: rules(cond('query.', 'equals', 'a')) }), 400, 'validation_failed', ['/rules/conditions/0/field']);
    expectProblem(await create({ rules: rules(cond('query.a b', 'equals', 'a')) }), 400, 'validation_failed', [
      '/rules/conditions/0/field',
    ]);
    expectProblem(await create({ rules: rules(cond('person.name', 'equals', 'a')) }), 400, 'validation_failed', [
      '/rules/conditions/0/field',
    ]);
    expectProblem(await create({ rules: rules(cond('utm.source', 'matches', 'a')) }), 400, 'validation_failed', [
      '/rules/conditions/0/operator',
    ]);
    expectProblem(await create({ rules: { match: 'some', conditions: [cond('utm.source', 'equals', 'a')] } }), 400, 'validation_failed', [
      '/rules/match',
    ]);
    ok(await create({ rules: rules(cond('utm.source', 'equals', 'x'.repeat(255))) }), 201);
    expectProblem(await create({ rules: rules(cond('utm.source', 'equals', 'x'.repeat(256))) }), 400, 'validation_failed');
  });

  test('a value that does not fit its operator or field is 400 at its pointer', async () => {
    const bad: [unknown, string][] = [
      [cond('company.employees', 'gte', '50'), '/rules/conditions/0/value'],
      [cond('utm.source', 'in', 'linkedin'), '/rules/conditions/0/value'],
      [cond('utm.source', 'equals', 5), '/rules/conditions/0/value'],
      [cond('utm.source', 'equals'), '/rules/conditions/0/value'],
      [cond('utm.source', 'exists', 'yes'), '/rules/conditions/0/value'],
      [cond('visitor.device', 'equals', 'phone'), '/rules/conditions/0/value'],
      [cond('visitor.country', 'equals', 'DEU'), '/rules/conditions/0/value'],
      [cond('visitor.returning', 'equals', 'yes'), '/rules/conditions/0/value'],
      [cond('visitor.returning', 'contains', true), '/rules/conditions/0/value'],
      [cond('referrer.channel', 'in', ['social', 'tv']), '/rules/conditions/0/value/1'],
    ];
    for (const [c, pointer] of bad) {
      expectProblem(await create({ rules: { match: 'all', conditions: [c] } }), 400, 'validation_failed', [pointer]);
    }
  });

  test('a person together with rules is 400; priority without rules is 400', async () => {
    const person = ok(await t.req('POST', '/v0/persons', { name: 'Ann Lee', email: `ann${Date.now()}@acme.com` }), 201);
    expectProblem(await create({ personId: person.personId, rules: rules(cond('utm.source', 'equals', 'a')) }), 400, 'validation_failed', [
      '/rules',
    ]);
    expectProblem(await create({ priority: 5 }), 400, 'validation_failed', ['/priority']);
    const personal = ok(await create({ personId: person.personId }), 201);
    expectProblem(
      await t.req('PATCH', `${url()}/${personal.audienceId}`, { rules: rules(cond('utm.source', 'equals', 'a')) }),
      400,
      'validation_failed',
      ['/rules'],
    );
  });

  test('PATCH changes rules and priority; the list filters by kind', async () => {
    const a = ok(await create({ customName: 'Seg', rules: rules(cond('utm.source', 'equals', 'a')), priority: 1 }), 201);
    const patched = ok(
      await t.req('PATCH', `${url()}/${a.audienceId}`, {
        priority: 7,
        rules: { match: 'any', conditions: [cond('utm.medium', 'exists')] },
      }),
    );
    assert.equal(patched.priority, 7);
    assert.equal(patched.rules.match, 'any');
    expectProblem(await t.req('PATCH', `${url()}/${a.audienceId}`, { priority: 1001 }), 400, 'validation_failed', ['/priority']);
    const p2 = (await publishedPage(t)).pageId;
    const u2 = `/v0/pages/${p2}/audiences`;
    const seg = ok(await t.req('POST', u2, { rules: rules(cond('utm.source', 'equals', 'a')) }), 201);
    const home = ok(await t.req('POST', u2, { flags: ['home_page'] }), 201);
    const person = ok(await t.req('POST', '/v0/persons', { name: 'Bo Kim', email: `bo${Date.now()}@kim.io` }), 201);
    const personal = ok(await t.req('POST', u2, { personId: person.personId }), 201);
    const ids = async (kind: string) => (ok(await t.req('GET', `${u2}?kind=${kind}`)).items as Json[]).map((x) => x.audienceId);
    assert.deepEqual(await ids('segment'), [seg.audienceId]);
    assert.deepEqual(await ids('home'), [home.audienceId]);
    assert.deepEqual(await ids('person'), [personal.audienceId]);
    expectProblem(await t.req('GET', `${u2}?kind=robot`), 400, 'validation_failed', ['/kind']);
    // rules: null makes it an audience for no one in particular.
    const cleared = ok(await t.req('PATCH', `${u2}/${seg.audienceId}`, { rules: null }));
    assert.equal(cleared.rules, null);
    assert.equal(cleared.priority, null);
    assert.deepEqual(await ids('segment'), []);
  });
});
