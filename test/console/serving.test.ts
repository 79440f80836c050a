import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { buildConsole } from '../../scripts/build-console.js';
import { createApiKey } from '../../src/admin/repository.js';
import { startApp, type Json, type TestApp } from '../helpers.js';

// How the service serves the console: at /console on the API host only, without a key, under a
// policy that allows no inline script, and small enough (150 KB of JavaScript gzipped); and the
// extension it relies on to know a key's scopes.

let t: TestApp;
let fallbackHost: string;
before(async () => {
  await buildConsole();
  t = await startApp();
  fallbackHost = ((await t.req('GET', '/v0/tenant_domains')).body.items as Json[]).find((d) => d.isFallback).hostname;
});
after(async () => t?.close());

const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });

describe('serving the console', () => {
  test('the page and its bundle need no API key, under a strict policy', async () => {
    const redirect = await get('/console');
    assert.equal(redirect.statusCode, 308);
    assert.equal(redirect.headers.location, '/console/');

    const page = await get('/console/');
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(page.body, /<script type="module" src="\/console\/console\.js"><\/script>/);
    assert.doesNotMatch(page.body, /<script>|<script type="module">|<style>| style=/, 'no inline script or style');
    const policy = String(page.headers['content-security-policy']);
    const directives = new Map(
      policy
        .split(';')
        .map((d) => d.trim().split(/\s+/) as [string, ...string[]])
        .map(([k, ...v]) => [k, v]),
    );
    assert.deepEqual(directives.get('script-src'), ["'self'"]);
    assert.deepEqual(directives.get('default-src'), ["'self'"]);
    assert.deepEqual(directives.get('connect-src'), ["'self'"]);
    assert.deepEqual(directives.get('frame-ancestors'), ["'none'"]);
    assert.ok(!policy.includes('unsafe-inline') && !policy.includes('unsafe-eval'), policy);
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.equal(page.headers['referrer-policy'], 'no-referrer');

    for (const [file, type] of [
      ['console.js', /^text\/javascript/],
      ['console.css', /^text\/css/],
    ] as const) {
      const res = await get(`/console/${file}`);
      assert.equal(res.statusCode, 200, file);
      assert.match(String(res.headers['content-type']), type);
      assert.ok(res.headers['content-security-policy']);
    }
  });

  test('at most 150 KB of JavaScript gzipped', async () => {
    const js = (await get('/console/console.js')).rawPayload;
    const gzipped = gzipSync(js, { level: 9 }).length;
    assert.ok(gzipped <= 150 * 1024, `${gzipped} bytes gzipped`);
    assert.ok(gzipped > 1000, 'the bundle holds the console');
    const built = readFileSync(path.resolve('dist/www/console/console.js'));
    assert.equal(Buffer.compare(built, js), 0, 'served as built');
  });

  test('nothing else: unknown files, other extensions and paths that climb out are 404', async () => {
    for (const url of [
      '/console/nope.js',
      '/console/index.html',
      '/console/routes.js',
      '/console/..%2Fpackage.json',
      '/console/%2e%2e%2f%2e%2e%2fpackage.json',
      '/console/console.js.map',
      '/console/CONSOLE.JS',
      '/console/a/b.js',
    ]) {
      const res = await get(url);
      assert.equal(res.statusCode, 404, url);
      assert.doesNotMatch(res.body, /"name": "page-audience-api"/, url);
    }
    assert.equal((await t.app.inject({ method: 'POST', url: '/console/' })).statusCode, 405);
  });

  test('never on a tenant domain: there the visitor plane answers', async () => {
    const res = await get('/console/', { host: fallbackHost });
    assert.equal(res.statusCode, 404);
    assert.doesNotMatch(res.body, /console\.js/);
    assert.ok(!String(res.headers['content-security-policy'] ?? '').includes("script-src 'self'"));
  });
});

describe('GET /v0/api_key (extension)', () => {
  test("tells the caller's own key: its tenant and scopes, never the key", async () => {
    const write = await t.req('GET', '/v0/api_key');
    assert.equal(write.status, 200, write.text);
    assert.equal(write.body.tenantId, t.tenantId);
    assert.deepEqual(write.body.apiKey.scopes, ['read', 'write']);
    assert.ok(!write.text.includes(t.key), 'the key itself is not echoed');
    assert.equal(write.body.apiKey.keyPrefix, t.key.slice(0, 8));

    const created = await createApiKey(t.app.db, t.tenantId, { scopes: ['read'] });
    const read = await t.req('GET', '/v0/api_key', undefined, { key: created.apiKey });
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.apiKey.apiKeyId, created.apiKeyId);
    assert.deepEqual(read.body.apiKey.scopes, ['read']);

    const other = await t.newTenant('Other');
    const theirs = await t.req('GET', '/v0/api_key', undefined, { key: other.key });
    assert.equal(theirs.body.tenantId, other.tenantId);
    assert.equal(theirs.body.apiKey.apiKeyId, other.apiKeyId);
  });

  test('needs a key, and takes no query parameter', async () => {
    assert.equal((await t.req('GET', '/v0/api_key', undefined, { key: null })).status, 401);
    assert.equal((await t.req('GET', '/v0/api_key', undefined, { key: 'pak_wrong' })).status, 401);
    const res = await t.req('GET', '/v0/api_key?scopes=write');
    assert.equal(res.status, 400);
  });
});
