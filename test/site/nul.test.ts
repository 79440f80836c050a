import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { USER_AGENT } from '../browser.js';
import { startApp, type TestApp } from '../helpers.js';
import { audienceOf, fallbackHost, link, publishedPage, unique, visit } from '../site/serve-helpers.js';

// Issue 36, part 6: a NUL byte sent on the visitor plane was a 500 on PostgreSQL (which cannot
// store or compare it in text), logged with its stack trace (what the plane does with every 5xx).
// It must be refused on both databases alike: a 400, or the 404 page for a path, never a 5xx.

let t: TestApp;
let host: string;
before(async () => {
  t = await startApp();
  host = await fallbackHost(t);
});
after(async () => {
  await t.close();
});

/** The document's view token and the form's hidden fields. */
async function served(path: string) {
  const res = await visit(t, host, path, { headers: { 'user-agent': USER_AGENT } });
  assert.equal(res.statusCode, 200, res.body);
  const hidden = (name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(res.body)?.[1] ?? '';
  return { token: JSON.parse(/id="pam-view">([^<]*)</.exec(res.body)?.[1] ?? '{}').token as string, hidden };
}

describe('a NUL byte on the visitor plane', () => {
  test('nul: a path holding %00 is the 404 page, never a 5xx', async () => {
    for (const path of ['/%00', '/a%00b', `${unique('n')}%00/key`, '/%00/%00', '/_pam/files/%00']) {
      for (const method of ['GET', 'HEAD']) {
        const res = await visit(t, host, path, { method });
        assert.ok(res.statusCode === 404 || res.statusCode === 400, `${method} ${path}: ${res.statusCode} ${res.body.slice(0, 200)}`);
      }
    }
  });

  test("nul: a form's path, name or email holding NUL is a 400, never a 5xx", async () => {
    const page = await publishedPage(t, { actions: [{ purpose: 'lead', buttonTitle: 'Send', actionType: 'form', url: '' }] });
    const path = unique('nf');
    await link(t, path, { targetType: 'audience', audienceId: (await audienceOf(t, page.pageId)).audienceId });
    const post = async (field: string | undefined, address: string) => {
      const { hidden } = await served(path);
      const fields: Record<string, string> = {
        token: hidden('token'),
        action: hidden('action'),
        path: hidden('path'),
        name: 'A visitor',
        email: 'visitor@example.com',
        phone: '',
      };
      if (field) fields[field] = `${fields[field]}\0x`;
      return visit(t, host, '/_pam/forms', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams(fields).toString(),
        remoteAddress: address,
      });
    };
    // The same form without a NUL is taken: each refusal below is the NUL's.
    const fine = await post(undefined, '198.51.100.200');
    assert.equal(fine.statusCode, 303, fine.body);
    for (const field of ['path', 'name', 'email', 'phone', 'token', 'action']) {
      const res = await post(field, `198.51.100.${field.length + 10}`);
      assert.equal(res.statusCode, 400, `${field}: ${res.statusCode} ${res.body.slice(0, 200)}`);
    }
  });

  test('nul: a collector report whose strings hold NUL is a 400, never a 5xx', async () => {
    const page = await publishedPage(t);
    const path = unique('nc');
    await link(t, path, { targetType: 'audience', audienceId: (await audienceOf(t, page.pageId)).audienceId });
    const strings = (nul: string) => [
      { utmSource: nul },
      { utmCampaign: nul },
      { referrer: `https://ref.example/${nul}` },
      { events: [[nul, 1, 1]] },
      { actions: [[nul, 1]] },
    ];
    let address = 1;
    const { token: fine } = await served(path);
    const taken = await visit(t, host, '/_pam/collect', {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'user-agent': USER_AGENT },
      payload: JSON.stringify({ token: fine, visibleMs: 1000, scroll: 10, clicks: 0, questions: 0, conversions: 0, ...strings('ab')[3] }),
      remoteAddress: '203.0.113.200',
    });
    assert.equal(taken.statusCode, 204, taken.body);
    for (const extra of strings('a\0b')) {
      const { token } = await served(path);
      const res = await visit(t, host, '/_pam/collect', {
        method: 'POST',
        headers: { 'content-type': 'text/plain', 'user-agent': USER_AGENT },
        payload: JSON.stringify({ token, visibleMs: 1000, scroll: 10, clicks: 0, questions: 0, conversions: 0, ...extra }),
        remoteAddress: `203.0.113.${address++}`,
      });
      assert.equal(res.statusCode, 400, `${JSON.stringify(extra)}: ${res.statusCode} ${res.body}`);
    }
    // The token itself.
    const res = await visit(t, host, '/_pam/collect', {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'user-agent': USER_AGENT },
      payload: JSON.stringify({ token: 'a\0b', visibleMs: 1, scroll: 1, clicks: 0, questions: 0, conversions: 0 }),
      remoteAddress: '203.0.113.99',
    });
    assert.equal(res.statusCode, 400);
  });
});
