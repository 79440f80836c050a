import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { listeningPort, publicOrigin } from '../../src/http/public-origin.js';
import { makeImage } from '../fixtures.js';
import { startApp, type Json, type TestApp } from '../helpers.js';
import { resolveLocalhostNames } from '../loopback-names.js';
import { fallbackHost, unique } from './serve-helpers.js';

// Issue 36, part 5: every public address of a tenant page works where the service runs
// (src/http/public-origin.ts). The rule itself, then every absolute address in a served page and
// in a preview, fetched from a listening server on a port of its own.

const arrival = (remoteAddress: string, proto?: string) => ({
  socket: { remoteAddress },
  headers: proto === undefined ? {} : { 'x-forwarded-proto': proto },
});

describe('the rule', () => {
  const rule = (env: Record<string, string>, port = 3000) => {
    const config = loadConfig({ DATABASE_URL: ':memory:', ...env });
    return publicOrigin({
      scheme: config.siteUrlScheme,
      publicBaseUrl: config.publicBaseUrl,
      trustProxy: config.trustProxy,
      port: () => port,
    });
  };

  test('nothing set: http, the host and the port the service listens on', () => {
    assert.equal(rule({})('acme.pages.localhost'), 'http://acme.pages.localhost:3000');
    assert.equal(rule({}, 8080)('go.acme.com', arrival('203.0.113.9')), 'http://go.acme.com:8080');
  });

  test('port 80 is left out', () => {
    assert.equal(rule({}, 80)('go.acme.com'), 'http://go.acme.com');
  });

  test('PUBLIC_BASE_URL https: https and no port, whatever the request', () => {
    const origin = rule({ PUBLIC_BASE_URL: 'https://api.acme.com' });
    assert.equal(origin('go.acme.com'), 'https://go.acme.com');
    assert.equal(origin('go.acme.com', arrival('203.0.113.9', 'http')), 'https://go.acme.com');
    assert.equal(rule({ PUBLIC_BASE_URL: 'http://api.acme.com:8080' })('go.acme.com'), 'http://go.acme.com:3000');
  });

  test('through a TRUST_PROXY proxy saying X-Forwarded-Proto: https: https; from anyone else it is not believed', () => {
    const origin = rule({ TRUST_PROXY: '10.0.0.0/8' });
    assert.equal(origin('go.acme.com', arrival('10.1.2.3', 'https')), 'https://go.acme.com');
    assert.equal(origin('go.acme.com', arrival('::ffff:10.1.2.3', 'HTTPS')), 'https://go.acme.com');
    // The proxy's own value is the last one: what a client wrote before it is not believed.
    assert.equal(origin('go.acme.com', arrival('10.1.2.3', 'https, http')), 'http://go.acme.com:3000');
    assert.equal(origin('go.acme.com', arrival('10.1.2.3', 'http')), 'http://go.acme.com:3000');
    assert.equal(origin('go.acme.com', arrival('10.1.2.3')), 'http://go.acme.com:3000');
    assert.equal(origin('go.acme.com', arrival('203.0.113.9', 'https')), 'http://go.acme.com:3000');
    assert.equal(rule({})('go.acme.com', arrival('10.1.2.3', 'https')), 'http://go.acme.com:3000', 'no TRUST_PROXY: no one is believed');
    assert.equal(origin('go.acme.com'), 'http://go.acme.com:3000', 'no request: the configuration alone');
  });

  test('SITE_URL_SCHEME overrides the rule either way', () => {
    assert.equal(rule({ SITE_URL_SCHEME: 'https' })('go.acme.com'), 'https://go.acme.com');
    assert.equal(rule({ SITE_URL_SCHEME: 'HTTPS' }, 80)('go.acme.com'), 'https://go.acme.com');
    const plain = rule({ SITE_URL_SCHEME: 'http', PUBLIC_BASE_URL: 'https://api.acme.com', TRUST_PROXY: '10.0.0.1' });
    assert.equal(plain('go.acme.com', arrival('10.0.0.1', 'https')), 'http://go.acme.com:3000');
  });

  test('a SITE_URL_SCHEME other than https or http stops the start, naming it', () => {
    for (const bad of ['ftp', 'https://', 'tls']) {
      assert.throws(
        () => loadConfig({ SITE_URL_SCHEME: bad }),
        (err: unknown) => err instanceof ConfigError && err.message === `SITE_URL_SCHEME must be https or http, got "${bad}"`,
      );
    }
    assert.equal(loadConfig({ SITE_URL_SCHEME: ' ' }).siteUrlScheme, undefined, 'empty is unset');
  });

  test('the port before the server listens is the configured one', async () => {
    const { createServer } = await import('node:http');
    const server = createServer();
    const portOf = listeningPort(server, 3000);
    assert.equal(portOf(), 3000);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    assert.equal(portOf(), port);
    await new Promise((resolve) => server.close(resolve));
    assert.equal(portOf(), 3000, 'closed: the configured one again');
    // Listening again on another port is seen: the port is taken at each start.
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    assert.equal(portOf(), (server.address() as { port: number }).port);
    await new Promise((resolve) => server.close(resolve));
  });

  test('a server already listening gives its port at once', async () => {
    const { createServer } = await import('node:http');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const portOf = listeningPort(server, 3000);
    assert.equal(portOf(), (server.address() as { port: number }).port);
    await new Promise((resolve) => server.close(resolve));
    assert.equal(portOf(), 3000, 'closed: the configured one again');
  });
});

let t: TestApp;
let api: string;
let host: string;
let port: number;
before(async () => {
  resolveLocalhostNames();
  // PORT stays 3000: the addresses must carry the port the service really listens on.
  t = await startApp({ TRUST_PROXY: '127.0.0.1' });
  port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
  api = `http://127.0.0.1:${port}`;
  host = await fallbackHost(t);
});
after(() => t.close());

/** A call of the API over the socket, as a client on the network makes it. */
async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Json> {
  const res = await fetch(`${api}${path}`, {
    method,
    headers: { 'x-api-key': t.key, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

async function imageAsset(name: string): Promise<Json> {
  const bytes = await makeImage('png', 40, 20, [Math.floor(Math.random() * 255), 90, 30]);
  const file = await fetch(`${api}/v0/files`, {
    method: 'POST',
    headers: { 'x-api-key': t.key, 'content-type': 'image/png' },
    body: bytes,
  });
  assert.equal(file.status, 201);
  const { fileId } = (await file.json()) as Json;
  return { ...(await call('POST', '/v0/assets', { assetType: 'image', name, fileId })), fileId };
}

/** Every absolute http(s) address in a document's attributes. */
function absoluteAddresses(html: string): string[] {
  return [
    ...new Set([...html.matchAll(/(?:src|href|content)="(https?:\/\/[^"]+)"/g)].map((m) => (m[1] as string).replaceAll('&amp;', '&'))),
  ];
}

async function assertEachLoads(addresses: string[], from: string) {
  for (const address of addresses) {
    const res = await fetch(address);
    await res.arrayBuffer();
    assert.equal(res.status, 200, `${address} in ${from}`);
  }
}

describe('every absolute address works where the service runs', () => {
  let page: Json;
  let audience: Json;
  let path: string;
  before(async () => {
    const [og, twitter, logo, favicon, widget] = await Promise.all(['og', 'twitter', 'logo', 'favicon', 'widget'].map(imageAsset));
    await call('PATCH', '/v0/site_settings', { logoAssetId: logo.assetId, faviconAssetId: favicon.assetId });
    page = await call('POST', '/v0/pages', {
      name: 'Origins',
      title: 'Origins',
      pageContext: 'ctx',
      pageType: 'inbound',
      status: 'published',
      metadata: { title: 'Origins', ogImageAssetId: og.assetId, twitterImageAssetId: twitter.assetId },
      actionCardWidgets: [
        {
          type: 'logos',
          title: 'Customers',
          logos: [{ image: { altText: 'W', url: '', fileId: widget.fileId, assetId: widget.assetId } }],
        },
      ],
    });
    audience = await call('POST', `/v0/pages/${page.pageId}/audiences`, { customName: 'Origins' });
    path = unique('origins');
    await call('POST', '/v0/page_links', { path, target: { targetType: 'audience', audienceId: audience.audienceId } });
  });

  test("the API's image URLs are on the domain's public origin, with the listening port, and load", async () => {
    assert.equal(page.metadata.ogImageUrl, `http://${host}:${port}/_pam/files/${page.metadata.ogImageFileId}`);
    await assertEachLoads([page.metadata.ogImageUrl, page.metadata.twitterImageUrl], 'the page metadata');
  });

  test('a served page: every absolute address in it loads with 200', async () => {
    const res = await fetch(`http://${host}:${port}${path}`);
    assert.equal(res.status, 200);
    const html = await res.text();
    const addresses = absoluteAddresses(html);
    assert.ok(addresses.length >= 2, `og:image and twitter:image at least: ${addresses.join(', ')}`);
    assert.ok(html.includes(`<meta property="og:image" content="http://${host}:${port}/_pam/files/`), 'og:image on this origin');
    for (const address of addresses) assert.ok(address.startsWith(`http://${host}:${port}/`), address);
    await assertEachLoads(addresses, 'the served page');
    // The relative ones (the logo, the favicon, the widget's logos) are on the same origin: they load too.
    const relative = [...html.matchAll(/(?:src|href)="(\/_pam\/files\/[^"]+)"/g)].map((m) => `http://${host}:${port}${m[1]}`);
    assert.ok(relative.length >= 3, relative.join(', '));
    await assertEachLoads(relative, 'the served page');
  });

  test('the same page through a trusted proxy saying https names https addresses; the http one keeps its own', async () => {
    const proxied = await (await fetch(`http://${host}:${port}${path}`, { headers: { 'x-forwarded-proto': 'https' } })).text();
    assert.ok(proxied.includes(`<meta property="og:image" content="https://${host}/_pam/files/`), 'https, no port');
    assert.ok(!proxied.includes(`http://${host}`), 'no address of the other origin');
    // Cached apart: the document rendered for https is not served to http.
    const direct = await (await fetch(`http://${host}:${port}${path}`)).text();
    assert.ok(direct.includes(`<meta property="og:image" content="http://${host}:${port}/_pam/files/`));
  });

  test('a preview, by the API and by its link: every absolute address loads with 200, and its policy lets the images in', async () => {
    const byKey = await fetch(`${api}/v0/pages/${page.pageId}/preview?audienceId=${audience.audienceId}`, {
      headers: { 'x-api-key': t.key },
    });
    assert.equal(byKey.status, 200);
    const previewed = await byKey.text();
    const addresses = absoluteAddresses(previewed);
    // og:image, twitter:image, the logo, the favicon and the widget's logo, all absolute in a preview.
    assert.ok(addresses.length >= 5, addresses.join(', '));
    for (const address of addresses) assert.ok(address.startsWith(`http://${host}:${port}/_pam/files/`), address);
    await assertEachLoads(addresses, 'the API preview');

    const issued = await call('GET', `/v0/pages/${page.pageId}/preview_link?audienceId=${audience.audienceId}`);
    const { pathname, search } = new URL(issued.url);
    const byLink = await fetch(`${api}${pathname}${search}`);
    assert.equal(byLink.status, 200);
    const policy = byLink.headers.get('content-security-policy') ?? '';
    assert.match(policy, new RegExp(`img-src [^;]*http://${host.replaceAll('.', '\\.')}:${port}(;|$| )`));
    const linked = absoluteAddresses(await byLink.text());
    assert.deepEqual(linked.sort(), addresses.sort());
    await assertEachLoads(linked, 'the preview link');
  });
});
