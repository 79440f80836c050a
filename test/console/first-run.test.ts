import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildConsole } from '../../scripts/build-console.js';
import { ok, startApp, type TestApp } from '../helpers.js';
import { fallbackHost } from '../site/serve-helpers.js';

// Issue 38's first run: the API host's root sends a visitor to the console (a tenant domain's does
// not), the console has an icon, and GET /v0/agent says whether a model writes new copy.

let t: TestApp;
let tenantHost: string;
before(async () => {
  await buildConsole();
  t = await startApp();
  tenantHost = await fallbackHost(t);
});
after(async () => t?.close());

const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });

describe('the first visit', () => {
  test('GET / on the API host answers 302 to /console/, with no key', async () => {
    const res = await get('/');
    assert.equal(res.statusCode, 302);
    assert.equal(res.headers.location, '/console/');
    // Only the root redirects (a query too); other paths stay 404, other methods 405.
    assert.equal((await get('/?from=start')).statusCode, 302);
    assert.equal((await get('/consoles')).statusCode, 404);
    assert.equal((await t.app.inject({ method: 'POST', url: '/' })).statusCode, 405);
  });

  test("a tenant domain's root is the visitor plane's, never the console", async () => {
    const res = await get('/', { host: tenantHost });
    assert.notEqual(res.headers.location, '/console/');
    assert.doesNotMatch(res.body, /console\.js/);
  });

  test('the console has an SVG icon, served by the console host and linked from its page', async () => {
    const icon = await get('/console/favicon.svg');
    assert.equal(icon.statusCode, 200);
    assert.match(String(icon.headers['content-type']), /^image\/svg\+xml/);
    assert.equal(icon.headers['x-content-type-options'], 'nosniff');
    assert.ok(icon.headers['content-security-policy'], 'under the console policy');
    assert.match(icon.body, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    assert.doesNotMatch(icon.body, /<script|on[a-z]+=|style=/i, 'no script or inline style in the icon');
    const page = await get('/console/');
    assert.match(page.body, /<link rel="icon" href="\/console\/favicon\.svg" type="image\/svg\+xml">/);
    assert.equal((await get('/console/favicon.svg', { host: tenantHost })).statusCode, 404, 'not on a tenant domain');
  });
});

describe('GET /v0/agent (extension)', () => {
  test('the template generator: no model', async () => {
    const info = ok(await t.req('GET', '/v0/agent'));
    assert.deepEqual(info, { generator: 'template', model: null, worker: false });
  });

  test('needs a key and takes no query parameter', async () => {
    assert.equal((await t.req('GET', '/v0/agent', undefined, { key: null })).status, 401);
    assert.equal((await t.req('GET', '/v0/agent?model=x')).status, 400);
  });

  test('a configured model is named; its key and address are not', async () => {
    const withModel = await startApp({
      AGENT_GENERATOR: 'openai',
      AGENT_OPENAI_MODEL: 'llama-3.1-8b',
      AGENT_OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      AGENT_OPENAI_API_KEY: 'sk-secret-never-shown',
    });
    try {
      const res = await withModel.req('GET', '/v0/agent');
      assert.deepEqual(ok(res), { generator: 'openai', model: 'llama-3.1-8b', worker: false });
      assert.doesNotMatch(res.text, /sk-secret|127\.0\.0\.1/);
    } finally {
      await withModel.close();
    }
  });
});
