import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, startApp, type Json, type TestApp, ok } from '../helpers.js';

// Accounts (get, update, delete), page links (update) and custom domains (delete), through HTTP only.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});
let n = 0;
const uniqueDomain = () => `d${++n}-${Date.now().toString(36)}.example`;
async function eventsOf(type: string, key?: string): Promise<Json[]> {
  return ok(await t.req('GET', `/v0/events?type=${type}&limit=100`, undefined, key === undefined ? {} : { key })).items;
}

describe('accounts', () => {
  test('GET, PATCH name and domain (persons relinked at once), DELETE with its logs', async () => {
    const domain = uniqueDomain();
    const other = uniqueDomain();
    const account = ok(await t.req('POST', '/v0/accounts', { name: 'Acme', domain }), 201);
    ok(await t.req('POST', '/v0/persons', { name: 'A', domain }), 201);
    ok(await t.req('POST', '/v0/persons', { name: 'B', domain: other.toUpperCase() }), 201);
    ok(await t.req('POST', '/v0/persons', { name: 'C', domain: other }), 201);
    const got = ok(await t.req('GET', `/v0/accounts/${account.accountId}`));
    assert.equal(got.linkedPersonsCount, 1);
    assert.deepEqual({ ...got, linkedPersonsCount: 0 }, { ...account, linkedPersonsCount: 0 });

    const moved = ok(await t.req('PATCH', `/v0/accounts/${account.accountId}`, { domain: other }));
    assert.equal(moved.domain, other);
    assert.equal(moved.linkedPersonsCount, 2);
    assert.ok(moved.updatedAt > account.updatedAt);
    assert.ok(moved.latestActivityAt >= moved.updatedAt);
    const renamed = ok(await t.req('PATCH', `/v0/accounts/${account.accountId}`, { name: 'Acme Corp' }));
    assert.equal(renamed.name, 'Acme Corp');
    assert.deepEqual(ok(await t.req('PATCH', `/v0/accounts/${account.accountId}`, {})), renamed, 'an empty patch changes nothing');
    assert.equal((await eventsOf('account.updated')).filter((e) => e.payload.data.accountId === account.accountId).length, 2);

    const log = ok(await t.req('POST', `/v0/accounts/${account.accountId}/logs`, { source: 'crm', type: 'note', payload: {} }), 201);
    assert.equal((await t.req('DELETE', `/v0/accounts/${account.accountId}`)).status, 204);
    expectProblem(await t.req('GET', `/v0/accounts/${account.accountId}`), 404, 'not_found');
    expectProblem(await t.req('GET', `/v0/accounts/${account.accountId}/logs/${log.accountLogId}`), 404, 'not_found');
    expectProblem(await t.req('DELETE', `/v0/accounts/${account.accountId}`), 404, 'not_found');
    const persons = ok(await t.req('GET', '/v0/persons?limit=100')).items as Json[];
    assert.equal(persons.filter((p) => p.domain?.toLowerCase() === other).length, 2, 'persons are untouched');
    const deleted = (await eventsOf('account.deleted')).filter((e) => e.payload.data.accountId === account.accountId);
    assert.equal(deleted.length, 1);
    assert.equal(deleted[0].payload.data.name, 'Acme Corp');
  });

  test('PATCH domain to one another account has (any case) is 409 naming /domain; bounds', async () => {
    const d1 = uniqueDomain();
    const d2 = uniqueDomain();
    ok(await t.req('POST', '/v0/accounts', { name: 'One', domain: d1 }), 201);
    const two = ok(await t.req('POST', '/v0/accounts', { name: 'Two', domain: d2 }), 201);
    const url = `/v0/accounts/${two.accountId}`;
    expectProblem(await t.req('PATCH', url, { domain: d1.toUpperCase() }), 409, 'conflict', ['/domain']);
    assert.equal(ok(await t.req('PATCH', url, { domain: d2.toUpperCase() })).domain, d2.toUpperCase(), 'its own domain in another case');
    assert.equal(ok(await t.req('PATCH', url, { name: 'n'.repeat(255) })).name.length, 255);
    expectProblem(await t.req('PATCH', url, { name: 'n'.repeat(256) }), 400, 'validation_failed', ['/name']);
    expectProblem(await t.req('PATCH', url, { name: '' }), 400, 'validation_failed', ['/name']);
    expectProblem(await t.req('PATCH', url, { domain: 'has space.example' }), 400, 'validation_failed', ['/domain']);
    expectProblem(await t.req('PATCH', url, { domain: `${'d'.repeat(250)}.com` }), 400, 'validation_failed', ['/domain']);
    expectProblem(await t.req('PATCH', url, { domain: null }), 400, 'validation_failed', ['/domain']);
    expectProblem(await t.req('PATCH', url, { linkedPersonsCount: 3 }), 400, 'validation_failed', ['/linkedPersonsCount']);
  });

  test('concurrent PATCHes of two accounts to one domain: exactly one wins', async () => {
    const target = uniqueDomain();
    const accounts = await Promise.all(
      [1, 2, 3].map(async () => ok(await t.req('POST', '/v0/accounts', { name: 'R', domain: uniqueDomain() }), 201)),
    );
    const results = await Promise.all(accounts.map((a) => t.req('PATCH', `/v0/accounts/${a.accountId}`, { domain: target })));
    assert.equal(results.filter((r) => r.status === 200).length, 1);
    for (const r of results.filter((r) => r.status !== 200)) expectProblem(r, 409, 'conflict', ['/domain']);
  });

  test('another tenant, a malformed or unknown id', async () => {
    const account = ok(await t.req('POST', '/v0/accounts', { name: 'Mine', domain: uniqueDomain() }), 201);
    const other = await t.newTenant('Other');
    expectProblem(await t.req('GET', `/v0/accounts/${account.accountId}`, undefined, { key: other.key }), 404, 'not_found');
    expectProblem(await t.req('PATCH', `/v0/accounts/${account.accountId}`, { name: 'x' }, { key: other.key }), 404, 'not_found');
    expectProblem(await t.req('DELETE', `/v0/accounts/${account.accountId}`, undefined, { key: other.key }), 404, 'not_found');
    expectProblem(await t.req('GET', '/v0/accounts/account_0000000000000000000000000a'), 404, 'not_found');
    expectProblem(await t.req('GET', '/v0/accounts/nope'), 400, 'validation_failed', ['/account_id']);
    assert.equal(ok(await t.req('GET', `/v0/accounts/${account.accountId}`)).name, 'Mine');
  });
});

describe('page links: PATCH', () => {
  async function setup() {
    const page = ok(await t.req('POST', '/v0/pages', { name: 'P', title: 'T', pageContext: 'c', pageType: 'inbound' }), 201);
    const audience = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, {}), 201);
    const link = ok(await t.req('POST', '/v0/page_links', { path: `/l${++n}`, target: { targetType: 'page', pageId: page.pageId } }), 201);
    return { page, audience, link };
  }

  test('path and target change under the rules of creation', async () => {
    const { audience, link } = await setup();
    const moved = ok(await t.req('PATCH', `/v0/page_links/${link.pageLinkId}`, { path: `/moved${n}` }));
    assert.equal(moved.path, `/moved${n}`);
    assert.deepEqual(moved.target, link.target);
    assert.ok(moved.updatedAt > link.updatedAt);
    const retargeted = ok(
      await t.req('PATCH', `/v0/page_links/${link.pageLinkId}`, { target: { targetType: 'audience', audienceId: audience.audienceId } }),
    );
    assert.deepEqual(retargeted.target, { targetType: 'audience', audienceId: audience.audienceId });
    const found = ok(await t.req('GET', `/v0/page_links/search?query=${encodeURIComponent(`/moved${n}`)}`)).items as Json[];
    assert.deepEqual(
      found.map((l) => l.pageLinkId),
      [link.pageLinkId],
    );
    assert.equal((await eventsOf('page_link.updated')).filter((e) => e.payload.data.pageLinkId === link.pageLinkId).length, 2);
  });

  test('a taken path is 409 naming /path; bad targets are 400 naming the field; a deleted link is 409', async () => {
    const a = await setup();
    const b = await setup();
    expectProblem(await t.req('PATCH', `/v0/page_links/${b.link.pageLinkId}`, { path: a.link.path }), 409, 'conflict', ['/path']);
    expectProblem(await t.req('PATCH', `/v0/page_links/${b.link.pageLinkId}`, { path: 'no-slash' }), 400, 'validation_failed', ['/path']);
    expectProblem(await t.req('PATCH', `/v0/page_links/${b.link.pageLinkId}`, { path: '/has space' }), 400, 'validation_failed', ['/path']);
    expectProblem(
      await t.req('PATCH', `/v0/page_links/${b.link.pageLinkId}`, { target: { targetType: 'audience', pageId: a.page.pageId } }),
      400,
      'validation_failed',
      ['/target/pageId', '/target/audienceId'],
    );
    expectProblem(
      await t.req('PATCH', `/v0/page_links/${b.link.pageLinkId}`, {
        target: { targetType: 'page', pageId: 'page_01h0000000000000000000000a' },
      }),
      400,
      'validation_failed',
      ['/target/pageId'],
    );
    expectProblem(await t.req('PATCH', `/v0/page_links/${b.link.pageLinkId}`, { tenantDomainId: 'x' }), 400, 'validation_failed', [
      '/tenantDomainId',
    ]);
    assert.equal(ok(await t.req('PATCH', `/v0/page_links/${b.link.pageLinkId}`, {})).path, b.link.path);
    assert.equal((await t.req('DELETE', `/v0/page_links/${a.link.pageLinkId}`)).status, 204);
    expectProblem(await t.req('PATCH', `/v0/page_links/${a.link.pageLinkId}`, { path: '/x' }), 409, 'conflict');
    assert.equal(
      ok(await t.req('PATCH', `/v0/page_links/${b.link.pageLinkId}`, { path: a.link.path })).path,
      a.link.path,
      'a deleted link frees its path',
    );
    const other = await t.newTenant('Other');
    expectProblem(await t.req('PATCH', `/v0/page_links/${b.link.pageLinkId}`, { path: '/y' }, { key: other.key }), 404, 'not_found');
  });

  test('concurrent moves of two links to one path: exactly one wins', async () => {
    const links = await Promise.all([1, 2, 3].map(() => setup()));
    const path = `/race-${n}`;
    const results = await Promise.all(links.map((l) => t.req('PATCH', `/v0/page_links/${l.link.pageLinkId}`, { path })));
    assert.equal(results.filter((r) => r.status === 200).length, 1, results.map((r) => r.status).join());
    for (const r of results.filter((r) => r.status !== 200)) expectProblem(r, 409, 'conflict', ['/path']);
  });
});

describe('custom domains: DELETE', () => {
  test('removes the domain and its live links (each with page_link.deleted); the hostname is free again', async () => {
    const tenant = await t.newTenant('Domains');
    const key = tenant.key;
    const hostname = `go.${uniqueDomain()}`;
    const domain = ok(await t.req('POST', '/v0/tenant_domains', { hostname }, { key }), 201);
    const page = ok(await t.req('POST', '/v0/pages', { name: 'P', title: 'T', pageContext: 'c', pageType: 'inbound' }, { key }), 201);
    const links: Json[] = [];
    for (const path of ['/a', '/b']) {
      links.push(
        ok(
          await t.req(
            'POST',
            '/v0/page_links',
            { path, tenantDomainId: domain.tenantDomainId, target: { targetType: 'page', pageId: page.pageId } },
            { key },
          ),
          201,
        ),
      );
    }
    const onFallback = ok(
      await t.req('POST', '/v0/page_links', { path: '/a', target: { targetType: 'page', pageId: page.pageId } }, { key }),
      201,
    );
    assert.equal((await t.req('DELETE', `/v0/tenant_domains/${domain.tenantDomainId}`, undefined, { key })).status, 204);
    const domains = ok(await t.req('GET', '/v0/tenant_domains', undefined, { key })).items as Json[];
    assert.ok(!domains.some((d) => d.tenantDomainId === domain.tenantDomainId));
    const deletedEvents = (await eventsOf('page_link.deleted', key)).map((e) => e.payload.data.pageLinkId);
    assert.deepEqual(deletedEvents.filter((id) => links.some((l) => l.pageLinkId === id)).sort(), links.map((l) => l.pageLinkId).sort());
    expectProblem(
      await t.req('GET', `/v0/page_links/search?tenantDomainId=${domain.tenantDomainId}`, undefined, { key }),
      404,
      'not_found',
    );
    const fallbackLinks = ok(await t.req('GET', '/v0/page_links/search', undefined, { key })).items as Json[];
    assert.deepEqual(
      fallbackLinks.map((l) => l.pageLinkId),
      [onFallback.pageLinkId],
      'links of other domains stay',
    );
    expectProblem(await t.req('DELETE', `/v0/tenant_domains/${domain.tenantDomainId}`, undefined, { key }), 404, 'not_found');
    ok(await t.req('POST', '/v0/tenant_domains', { hostname }), 201);
  });

  test('the fallback domain cannot be deleted (409); another tenant gets 404', async () => {
    const domains = ok(await t.req('GET', '/v0/tenant_domains')).items as Json[];
    const fallback = domains.find((d) => d.isFallback);
    assert.ok(fallback, JSON.stringify(domains));
    expectProblem(await t.req('DELETE', `/v0/tenant_domains/${fallback.tenantDomainId}`), 409, 'conflict');
    const custom = ok(await t.req('POST', '/v0/tenant_domains', { hostname: `x.${uniqueDomain()}` }), 201);
    const other = await t.newTenant('Other 2');
    expectProblem(await t.req('DELETE', `/v0/tenant_domains/${custom.tenantDomainId}`, undefined, { key: other.key }), 404, 'not_found');
    expectProblem(await t.req('DELETE', '/v0/tenant_domains/domain_01h0000000000000000000000a'), 404, 'not_found');
  });
});
