import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, ISO_MS, startApp, type Json, type TestApp, ok } from '../helpers.js';

// Goals and funnels as resources: create, read, list, update (round trips), delete, each scoped
// to the tenant; every bound just inside and just outside; bad input names its field.

let t: TestApp;
let pageId: string;
before(async () => {
  t = await startApp();
  pageId = ok(await t.req('POST', '/v0/pages', { name: 'Goals', title: 'Goals', pageContext: 'ctx', pageType: 'inbound' }), 201).pageId;
});
after(async () => {
  await t.close();
});

describe('goals', () => {
  test('each kind with its field; GET, PATCH round trip, DELETE', async () => {
    const form = ok(await t.req('POST', '/v0/goals', { name: 'Lead', kind: 'form' }), 201);
    assert.match(form.goalId, /^goal_[a-z0-9]{26}$/);
    assert.deepEqual(
      { ...form, goalId: '', createdAt: '', updatedAt: '' },
      {
        goalId: '',
        name: 'Lead',
        kind: 'form',
        pageId: null,
        actionPurpose: null,
        path: null,
        eventName: null,
        // A scroll goal's fields (issue 49).
        pathPattern: null,
        threshold: null,
        currency: null,
        maxValue: 1_000_000,
        createdAt: '',
        updatedAt: '',
      },
    );
    assert.match(form.createdAt, ISO_MS);
    const onPage = ok(await t.req('POST', '/v0/goals', { name: 'Lead here', kind: 'form', pageId }), 201);
    assert.equal(onPage.pageId, pageId);
    const action = ok(await t.req('POST', '/v0/goals', { name: 'Demo', kind: 'action', actionPurpose: 'book-demo' }), 201);
    assert.equal(action.actionPurpose, 'book-demo');
    const path = ok(await t.req('POST', '/v0/goals', { name: 'Pricing', kind: 'path', path: '/pricing' }), 201);
    assert.equal(path.path, '/pricing');
    const event = ok(await t.req('POST', '/v0/goals', { name: 'Signup', kind: 'event', eventName: 'signup', currency: 'EUR' }), 201);
    assert.equal(event.eventName, 'signup');
    assert.equal(event.currency, 'EUR');

    assert.deepEqual(ok(await t.req('GET', `/v0/goals/${event.goalId}`)), event);
    // Sent back as read, it changes nothing.
    assert.deepEqual(ok(await t.req('PATCH', `/v0/goals/${event.goalId}`, event)), event);
    const renamed = ok(await t.req('PATCH', `/v0/goals/${event.goalId}`, { ...event, name: 'Sign-up', currency: null }));
    assert.equal(renamed.name, 'Sign-up');
    assert.equal(renamed.currency, null);
    assert.ok(renamed.updatedAt > event.updatedAt);
    // A new kind with its field: the old kind's field is cleared.
    const moved = ok(await t.req('PATCH', `/v0/goals/${event.goalId}`, { kind: 'path', path: '/thanks' }));
    assert.deepEqual([moved.kind, moved.path, moved.eventName], ['path', '/thanks', null]);
    expectProblem(await t.req('PATCH', `/v0/goals/${event.goalId}`, { createdAt: '2020-01-01T00:00:00.000Z' }), 400, 'validation_failed', [
      '/createdAt',
    ]);
    expectProblem(await t.req('PATCH', `/v0/goals/${event.goalId}`, { kind: 'event' }), 400, 'validation_failed', ['/eventName']);
    assert.equal(ok(await t.req('GET', `/v0/goals/${event.goalId}`)).kind, 'path', 'a refused patch writes nothing');

    assert.equal((await t.req('DELETE', `/v0/goals/${path.goalId}`)).status, 204);
    expectProblem(await t.req('GET', `/v0/goals/${path.goalId}`), 404, 'not_found');
    expectProblem(await t.req('DELETE', `/v0/goals/${path.goalId}`), 404, 'not_found');
    const ids = (ok(await t.req('GET', '/v0/goals?limit=100')).items as Json[]).map((g) => g.goalId);
    assert.ok(ids.includes(form.goalId) && ids.includes(action.goalId) && !ids.includes(path.goalId));
  });

  test('bad input names the field; bounds just inside and outside', async () => {
    const bad = async (body: Json, path: string) => expectProblem(await t.req('POST', '/v0/goals', body), 400, 'validation_failed', [path]);
    await bad({ kind: 'form' }, '/name');
    await bad({ name: '', kind: 'form' }, '/name');
    await bad({ name: 'x'.repeat(256), kind: 'form' }, '/name');
    ok(await t.req('POST', '/v0/goals', { name: 'x'.repeat(255), kind: 'form' }), 201);
    await bad({ name: 'g', kind: 'click' }, '/kind');
    await bad({ name: 'g', kind: 'action' }, '/actionPurpose');
    await bad({ name: 'g', kind: 'path' }, '/path');
    await bad({ name: 'g', kind: 'event' }, '/eventName');
    await bad({ name: 'g', kind: 'event', eventName: 'a', path: '/x' }, '/path');
    await bad({ name: 'g', kind: 'form', actionPurpose: 'demo' }, '/actionPurpose');
    await bad({ name: 'g', kind: 'path', path: 'pricing' }, '/path');
    await bad({ name: 'g', kind: 'path', path: '/a b' }, '/path');
    await bad({ name: 'g', kind: 'action', actionPurpose: 'p'.repeat(101) }, '/actionPurpose');
    ok(await t.req('POST', '/v0/goals', { name: 'g', kind: 'action', actionPurpose: 'p'.repeat(100) }), 201);
    await bad({ name: 'g', kind: 'event', eventName: 'e'.repeat(101) }, '/eventName');
    ok(await t.req('POST', '/v0/goals', { name: 'g', kind: 'event', eventName: 'e'.repeat(100) }), 201);
    await bad({ name: 'g', kind: 'event', eventName: 'e', currency: 'XYZ' }, '/currency');
    await bad({ name: 'g', kind: 'event', eventName: 'e', currency: 'eur' }, '/currency');
    await bad({ name: 'g', kind: 'event', eventName: 'e', currency: 'EURO' }, '/currency');
    ok(await t.req('POST', '/v0/goals', { name: 'g', kind: 'event', eventName: 'e', currency: 'JPY' }), 201);
    await bad({ name: 'g', kind: 'form', pageId: 'page_00000000000000000000000000' }, '/pageId');
    await bad({ name: 'g', kind: 'form', extra: 1 }, '/extra');
    const before = ok(await t.req('GET', '/v0/goals')).totalCount;
    await bad({ name: 'g', kind: 'form', pageId: "'; drop table goals; --" }, '/pageId');
    assert.equal(ok(await t.req('GET', '/v0/goals')).totalCount, before, 'nothing written');
  });

  test('keyset list: newest first, pages of limit, a foreign cursor is 400', async () => {
    const other = await t.newTenant('Lists');
    const made = [];
    for (let i = 0; i < 5; i++) made.push(ok(await t.req('POST', '/v0/goals', { name: `L${i}`, kind: 'form' }, { key: other.key }), 201));
    const first = ok(await t.req('GET', '/v0/goals?limit=2', undefined, { key: other.key }));
    assert.equal(first.totalCount, 5);
    assert.deepEqual(
      first.items.map((g: Json) => g.name),
      ['L4', 'L3'],
    );
    const second = ok(await t.req('GET', `/v0/goals?limit=2&cursor=${first.nextCursor}`, undefined, { key: other.key }));
    assert.deepEqual(
      second.items.map((g: Json) => g.name),
      ['L2', 'L1'],
    );
    expectProblem(await t.req('GET', '/v0/goals?cursor=abc', undefined, { key: other.key }), 400, 'validation_failed', ['/cursor']);
    expectProblem(await t.req('GET', '/v0/goals?limit=101', undefined, { key: other.key }), 400, 'validation_failed', ['/limit']);
  });

  test("another tenant's goal is 404 on every verb", async () => {
    const other = await t.newTenant('Other');
    const goal = ok(await t.req('POST', '/v0/goals', { name: 'Mine', kind: 'form' }), 201);
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { name: 'Theirs' }],
      ['DELETE', undefined],
    ] as const) {
      expectProblem(await t.req(method, `/v0/goals/${goal.goalId}`, body, { key: other.key }), 404, 'not_found');
    }
    assert.equal(ok(await t.req('GET', '/v0/goals', undefined, { key: other.key })).totalCount, 0);
    assert.equal(ok(await t.req('GET', `/v0/goals/${goal.goalId}`)).name, 'Mine');
    // A form goal may not name another tenant's page.
    const theirPage = ok(
      await t.req('POST', '/v0/pages', { name: 'P', title: 'P', pageContext: 'c', pageType: 'inbound' }, { key: other.key }),
      201,
    );
    expectProblem(await t.req('POST', '/v0/goals', { name: 'g', kind: 'form', pageId: theirPage.pageId }), 400, 'validation_failed', [
      '/pageId',
    ]);
  });
});

describe('funnels', () => {
  const steps = [
    { kind: 'path', path: '/a' },
    { kind: 'action', actionPurpose: 'demo', name: 'Demo clicked' },
    { kind: 'event', eventName: 'signup' },
  ];

  test('create with defaults, GET, PATCH round trip, list, DELETE', async () => {
    const funnel = ok(await t.req('POST', '/v0/funnels', { name: 'Signup', steps }), 201);
    assert.match(funnel.funnelId, /^funnel_[a-z0-9]{26}$/);
    assert.equal(funnel.windowHours, 24);
    assert.deepEqual(
      funnel.steps.map((s: Json) => [s.name, s.kind, s.path, s.actionPurpose, s.eventName, s.pageId]),
      [
        ['Visited /a', 'path', '/a', null, null, null],
        ['Demo clicked', 'action', null, 'demo', null, null],
        ['signup', 'event', null, null, 'signup', null],
      ],
    );
    assert.deepEqual(ok(await t.req('GET', `/v0/funnels/${funnel.funnelId}`)), funnel);
    assert.deepEqual(ok(await t.req('PATCH', `/v0/funnels/${funnel.funnelId}`, funnel)), funnel, 'sent back as read: no change');
    const changed = ok(await t.req('PATCH', `/v0/funnels/${funnel.funnelId}`, { windowHours: 720, steps: steps.slice(0, 2) }));
    assert.equal(changed.windowHours, 720);
    assert.equal(changed.steps.length, 2);
    const listed = ok(await t.req('GET', '/v0/funnels?limit=100')).items as Json[];
    assert.ok(listed.some((f) => f.funnelId === funnel.funnelId));
    const other = await t.newTenant('Funnels');
    expectProblem(await t.req('GET', `/v0/funnels/${funnel.funnelId}`, undefined, { key: other.key }), 404, 'not_found');
    expectProblem(await t.req('GET', `/v0/funnels/${funnel.funnelId}/results`, undefined, { key: other.key }), 404, 'not_found');
    assert.equal((await t.req('DELETE', `/v0/funnels/${funnel.funnelId}`)).status, 204);
    expectProblem(await t.req('GET', `/v0/funnels/${funnel.funnelId}`), 404, 'not_found');
  });

  test('bounds: 2 to 8 steps, windowHours 1 to 720, each step as a goal', async () => {
    const bad = async (body: Json, path: string) =>
      expectProblem(await t.req('POST', '/v0/funnels', body), 400, 'validation_failed', [path]);
    const step = { kind: 'path', path: '/x' };
    await bad({ name: 'f', steps: [step] }, '/steps');
    ok(await t.req('POST', '/v0/funnels', { name: 'f', steps: [step, step] }), 201);
    ok(await t.req('POST', '/v0/funnels', { name: 'f', steps: Array(8).fill(step) }), 201);
    await bad({ name: 'f', steps: Array(9).fill(step) }, '/steps');
    await bad({ name: 'f', steps: [step, step], windowHours: 0 }, '/windowHours');
    await bad({ name: 'f', steps: [step, step], windowHours: 721 }, '/windowHours');
    await bad({ name: 'f', steps: [step, step], windowHours: 1.5 }, '/windowHours');
    assert.equal(ok(await t.req('POST', '/v0/funnels', { name: 'f', steps: [step, step], windowHours: 1 }), 201).windowHours, 1);
    assert.equal(ok(await t.req('POST', '/v0/funnels', { name: 'f', steps: [step, step], windowHours: 720 }), 201).windowHours, 720);
    await bad({ name: 'f', steps: [step, { kind: 'action' }] }, '/steps/1/actionPurpose');
    await bad({ name: 'f', steps: [step, { kind: 'event', eventName: 'e', path: '/y' }] }, '/steps/1/path');
    await bad({ name: 'f', steps: [step, { kind: 'form', pageId: 'page_00000000000000000000000000' }] }, '/steps/1/pageId');
    await bad({ name: '', steps: [step, step] }, '/name');
    const funnel = ok(await t.req('POST', '/v0/funnels', { name: 'r', steps: [step, step] }), 201);
    const results = (q: string) => t.req('GET', `/v0/funnels/${funnel.funnelId}/results${q}`);
    expectProblem(await results('?startDate=2026-02-01T00:00:00Z&endDate=2026-01-01T00:00:00Z'), 400, 'validation_failed', ['/startDate']);
    expectProblem(await results('?startDate=2024-01-01T00:00:00Z&endDate=2026-01-01T00:00:00Z'), 400, 'validation_failed', ['/endDate']);
    expectProblem(await results('?groupBy=colour'), 400, 'validation_failed', ['/groupBy']);
    const empty = ok(await results(''));
    assert.deepEqual(
      empty.steps.map((s: Json) => [s.index, s.visitors, s.conversionFromPrevious, s.conversionFromStart, s.medianSecondsFromPrevious]),
      [
        [0, 0, null, null, null],
        [1, 0, null, null, null],
      ],
    );
  });
});
