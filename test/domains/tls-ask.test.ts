import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  attest,
  domainRowPastTheRules,
  expectProblem,
  ok,
  startApp,
  verifiedDomain,
  type Json,
  type Res,
  type TestApp,
} from '../helpers.js';
import { fallbackHost } from '../site/serve-helpers.js';

// GET /_pam/tls/ask: what Caddy's on-demand TLS asks before it gets a certificate for a name.
// The proxy asks with no key, on the API's host.

const API_HOST = 'api.example.com';
let t: TestApp;
let fallback: string;

before(async () => {
  t = await startApp({ PUBLIC_BASE_URL: `https://${API_HOST}` });
  fallback = await fallbackHost(t);
});
after(async () => {
  await t.close();
});

const ask = (query: string, headers: Record<string, string> = {}): Promise<Res> =>
  t.req('GET', `/_pam/tls/ask${query}`, undefined, { key: null, headers });
const askFor = (domain: string) => ask(`?domain=${encodeURIComponent(domain)}`);

/** A verified custom domain (an operator attests it): only verified domains are served. */
async function customDomain(hostname: string, key?: string): Promise<Json> {
  return verifiedDomain(t, hostname, key);
}

/** A valid DNS name of exactly `length` characters: labels of 63 `a`s, then `.example`. */
function nameOfLength(length: number): string {
  let prefix = '';
  while (prefix.length < length - '.example'.length) {
    const room = length - '.example'.length - prefix.length - (prefix ? 1 : 0);
    prefix += `${prefix ? '.' : ''}${'a'.repeat(Math.min(63, room))}`;
  }
  return `${prefix}.example`;
}

describe('GET /_pam/tls/ask', () => {
  test("200 for the tenant's fallback domain, in any case, with a trailing dot or a port", async () => {
    for (const domain of [fallback, fallback.toUpperCase(), `${fallback}.`, `${fallback}:443`, `${fallback}.:8443`]) {
      const res = await askFor(domain);
      assert.equal(res.status, 200, `${domain}: ${res.text}`);
      assert.deepEqual(res.body, { domain: fallback });
    }
  });

  test('a pending custom domain is 404: no certificate before its name is proven', async () => {
    const pending = ok(await t.req('POST', '/v0/tenant_domains', { hostname: 'pending.acme-ask.com' }), 201);
    expectProblem(await askFor('pending.acme-ask.com'), 404, 'not_found');
    ok(await attest(t, pending.tenantDomainId));
    assert.equal((await askFor('pending.acme-ask.com')).status, 200);
  });

  test('200 for a verified custom domain while it exists, 404 once it is removed', async () => {
    const domain = await customDomain('Go.Acme-Ask.com');
    assert.equal((await askFor('go.acme-ask.com')).status, 200);
    assert.equal((await askFor('GO.ACME-ASK.COM.')).status, 200);
    assert.equal((await t.req('DELETE', `/v0/tenant_domains/${domain.tenantDomainId}`)).status, 204);
    expectProblem(await askFor('go.acme-ask.com'), 404, 'not_found');
  });

  test("another tenant's domain is a served domain too (the proxy serves every tenant)", async () => {
    const other = await t.newTenant('Other');
    await customDomain('pages.other-ask.com', other.key);
    assert.equal((await askFor('pages.other-ask.com')).status, 200);
  });

  test('404 for a name no tenant has: unknown, a parent or a child of a served one, the fallback suffix itself', async () => {
    await customDomain('shop.parent-ask.com');
    for (const domain of ['nobody.example.com', 'parent-ask.com', 'x.shop.parent-ask.com', 'pages.localhost', `x.${fallback}`]) {
      expectProblem(await askFor(domain), 404, 'not_found');
    }
  });

  test("never 200 for the API's own host, localhost or an IP literal, even when a tenant's row names it", async () => {
    // Rows past the rules (creation refuses these names), as a database from before issue 25 could hold them.
    for (const hostname of [API_HOST, '192.0.2.10', 'localhost']) await domainRowPastTheRules(t.app, t.tenantId, hostname);
    for (const domain of [
      API_HOST,
      `${API_HOST.toUpperCase()}.:443`,
      'localhost',
      'LOCALHOST.',
      'localhost:3000',
      '192.0.2.10',
      '192.0.2.10:443',
      '192.0.2.10.',
      '127.0.0.1',
      '::1',
      '[::1]',
      '[::1]:443',
      '::ffff:127.0.0.1',
    ]) {
      expectProblem(await askFor(domain), 404, 'not_found');
    }
  });

  test('the bound: a 253-character name with its dot and port (260) is asked about; 261 characters or a 254-character name are 400', async () => {
    const longest = nameOfLength(253);
    assert.equal(longest.length, 253);
    await customDomain(longest);
    assert.equal((await askFor(longest)).status, 200);
    assert.equal((await askFor(`${longest}.:65535`)).status, 200);
    assert.equal(`${longest}.:65535`.length, 260);
    expectProblem(await askFor(`${longest}.:655350`), 400, 'validation_failed', ['/domain']);
    expectProblem(await askFor(nameOfLength(254)), 400, 'validation_failed', ['/domain']);
    // 63-character labels are names; 64 are not.
    expectProblem(await askFor(`${'a'.repeat(63)}.example`), 404, 'not_found');
    expectProblem(await askFor(`${'a'.repeat(64)}.example`), 400, 'validation_failed', ['/domain']);
  });

  test('400 naming /domain when it is missing, empty, repeated or not a DNS name', async () => {
    expectProblem(await ask(''), 400, 'validation_failed', ['/domain']);
    expectProblem(await ask('?domain='), 400, 'validation_failed', ['/domain']);
    expectProblem(await ask(`?domain=${fallback}&domain=${fallback}`), 400, 'validation_failed', ['/domain']);
    for (const domain of [
      ' ',
      `${fallback} `,
      `a b.example.com`,
      `${fallback}/x`,
      `${fallback}?x=1`,
      `${fallback}:`,
      `${fallback}:99999x`,
      `${fallback}..`,
      `.${fallback}`,
      `*.${fallback}`,
      'user@example.com',
      'bücher.example',
      '-a.example.com',
      '[example.com]',
      '[::1',
      `${fallback}\u0000`,
      '<script>alert(1)</script>',
    ]) {
      const res = await askFor(domain);
      expectProblem(res, 400, 'validation_failed', ['/domain']);
      assert.doesNotMatch(res.text, /<script>/);
    }
  });

  test('400 for a parameter other than domain', async () => {
    expectProblem(await ask(`?domain=${fallback}&x=1`), 400, 'validation_failed', ['/x']);
  });

  test("is the API host's only: on a tenant domain the path is the visitor plane's, and it is not in the OpenAPI document", async () => {
    const onTenant = await ask(`?domain=${fallback}`, { host: fallback });
    assert.equal(onTenant.status, 404);
    const document = ok(await t.req('GET', '/openapi.json', undefined, { key: null }));
    assert.equal(
      Object.keys(document.paths).some((p) => p.startsWith('/_pam')),
      false,
    );
  });

  test('needs no API key, and an invalid one changes nothing', async () => {
    assert.equal((await ask(`?domain=${fallback}`, { 'x-api-key': 'not-a-key' })).status, 200);
  });
});
