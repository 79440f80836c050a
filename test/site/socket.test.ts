import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { startApp, verifiedDomain, type Json, type TestApp } from '../helpers.js';
import { audienceOf, fallbackHost, link, publishedPage, unique } from './serve-helpers.js';

// The visitor plane over a real socket: document, 304, lead form (no JavaScript), thank-you.

let t: TestApp;
let host: string;
let port: number;
before(async () => {
  t = await startApp();
  host = await fallbackHost(t);
  port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
});
after(async () => {
  await t.close();
});

function request(method: string, path: string, headers: Record<string, string> = {}, body?: string, onHost = host) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers: { host: onHost, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('over HTTP', () => {
  test('a visit: the document, a 304, a lead form posted as a browser without JavaScript would, the thank-you', async () => {
    const page = await publishedPage(t, { actions: [{ purpose: 'lead', buttonTitle: 'Send', actionType: 'form', url: '' }] });
    const audience = await audienceOf(t, page.pageId, { customName: 'Socket' });
    const path = unique('socket');
    await link(t, path, { targetType: 'audience', audienceId: audience.audienceId });
    const first = await request('GET', path);
    assert.equal(first.status, 200);
    assert.equal(first.headers['cache-control'], 'no-cache');
    const etag = String(first.headers.etag);
    assert.equal((await request('GET', path, { 'if-none-match': etag })).status, 304);
    const form = /<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/.exec(first.body);
    assert.ok(form);
    const fields = new URLSearchParams();
    for (const [, name, value] of (form[2] ?? '').matchAll(/<input type="[^"]+" name="([^"]+)" value="([^"]*)"/g))
      fields.set(name ?? '', value ?? '');
    fields.set('name', 'Sam');
    fields.set('email', 'sam@example.com');
    const posted = await request('POST', form[1] ?? '', { 'content-type': 'application/x-www-form-urlencoded' }, fields.toString());
    assert.equal(posted.status, 303);
    // The confirmation's fragment is the browser's to scroll to: a request target never carries it.
    const back = new URL(String(posted.headers.location), `http://${host}`);
    assert.match(back.hash, /^#pam-thanks-action_/);
    const thanks = await request('GET', `${back.pathname}${back.search}`);
    assert.equal(thanks.status, 200);
    assert.match(thanks.body, /Thank you/);
    const sessions = (await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions`)).body.items as Json[];
    assert.equal(sessions.length, 1);
    assert.equal(sessions[0].formSubmissionEmail, 'sam@example.com');
  });

  test('a path that is not valid percent-encoding, once the host is known at the door: an HTML 400', async () => {
    await request('GET', '/warm-up');
    const malformed = await request('GET', '/%E0%A4%A');
    assert.equal(malformed.status, 400);
    assert.match(String(malformed.headers['content-type']), /^text\/html/);
    assert.equal(malformed.headers['x-content-type-options'], 'nosniff');
  });

  test('a path that is not valid percent-encoding on a host met for the first time: an HTML 400; on the API host, problem+json', async () => {
    const fresh = `fresh-${Date.now()}.example.com`;
    await verifiedDomain(t, fresh);
    // No request has named this host yet: the door looks it up before anything reads the request.
    const malformed = await request('GET', '/%E0%A4%A', {}, undefined, fresh);
    assert.equal(malformed.status, 400);
    assert.match(String(malformed.headers['content-type']), /^text\/html/);
    const onApi = await request('GET', '/v0/persons/%E0%A4%A', { 'x-api-key': t.key }, undefined, `127.0.0.1:${port}`);
    assert.equal(onApi.status, 400);
    assert.match(String(onApi.headers['content-type']), /^application\/problem\+json/);
  });
});
