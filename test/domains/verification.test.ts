import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { Kysely } from 'kysely';
import { ConfigError, loadConfig } from '../../src/config.js';
import * as domainVerification from '../../src/db/migrations/2026_11_25_0016_domain_verification.js';
import type { Database } from '../../src/db/types.js';
import { nextCheckAt } from '../../src/domains/checks.js';
import { newId } from '../../src/ids.js';
import { startFakeDns, type FakeDns } from '../dns-server.js';
import { attest, domainRowPastTheRules, expectProblem, freshDatabase, ok, startApp, type Json, type TestApp } from '../helpers.js';

// Issue 25: tenant domains are proven (a DNS TXT record, or an operator's word) before they are
// served; names that belong to the service or to every machine are refused; the API's own host
// always reaches the API.

let dns: FakeDns;
let t: TestApp;
before(async () => {
  dns = await startFakeDns();
  t = await startApp({
    DNS_RESOLVERS: dns.address,
    PUBLIC_BASE_URL: 'https://api.pam.example',
    RESERVED_HOSTNAMES: 'admin.example.com, *.corp.example.com',
  });
});
after(async () => {
  await t.close();
  await dns.close();
});

const events = async (type: string, key?: string): Promise<Json[]> =>
  ok(await t.req('GET', `/v0/events?type=${type}&limit=100`, undefined, key === undefined ? {} : { key })).items;
let n = 0;
const uniqueHost = (label = 'd') => `${label}${++n}-${Date.now().toString(36)}.example.net`;
const claim = async (hostname: string, key?: string) =>
  ok(await t.req('POST', '/v0/tenant_domains', { hostname }, key === undefined ? {} : { key }), 201);
const verify = (id: string, key?: string) => t.req('POST', `/v0/tenant_domains/${id}/verify`, undefined, key === undefined ? {} : { key });
const onHost = async (host: string, url = '/v0/persons') => t.app.inject({ method: 'GET', url, headers: { host, 'x-api-key': t.key } });

describe('a custom domain is proven by its TXT record before it is served', () => {
  test('created pending, with a record to publish; found with its value: verified, emitted, served', async () => {
    const hostname = uniqueHost();
    const domain = await claim(hostname);
    assert.equal(domain.status, 'pending');
    assert.equal(domain.verifiedAt, null);
    assert.deepEqual(domain.verification, {
      recordType: 'TXT',
      name: `_pam-verify.${hostname}`,
      value: domain.verification.value,
    });
    // At least 128 random bits: 40 hex digits here, and no two claims share one.
    assert.match(domain.verification.value, /^pam-verify=[0-9a-f]{40}$/);
    assert.notEqual((await claim(uniqueHost())).verification.value, domain.verification.value);

    // Pending: the host is what an unknown host is (the API), not the tenant's pages.
    assert.equal((await onHost(hostname)).statusCode, 200);

    dns.txt(`_pam-verify.${hostname}`, ['v=spf1 -all', domain.verification.value]);
    const verified = ok(await verify(domain.tenantDomainId));
    assert.equal(verified.status, 'verified');
    assert.ok(verified.verifiedAt >= domain.createdAt);
    assert.equal(verified.verification, null);
    assert.deepEqual(
      ok(await t.req('GET', '/v0/tenant_domains?limit=100')).items.find((d: Json) => d.tenantDomainId === domain.tenantDomainId),
      verified,
    );
    const [event] = (await events('tenant_domain.verified')).filter((e) => e.payload.data.tenantDomainId === domain.tenantDomainId);
    assert.deepEqual(event.payload.data, verified);
    // Served now: the visitor plane's 404 page, not the API.
    const served = await onHost(hostname);
    assert.equal(served.statusCode, 404);
    assert.match(String(served.headers['content-type']), /^text\/html/);
    // Verifying again answers as it is, with no second event.
    assert.deepEqual(ok(await verify(domain.tenantDomainId)), verified);
    assert.equal((await events('tenant_domain.verified')).filter((e) => e.payload.data.tenantDomainId === domain.tenantDomainId).length, 1);
  });

  test('a record split in several strings counts as their concatenation; a part alone does not', async () => {
    const hostname = uniqueHost('split');
    const domain = await claim(hostname);
    const value: string = domain.verification.value;
    const half = Math.floor(value.length / 2);
    dns.txt(`_pam-verify.${hostname}`, [value.slice(0, half)]);
    expectProblem(await verify(domain.tenantDomainId), 409, 'domain_not_verified');
    dns.txt(`_pam-verify.${hostname}`, [[value.slice(0, half), value.slice(half)]]);
    assert.equal(ok(await verify(domain.tenantDomainId)).status, 'verified');
  });

  test('not found: 409 domain_not_verified naming the record and what the look-up saw (NXDOMAIN, other values)', async () => {
    const hostname = uniqueHost('nx');
    const domain = await claim(hostname);
    const res = await verify(domain.tenantDomainId);
    expectProblem(res, 409, 'domain_not_verified');
    assert.match(res.body.detail, new RegExp(`_pam-verify\\.${hostname.replace(/\./g, '\\.')}`));
    assert.ok(res.body.detail.includes(domain.verification.value), res.body.detail);
    assert.match(res.body.detail, /NXDOMAIN/);

    dns.txt(`_pam-verify.${hostname}`, ['pam-verify=somebody-else', 'google-site-verification=x']);
    const other = await verify(domain.tenantDomainId);
    expectProblem(other, 409, 'domain_not_verified');
    assert.match(other.body.detail, /other TXT values: "pam-verify=somebody-else", "google-site-verification=x"/);
    assert.equal(ok(await t.req('GET', '/v0/tenant_domains?limit=100')).items.find((d: Json) => d.hostname === hostname).status, 'pending');
    assert.equal((await onHost(hostname)).statusCode, 200, 'still not served');
  });

  test('a resolver that does not answer: 409 within about 5 s, saying it timed out', { timeout: 20_000 }, async () => {
    const hostname = uniqueHost('slow');
    const domain = await claim(hostname);
    dns.txt(`_pam-verify.${hostname}`, 'timeout');
    const started = Date.now();
    const res = await verify(domain.tenantDomainId);
    const took = Date.now() - started;
    expectProblem(res, 409, 'domain_not_verified');
    assert.match(res.body.detail, /timeout/);
    assert.ok(took >= 4_000 && took < 8_000, `took ${took} ms`);
  });

  test("verify needs the write scope, and another tenant's domain is 404", async () => {
    const domain = await claim(uniqueHost('scope'));
    const reader = ok(
      await t.req(
        'POST',
        `/admin/tenants/${t.tenantId}/api_keys`,
        { scopes: ['read'] },
        {
          key: null,
          headers: { authorization: `Bearer ${t.adminToken}` },
        },
      ),
      201,
    );
    expectProblem(await verify(domain.tenantDomainId, reader.apiKey), 403, 'forbidden');
    const other = await t.newTenant('Verify Other');
    expectProblem(await verify(domain.tenantDomainId, other.key), 404, 'not_found');
    expectProblem(await verify('domain_01h0000000000000000000000a'), 404, 'not_found');
    expectProblem(await t.req('POST', `/v0/tenant_domains/${domain.tenantDomainId}/verify`, undefined, { key: null }), 401, 'unauthorized');
  });

  test('the fallback domain is verified and verifying it answers as it is', async () => {
    const fallback = ok(await t.req('GET', '/v0/tenant_domains?limit=100')).items.find((d: Json) => d.isFallback);
    assert.equal(fallback.status, 'verified');
    assert.deepEqual(ok(await verify(fallback.tenantDomainId)), fallback);
  });
});

describe('two tenants may claim one name; the first to verify holds it', () => {
  test('the other claim is released with its links, and tenant_domain.released tells its tenant', async () => {
    const a = await t.newTenant('Claim A');
    const b = await t.newTenant('Claim B');
    const hostname = uniqueHost('both');
    const claimA = await claim(hostname, a.key);
    const claimB = await claim(hostname, b.key);
    const page = ok(
      await t.req('POST', '/v0/pages', { name: 'P', title: 'P', pageContext: 'c', pageType: 'inbound' }, { key: b.key }),
      201,
    );
    const link = ok(
      await t.req(
        'POST',
        '/v0/page_links',
        { tenantDomainId: claimB.tenantDomainId, path: '/early', target: { targetType: 'page', pageId: page.pageId } },
        { key: b.key },
      ),
      201,
    );
    dns.txt(`_pam-verify.${hostname}`, [claimB.verification.value]);
    // A's record is not published: A cannot verify. B verifies: B holds the name.
    expectProblem(await verify(claimA.tenantDomainId, a.key), 409, 'domain_not_verified');
    assert.equal(ok(await verify(claimB.tenantDomainId, b.key)).status, 'verified');
    // Now A's claim is gone, with an event in A's outbox naming why.
    assert.equal(ok(await t.req('GET', '/v0/tenant_domains', undefined, { key: a.key })).totalCount, 1);
    const [released] = await events('tenant_domain.released', a.key);
    assert.equal(released.payload.reason, 'verified_by_another_tenant');
    assert.equal(released.payload.data.tenantDomainId, claimA.tenantDomainId);
    assert.deepEqual(released.payload.data, claimA);
    expectProblem(await verify(claimA.tenantDomainId, a.key), 404, 'not_found');
    expectProblem(await t.req('POST', '/v0/tenant_domains', { hostname }, { key: a.key }), 409, 'conflict', ['/hostname']);
    // B's link made while pending is served now.
    assert.ok(link.pageLinkId);
    assert.equal(
      ok(await t.req('GET', '/v0/tenant_domains', undefined, { key: b.key })).items.find((d: Json) => d.hostname === hostname).status,
      'verified',
    );
  });

  test("the loser's links are deleted with its claim", async () => {
    const a = await t.newTenant('Links A');
    const b = await t.newTenant('Links B');
    const hostname = uniqueHost('links');
    const claimA = await claim(hostname, a.key);
    const claimB = await claim(hostname, b.key);
    const page = ok(
      await t.req('POST', '/v0/pages', { name: 'P', title: 'P', pageContext: 'c', pageType: 'inbound' }, { key: a.key }),
      201,
    );
    const link = ok(
      await t.req(
        'POST',
        '/v0/page_links',
        { tenantDomainId: claimA.tenantDomainId, path: '/a', target: { targetType: 'page', pageId: page.pageId } },
        { key: a.key },
      ),
      201,
    );
    ok(await attest(t, claimB.tenantDomainId));
    const deleted = (await events('page_link.deleted', a.key)).map((e) => e.payload.data.pageLinkId);
    assert.deepEqual(deleted, [link.pageLinkId]);
    const search = ok(await t.req('GET', '/v0/page_links/search?query=/a', undefined, { key: a.key }));
    assert.equal(search.items.filter((l: Json) => l.pageLinkId === link.pageLinkId).length, 0);
  });
});

describe('names a tenant may not claim: 400 at /hostname, saying why', () => {
  const refused: [string, RegExp][] = [
    ['127.0.0.1', /IP address/],
    ['10.0.0.1', /IP address/],
    ['2130706433', /IP address/],
    ['0x7f.1', /IP address/],
    ['0x7f000001', /IP address/],
    ['127.1', /IP address/],
    ['0177.0.0.1', /IP address/],
    ['example.com.123', /IP address/],
    ['::1', /IP address/],
    ['[::1]', /IP address/],
    ['::ffff:127.0.0.1', /IP address/],
    ['[::ffff:7f00:1]', /IP address/],
    ['fe80::1%25eth0', /IP address/],
    ['localhost', /localhost/],
    ['LocalHost.', /localhost/],
    ['app.localhost', /localhost/],
    ['pages.localhost', /under pages\.localhost/],
    ['x.pages.localhost', /under pages\.localhost/],
    ['acme.Pages.Localhost', /under pages\.localhost/],
    ['api.pam.example', /service's own host/],
    ['admin.example.com', /reserved/],
    ['x.corp.example.com', /reserved/],
    ['a.b.corp.example.com', /reserved/],
  ];
  for (const [hostname, why] of refused) {
    test(`${hostname} is refused`, async () => {
      const res = await t.req('POST', '/v0/tenant_domains', { hostname });
      expectProblem(res, 400, 'validation_failed', ['/hostname']);
      assert.match(res.body.errors[0].message, why, res.body.errors[0].message);
    });
  }

  test('just outside the rules: names beside them are accepted', async () => {
    for (const hostname of [
      'corp.example.com',
      'admin.example.com.au',
      'localhost.example.com',
      `${uniqueHost('x')}`,
      'api.pam.example.org',
      '127.example.com',
    ]) {
      const res = await t.req('POST', '/v0/tenant_domains', { hostname });
      assert.equal(res.status, 201, `${hostname}: ${res.text}`);
    }
  });
});

describe("the API's own host always reaches the API, whatever the table holds", () => {
  // The attack of issue 25: a tenant's write key registered 127.0.0.1 and took over /healthz, /v0,
  // /admin, /metrics and /console. Rows are written here past the rules, as an old database could hold them.
  const hosts = ['127.0.0.1', 'localhost', 'api.pam.example', '[::1]', '0x7f.1'];
  before(async () => {
    for (const hostname of hosts) await domainRowPastTheRules(t.app, t.tenantId, hostname);
  });

  test('POST /v0/tenant_domains {"hostname": "127.0.0.1"} is refused (the takeover attempt)', async () => {
    expectProblem(await t.req('POST', '/v0/tenant_domains', { hostname: '127.0.0.1' }), 400, 'validation_failed', ['/hostname']);
  });

  for (const host of hosts) {
    test(`Host ${host} (and with a port) gets /healthz, /v0, /admin and /console from the API`, async () => {
      for (const h of [host, `${host}:3000`]) {
        const health = await t.app.inject({ method: 'GET', url: '/healthz', headers: { host: h } });
        assert.equal(health.statusCode, 200, `${h}: ${health.body}`);
        assert.deepEqual(JSON.parse(health.body), { status: 'ok' });
        assert.equal((await onHost(h, '/v0/persons')).statusCode, 200);
        const admin = await t.app.inject({
          method: 'GET',
          url: '/admin/tenants',
          headers: { host: h, authorization: `Bearer ${t.adminToken}` },
        });
        assert.equal(admin.statusCode, 200, h);
        const console = await t.app.inject({ method: 'GET', url: '/console/', headers: { host: h } });
        assert.doesNotMatch(console.body, /pam-view|_pam\/collect/, `${h}: the console is not a tenant page`);
      }
    });
  }
});

describe('operators attest a domain without DNS', () => {
  test('POST /admin/tenant_domains/{id}/verify: 200 verified; unknown 404; no token 401', async () => {
    const domain = await claim(uniqueHost('attest'));
    const res = ok(await attest(t, domain.tenantDomainId));
    assert.equal(res.status, 'verified');
    assert.equal(res.verification, null);
    expectProblem(await attest(t, 'domain_01h0000000000000000000000a'), 404, 'not_found');
    expectProblem(
      await t.req('POST', `/admin/tenant_domains/${domain.tenantDomainId}/verify`, undefined, { key: null }),
      401,
      'unauthorized',
    );
  });

  test('npm run admin -- domains verify <id> verifies it too', { timeout: 60_000 }, async () => {
    const domain = await claim(uniqueHost('cli'));
    const database = t.app.config.database;
    const databaseUrl = database.kind === 'sqlite' ? database.path : database.url;
    const run = promisify(execFile);
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'domains', 'verify', domain.tenantDomainId], {
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
    });
    const printed = JSON.parse(stdout);
    assert.equal(printed.tenantDomainId, domain.tenantDomainId);
    assert.equal(printed.status, 'verified');
    const unknown = await run(
      process.execPath,
      ['--import', 'tsx', 'src/cli.ts', 'domains', 'verify', 'domain_01h0000000000000000000000a'],
      {
        env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
      },
    ).catch((err: { code: number; stderr: string }) => err);
    assert.equal((unknown as { code: number }).code, 1);
    assert.match((unknown as { stderr: string }).stderr, /not found/);
  });
});

describe('pending domains are re-checked in the background', () => {
  test('every 10 minutes in the first day, hourly for a week, then no more', () => {
    const created = Date.parse('2026-11-01T00:00:00.000Z');
    const at = (ms: number) => created + ms;
    const H = 3_600_000;
    assert.equal(nextCheckAt(new Date(created).toISOString(), at(0)), new Date(at(600_000)).toISOString());
    assert.equal(nextCheckAt(new Date(created).toISOString(), at(24 * H - 1)), new Date(at(24 * H - 1 + 600_000)).toISOString());
    assert.equal(nextCheckAt(new Date(created).toISOString(), at(24 * H)), new Date(at(25 * H)).toISOString());
    assert.equal(nextCheckAt(new Date(created).toISOString(), at(8 * 24 * H - 1)), new Date(at(8 * 24 * H - 1 + H)).toISOString());
    assert.equal(nextCheckAt(new Date(created).toISOString(), at(8 * 24 * H)), null);
  });

  test('a due domain whose record appears is verified without a request', { timeout: 30_000 }, async () => {
    const fast = await startApp({ DNS_RESOLVERS: dns.address }, { domainChecksEveryMs: 100 });
    try {
      const hostname = uniqueHost('bg');
      const domain = ok(await fast.req('POST', '/v0/tenant_domains', { hostname }), 201);
      dns.txt(`_pam-verify.${hostname}`, [domain.verification.value]);
      // Its first check is 10 minutes away: make it due now.
      await fast.app.db
        .updateTable('tenant_domains')
        .set({ next_check_at: new Date(Date.now() - 1000).toISOString() })
        .where('id', '=', domain.tenantDomainId)
        .execute();
      let status = 'pending';
      for (let i = 0; i < 100 && status === 'pending'; i++) {
        await new Promise((r) => setTimeout(r, 100));
        status = ok(await fast.req('GET', '/v0/tenant_domains')).items.find((d: Json) => d.hostname === hostname).status;
      }
      assert.equal(status, 'verified');
      const evs = ok(await fast.req('GET', '/v0/events?type=tenant_domain.verified')).items;
      assert.equal(evs.length, 1);
      // A pending domain whose record is missing gets its next check scheduled, not a verification.
      const missing = ok(await fast.req('POST', '/v0/tenant_domains', { hostname: uniqueHost('bg-missing') }), 201);
      const due = new Date(Date.now() - 1000).toISOString();
      await fast.app.db.updateTable('tenant_domains').set({ next_check_at: due }).where('id', '=', missing.tenantDomainId).execute();
      let next: string | null = due;
      for (let i = 0; i < 100 && next === due; i++) {
        await new Promise((r) => setTimeout(r, 100));
        next = (
          await fast.app.db
            .selectFrom('tenant_domains')
            .select('next_check_at')
            .where('id', '=', missing.tenantDomainId)
            .executeTakeFirstOrThrow()
        ).next_check_at;
      }
      assert.ok(next !== null && Date.parse(next) > Date.now() + 9 * 60_000, `next check ${next}`);
      assert.equal(
        ok(await fast.req('GET', '/v0/tenant_domains')).items.find((d: Json) => d.tenantDomainId === missing.tenantDomainId).status,
        'pending',
      );
    } finally {
      await fast.close();
    }
  });
});

describe('upgrade: refused names held from before are released at start-up', () => {
  test('each is deleted with its links, logged and emitted as tenant_domain.released; tenants can still be created', async () => {
    // One database seen by two starts in turn (never two apps at once on one SQLite file in one process).
    const database = await freshDatabase();
    const env = { DATABASE_URL: database.url, RESERVED_HOSTNAMES: 'admin.example.com' };
    const first = await startApp(env);
    let tenant: { key: string; tenantId: string };
    try {
      tenant = await first.newTenant('Old squatter');
      const ids: Record<string, string> = {};
      for (const hostname of ['192.0.2.7', 'newco.pages.localhost', 'admin.example.com', 'kept.example.org'])
        ids[hostname] = await domainRowPastTheRules(first.app, tenant.tenantId, hostname);
      const page = ok(
        await first.req('POST', '/v0/pages', { name: 'P', title: 'P', pageContext: 'c', pageType: 'inbound' }, { key: tenant.key }),
        201,
      );
      ok(
        await first.req(
          'POST',
          '/v0/page_links',
          { tenantDomainId: ids['newco.pages.localhost'], path: '/squat', target: { targetType: 'page', pageId: page.pageId } },
          { key: tenant.key },
        ),
        201,
      );
      // A squatted fallback name never stops a tenant from being created (it once answered 409 "retry" forever).
      const newco = ok(
        await first.req(
          'POST',
          '/admin/tenants',
          { name: 'Newco' },
          { key: null, headers: { authorization: `Bearer ${first.adminToken}` } },
        ),
        201,
      );
      assert.equal(newco.tenant.slug, 'newco-2');
    } finally {
      await first.close();
    }

    // The next start runs the sweep.
    const second = await startApp(env);
    try {
      const as = { key: tenant.key };
      const left = ok(await second.req('GET', '/v0/tenant_domains', undefined, as))
        .items.map((d: Json) => d.hostname)
        .sort();
      assert.deepEqual(left, ['kept.example.org', 'old-squatter.pages.localhost']);
      const released = ok(await second.req('GET', '/v0/events?type=tenant_domain.released', undefined, as)).items as Json[];
      assert.deepEqual(released.map((e) => e.payload.data.hostname).sort(), ['192.0.2.7', 'admin.example.com', 'newco.pages.localhost']);
      assert.ok(released.every((e) => e.payload.reason === 'hostname_refused'));
      assert.equal(ok(await second.req('GET', '/v0/events?type=page_link.deleted', undefined, as)).items.length, 1);
    } finally {
      await second.close();
      await database.drop();
    }
  });

  test('the migration keeps every existing domain, verified, and its links (down, then up again)', async () => {
    const db = t.app.db as Kysely<Database>;
    const tenant = await t.newTenant('Migrated');
    const domain = await claim(uniqueHost('mig'), tenant.key);
    ok(await attest(t, domain.tenantDomainId));
    const page = ok(
      await t.req('POST', '/v0/pages', { name: 'P', title: 'P', pageContext: 'c', pageType: 'inbound' }, { key: tenant.key }),
      201,
    );
    const link = ok(
      await t.req(
        'POST',
        '/v0/page_links',
        { tenantDomainId: domain.tenantDomainId, path: '/m', target: { targetType: 'page', pageId: page.pageId } },
        { key: tenant.key },
      ),
      201,
    );
    const pending = await claim(uniqueHost('mig-pending'), tenant.key);
    await domainVerification.down(db as unknown as Kysely<unknown>);
    await domainVerification.up(db as unknown as Kysely<unknown>);
    const rows = await db.selectFrom('tenant_domains').selectAll().where('tenant_id', '=', tenant.tenantId).execute();
    assert.deepEqual(
      rows.map((r) => r.status),
      ['verified', 'verified'],
    );
    assert.ok(rows.every((r) => r.verified_at !== null));
    assert.ok(!rows.some((r) => r.id === pending.tenantDomainId), 'a pending claim does not survive a down migration');
    const links = await db.selectFrom('page_links').select(['id', 'tenant_domain_id']).where('id', '=', link.pageLinkId).execute();
    assert.deepEqual(links, [{ id: link.pageLinkId, tenant_domain_id: domain.tenantDomainId }]);
    // Links still refer to domains: a link to no domain is refused by the database.
    await assert.rejects(
      db
        .insertInto('page_links')
        .values({
          ...(await db.selectFrom('page_links').selectAll().where('id', '=', link.pageLinkId).executeTakeFirstOrThrow()),
          id: newId('pagelink'),
          path: '/x',
          path_lc: '/x',
          tenant_domain_id: 'domain_01h0000000000000000000000a',
        })
        .execute(),
    );
    // And the rules hold again: two claims on one name by two tenants, one verified holder.
    const other = await t.newTenant('Migrated other');
    const hostname = uniqueHost('mig-again');
    await claim(hostname, tenant.key);
    await claim(hostname, other.key);
  });
});

describe('DNS_RESOLVERS', () => {
  test('takes IPv4 and IPv6 addresses, each with an optional port; refuses anything else naming the variable', () => {
    const good = ['1.1.1.1', '10.0.0.53:5353', '2606:4700::1111', '[::1]', '[::1]:5353', '1.1.1.1, [2606:4700::1111]:53'];
    for (const value of good) assert.doesNotThrow(() => loadConfig({ DNS_RESOLVERS: value }), value);
    assert.deepEqual(loadConfig({ DNS_RESOLVERS: ' 1.1.1.1 , [::1]:53 ' }).dnsResolvers, ['1.1.1.1', '[::1]:53']);
    assert.deepEqual(loadConfig({}).dnsResolvers, []);
    for (const value of [
      'dns.google',
      '1.1.1.1:0',
      '1.1.1.1:70000',
      '[1.1.1.1]:53',
      '::1:53:x',
      '300.1.1.1',
      '1.1.1.1:',
      'https://1.1.1.1',
    ]) {
      assert.throws(
        () => loadConfig({ DNS_RESOLVERS: value }),
        (err: unknown) => err instanceof ConfigError && /DNS_RESOLVERS/.test(err.message),
        value,
      );
    }
  });

  test('RESERVED_HOSTNAMES takes names and *.suffix, and refuses anything else', () => {
    assert.deepEqual(loadConfig({ RESERVED_HOSTNAMES: 'A.example.com., *.corp.example.com' }).reservedHostnames, [
      'a.example.com',
      '*.corp.example.com',
    ]);
    for (const value of ['*', 'x y', '*.', 'http://a.com', 'a.*.com']) {
      assert.throws(
        () => loadConfig({ RESERVED_HOSTNAMES: value }),
        (err: unknown) => err instanceof ConfigError && /RESERVED_HOSTNAMES/.test(err.message),
        value,
      );
    }
  });

  test('an IPv6 resolver answers too', async () => {
    let dns6: FakeDns;
    try {
      dns6 = await startFakeDns('udp6');
    } catch {
      return; // no IPv6 loopback on this machine
    }
    const six = await startApp({ DNS_RESOLVERS: dns6.address });
    try {
      const hostname = uniqueHost('six');
      const domain = ok(await six.req('POST', '/v0/tenant_domains', { hostname }), 201);
      dns6.txt(`_pam-verify.${hostname}`, [domain.verification.value]);
      assert.equal(ok(await six.req('POST', `/v0/tenant_domains/${domain.tenantDomainId}/verify`)).status, 'verified');
      assert.deepEqual(dns6.queries, [`_pam-verify.${hostname}`]);
    } finally {
      await six.close();
      await dns6.close();
    }
  });
});
