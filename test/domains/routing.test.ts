import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { expectProblem, type Json, ok, startApp, type TestApp } from '../helpers.js';

// Issue 38: custom domains as people paste them, and the record that sends visitors (SITE_CNAME_TARGET).

let t: TestApp;
let byIp: TestApp;
let unset: TestApp;
before(async () => {
  t = await startApp({ SITE_CNAME_TARGET: 'Proxy.PAM.example.' });
  byIp = await startApp({ SITE_CNAME_TARGET: '203.0.113.7' });
  unset = await startApp();
});
after(async () => {
  await Promise.all([t.close(), byIp.close(), unset.close()]);
});

const add = (app: TestApp, hostname: unknown) => app.req('POST', '/v0/tenant_domains', { hostname });

describe('the hostname as pasted', () => {
  test('https://go.acme.com/ is go.acme.com; so is https://GO.acme.com and a trailing dot', async () => {
    assert.equal(ok(await add(t, 'https://go.acme.com/'), 201).hostname, 'go.acme.com');
    assert.equal(ok(await add(t, 'https://Shop.Acme.com'), 201).hostname, 'shop.acme.com');
    assert.equal(ok(await add(t, 'https://www.acme.com./'), 201).hostname, 'www.acme.com');
    assert.equal(ok(await add(t, ' news.acme.com '), 201).hostname, 'news.acme.com');
    // The same name pasted again is the same claim: 409, as typed bare.
    expectProblem(await add(t, 'https://go.acme.com/'), 409, 'conflict', ['/hostname']);
  });

  test('a path, query, port, credentials or another scheme is 400 at /hostname saying "a host name, like go.acme.com"', async () => {
    const before = ok(await t.req('GET', '/v0/tenant_domains')).totalCount;
    for (const bad of [
      'https://go.acme.com/pricing',
      'https://go.acme.com//',
      'https://go.acme.com/?x=1',
      'https://go.acme.com/#top',
      'https://go.acme.com:8443/',
      'https://user:pw@go.acme.com/',
      'http://go.acme.com/',
      'ftp://go.acme.com/',
      'javascript://go.acme.com/%0aalert(1)',
      'go.acme.com/pricing',
      'go.acme.com?x',
      'go.acme.com#x',
      'go.acme.com:443',
      'user@go.acme.com',
      'https://',
      'https:///go.acme.com',
    ]) {
      const res = await add(t, bad);
      expectProblem(res, 400, 'validation_failed', ['/hostname']);
      assert.match(res.body.errors[0].message, /a host name, like go\.acme\.com/, bad);
    }
    // A URL whose host the parser rewrites (an international name) is refused like the bare name.
    expectProblem(await add(t, 'https://bücher.example/'), 400, 'validation_failed', ['/hostname']);
    // The host's own rules still hold through a URL.
    expectProblem(await add(t, 'https://127.0.0.1/'), 400, 'validation_failed', ['/hostname']);
    expectProblem(await add(t, 'https://localhost/'), 400, 'validation_failed', ['/hostname']);
    assert.equal(ok(await t.req('GET', '/v0/tenant_domains')).totalCount, before);
  });

  test('the 253-character bound holds on the name as typed', async () => {
    const name = (n: number) => `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(n)}`;
    assert.equal(ok(await add(t, name(61)), 201).hostname.length, 253);
    expectProblem(await add(t, name(62)), 400, 'validation_failed', ['/hostname']);
  });
});

describe('routing: the record that sends visitors', () => {
  test('SITE_CNAME_TARGET a DNS name: a CNAME to it (lowercased, no trailing dot), on create, list and verify answers', async () => {
    const made = ok(await add(t, 'lp.acme.com'), 201);
    assert.deepEqual(made.verification.recordType, 'TXT');
    const { instructions, ...record } = made.routing as Json;
    assert.deepEqual(record, { recordType: 'CNAME', name: 'lp.acme.com', value: 'proxy.pam.example' });
    assert.match(instructions, /CNAME record for lp\.acme\.com with the value proxy\.pam\.example/);
    const listed = (ok(await t.req('GET', '/v0/tenant_domains?limit=100')).items as Json[]).find((d) => d.hostname === 'lp.acme.com');
    assert.deepEqual(listed?.routing, made.routing);
  });

  test('the fallback domain has no routing record: the service names it', async () => {
    const items = ok(await t.req('GET', '/v0/tenant_domains?limit=100')).items as Json[];
    const fallback = items.find((d) => d.isFallback);
    assert.ok(fallback);
    assert.equal(fallback.routing, null);
  });

  test('SITE_CNAME_TARGET an IPv4 address: an A record', async () => {
    const { routing } = ok(await add(byIp, 'ip.acme.com'), 201);
    assert.equal(routing.recordType, 'A');
    assert.equal(routing.value, '203.0.113.7');
  });

  test('SITE_CNAME_TARGET unset: value null, "point this name at your proxy"', async () => {
    const { routing } = ok(await add(unset, 'proxy.acme.com'), 201);
    assert.equal(routing.recordType, 'CNAME');
    assert.equal(routing.name, 'proxy.acme.com');
    assert.equal(routing.value, null);
    assert.match(routing.instructions, /^Point this name at your proxy/);
  });

  test('SITE_CNAME_TARGET is validated at start-up, naming the variable', () => {
    assert.equal(loadConfig({}).siteCnameTarget, undefined);
    assert.equal(loadConfig({ SITE_CNAME_TARGET: 'edge.example.net' }).siteCnameTarget, 'edge.example.net');
    assert.equal(loadConfig({ SITE_CNAME_TARGET: '2001:db8::1' }).siteCnameTarget, '2001:db8::1');
    for (const value of ['https://edge.example.net', 'edge', 'edge.example.net/x', '-x.example.net', 'a b.example', '*.example.net']) {
      assert.throws(
        () => loadConfig({ SITE_CNAME_TARGET: value }),
        (err: unknown) => err instanceof ConfigError && /SITE_CNAME_TARGET/.test(err.message),
        value,
      );
    }
  });
});
