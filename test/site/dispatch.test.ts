import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { attest, startApp, type Json, type TestApp } from '../helpers.js';

// Which plane answers: tenant domains get the visitor plane, every other host the API.

let t: TestApp;
let fallback: string;
before(async () => {
  t = await startApp();
  const domains = (await t.req('GET', '/v0/tenant_domains')).body.items as Json[];
  fallback = domains.find((d) => d.isFallback).hostname;
});
after(async () => {
  await t.close();
});

const onHost = (host: string, url: string, method = 'GET') =>
  t.app.inject({ method: method as 'GET', url, headers: { host, 'x-api-key': t.key } });

describe('dispatch by Host', () => {
  test('API routes never answer on a tenant domain, in any case and with a port', async () => {
    for (const host of [fallback, fallback.toUpperCase(), `${fallback}:8080`, `${fallback}.`]) {
      const res = await onHost(host, '/v0/persons');
      assert.equal(res.statusCode, 404, host);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.doesNotMatch(res.body, /person|tenant|Acme/i);
      assert.equal((await onHost(host, '/healthz')).statusCode, 404);
      assert.equal((await onHost(host, '/openapi.json')).statusCode, 404);
    }
  });

  test('every other host gets the API as before', async () => {
    for (const host of ['127.0.0.1:3000', 'localhost', 'api.example.com', `x.${fallback}`]) {
      assert.equal((await onHost(host, '/v0/persons')).statusCode, 200, host);
    }
  });

  test('a custom domain is a tenant domain once verified, and the API again after its removal', async () => {
    const hostname = `go-${Date.now()}.example.com`;
    assert.equal((await onHost(hostname, '/v0/persons')).statusCode, 200);
    const domain = (await t.req('POST', '/v0/tenant_domains', { hostname })).body;
    // Pending: what an unknown host gets.
    assert.equal((await onHost(hostname, '/v0/persons')).statusCode, 200);
    assert.equal((await attest(t, domain.tenantDomainId)).status, 200);
    assert.equal((await onHost(hostname, '/v0/persons')).statusCode, 404);
    assert.equal((await t.req('DELETE', `/v0/tenant_domains/${domain.tenantDomainId}`)).status, 204);
    assert.equal((await onHost(hostname, '/v0/persons')).statusCode, 200);
  });

  test('over a real socket too', async () => {
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = new URL(address);
    const get = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port, path: '/v0/persons', headers: { host, 'x-api-key': t.key } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    // The first request of a host waits for its lookup at the door (site/door.ts); the next ones
    // are known there: both reach the visitor plane, never the API.
    for (let i = 0; i < 3; i++) {
      assert.equal(await get(fallback), 404);
      assert.equal(await get(`127.0.0.1:${port}`), 200);
    }
  });
});
