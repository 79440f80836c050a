import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, ISO_MS, ok, startApp, type Json, type TestApp } from '../helpers.js';

// Issue 40: deals upserted by (source, externalId), matched to accounts by domain, listed, read and
// deleted through HTTP, with their events.

let t: TestApp;
let acme: Json;
before(async () => {
  t = await startApp();
  acme = ok(await t.req('POST', '/v0/accounts', { name: 'Acme', domain: 'acme.com' }), 201);
});
after(async () => {
  await t.close();
});

let n = 0;
const deal = (fields: Record<string, unknown> = {}) => ({
  source: 'api',
  externalId: `ext-${++n}`,
  name: 'Renewal',
  amount: 1000,
  currency: 'EUR',
  stage: 'open',
  createdAt: '2026-06-01T12:00:00.000Z',
  ...fields,
});
const post = (body: unknown, key?: string) => t.req('POST', '/v0/deals', body, key ? { key } : {});
const events = async (type: string): Promise<Json[]> => ok(await t.req('GET', `/v0/events?type=${type}&limit=100`)).items;

describe('POST /v0/deals', () => {
  test('Idempotency-Key: a replay repeats the first answer, 201 or 200, and writes nothing more', async () => {
    const body = deal();
    const headers = (key: string) => ({ headers: { 'idempotency-key': key } });
    const first = await t.req('POST', '/v0/deals', body, headers(`made-${n}`));
    assert.equal(first.status, 201);
    const again = await t.req('POST', '/v0/deals', body, headers(`made-${n}`));
    assert.deepEqual([again.status, again.headers['idempotent-replayed'], again.body], [201, 'true', first.body]);
    const changed = { ...body, name: 'Renewal, bigger' };
    const updated = await t.req('POST', '/v0/deals', changed, headers(`changed-${n}`));
    assert.equal(updated.status, 200);
    const replayed = await t.req('POST', '/v0/deals', changed, headers(`changed-${n}`));
    assert.deepEqual([replayed.status, replayed.headers['idempotent-replayed'], replayed.body], [200, 'true', updated.body]);
    const other = await t.req('POST', '/v0/deals', deal(), headers(`changed-${n - 1}`));
    assert.equal(other.status, 422, 'the same key with another body');
    assert.equal((await events('deal.updated')).filter((e) => e.payload.data.dealId === first.body.dealId).length, 1);
  });

  test('201 when new, 200 when updated, the same deal; an unchanged upsert emits nothing', async () => {
    const body = deal({ accountDomain: 'ACME.com', closedAt: null });
    const created = ok(await post(body), 201);
    assert.match(created.dealId, /^deal_[0-9a-z]{26}$/);
    assert.deepEqual(
      { ...created, dealId: undefined, updatedAt: undefined },
      {
        dealId: undefined,
        source: 'api',
        externalId: body.externalId,
        name: 'Renewal',
        amount: 1000,
        currency: 'EUR',
        stage: 'open',
        accountId: acme.accountId,
        accountDomain: 'ACME.com',
        matched: true,
        createdAt: '2026-06-01T12:00:00.000Z',
        closedAt: null,
        updatedAt: undefined,
      },
    );
    assert.match(created.updatedAt, ISO_MS);
    const again = ok(await post(body), 200);
    assert.deepEqual(again, created, 'nothing changed: same deal, same updatedAt');
    const won = ok(await post({ ...body, stage: 'won', amount: 1200.5, closedAt: '2026-07-01T00:00:00Z' }), 200);
    assert.equal(won.dealId, created.dealId);
    assert.equal(won.stage, 'won');
    assert.equal(won.amount, 1200.5);
    assert.equal(won.closedAt, '2026-07-01T00:00:00.000Z');
    assert.ok(won.updatedAt > created.updatedAt);

    const createdEvents = (await events('deal.created')).filter((e) => e.payload.data.dealId === created.dealId);
    const updatedEvents = (await events('deal.updated')).filter((e) => e.payload.data.dealId === created.dealId);
    assert.equal(createdEvents.length, 1);
    assert.deepEqual(createdEvents[0].payload.data, created);
    assert.equal(updatedEvents.length, 1, 'the unchanged upsert emitted nothing');
    assert.deepEqual(updatedEvents[0].payload.data, won);
  });

  test('the same externalId of another source is another deal', async () => {
    const a = ok(await post(deal({ externalId: 'shared-1' })), 201);
    const b = ok(await post(deal({ externalId: 'shared-1', source: 'hubspot' })), 201);
    assert.notEqual(a.dealId, b.dealId);
  });

  test('no account with the domain: accountId null and matched false; an account made later matches on the next upsert', async () => {
    const body = deal({ accountDomain: 'later.example' });
    const first = ok(await post(body), 201);
    assert.equal(first.accountId, null);
    assert.equal(first.matched, false);
    const none = ok(await post(deal()), 201);
    assert.deepEqual([none.accountId, none.accountDomain, none.matched], [null, null, false]);
    const later = ok(await t.req('POST', '/v0/accounts', { name: 'Later', domain: 'Later.Example' }), 201);
    const second = ok(await post(body), 200);
    assert.equal(second.accountId, later.accountId);
    assert.equal(second.matched, true);
  });

  test('an accountId given must be one of the tenant’s accounts', async () => {
    const given = ok(await post(deal({ accountId: acme.accountId })), 201);
    assert.equal(given.matched, true);
    const other = await t.newTenant('Other');
    const theirs = ok(await t.req('POST', '/v0/accounts', { name: 'Theirs', domain: 'theirs.com' }, { key: other.key }), 201);
    expectProblem(await post(deal({ accountId: theirs.accountId })), 400, 'validation_failed', ['/accountId']);
  });

  test('amount: 0, 2 decimals and the maximum are taken; negative, 3 decimals and above the maximum are 400 at /amount', async () => {
    for (const amount of [0, 0.01, 19.99, 1_000_000_000_000, 999_999_999_999.99]) {
      assert.equal(ok(await post(deal({ amount })), 201).amount, amount);
    }
    for (const amount of [-0.01, 1.005, 0.001, 1_000_000_000_000.01, 1e13, '10', null]) {
      expectProblem(await post(deal({ amount })), 400, 'validation_failed', ['/amount']);
    }
  });

  test('currency: ISO 4217 upper case only, 400 at /currency', async () => {
    for (const currency of ['EUR', 'USD', 'JPY', 'CHF']) ok(await post(deal({ currency })), 201);
    for (const currency of ['eur', 'XYZ', 'EU', 'EURO', '', 'E1R']) {
      expectProblem(await post(deal({ currency })), 400, 'validation_failed', ['/currency']);
    }
  });

  test('every bad field at once is named, each at its pointer', async () => {
    expectProblem(await post(deal({ amount: 1.234, currency: 'ABC', createdAt: '0000-01-01T00:00:00+01:00' })), 400, 'validation_failed', [
      '/amount',
      '/currency',
      '/createdAt',
    ]);
    expectProblem(
      await post(deal({ source: 'pipedrive', stage: 'closed', name: '', externalId: 'x'.repeat(256) })),
      400,
      'validation_failed',
      ['/source', '/stage', '/name', '/externalId'],
    );
    ok(await post(deal({ externalId: 'x'.repeat(255), name: 'n'.repeat(255) })), 201);
    expectProblem(await post(deal({ name: 'n'.repeat(256) })), 400, 'validation_failed', ['/name']);
    expectProblem(await post(deal({ createdAt: 'yesterday' })), 400, 'validation_failed', ['/createdAt']);
    expectProblem(await post(deal({ closedAt: '2026-13-01T00:00:00Z' })), 400, 'validation_failed', ['/closedAt']);
    expectProblem(await post(deal({ accountDomain: 'd'.repeat(254) })), 400, 'validation_failed', ['/accountDomain']);
    expectProblem(await post(deal({ owner: 'me' })), 400, 'validation_failed');
    const { createdAt: _, ...noCreatedAt } = deal();
    expectProblem(await post(noCreatedAt), 400, 'validation_failed', ['/createdAt']);
  });
});

describe('POST /v0/deals: dates in order, a host name for the account (issue 45 §10)', () => {
  const created = '2026-06-01T12:00:00.000Z';

  test('closedAt before createdAt is 400 at /closedAt; at createdAt or after it is taken', async () => {
    const early = await post(deal({ stage: 'won', createdAt: created, closedAt: '2026-06-01T11:59:59.999Z' }));
    expectProblem(early, 400, 'validation_failed', ['/closedAt']);
    assert.match(early.body.errors[0].message, /before createdAt/);
    // The same instant written another way is not before it.
    ok(await post(deal({ stage: 'won', createdAt: created, closedAt: '2026-06-01T14:00:00+02:00' })), 201);
    ok(await post(deal({ stage: 'lost', createdAt: created, closedAt: '2026-06-01T12:00:00.001Z' })), 201);
    // Both wrong: each at its pointer, in one answer.
    expectProblem(
      await post(deal({ createdAt: created, closedAt: '2025-01-01T00:00:00Z', accountDomain: 'https://acme.com' })),
      400,
      'validation_failed',
      ['/accountDomain', '/closedAt'],
    );
  });

  test("an update is checked against its new createdAt: moving a closed deal's creation past its close is 400, and nothing changes", async () => {
    const body = deal({ stage: 'won', createdAt: created, closedAt: '2026-06-10T00:00:00Z' });
    const made = ok(await post(body), 201);
    expectProblem(await post({ ...body, createdAt: '2026-06-10T00:00:00.001Z' }), 400, 'validation_failed', ['/closedAt']);
    expectProblem(await post({ ...body, closedAt: '2026-05-31T23:59:59Z' }), 400, 'validation_failed', ['/closedAt']);
    const stored = ok(await t.req('GET', `/v0/deals/${made.dealId}`));
    assert.deepEqual([stored.createdAt, stored.closedAt], [created, '2026-06-10T00:00:00.000Z']);
    ok(await post({ ...body, createdAt: '2026-06-10T00:00:00Z' }), 200);
  });

  test('accountDomain must be a host name: 400 at /accountDomain otherwise', async () => {
    for (const bad of [
      'https://acme.com',
      'acme.com/pricing',
      'acme.com:443',
      'acme',
      'ad@acme.com',
      'acme .com',
      '-acme.com',
      'acme.com.',
      '192.168.0.1',
      '0x7f.1',
      `${'a'.repeat(64)}.com`,
    ]) {
      expectProblem(await post(deal({ accountDomain: bad })), 400, 'validation_failed', ['/accountDomain']);
    }
    for (const good of ['acme.com', 'ACME.com', 'go.acme.co.uk', 'xn--bcher-kva.example', `${'a'.repeat(63)}.com`]) {
      const made = ok(await post(deal({ accountDomain: good })), 201);
      assert.equal(made.accountDomain, good);
    }
    const matched = ok(await post(deal({ accountDomain: 'ACME.COM' })), 201);
    assert.equal(matched.accountId, acme.accountId);
  });
});

describe('GET /v0/deals', () => {
  test('filters by source, stage, account and dates, newest first, paged by cursor', async () => {
    const other = await t.newTenant('Lister');
    const key = other.key;
    const account = ok(await t.req('POST', '/v0/accounts', { name: 'Beta', domain: 'beta.io' }, { key }), 201);
    const made: Json[] = [];
    const specs = [
      { source: 'api', stage: 'open', createdAt: '2026-01-01T00:00:00.000Z', accountDomain: 'beta.io' },
      { source: 'hubspot', stage: 'won', createdAt: '2026-02-01T00:00:00.000Z', accountDomain: 'beta.io' },
      { source: 'salesforce', stage: 'lost', createdAt: '2026-03-01T00:00:00.000Z' },
      { source: 'hubspot', stage: 'open', createdAt: '2026-04-01T00:00:00.000Z' },
      { source: 'api', stage: 'won', createdAt: '2026-05-01T00:00:00.000Z', accountDomain: 'BETA.IO' },
    ];
    for (const spec of specs) made.push(ok(await post(deal(spec), key), 201));
    const list = async (query: string) => ok(await t.req('GET', `/v0/deals${query}`, undefined, { key }));
    const ids = (page: Json) => page.items.map((d: Json) => d.dealId);

    const all = await list('');
    assert.deepEqual(ids(all), made.map((d) => d.dealId).reverse());
    assert.equal(all.totalCount, 5);
    assert.deepEqual(ids(await list('?source=hubspot')), [made[3].dealId, made[1].dealId]);
    assert.deepEqual(ids(await list('?stage=won')), [made[4].dealId, made[1].dealId]);
    const byAccount = await list(`?accountId=${account.accountId}`);
    assert.deepEqual(ids(byAccount), [made[4].dealId, made[1].dealId, made[0].dealId]);
    assert.equal(byAccount.totalCount, 3);
    assert.deepEqual(ids(await list('?startDate=2026-02-01T00:00:00.000Z&endDate=2026-04-01T00:00:00.000Z')), [
      made[2].dealId,
      made[1].dealId,
    ]);
    assert.deepEqual(ids(await list(`?source=api&stage=won&accountId=${account.accountId}`)), [made[4].dealId]);

    const first = await list('?limit=2');
    assert.equal(first.hasMore, true);
    const second = await list(`?limit=2&cursor=${first.nextCursor}`);
    const third = await list(`?limit=2&cursor=${second.nextCursor}`);
    assert.deepEqual([...ids(first), ...ids(second), ...ids(third)], ids(all));
    assert.equal(third.hasMore, false);
    assert.equal(third.nextCursor, null);

    expectProblem(await t.req('GET', `/v0/deals?stage=won&cursor=${first.nextCursor}`, undefined, { key }), 400, 'validation_failed', [
      '/cursor',
    ]);
    expectProblem(await t.req('GET', '/v0/deals?stage=closed', undefined, { key }), 400, 'validation_failed', ['/stage']);
    expectProblem(await t.req('GET', '/v0/deals?limit=0', undefined, { key }), 400, 'validation_failed', ['/limit']);
    expectProblem(
      await t.req('GET', '/v0/deals?startDate=2026-05-01T00:00:00Z&endDate=2026-01-01T00:00:00Z', undefined, { key }),
      400,
      'validation_failed',
      ['/startDate'],
    );
    expectProblem(await t.req('GET', '/v0/deals?owner=me', undefined, { key }), 400, 'validation_failed');
  });
});

describe('GET and DELETE /v0/deals/{deal_id}', () => {
  test('one deal read and deleted, with deal.deleted; another tenant sees none of it', async () => {
    const made = ok(await post(deal({ accountDomain: 'acme.com' })), 201);
    assert.deepEqual(ok(await t.req('GET', `/v0/deals/${made.dealId}`)), made);

    const other = await t.newTenant('Stranger');
    const key = other.key;
    expectProblem(await t.req('GET', `/v0/deals/${made.dealId}`, undefined, { key }), 404, 'not_found');
    expectProblem(await t.req('DELETE', `/v0/deals/${made.dealId}`, undefined, { key }), 404, 'not_found');
    assert.equal(ok(await t.req('GET', '/v0/deals', undefined, { key })).totalCount, 0);
    // The same source and externalId in another tenant is that tenant's own deal, matched to its own accounts only.
    const theirs = ok(await post({ ...deal(), externalId: made.externalId, accountDomain: 'acme.com' }, key), 201);
    assert.notEqual(theirs.dealId, made.dealId);
    assert.equal(theirs.matched, false);

    assert.equal((await t.req('DELETE', `/v0/deals/${made.dealId}`)).status, 204);
    expectProblem(await t.req('GET', `/v0/deals/${made.dealId}`), 404, 'not_found');
    expectProblem(await t.req('DELETE', `/v0/deals/${made.dealId}`), 404, 'not_found');
    const deleted = (await events('deal.deleted')).filter((e) => e.payload.data.dealId === made.dealId);
    assert.equal(deleted.length, 1);
    assert.deepEqual(deleted[0].payload.data, made);
    assert.equal(ok(await t.req('GET', `/v0/deals/${theirs.dealId}`, undefined, { key })).dealId, theirs.dealId);
    expectProblem(await t.req('GET', '/v0/deals/not-a-deal'), 400, 'validation_failed', ['/deal_id']);
  });
});
