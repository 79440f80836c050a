import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { attest, expectProblem, ISO_MS, ok, startApp, type Json, type Res, type TestApp } from '../helpers.js';

// Black-box tests of reference endpoint 20 (search page links), the page-link extensions
// (POST /v0/page_links, DELETE /v0/page_links/{page_link_id}) and the tenant-domain extensions
// (GET and POST /v0/tenant_domains), through HTTP only.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const LINK_ID = /^pagelink_[0-9a-z]{26}$/;
const DOMAIN_ID = /^domain_[0-9a-z]{26}$/;
const LINK_FIELDS = ['createdAt', 'deletedAt', 'pageLinkId', 'path', 'target', 'tenantDomainId', 'updatedAt'];
const ENVELOPE_FIELDS = ['hasMore', 'items', 'nextCursor', 'totalCount'];

/** Well-formed ids that name nothing (TypeID body: first character 0-7). */
const UNKNOWN_LINK = 'pagelink_01h0000000000000000000000a';
const UNKNOWN_DOMAIN = 'domain_01h0000000000000000000000a';
const UNKNOWN_PAGE = 'page_01h0000000000000000000000a';
const UNKNOWN_AUDIENCE = 'audience_01h0000000000000000000000a';

const as = (key?: string) => (key === undefined ? {} : { key });
let hostCounter = 0;
/** A hostname no other test uses. */
const uniqueHost = (label = 'h') => `${label}${++hostCounter}-${Date.now().toString(36)}.example.com`;

function assertJson(res: Res, status: number): void {
  assert.equal(res.status, status, res.text);
  assert.match(String(res.headers['content-type']), /^application\/json/);
}

async function createPage(key?: string, name = 'Landing'): Promise<string> {
  const res = await t.req('POST', '/v0/pages', { name, title: `${name} title`, pageContext: 'ctx', pageType: 'inbound' }, as(key));
  assert.equal(res.status, 201, res.text);
  return res.body.pageId;
}

async function createAudience(pageId: string, key?: string): Promise<string> {
  const res = await t.req('POST', `/v0/pages/${pageId}/audiences`, {}, as(key));
  assert.equal(res.status, 201, res.text);
  return res.body.audienceId;
}

async function deletePage(pageId: string, key?: string): Promise<void> {
  const res = await t.req('DELETE', `/v0/pages/${pageId}`, undefined, as(key));
  assert.equal(res.status, 204, res.text);
}

async function createDomain(hostname: string, key?: string): Promise<Json> {
  const res = await t.req('POST', '/v0/tenant_domains', { hostname }, as(key));
  assertJson(res, 201);
  return res.body;
}

async function domains(key?: string): Promise<Json> {
  const res = await t.req('GET', '/v0/tenant_domains', undefined, as(key));
  assertJson(res, 200);
  return res.body;
}

async function fallbackOf(key?: string): Promise<Json> {
  const fallback = (await domains(key)).items.filter((d: Json) => d.isFallback);
  assert.equal(fallback.length, 1);
  return fallback[0];
}

const pageTarget = (pageId: string) => ({ targetType: 'page', pageId });
const routingTarget = (pageId: string) => ({ targetType: 'page_routing', pageId });
const audienceTarget = (audienceId: string) => ({ targetType: 'audience', audienceId });

async function createLink(body: Json, key?: string): Promise<Json> {
  const res = await t.req('POST', '/v0/page_links', body, as(key));
  assertJson(res, 201);
  return res.body;
}

async function deleteLink(id: string, key?: string): Promise<void> {
  const res = await t.req('DELETE', `/v0/page_links/${id}`, undefined, as(key));
  assert.equal(res.status, 204, res.text);
}

function search(params: Record<string, string | number> = {}, key?: string): Promise<Res> {
  const qs = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)] as [string, string])).toString();
  return t.req('GET', `/v0/page_links/search${qs ? `?${qs}` : ''}`, undefined, as(key));
}

async function searchIds(params: Record<string, string | number> = {}, key?: string): Promise<string[]> {
  const res = await search({ limit: 100, ...params }, key);
  assertJson(res, 200);
  assert.equal(res.body.hasMore, false);
  assert.equal(res.body.totalCount, res.body.items.length);
  return res.body.items.map((l: Json) => l.pageLinkId);
}

function assertLinkShape(link: Json): void {
  assert.deepEqual(Object.keys(link).sort(), LINK_FIELDS);
  assert.match(link.pageLinkId, LINK_ID);
  assert.match(link.tenantDomainId, DOMAIN_ID);
  assert.equal(typeof link.path, 'string');
  assert.ok(['audience', 'page', 'page_routing'].includes(link.target.targetType));
  const expectedKeys = link.target.targetType === 'audience' ? ['audienceId', 'targetType'] : ['pageId', 'targetType'];
  assert.deepEqual(Object.keys(link.target).sort(), expectedKeys);
  assert.match(link.createdAt, ISO_MS);
  assert.match(link.updatedAt, ISO_MS);
  assert.ok(link.deletedAt === null || ISO_MS.test(link.deletedAt));
}

/** Newest first, ties by id: the default order of every list. */
const newestFirst = (links: Json[]): string[] =>
  [...links]
    .sort((a, b) => (a.createdAt === b.createdAt ? (a.pageLinkId < b.pageLinkId ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1))
    .map((l) => l.pageLinkId);

describe('tenant domains (extension)', () => {
  test('GET /v0/tenant_domains lists the fallback domain acme.pages.localhost', async () => {
    const body = await domains();
    assert.deepEqual(Object.keys(body).sort(), ENVELOPE_FIELDS);
    assert.equal(body.items.length, 1);
    assert.equal(body.totalCount, 1);
    assert.equal(body.hasMore, false);
    assert.equal(body.nextCursor, null);
    const d = body.items[0];
    assert.match(d.tenantDomainId, DOMAIN_ID);
    assert.equal(d.hostname, 'acme.pages.localhost');
    assert.equal(d.isFallback, true);
    for (const k of Object.keys(d))
      assert.ok(
        ['tenantDomainId', 'hostname', 'isFallback', 'status', 'verifiedAt', 'verification', 'routing', 'createdAt'].includes(k),
        `unexpected field ${k}`,
      );
    assert.match(d.createdAt, ISO_MS);
    // A fallback domain is verified from the start: the service names it.
    assert.equal(d.status, 'verified');
    assert.equal(d.verifiedAt, d.createdAt);
    assert.equal(d.verification, null);
    assert.equal(d.routing, null, 'no record to create: the service names it');
  });

  test('every tenant has its own fallback domain from its unique slug', async () => {
    const twin = await t.newTenant('Acme');
    const other = await t.newTenant('Blue Sky Ltd');
    const twinFallback = await fallbackOf(twin.key);
    assert.equal(twinFallback.hostname, 'acme-2.pages.localhost');
    assert.equal((await fallbackOf(other.key)).hostname, 'blue-sky-ltd.pages.localhost');
    assert.notEqual(twinFallback.tenantDomainId, (await fallbackOf()).tenantDomainId);
    // Each tenant sees only its own domains.
    assert.deepEqual(
      (await domains(twin.key)).items.map((d: Json) => d.hostname),
      ['acme-2.pages.localhost'],
    );
  });

  test('FALLBACK_DOMAIN_SUFFIX changes the suffix of fallback domains', async () => {
    const other = await startApp({ FALLBACK_DOMAIN_SUFFIX: 'links.example.org' });
    try {
      const res = await other.req('GET', '/v0/tenant_domains');
      assertJson(res, 200);
      assert.equal(res.body.items.length, 1);
      assert.equal(res.body.items[0].hostname, 'acme.links.example.org');
      assert.equal(res.body.items[0].isFallback, true);
      // Links default to it there too.
      const page = (await other.req('POST', '/v0/pages', { name: 'P', title: 'P', pageContext: 'c', pageType: 'inbound' })).body.pageId;
      const link = await other.req('POST', '/v0/page_links', { path: '/x', target: pageTarget(page) });
      assertJson(link, 201);
      assert.equal(link.body.tenantDomainId, res.body.items[0].tenantDomainId);
    } finally {
      await other.close();
    }
  });

  test('POST /v0/tenant_domains: 201 with the hostname lowercased, then listed', async () => {
    const { key } = await t.newTenant('Domains Create');
    const res = await t.req('POST', '/v0/tenant_domains', { hostname: 'Pages.Example-Shop.COM' }, { key });
    assertJson(res, 201);
    assert.match(res.body.tenantDomainId, DOMAIN_ID);
    assert.equal(res.body.hostname, 'pages.example-shop.com');
    assert.equal(res.body.isFallback, false);
    // A custom domain starts pending, with the TXT record that proves it.
    assert.equal(res.body.status, 'pending');
    assert.equal(res.body.verifiedAt, null);
    assert.deepEqual(Object.keys(res.body.verification).sort(), ['name', 'recordType', 'value']);
    assert.equal(res.body.verification.recordType, 'TXT');
    assert.equal(res.body.verification.name, '_pam-verify.pages.example-shop.com');
    assert.match(res.body.verification.value, /^pam-verify=[0-9a-f]{40}$/);
    const list = await domains(key);
    assert.equal(list.totalCount, 2);
    const listed = list.items.find((d: Json) => d.tenantDomainId === res.body.tenantDomainId);
    assert.deepEqual(listed, res.body);
    assert.equal(list.items.filter((d: Json) => d.isFallback).length, 1);
  });

  test('a name this tenant claims, or another verified, in any case, is 409; pending claims coexist', async () => {
    const a = await t.newTenant('Domains Dup A');
    const b = await t.newTenant('Domains Dup B');
    const c = await t.newTenant('Domains Dup C');
    const host = uniqueHost('dup');
    const claimA = await createDomain(host, a.key);
    expectProblem(await t.req('POST', '/v0/tenant_domains', { hostname: host }, { key: a.key }), 409, 'conflict', ['/hostname']);
    expectProblem(await t.req('POST', '/v0/tenant_domains', { hostname: host.toUpperCase() }, { key: a.key }), 409, 'conflict');
    // While pending, another tenant may claim the same name: the first to verify holds it.
    const claimB = await createDomain(host.toUpperCase(), b.key);
    assert.equal(claimB.status, 'pending');
    assert.notEqual(claimB.verification.value, claimA.verification.value);
    ok(await attest(t, claimA.tenantDomainId));
    // B's claim was released; now the name is 409 for everyone else.
    assert.equal((await domains(b.key)).totalCount, 1);
    expectProblem(await t.req('POST', '/v0/tenant_domains', { hostname: host }, { key: b.key }), 409, 'conflict', ['/hostname']);
    expectProblem(await t.req('POST', '/v0/tenant_domains', { hostname: host }, { key: c.key }), 409, 'conflict', ['/hostname']);
    // Another tenant's fallback hostname is under the fallback suffix: refused as such.
    expectProblem(
      await t.req('POST', '/v0/tenant_domains', { hostname: 'acme.pages.localhost' }, { key: b.key }),
      400,
      'validation_failed',
      ['/hostname'],
    );
    assert.equal((await domains(c.key)).totalCount, 1, 'nothing was added');
    assert.equal((await domains(a.key)).totalCount, 2);
  });

  test('an invalid DNS name is 400 at /hostname', async () => {
    const { key } = await t.newTenant('Domains Invalid');
    const label = (c: string, n: number) => c.repeat(n);
    const h253 = `${label('a', 63)}.${label('b', 63)}.${label('c', 63)}.${label('d', 61)}`;
    const h254 = `${label('a', 63)}.${label('b', 63)}.${label('c', 63)}.${label('d', 62)}`;
    assert.equal(h253.length, 253);
    assert.equal(h254.length, 254);
    const bad = [
      'not a host',
      '-bad.com',
      'bad-.com',
      'a..b',
      '.example.com',
      'localhost',
      h254,
      '',
      'under_score.example.com',
      'http://example.com',
      'example.com/path',
      'example.com:8080',
      `${label('x', 64)}.example.com`,
      'exa mple.com',
      'ex@mple.com',
      'bücher.example',
    ];
    for (const hostname of bad) {
      expectProblem(await t.req('POST', '/v0/tenant_domains', { hostname }, { key }), 400, 'validation_failed', ['/hostname']);
    }
    expectProblem(await t.req('POST', '/v0/tenant_domains', {}, { key }), 400, 'validation_failed', ['/hostname']);
    expectProblem(await t.req('POST', '/v0/tenant_domains', { hostname: null }, { key }), 400, 'validation_failed', ['/hostname']);
    expectProblem(await t.req('POST', '/v0/tenant_domains', { hostname: 5 }, { key }), 400, 'validation_failed', ['/hostname']);
    expectProblem(
      await t.req('POST', '/v0/tenant_domains', { hostname: uniqueHost(), isFallback: true }, { key }),
      400,
      'validation_failed',
      ['/isFallback'],
    );
    assert.equal((await domains(key)).totalCount, 1, 'nothing was added');
    // Just inside the bounds: 253 characters, 63-character labels, digits and inner hyphens.
    assert.equal((await createDomain(h253, key)).hostname, h253);
    const sixtyThree = `${label('y', 63)}.example.net`;
    assert.equal((await createDomain(sixtyThree, key)).hostname, sixtyThree);
    assert.equal((await createDomain('a-1.b2.example.io', key)).hostname, 'a-1.b2.example.io');
  });

  test('GET /v0/tenant_domains: newest first, paginated with limit 1 to the end', async () => {
    const { key } = await t.newTenant('Domains Pages');
    const fallback = await fallbackOf(key);
    const made: Json[] = [];
    for (let i = 0; i < 3; i++) made.push(await createDomain(uniqueHost('page'), key));
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let guard = 0; guard < 10; guard++) {
      const res = await t.req('GET', `/v0/tenant_domains?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, undefined, {
        key,
      });
      assertJson(res, 200);
      assert.equal(res.body.totalCount, 4);
      seen.push(...res.body.items.map((d: Json) => d.tenantDomainId));
      if (!res.body.hasMore) break;
      cursor = res.body.nextCursor;
    }
    assert.deepEqual(seen, [...made.reverse().map((d) => d.tenantDomainId), fallback.tenantDomainId]);
    expectProblem(await t.req('GET', '/v0/tenant_domains?limit=0', undefined, { key }), 400, 'validation_failed', ['/limit']);
    expectProblem(await t.req('GET', '/v0/tenant_domains?cursor=nope', undefined, { key }), 400, 'validation_failed', ['/cursor']);
  });

  test('authentication is required', async () => {
    expectProblem(await t.req('GET', '/v0/tenant_domains', undefined, { key: null }), 401, 'unauthorized');
    expectProblem(await t.req('POST', '/v0/tenant_domains', { hostname: uniqueHost() }, { key: null }), 401, 'unauthorized');
  });
});

describe('POST /v0/page_links (extension)', () => {
  test('201 PageLink for a page target: exact keys, fallback domain by default, deletedAt null', async () => {
    const { key } = await t.newTenant('Links Page');
    const fallback = await fallbackOf(key);
    const pageId = await createPage(key);
    const res = await t.req('POST', '/v0/page_links', { path: '/welcome', target: pageTarget(pageId) }, { key });
    assertJson(res, 201);
    const link = res.body;
    assertLinkShape(link);
    assert.equal(link.path, '/welcome');
    assert.equal(link.tenantDomainId, fallback.tenantDomainId);
    assert.deepEqual(link.target, { targetType: 'page', pageId });
    assert.equal(link.deletedAt, null);
    assert.equal(link.createdAt, link.updatedAt);
    assert.ok(Math.abs(Date.parse(link.createdAt) - Date.now()) < 60_000);
    assert.deepEqual((await search({}, key)).body.items, [link]);
  });

  test('page_routing and audience targets carry pageId, resp. audienceId only', async () => {
    const { key } = await t.newTenant('Links Targets');
    const pageId = await createPage(key);
    const audienceId = await createAudience(pageId, key);
    const routing = await createLink({ path: '/routing', target: routingTarget(pageId) }, key);
    assertLinkShape(routing);
    assert.deepEqual(routing.target, { targetType: 'page_routing', pageId });
    const aud = await createLink({ path: '/aud', target: audienceTarget(audienceId) }, key);
    assertLinkShape(aud);
    assert.deepEqual(aud.target, { targetType: 'audience', audienceId });
    assert.deepEqual((await search({}, key)).body.items, [aud, routing]);
  });

  test('an explicit tenantDomainId: the custom domain or the fallback one', async () => {
    const { key } = await t.newTenant('Links Domain');
    const fallback = await fallbackOf(key);
    const custom = await createDomain(uniqueHost('links'), key);
    const pageId = await createPage(key);
    const onCustom = await createLink({ path: '/c', tenantDomainId: custom.tenantDomainId, target: pageTarget(pageId) }, key);
    assert.equal(onCustom.tenantDomainId, custom.tenantDomainId);
    const onFallback = await createLink({ path: '/f', tenantDomainId: fallback.tenantDomainId, target: pageTarget(pageId) }, key);
    assert.equal(onFallback.tenantDomainId, fallback.tenantDomainId);
  });

  test('path: must start with /, no whitespace, 1 to 2048 characters', async () => {
    const { key } = await t.newTenant('Links Path');
    const pageId = await createPage(key);
    const ok = ['/', '/a', '/A-b_c.d~e/f?g=h&i=j#k', '/%20encoded', '/ünïcödé', `/${'p'.repeat(2047)}`];
    for (const path of ok) {
      const link = await createLink({ path, target: pageTarget(pageId) }, key);
      assert.equal(link.path, path);
    }
    const bad = [
      '',
      'welcome',
      'a/b',
      ' /lead',
      '/a b',
      '/a\tb',
      '/a\nb',
      '/trail ',
      '/a\u00a0b',
      '/a\u2003b',
      '/a\rb',
      `/${'p'.repeat(2048)}`,
      'http://example.com/x',
    ];
    for (const path of bad) {
      expectProblem(await t.req('POST', '/v0/page_links', { path, target: pageTarget(pageId) }, { key }), 400, 'validation_failed', [
        '/path',
      ]);
    }
    for (const path of [null, 5, ['/x']]) {
      expectProblem(await t.req('POST', '/v0/page_links', { path, target: pageTarget(pageId) }, { key }), 400, 'validation_failed', [
        '/path',
      ]);
    }
    expectProblem(await t.req('POST', '/v0/page_links', { target: pageTarget(pageId) }, { key }), 400, 'validation_failed', ['/path']);
    assert.equal((await search({}, key)).body.totalCount, ok.length, 'refused links were not created');
  });

  test('a live path is unique on its domain: 409; fine on another domain, and again once deleted', async () => {
    const { key } = await t.newTenant('Links Unique');
    const custom = await createDomain(uniqueHost('uniq'), key);
    const pageId = await createPage(key);
    const first = await createLink({ path: '/dup', target: pageTarget(pageId) }, key);
    expectProblem(await t.req('POST', '/v0/page_links', { path: '/dup', target: pageTarget(pageId) }, { key }), 409, 'conflict');
    const audienceId = await createAudience(pageId, key);
    expectProblem(await t.req('POST', '/v0/page_links', { path: '/dup', target: audienceTarget(audienceId) }, { key }), 409, 'conflict');
    const fallbackId = first.tenantDomainId;
    expectProblem(
      await t.req('POST', '/v0/page_links', { path: '/dup', tenantDomainId: fallbackId, target: routingTarget(pageId) }, { key }),
      409,
      'conflict',
    );
    const onCustom = await createLink({ path: '/dup', tenantDomainId: custom.tenantDomainId, target: pageTarget(pageId) }, key);
    assert.equal(onCustom.tenantDomainId, custom.tenantDomainId);
    expectProblem(
      await t.req('POST', '/v0/page_links', { path: '/dup', tenantDomainId: custom.tenantDomainId, target: pageTarget(pageId) }, { key }),
      409,
      'conflict',
    );
    // Another tenant's fallback domain is another domain.
    const other = await t.newTenant('Links Unique Other');
    await createLink({ path: '/dup', target: pageTarget(await createPage(other.key)) }, other.key);

    await deleteLink(first.pageLinkId, key);
    const again = await createLink({ path: '/dup', target: pageTarget(pageId) }, key);
    assert.notEqual(again.pageLinkId, first.pageLinkId);
    assert.equal(again.tenantDomainId, fallbackId);
    expectProblem(await t.req('POST', '/v0/page_links', { path: '/dup', target: pageTarget(pageId) }, { key }), 409, 'conflict');
    assert.deepEqual(await searchIds({ query: '/dup' }, key), [again.pageLinkId]);
  });

  test('concurrent creates of one path on one domain: exactly one 201, the others 409', async () => {
    const { key } = await t.newTenant('Links Race');
    const pageId = await createPage(key);
    const results = await Promise.all(
      Array.from({ length: 8 }, () => t.req('POST', '/v0/page_links', { path: '/race', target: pageTarget(pageId) }, { key })),
    );
    assert.equal(results.filter((r) => r.status === 201).length, 1, results.map((r) => r.status).join(','));
    for (const r of results.filter((x) => x.status !== 201)) expectProblem(r, 409, 'conflict');
  });

  test('target rules: the id each target type needs, present and alone', async () => {
    const { key } = await t.newTenant('Links Target Rules');
    const pageId = await createPage(key);
    const audienceId = await createAudience(pageId, key);
    const post = (target: Json) => t.req('POST', '/v0/page_links', { path: `/t-${Math.random().toString(36).slice(2)}`, target }, { key });
    expectProblem(await post({ targetType: 'audience' }), 400, 'validation_failed', ['/target/audienceId']);
    expectProblem(await post({ targetType: 'audience', audienceId, pageId }), 400, 'validation_failed', ['/target/pageId']);
    for (const targetType of ['page', 'page_routing']) {
      expectProblem(await post({ targetType }), 400, 'validation_failed', ['/target/pageId']);
      expectProblem(await post({ targetType, pageId, audienceId }), 400, 'validation_failed', ['/target/audienceId']);
    }
    expectProblem(await post({ targetType: 'custom', pageId }), 400, 'validation_failed', ['/target/targetType']);
    expectProblem(await post({ targetType: 'AUDIENCE', audienceId }), 400, 'validation_failed', ['/target/targetType']);
    expectProblem(await post({ pageId }), 400, 'validation_failed', ['/target/targetType']);
    expectProblem(await post({ targetType: 'page', pageId, extra: 1 }), 400, 'validation_failed', ['/target/extra']);
    expectProblem(await post({ targetType: 'page', pageId: null }), 400, 'validation_failed', ['/target/pageId']);
    expectProblem(await post({ targetType: 'audience', audienceId: null }), 400, 'validation_failed', ['/target/audienceId']);
    expectProblem(await t.req('POST', '/v0/page_links', { path: '/no-target' }, { key }), 400, 'validation_failed', ['/target']);
    expectProblem(await t.req('POST', '/v0/page_links', { path: '/str', target: 'page' }, { key }), 400, 'validation_failed', ['/target']);
    expectProblem(
      await t.req('POST', '/v0/page_links', { path: '/x', target: pageTarget(pageId), extra: 1 }, { key }),
      400,
      'validation_failed',
      ['/extra'],
    );
    expectProblem(
      await t.req('POST', '/v0/page_links', { path: '/x', target: pageTarget(pageId), tenantDomainId: null }, { key }),
      400,
      'validation_failed',
      ['/tenantDomainId'],
    );
    // An id of the wrong kind in the right field refers to nothing.
    expectProblem(await post({ targetType: 'page', pageId: audienceId }), 400, 'validation_failed', ['/target/pageId']);
    expectProblem(await post({ targetType: 'audience', audienceId: pageId }), 400, 'validation_failed', ['/target/audienceId']);
    assert.equal((await search({}, key)).body.totalCount, 0, 'nothing was created');
  });

  test('a target with only the wrong id names both the missing and the refused field', async () => {
    const { key } = await t.newTenant('Links Target Both');
    const pageId = await createPage(key);
    const audienceId = await createAudience(pageId, key);
    const post = (target: Json) => t.req('POST', '/v0/page_links', { path: '/both', target }, { key });
    expectProblem(await post({ targetType: 'audience', pageId }), 400, 'validation_failed', ['/target/audienceId', '/target/pageId']);
    expectProblem(await post({ targetType: 'page', audienceId }), 400, 'validation_failed', ['/target/pageId', '/target/audienceId']);
    expectProblem(await post({ targetType: 'page_routing', audienceId }), 400, 'validation_failed', [
      '/target/pageId',
      '/target/audienceId',
    ]);
  });

  test("ids that are not the tenant's are 400 at their field: another tenant's, unknown ones", async () => {
    const { key } = await t.newTenant('Links Foreign Ids');
    const other = await t.newTenant('Links Foreign Owner');
    const myPage = await createPage(key);
    const theirPage = await createPage(other.key);
    const theirAudience = await createAudience(theirPage, other.key);
    const theirCustom = await createDomain(uniqueHost('foreign'), other.key);
    const theirFallback = await fallbackOf(other.key);
    const cases: [Json, string][] = [
      [{ path: '/p', target: pageTarget(theirPage) }, '/target/pageId'],
      [{ path: '/p', target: routingTarget(theirPage) }, '/target/pageId'],
      [{ path: '/p', target: pageTarget(UNKNOWN_PAGE) }, '/target/pageId'],
      [{ path: '/p', target: pageTarget('nope') }, '/target/pageId'],
      [{ path: '/a', target: audienceTarget(theirAudience) }, '/target/audienceId'],
      [{ path: '/a', target: audienceTarget(UNKNOWN_AUDIENCE) }, '/target/audienceId'],
      [{ path: '/d', tenantDomainId: theirCustom.tenantDomainId, target: pageTarget(myPage) }, '/tenantDomainId'],
      [{ path: '/d', tenantDomainId: theirFallback.tenantDomainId, target: pageTarget(myPage) }, '/tenantDomainId'],
      [{ path: '/d', tenantDomainId: UNKNOWN_DOMAIN, target: pageTarget(myPage) }, '/tenantDomainId'],
      [{ path: '/d', tenantDomainId: 'nope', target: pageTarget(myPage) }, '/tenantDomainId'],
    ];
    for (const [body, path] of cases) {
      expectProblem(await t.req('POST', '/v0/page_links', body, { key }), 400, 'validation_failed', [path]);
    }
    assert.equal((await search({}, key)).body.totalCount, 0);
    assert.equal((await search({}, other.key)).body.totalCount, 0, "nothing landed in the other tenant's domains");
    assert.equal((await search({ tenantDomainId: theirCustom.tenantDomainId }, other.key)).body.totalCount, 0);
  });

  test("several ids that are not the tenant's are all named at once", async () => {
    const { key } = await t.newTenant('Links Foreign Both');
    const other = await t.newTenant('Links Foreign Both Owner');
    const theirPage = await createPage(other.key);
    const theirAudience = await createAudience(theirPage, other.key);
    const theirDomain = (await fallbackOf(other.key)).tenantDomainId;
    const cases: [Json, string[]][] = [
      [{ path: '/both', tenantDomainId: theirDomain, target: pageTarget(theirPage) }, ['/tenantDomainId', '/target/pageId']],
      [{ path: '/both', tenantDomainId: UNKNOWN_DOMAIN, target: audienceTarget(theirAudience) }, ['/tenantDomainId', '/target/audienceId']],
    ];
    for (const [body, paths] of cases) {
      expectProblem(await t.req('POST', '/v0/page_links', body, { key }), 400, 'validation_failed', paths);
    }
  });

  test('a deleted page, or an audience of a deleted page, is 400 at its field', async () => {
    const { key } = await t.newTenant('Links Deleted Page');
    const pageId = await createPage(key);
    const audienceId = await createAudience(pageId, key);
    await deletePage(pageId, key);
    expectProblem(await t.req('POST', '/v0/page_links', { path: '/gone', target: pageTarget(pageId) }, { key }), 400, 'validation_failed', [
      '/target/pageId',
    ]);
    expectProblem(
      await t.req('POST', '/v0/page_links', { path: '/gone', target: routingTarget(pageId) }, { key }),
      400,
      'validation_failed',
      ['/target/pageId'],
    );
    expectProblem(
      await t.req('POST', '/v0/page_links', { path: '/gone', target: audienceTarget(audienceId) }, { key }),
      400,
      'validation_failed',
      ['/target/audienceId'],
    );
  });

  test('bad JSON and a non-JSON body are refused', async () => {
    expectProblem(await t.req('POST', '/v0/page_links', '{"path":'), 400, 'validation_failed');
    expectProblem(await t.req('POST', '/v0/page_links', '[]'), 400, 'validation_failed');
    expectProblem(
      await t.req('POST', '/v0/page_links', '{"path":"/x"}', { headers: { 'content-type': 'text/plain' } }),
      415,
      'unsupported_media_type',
    );
  });
});

describe('DELETE /v0/page_links/{page_link_id} (extension)', () => {
  test('204 with no body, again 204; the link leaves search', async () => {
    const { key } = await t.newTenant('Links Delete');
    const pageId = await createPage(key);
    const keep = await createLink({ path: '/keep', target: pageTarget(pageId) }, key);
    const gone = await createLink({ path: '/gone', target: pageTarget(pageId) }, key);
    const res = await t.req('DELETE', `/v0/page_links/${gone.pageLinkId}`, undefined, { key });
    assert.equal(res.status, 204, res.text);
    assert.equal(res.text, '');
    const again = await t.req('DELETE', `/v0/page_links/${gone.pageLinkId}`, undefined, { key });
    assert.equal(again.status, 204, again.text);
    const s = await search({}, key);
    assert.deepEqual(s.body, { items: [keep], hasMore: false, nextCursor: null, totalCount: 1 });
    assert.deepEqual(await searchIds({ query: 'gone' }, key), []);
  });

  test('an unknown or malformed id is 404', async () => {
    for (const id of [UNKNOWN_LINK, 'nope', 'page_01h0000000000000000000000a']) {
      expectProblem(await t.req('DELETE', `/v0/page_links/${id}`), 404, 'not_found');
    }
  });

  test("another tenant's link is 404 and stays live", async () => {
    const owner = await t.newTenant('Links Delete Owner');
    const theirs = await createLink({ path: '/theirs', target: pageTarget(await createPage(owner.key)) }, owner.key);
    expectProblem(await t.req('DELETE', `/v0/page_links/${theirs.pageLinkId}`), 404, 'not_found');
    assert.deepEqual((await search({}, owner.key)).body.items, [theirs]);
  });

  test('authentication is required', async () => {
    expectProblem(await t.req('DELETE', `/v0/page_links/${UNKNOWN_LINK}`, undefined, { key: null }), 401, 'unauthorized');
    expectProblem(
      await t.req('POST', '/v0/page_links', { path: '/x', target: pageTarget(UNKNOWN_PAGE) }, { key: null }),
      401,
      'unauthorized',
    );
    expectProblem(await t.req('GET', '/v0/page_links/search', undefined, { key: null }), 401, 'unauthorized');
  });
});

describe('GET /v0/page_links/search', () => {
  test('envelope exactly; an empty tenant finds nothing', async () => {
    const { key } = await t.newTenant('Search Empty');
    const res = await search({}, key);
    assertJson(res, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ENVELOPE_FIELDS);
    assert.deepEqual(res.body, { items: [], hasMore: false, nextCursor: null, totalCount: 0 });
  });

  test('query: case-insensitive substring of the path, %, _, \\ and " taken literally, short and long', async () => {
    const { key } = await t.newTenant('Search Query');
    const pageId = await createPage(key);
    const paths = [
      '/Summer-Sale',
      '/summer_2024',
      '/100%-off',
      '/spring',
      '/a_b',
      '/axb',
      '/SUMMERTIME/x',
      '/back\\slash',
      '/say"hi"',
      '/ÜBER-uns',
      '/50%25',
    ];
    const byPath: Record<string, string> = {};
    for (const path of paths) byPath[path] = (await createLink({ path, target: pageTarget(pageId) }, key)).pageLinkId;
    const ids = (...ps: string[]) => ps.map((p) => byPath[p]!).reverse(); // newest first: created in list order
    const ordered = (...ps: string[]) =>
      paths
        .filter((p) => ps.includes(p))
        .map((p) => byPath[p]!)
        .reverse();
    const cases: [string, string[]][] = [
      ['summer', ['/Summer-Sale', '/summer_2024', '/SUMMERTIME/x']],
      ['SUMMER', ['/Summer-Sale', '/summer_2024', '/SUMMERTIME/x']],
      ['sUmMeR-s', ['/Summer-Sale']],
      ['%', ['/100%-off', '/50%25']],
      ['0%-', ['/100%-off']],
      ['%25', ['/50%25']],
      ['_', ['/summer_2024', '/a_b']],
      ['a_b', ['/a_b']],
      ['r_2', ['/summer_2024']],
      ['\\', ['/back\\slash']],
      ['k\\s', ['/back\\slash']],
      ['"', ['/say"hi"']],
      ['y"hi"', ['/say"hi"']],
      ['über', ['/ÜBER-uns']],
      ['x', ['/axb', '/SUMMERTIME/x']],
      ['ri', ['/spring']],
      ['/', paths],
      ['/SPRING', ['/spring']],
      ['spring-', []],
      ['nothing-like-this', []],
      ['/summer-sale/and-more', []],
      ['a%b', []],
      ['ax_', []],
    ];
    for (const [query, expected] of cases) {
      assert.deepEqual(await searchIds({ query }, key), ordered(...expected), `query ${JSON.stringify(query)}`);
    }
    assert.deepEqual(await searchIds({ query: '' }, key), ids(...paths), 'an empty query matches everything');
  });

  test('query matches the path only (not ids or targets)', async () => {
    const { key } = await t.newTenant('Search Path Only');
    const pageId = await createPage(key);
    await createLink({ path: '/plain', target: pageTarget(pageId) }, key);
    assert.deepEqual(await searchIds({ query: pageId }, key), []);
    assert.deepEqual(await searchIds({ query: 'page_' }, key), []);
    assert.deepEqual(await searchIds({ query: 'pagelink' }, key), []);
  });

  test('pageId keeps links to the page and to its audiences', async () => {
    const { key } = await t.newTenant('Search PageId');
    const p1 = await createPage(key, 'P1');
    const p2 = await createPage(key, 'P2');
    const a1 = await createAudience(p1, key);
    const a1b = await createAudience(p1, key);
    const a2 = await createAudience(p2, key);
    const l1 = await createLink({ path: '/p1-page', target: pageTarget(p1) }, key);
    const l2 = await createLink({ path: '/p1-routing', target: routingTarget(p1) }, key);
    const l3 = await createLink({ path: '/p1-aud', target: audienceTarget(a1) }, key);
    const l4 = await createLink({ path: '/p1-aud-b', target: audienceTarget(a1b) }, key);
    const m1 = await createLink({ path: '/p2-page', target: pageTarget(p2) }, key);
    const m2 = await createLink({ path: '/p2-aud', target: audienceTarget(a2) }, key);
    assert.deepEqual(await searchIds({ pageId: p1 }, key), newestFirst([l1, l2, l3, l4]));
    assert.deepEqual(await searchIds({ pageId: p2 }, key), newestFirst([m1, m2]));
    assert.deepEqual(await searchIds({ pageId: p1, targetType: 'audience' }, key), newestFirst([l3, l4]));
    assert.deepEqual(await searchIds({ pageId: p1, query: 'ROUTING' }, key), [l2.pageLinkId]);
    assert.deepEqual(await searchIds({ pageId: p2, query: 'p1' }, key), []);
    assert.deepEqual(await searchIds({ pageId: UNKNOWN_PAGE }, key), []);
  });

  test("another tenant's pageId finds none of its links", async () => {
    const { key } = await t.newTenant('Search PageId Foreign');
    const other = await t.newTenant('Search PageId Owner');
    const theirPage = await createPage(other.key);
    await createLink({ path: '/theirs', target: pageTarget(theirPage) }, other.key);
    const res = await search({ pageId: theirPage }, key);
    if (res.status === 200) assert.deepEqual(res.body, { items: [], hasMore: false, nextCursor: null, totalCount: 0 });
    else expectProblem(res, 404, 'not_found');
  });

  test('targetType filters; a value outside its enum is 400 at /targetType', async () => {
    const { key } = await t.newTenant('Search TargetType');
    const pageId = await createPage(key);
    const audienceId = await createAudience(pageId, key);
    const page = await createLink({ path: '/tt-page', target: pageTarget(pageId) }, key);
    const routing = await createLink({ path: '/tt-routing', target: routingTarget(pageId) }, key);
    const aud = await createLink({ path: '/tt-aud', target: audienceTarget(audienceId) }, key);
    const page2 = await createLink({ path: '/tt-page-2', target: pageTarget(pageId) }, key);
    assert.deepEqual(await searchIds({ targetType: 'page' }, key), newestFirst([page, page2]));
    assert.deepEqual(await searchIds({ targetType: 'page_routing' }, key), [routing.pageLinkId]);
    assert.deepEqual(await searchIds({ targetType: 'audience' }, key), [aud.pageLinkId]);
    assert.deepEqual(await searchIds({ targetType: 'page', query: '-2' }, key), [page2.pageLinkId]);
    for (const targetType of ['bogus', 'PAGE', '', 'custom', 'page,audience']) {
      expectProblem(await search({ targetType }, key), 400, 'validation_failed', ['/targetType']);
    }
  });

  test('tenantDomainId: the custom domain only; the fallback when omitted; unknown or foreign is 404', async () => {
    const { key } = await t.newTenant('Search Domain');
    const other = await t.newTenant('Search Domain Other');
    const fallback = await fallbackOf(key);
    const custom = await createDomain(uniqueHost('search'), key);
    const custom2 = await createDomain(uniqueHost('search'), key);
    const pageId = await createPage(key);
    const f1 = await createLink({ path: '/same', target: pageTarget(pageId) }, key);
    const f2 = await createLink({ path: '/only-fallback', target: pageTarget(pageId) }, key);
    const c1 = await createLink({ path: '/same', tenantDomainId: custom.tenantDomainId, target: pageTarget(pageId) }, key);
    const c2 = await createLink({ path: '/only-custom', tenantDomainId: custom.tenantDomainId, target: pageTarget(pageId) }, key);
    assert.deepEqual(await searchIds({}, key), newestFirst([f1, f2]));
    assert.deepEqual(await searchIds({ tenantDomainId: fallback.tenantDomainId }, key), newestFirst([f1, f2]));
    assert.deepEqual(await searchIds({ tenantDomainId: custom.tenantDomainId }, key), newestFirst([c1, c2]));
    assert.deepEqual(await searchIds({ tenantDomainId: custom.tenantDomainId, query: 'same' }, key), [c1.pageLinkId]);
    assert.deepEqual(await searchIds({ query: 'custom' }, key), []);
    assert.deepEqual(await searchIds({ tenantDomainId: custom2.tenantDomainId }, key), []);
    const theirs = await createDomain(uniqueHost('theirs'), other.key);
    const theirFallback = await fallbackOf(other.key);
    for (const tenantDomainId of [UNKNOWN_DOMAIN, 'nope', theirs.tenantDomainId, theirFallback.tenantDomainId]) {
      expectProblem(await search({ tenantDomainId }, key), 404, 'not_found');
    }
  });

  test('deleted links are excluded, and totalCount with them', async () => {
    const { key } = await t.newTenant('Search Deleted');
    const pageId = await createPage(key);
    const made: Json[] = [];
    for (let i = 0; i < 5; i++) made.push(await createLink({ path: `/del-${i}`, target: pageTarget(pageId) }, key));
    await deleteLink(made[1].pageLinkId, key);
    await deleteLink(made[3].pageLinkId, key);
    const res = await search({ limit: 1 }, key);
    assert.equal(res.body.totalCount, 3);
    assert.deepEqual(await searchIds({}, key), newestFirst([made[0], made[2], made[4]]));
    assert.deepEqual(await searchIds({ query: 'del-1' }, key), []);
    assert.deepEqual(await searchIds({ pageId }, key), newestFirst([made[0], made[2], made[4]]));
    assert.deepEqual(await searchIds({ targetType: 'page' }, key), newestFirst([made[0], made[2], made[4]]));
  });

  test('links of a deleted page leave search: direct ones and those through its audiences', async () => {
    const { key } = await t.newTenant('Search Deleted Page');
    const custom = await createDomain(uniqueHost('delpage'), key);
    const doomed = await createPage(key, 'Doomed');
    const kept = await createPage(key, 'Kept');
    const doomedAudience = await createAudience(doomed, key);
    const keptAudience = await createAudience(kept, key);
    await createLink({ path: '/doomed-page', target: pageTarget(doomed) }, key);
    await createLink({ path: '/doomed-routing', target: routingTarget(doomed) }, key);
    await createLink({ path: '/doomed-aud', target: audienceTarget(doomedAudience) }, key);
    await createLink({ path: '/doomed-custom', tenantDomainId: custom.tenantDomainId, target: audienceTarget(doomedAudience) }, key);
    const k1 = await createLink({ path: '/kept-page', target: pageTarget(kept) }, key);
    const k2 = await createLink({ path: '/kept-aud', target: audienceTarget(keptAudience) }, key);
    const k3 = await createLink({ path: '/kept-custom', tenantDomainId: custom.tenantDomainId, target: pageTarget(kept) }, key);
    assert.equal((await search({}, key)).body.totalCount, 5);
    await deletePage(doomed, key);
    assert.deepEqual(await searchIds({}, key), newestFirst([k1, k2]));
    assert.deepEqual(await searchIds({ tenantDomainId: custom.tenantDomainId }, key), [k3.pageLinkId]);
    assert.deepEqual(await searchIds({ query: 'doomed' }, key), []);
    assert.deepEqual(await searchIds({ query: 'doomed', tenantDomainId: custom.tenantDomainId }, key), []);
    assert.deepEqual(await searchIds({ targetType: 'audience' }, key), [k2.pageLinkId]);
    const byPage = await search({ pageId: doomed }, key);
    if (byPage.status === 200) assert.deepEqual(byPage.body.items, []);
    else expectProblem(byPage, 404, 'not_found');
    assert.equal((await search({ limit: 1 }, key)).body.totalCount, 2);
  });

  test('totalCount counts every match, not just the page', async () => {
    const { key } = await t.newTenant('Search Count');
    const pageId = await createPage(key);
    for (let i = 0; i < 7; i++) await createLink({ path: `/${i % 2 === 0 ? 'even' : 'odd'}-${i}`, target: pageTarget(pageId) }, key);
    const all = await search({ limit: 2 }, key);
    assert.equal(all.body.items.length, 2);
    assert.equal(all.body.totalCount, 7);
    assert.equal(all.body.hasMore, true);
    const even = await search({ limit: 1, query: 'even' }, key);
    assert.equal(even.body.items.length, 1);
    assert.equal(even.body.totalCount, 4);
    const odd = await search({ limit: 100, query: 'ODD' }, key);
    assert.equal(odd.body.totalCount, 3);
    assert.equal(odd.body.hasMore, false);
    assert.equal(odd.body.nextCursor, null);
  });

  test('limit: default 20, 1 and 100 accepted; 0, 101, x are 400; unknown parameters are 400', async () => {
    const { key } = await t.newTenant('Search Limits');
    const pageId = await createPage(key);
    for (let i = 0; i < 21; i++) await createLink({ path: `/l${i}`, target: pageTarget(pageId) }, key);
    const def = await search({}, key);
    assert.equal(def.body.items.length, 20);
    assert.equal(def.body.hasMore, true);
    assert.equal(def.body.totalCount, 21);
    assert.equal((await search({ limit: 1 }, key)).body.items.length, 1);
    assert.equal((await search({ limit: 100 }, key)).body.items.length, 21);
    for (const limit of ['0', '101', 'x', '1.5', '-1']) {
      expectProblem(await search({ limit }, key), 400, 'validation_failed', ['/limit']);
    }
    expectProblem(await search({ path: '/l1' }, key), 400, 'validation_failed', ['/path']);
    expectProblem(await search({ audienceId: UNKNOWN_AUDIENCE }, key), 400, 'validation_failed', ['/audienceId']);
  });

  test('pagination with limit 2 walked to the end while links are inserted between pages: no duplicate, no skip', async () => {
    const { key } = await t.newTenant('Search Pages');
    const pageId = await createPage(key);
    const made: Json[] = [];
    for (let i = 0; i < 7; i++) made.push(await createLink({ path: `/walk-${i}`, target: pageTarget(pageId) }, key));
    const expected = newestFirst(made);
    const seen: string[] = [];
    const totals: number[] = [];
    let cursor: string | null = null;
    let inserted = 0;
    for (let guard = 0; guard < 20; guard++) {
      const res = await search({ limit: 2, query: 'walk', ...(cursor ? { cursor } : {}) }, key);
      assertJson(res, 200);
      assert.deepEqual(Object.keys(res.body).sort(), ENVELOPE_FIELDS);
      seen.push(...res.body.items.map((l: Json) => l.pageLinkId));
      totals.push(res.body.totalCount);
      if (!res.body.hasMore) {
        assert.equal(res.body.nextCursor, null);
        break;
      }
      assert.equal(res.body.items.length, 2);
      cursor = res.body.nextCursor;
      // A new matching link (newest, so before the cursor) and a non-matching one between pages.
      await createLink({ path: `/walk-new-${inserted}`, target: pageTarget(pageId) }, key);
      await createLink({ path: `/other-${inserted++}`, target: pageTarget(pageId) }, key);
    }
    assert.deepEqual(seen, expected);
    assert.equal(new Set(seen).size, seen.length);
    assert.equal(totals[0], 7);
    assert.equal(totals[totals.length - 1], 7 + inserted);
    assert.equal(totals.length, 4);
  });

  test('pagination with a deletion between pages neither repeats nor skips the remaining links', async () => {
    const { key } = await t.newTenant('Search Pages Delete');
    const pageId = await createPage(key);
    const made: Json[] = [];
    for (let i = 0; i < 6; i++) made.push(await createLink({ path: `/d-${i}`, target: pageTarget(pageId) }, key));
    const order = newestFirst(made);
    const p1 = await search({ limit: 2 }, key);
    assert.deepEqual(
      p1.body.items.map((l: Json) => l.pageLinkId),
      order.slice(0, 2),
    );
    await deleteLink(order[1]!, key); // already seen
    await deleteLink(order[3]!, key); // not yet seen
    const p2 = await search({ limit: 2, cursor: p1.body.nextCursor }, key);
    assert.deepEqual(
      p2.body.items.map((l: Json) => l.pageLinkId),
      [order[2], order[4]],
    );
    assert.equal(p2.body.totalCount, 4);
    const p3 = await search({ limit: 2, cursor: p2.body.nextCursor }, key);
    assert.deepEqual(
      p3.body.items.map((l: Json) => l.pageLinkId),
      [order[5]],
    );
    assert.equal(p3.body.hasMore, false);
  });

  test('a cursor reused with other filters, from another list, or garbled is 400 at /cursor', async () => {
    const { key } = await t.newTenant('Search Cursors');
    const pageId = await createPage(key);
    const audienceId = await createAudience(pageId, key);
    const custom = await createDomain(uniqueHost('cursor'), key);
    for (let i = 0; i < 3; i++) await createLink({ path: `/cur-${i}`, target: pageTarget(pageId) }, key);
    for (let i = 0; i < 3; i++) await createLink({ path: `/cur-aud-${i}`, target: audienceTarget(audienceId) }, key);
    for (let i = 0; i < 3; i++)
      await createLink({ path: `/cur-${i}`, tenantDomainId: custom.tenantDomainId, target: pageTarget(pageId) }, key);
    const plain = (await search({ limit: 1 }, key)).body.nextCursor;
    const queried = (await search({ limit: 1, query: 'cur' }, key)).body.nextCursor;
    const typed = (await search({ limit: 1, targetType: 'audience' }, key)).body.nextCursor;
    const paged = (await search({ limit: 1, pageId }, key)).body.nextCursor;
    const onCustom = (await search({ limit: 1, tenantDomainId: custom.tenantDomainId }, key)).body.nextCursor;
    for (const c of [plain, queried, typed, paged, onCustom]) assert.equal(typeof c, 'string');

    // Each works with its own filters (a different limit is fine).
    assertJson(await search({ limit: 1, cursor: plain }, key), 200);
    assertJson(await search({ limit: 5, cursor: plain }, key), 200);
    assertJson(await search({ limit: 1, query: 'cur', cursor: queried }, key), 200);
    assertJson(await search({ limit: 1, targetType: 'audience', cursor: typed }, key), 200);
    assertJson(await search({ limit: 1, pageId, cursor: paged }, key), 200);
    assertJson(await search({ limit: 1, tenantDomainId: custom.tenantDomainId, cursor: onCustom }, key), 200);

    const bad: Record<string, string>[] = [
      { cursor: plain, query: 'cur' },
      { cursor: plain, targetType: 'page' },
      { cursor: plain, pageId },
      { cursor: plain, tenantDomainId: custom.tenantDomainId },
      { cursor: queried },
      { cursor: queried, query: 'CUR-' },
      { cursor: typed, targetType: 'page' },
      { cursor: typed },
      { cursor: paged },
      { cursor: onCustom },
      { cursor: 'not-a-cursor' },
      { cursor: Buffer.from('["page_links","x"]').toString('base64url') },
    ];
    for (const params of bad) {
      expectProblem(await search({ limit: 1, ...params }, key), 400, 'validation_failed', ['/cursor']);
    }
    const topicsCursor = await (async () => {
      await t.req('POST', '/v0/topics', { title: 'a' }, { key });
      await t.req('POST', '/v0/topics', { title: 'b' }, { key });
      return (await t.req('GET', '/v0/topics?limit=1', undefined, { key })).body.nextCursor as string;
    })();
    expectProblem(await search({ cursor: topicsCursor }, key), 400, 'validation_failed', ['/cursor']);
    // And a search cursor is not a cursor of another list.
    expectProblem(await t.req('GET', `/v0/topics?cursor=${encodeURIComponent(plain)}`, undefined, { key }), 400, 'validation_failed', [
      '/cursor',
    ]);
  });

  test("another tenant's links never appear, whatever the filters", async () => {
    const a = await t.newTenant('Search Iso A');
    const b = await t.newTenant('Search Iso B');
    const pa = await createPage(a.key);
    const pb = await createPage(b.key);
    const ab = await createAudience(pb, b.key);
    const mine = [
      await createLink({ path: '/shared-path', target: pageTarget(pa) }, a.key),
      await createLink({ path: '/mine-only', target: routingTarget(pa) }, a.key),
    ];
    const theirs = [
      await createLink({ path: '/shared-path', target: pageTarget(pb) }, b.key),
      await createLink({ path: '/theirs-aud', target: audienceTarget(ab) }, b.key),
      await createLink({ path: '/theirs-routing', target: routingTarget(pb) }, b.key),
    ];
    const theirIds = new Set(theirs.map((l) => l.pageLinkId));
    const queries: Record<string, string>[] = [
      {},
      { query: 'shared' },
      { query: 'theirs' },
      { targetType: 'audience' },
      { targetType: 'page_routing' },
      { query: '/' },
    ];
    for (const q of queries) {
      const ids = await searchIds(q, a.key);
      assert.ok(!ids.some((id) => theirIds.has(id)), JSON.stringify(q));
    }
    assert.deepEqual(await searchIds({}, a.key), newestFirst(mine));
    assert.deepEqual(await searchIds({ query: 'shared' }, b.key), [theirs[0].pageLinkId]);
    assert.deepEqual(await searchIds({}, b.key), newestFirst(theirs));
  });

  test('every item has the PageLink shape, deletedAt null', async () => {
    const { key } = await t.newTenant('Search Shape');
    const pageId = await createPage(key);
    const audienceId = await createAudience(pageId, key);
    await createLink({ path: '/s1', target: pageTarget(pageId) }, key);
    await createLink({ path: '/s2', target: routingTarget(pageId) }, key);
    await createLink({ path: '/s3', target: audienceTarget(audienceId) }, key);
    const res = await search({}, key);
    assertJson(res, 200);
    assert.equal(res.body.items.length, 3);
    for (const l of res.body.items) {
      assertLinkShape(l);
      assert.equal(l.deletedAt, null);
    }
  });
});
