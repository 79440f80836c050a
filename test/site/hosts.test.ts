import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { startFakeDns, type FakeDns } from '../dns-server.js';
import { attest, onPostgres, ok, startApp, type Json, type TestApp } from '../helpers.js';
import { audienceOf, publishedPage } from './serve-helpers.js';

// Issue 26: which hosts are tenant domains is kept in process (src/site/hosts.ts) under the
// `domains` change counter that every write of a verified domain moves in its own transaction.
// Each way a domain starts or stops being served shows on the next request, with no route telling
// the cache: the answer before the change is asked for (and so kept) first, every time.

let dns: FakeDns;
let t: TestApp;
before(async () => {
  dns = await startFakeDns();
  t = await startApp({ DNS_RESOLVERS: dns.address });
});
after(async () => {
  await t.close();
  await dns.close();
});

let n = 0;
const uniqueHost = (label: string) => `${label}${++n}-${randomBytes(4).toString('hex')}.example.net`;
const claim = async (hostname: string, key?: string) =>
  ok(await t.req('POST', '/v0/tenant_domains', { hostname }, key === undefined ? {} : { key }), 201);

/** Who answers a request on `host`: the visitor plane (a page or its 404 page) or the API. */
async function plane(host: string, app = t): Promise<'site' | 'api'> {
  const res = await app.app.inject({ method: 'GET', url: '/v0/persons', headers: { host, 'x-api-key': app.key } });
  if (res.statusCode === 200 && String(res.headers['content-type']).startsWith('application/json')) return 'api';
  assert.equal(res.statusCode, 404, res.body);
  assert.match(String(res.headers['content-type']), /^text\/html/);
  return 'site';
}

/** Asks twice, so the answer is kept (the second is the door's synchronous look at it). */
async function kept(host: string, expected: 'site' | 'api', app = t): Promise<void> {
  assert.equal(await plane(host, app), expected);
  assert.equal(await plane(host, app), expected);
}

describe('a domain starts being served on the next request, whichever way it is verified', () => {
  test('the tenant verifies it by its TXT record', async () => {
    const hostname = uniqueHost('txt');
    const domain = await claim(hostname);
    await kept(hostname, 'api');
    dns.txt(`_pam-verify.${hostname}`, [domain.verification.value]);
    assert.equal(ok(await t.req('POST', `/v0/tenant_domains/${domain.tenantDomainId}/verify`)).status, 'verified');
    assert.equal(await plane(hostname), 'site');
  });

  test('an operator attests it (admin API)', async () => {
    const hostname = uniqueHost('attest');
    const domain = await claim(hostname);
    await kept(hostname, 'api');
    ok(await attest(t, domain.tenantDomainId));
    assert.equal(await plane(hostname), 'site');
  });

  test('an operator attests it with the CLI, another process', { timeout: 60_000 }, async () => {
    const hostname = uniqueHost('cli');
    const domain = await claim(hostname);
    await kept(hostname, 'api');
    const database = t.app.config.database;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'src/cli.ts', 'domains', 'verify', domain.tenantDomainId],
      { env: { ...process.env, DATABASE_URL: database.kind === 'sqlite' ? database.path : database.url, LOG_LEVEL: 'silent' } },
    );
    assert.equal(JSON.parse(stdout).status, 'verified');
    const committed = Date.now();
    if (!onPostgres) {
      // SQLite: any commit of any process moves data_version, and the counter is read again.
      assert.equal(await plane(hostname), 'site');
      return;
    }
    // PostgreSQL: another process's change within 5 s (docs/publishing.md).
    while ((await plane(hostname)) === 'api') {
      assert.ok(Date.now() - committed < 5500, 'served within 5 s');
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  test('the background check finds its record', { timeout: 30_000 }, async () => {
    const fast = await startApp({ DNS_RESOLVERS: dns.address }, { domainChecksEveryMs: 50 });
    try {
      const hostname = uniqueHost('bg');
      const domain = ok(await fast.req('POST', '/v0/tenant_domains', { hostname }), 201);
      await kept(hostname, 'api', fast);
      dns.txt(`_pam-verify.${hostname}`, [domain.verification.value]);
      await fast.app.db
        .updateTable('tenant_domains')
        .set({ next_check_at: new Date(Date.now() - 1000).toISOString() })
        .where('id', '=', domain.tenantDomainId)
        .execute();
      const status = async () => ok(await fast.req('GET', '/v0/tenant_domains')).items.find((d: Json) => d.hostname === hostname).status;
      for (let i = 0; i < 200 && (await status()) === 'pending'; i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(await status(), 'verified');
      assert.equal(await plane(hostname, fast), 'site');
    } finally {
      await fast.close();
    }
  });

  test("another tenant's verification releases this tenant's claim and serves theirs", async () => {
    const a = await t.newTenant('Hosts A');
    const b = await t.newTenant('Hosts B');
    const hostname = uniqueHost('both');
    const claimA = await claim(hostname, a.key);
    const claimB = await claim(hostname, b.key);
    await kept(hostname, 'api');
    const page = await publishedPage(t, { title: 'Tenant B here' }, b.key);
    const audience = await audienceOf(t, page.pageId, {}, b.key);
    const res = await t.req(
      'POST',
      '/v0/page_links',
      { tenantDomainId: claimB.tenantDomainId, path: '/b', target: { targetType: 'audience', audienceId: audience.audienceId } },
      { key: b.key },
    );
    ok(res, 201);
    ok(await attest(t, claimB.tenantDomainId));
    const served = await t.app.inject({ method: 'GET', url: '/b', headers: { host: hostname } });
    assert.equal(served.statusCode, 200);
    assert.match(served.body, /Tenant B here/);
    const left = ok(await t.req('GET', '/v0/tenant_domains', undefined, { key: a.key })).items as Json[];
    assert.deepEqual(
      left.map((d) => d.tenantDomainId === claimA.tenantDomainId),
      [false],
      "A's claim released, its fallback domain left",
    );
  });

  test("a new tenant's fallback domain is served from its creation", async () => {
    const name = `fresh${randomBytes(5).toString('hex')}`;
    const hostname = `${name}.${t.app.config.fallbackDomainSuffix}`;
    await kept(hostname, 'api');
    const created = ok(
      await t.req('POST', '/admin/tenants', { name }, { key: null, headers: { authorization: `Bearer ${t.adminToken}` } }),
      201,
    );
    assert.equal(created.tenant.slug, name);
    assert.equal(await plane(hostname), 'site');
  });
});

describe('a domain stops being served on the next request', () => {
  test('its tenant deletes it', async () => {
    const hostname = uniqueHost('gone');
    const domain = await claim(hostname);
    ok(await attest(t, domain.tenantDomainId));
    await kept(hostname, 'site');
    assert.equal((await t.req('DELETE', `/v0/tenant_domains/${domain.tenantDomainId}`)).status, 204);
    assert.equal(await plane(hostname), 'api');
  });

  test('and the cache is real: a row changed behind the write paths is not seen while the counter stands still', async () => {
    const hostname = uniqueHost('behind');
    const domain = await claim(hostname);
    await kept(hostname, 'api');
    // Verified by hand, without moving the counter: the kept answer stands (on SQLite too, where
    // this commit moves data_version: the counter is read again and found unchanged).
    await t.app.db
      .updateTable('tenant_domains')
      .set({ status: 'verified', verified_at: new Date().toISOString(), verification_value: null, next_check_at: null })
      .where('id', '=', domain.tenantDomainId)
      .execute();
    assert.equal(await plane(hostname), 'api');
    // Any change of any domain moves the counter: then it is read again.
    const other = await claim(uniqueHost('mover'));
    ok(await attest(t, other.tenantDomainId));
    assert.equal(await plane(hostname), 'site');
  });
});
