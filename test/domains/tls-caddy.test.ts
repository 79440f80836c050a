import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { USER_AGENT } from '../browser.js';
import { type Caddy, skip, startCaddy } from '../caddy.js';
import { attest, ok, startApp, type Json, type TestApp } from '../helpers.js';
import { audienceOf, fallbackHost, publishedPage } from '../site/serve-helpers.js';

// Automatic TLS with a real proxy: Debian's Caddy, running the Caddyfile of docs/publishing.md
// (with its internal CA), in front of the service listening on a socket. A served domain gets a
// certificate and its visits are recorded as https; any other name gets no certificate at all.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const API_HOST = 'api.example.com';
const TIMEOUT = { timeout: 60_000 };

/** The Caddyfile of docs/publishing.md, pointed at the service's port instead of 3000. */
function documentedCaddyfile(servicePort: number): string {
  const doc = readFileSync(path.join(ROOT, 'docs/publishing.md'), 'utf8');
  const block = /```caddyfile\n([\s\S]*?)```/.exec(doc)?.[1];
  assert.ok(block, 'docs/publishing.md has a ```caddyfile block');
  for (const part of ['ask http://127.0.0.1:3000/_pam/tls/ask', 'on_demand', 'reverse_proxy 127.0.0.1:3000', `${API_HOST} {`])
    assert.ok(block.includes(part), `the documented Caddyfile has "${part}"`);
  return block.replaceAll('127.0.0.1:3000', `127.0.0.1:${servicePort}`);
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * A request to Caddy as a browser that resolved `host` to this machine makes it: the connection to
 * 127.0.0.1, `host` as the TLS server name and in `Host`, and Caddy's root as the only trusted CA.
 */
function viaCaddy(host: string, urlPath: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  return new Promise<Answer>((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port: caddy.httpsPort,
        // No server name for an IP address (RFC 6066), as a browser sends none.
        servername: net.isIP(host) === 0 ? host : '',
        ca: caddy.rootCa,
        method: init.method ?? 'GET',
        path: urlPath,
        headers: { host: `${host}:${caddy.httpsPort}`, 'user-agent': USER_AGENT, ...init.headers },
        agent: false,
        timeout: 15_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(init.body);
  });
}

/** Caddy's TLS alert: the handshake itself failed, not the check of a certificate it sent. */
async function handshakeFails(host: string): Promise<void> {
  await assert.rejects(viaCaddy(host, '/'), (err: NodeJS.ErrnoException) => {
    assert.equal(err.code, 'EPROTO', `${host}: ${err}`);
    assert.match(err.message, /alert/, `${host}: ${err}`);
    return true;
  });
}

/** Where Caddy keeps a certificate it got from its internal CA. */
const certificateDir = (host: string) => path.join(caddy.dataDir, 'caddy', 'certificates', 'local', host);

let t: TestApp;
let caddy: Caddy;
let page: Json;
/** Names Caddy must serve over HTTPS, each with a link at `/tls` to the same audience. */
const served: string[] = [];
/** Names Caddy must give no certificate. */
const refused: string[] = [];

/** A custom domain of the tenant, created through the API as a tenant would. */
async function customDomain(hostname: string): Promise<Json> {
  return ok(await t.req('POST', '/v0/tenant_domains', { hostname }), 201);
}

describe('Caddy with on-demand TLS in front of the service', { skip, ...TIMEOUT }, () => {
  before(async () => {
    t = await startApp({ TRUST_PROXY: '127.0.0.1', PUBLIC_BASE_URL: `https://${API_HOST}`, FALLBACK_DOMAIN_SUFFIX: 'pages.example.net' });
    const port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);

    served.push(await fallbackHost(t));
    const custom = await customDomain('go.acme-tls.example.org');
    ok(await attest(t, custom.tenantDomainId));
    served.push(custom.hostname);
    refused.push('nobody.example.org');
    // A claim whose TXT record was never found is not served, and so gets no certificate.
    refused.push((await customDomain('pending.acme-tls.example.org')).hostname);

    page = await publishedPage(t);
    const audience = await audienceOf(t, page.pageId, { customName: 'TLS' });
    const domains = ok(await t.req('GET', '/v0/tenant_domains')).items as Json[];
    for (const host of served) {
      const tenantDomainId = domains.find((d) => d.hostname === host).tenantDomainId;
      ok(
        await t.req('POST', '/v0/page_links', {
          path: '/tls',
          tenantDomainId,
          target: { targetType: 'audience', audienceId: audience.audienceId },
        }),
        201,
      );
    }
    caddy = await startCaddy(documentedCaddyfile(port));
  });

  after(async () => {
    await caddy?.stop();
    await t?.close();
  });

  test('a served domain gets a certificate from the proxy and its page over HTTPS', TIMEOUT, async () => {
    for (const host of served) {
      const res = await viaCaddy(host, '/tls');
      assert.equal(res.status, 200, `${host}: ${res.body.slice(0, 300)}\n${caddy.logs().slice(-2000)}`);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(res.body, /id="pam-view"/);
      assert.ok(existsSync(certificateDir(host)), `a certificate was stored for ${host}`);
    }
  });

  test(
    "a visit through the proxy is recorded as https://<the domain>/…, whatever the client's own X-Forwarded headers say",
    TIMEOUT,
    async () => {
      for (const host of served) {
        const document = await viaCaddy(host, '/tls');
        assert.equal(document.status, 200);
        const view = /<script type="application\/json" id="pam-view">([^<]*)<\/script>/.exec(document.body)?.[1];
        assert.ok(view, 'the document carries its view token');
        const { token } = JSON.parse(view) as { token: string };
        const report = { token, visibleMs: 1000, scroll: 10, clicks: 0, questions: 0, conversions: 0 };
        const posted = await viaCaddy(host, '/_pam/collect', {
          method: 'POST',
          // As the measuring script's sendBeacon sends it; a hostile client's claims ride along.
          headers: { 'content-type': 'text/plain;charset=UTF-8', 'x-forwarded-proto': 'http', 'x-forwarded-for': '127.0.0.1' },
          body: JSON.stringify(report),
        });
        assert.equal(posted.status, 204, posted.body);
        const sessions = ok(await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions?limit=100`)).items as Json[];
        // One visit per domain: its session is the one whose URL names the domain, in whatever scheme.
        const session = sessions.find((s) => String(s.pageUrl).includes(`//${host}/`));
        assert.ok(session, `a session for the visit on ${host}`);
        assert.equal(session.pageUrl, `https://${host}/tls`);
      }
    },
  );

  test('a name the service does not serve gets no certificate: the TLS handshake fails', TIMEOUT, async () => {
    for (const host of refused) {
      await handshakeFails(host);
      assert.equal(existsSync(certificateDir(host)), false, `no certificate stored for ${host}`);
    }
  });

  test('localhost, and a client that names no server (as for an IP address), get no certificate either', TIMEOUT, async () => {
    await handshakeFails('localhost');
    assert.equal(existsSync(certificateDir('localhost')), false, 'no certificate stored for localhost');
    await handshakeFails('127.0.0.1');
  });

  test("the API's host block of the Caddyfile reaches the API", TIMEOUT, async () => {
    const res = await viaCaddy(API_HOST, '/healthz');
    assert.equal(res.status, 200, res.body);
    assert.deepEqual(JSON.parse(res.body), { status: 'ok' });
  });
});
