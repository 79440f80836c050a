import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Json, ok, startApp, type TestApp } from '../helpers.js';
import { audienceOf, fallbackHost, link, publishedPage, unique, visit } from '../site/serve-helpers.js';
import { type Asked, company, fakeProvider, PROVIDER_TOKEN, type Reply } from './fake-provider.js';

// Issue 45 §2: nothing leaves for a visitor or a lead who asked (Sec-GPC), and nothing leaves for
// no reason. The enrichment provider is a node:http server that counts every request it gets.

const TIMEOUT_MS = 1000;

/** 203.x and acme-… domains: a company; anything else: none. */
function answer(asked: Asked): Reply {
  if (asked.ip?.startsWith('203.')) return { status: 200, body: company('Initech', 'initech.example') };
  if (asked.domain?.startsWith('acme')) return { status: 200, body: company('Acme GmbH', 'acme.example') };
  return { status: 200, body: { company: null } };
}

let provider: Awaited<ReturnType<typeof fakeProvider>>;
let t: TestApp;
before(async () => {
  provider = await fakeProvider(answer);
  t = await startApp({ ENRICHMENT_URL: provider.url, ENRICHMENT_TOKEN: PROVIDER_TOKEN, ENRICHMENT_TIMEOUT_MS: String(TIMEOUT_MS) });
});
after(async () => {
  await t.close();
  await provider.close();
});

const content = (headline: string, subheadline = '') => ({ headline, subheadline, sections: [] });
const h1 = (html: string) => /<h1>(.*?)<\/h1>/s.exec(html)?.[1] ?? '';
const askedFor = (prefix: string) => provider.asked.filter((a) => a.ip?.startsWith(prefix)).length;
const GPC = { 'sec-gpc': '1' };

async function segment(pageId: string, headline: string, rules: unknown, key: string, priority = 1) {
  const a = await audienceOf(t, pageId, { customName: headline, rules, priority }, key);
  const base = `/v0/pages/${pageId}/audiences/${a.audienceId}/versions`;
  const v = ok(await t.req('POST', base, { content: content(headline) }, { key }), 201);
  ok(await t.req('PATCH', `${base}/${v.versionId}`, { status: 'published' }, { key }));
  return a;
}

const software = { match: 'all', conditions: [{ field: 'company.industry', operator: 'equals', value: 'software' }] };

async function see(host: string, path: string, remoteAddress: string, headers: Record<string, string> = {}) {
  const res = await visit(t, host, path, { remoteAddress, headers });
  assert.equal(res.statusCode, 200, res.body);
  return h1(res.body);
}

/** A published page whose headline reads the company ({{company.name}}), linked at a fresh path. */
async function tokenPage(key: string) {
  const page = await publishedPage(t, { content: content('Hello {{company.name | there}}') }, key);
  const path = unique('token');
  await link(t, path, { targetType: 'page', pageId: page.pageId }, key);
  return path;
}

describe("a visitor's address leaves only while a published page has a live company segment", () => {
  test('a company segment on a draft page, an archived segment, a deleted page: no question; published and live: asked', async () => {
    const { key } = await t.newTenant('Draft segments');
    const host = await fallbackHost(t, key);
    const path = await tokenPage(key);

    // Only a draft page has a company segment: a fresh render of another page asks nothing.
    const draft = ok(
      await t.req(
        'POST',
        '/v0/pages',
        { name: 'Draft', title: 'Draft', pageContext: 'ctx', pageType: 'inbound', status: 'draft', content: content('D') },
        { key },
      ),
      201,
    );
    await segment(draft.pageId, 'Software', software, key);
    assert.equal(await see(host, path, '203.0.130.1'), 'Hello there');
    assert.equal(askedFor('203.0.130.'), 0, 'a draft page is no reason');

    // A published page with an archived company segment: no reason either.
    const archived = await publishedPage(t, { content: content('Everyone') }, key);
    const gone = await segment(archived.pageId, 'Software', software, key);
    ok(await t.req('POST', `/v0/pages/${archived.pageId}/audiences/${gone.audienceId}/archive`, {}, { key }));
    assert.equal(await see(host, path, '203.0.131.1'), 'Hello there');
    assert.equal(askedFor('203.0.131.'), 0, 'an archived segment is no reason');

    // Published and live: the address goes, and names the company.
    const live = await publishedPage(t, { content: content('Everyone') }, key);
    await segment(live.pageId, 'Software', software, key);
    assert.equal(await see(host, path, '203.0.132.1'), 'Hello Initech');
    assert.equal(askedFor('203.0.132.'), 1);

    // That page deleted: no reason any more.
    assert.equal((await t.req('DELETE', `/v0/pages/${live.pageId}`, undefined, { key })).status, 204);
    assert.equal(await see(host, path, '203.0.133.1'), 'Hello there');
    assert.equal(askedFor('203.0.133.'), 0, 'a deleted page is no reason');

    // The draft published: a reason again.
    ok(await t.req('PATCH', `/v0/pages/${draft.pageId}`, { status: 'published' }, { key }));
    assert.equal(await see(host, path, '203.0.134.1'), 'Hello Initech');
    assert.equal(askedFor('203.0.134.'), 1);
    assert.deepEqual(provider.refused, []);
  });

  test('a visitor with Sec-GPC: 1 is never looked up and never matches a company.* condition', async () => {
    const { key } = await t.newTenant('GPC visitors');
    const host = await fallbackHost(t, key);
    const page = await publishedPage(t, { content: content('Everyone') }, key);
    await segment(page.pageId, 'Software', software, key, 2);
    // A condition a visit without a company would match: not_equals, and exists false.
    const notInitech = { match: 'all', conditions: [{ field: 'company.domain', operator: 'not_equals', value: 'initech.example' }] };
    await segment(page.pageId, 'Not Initech', notInitech, key, 1);
    const path = unique('gpc');
    await link(t, path, { targetType: 'page', pageId: page.pageId }, key);
    const tokens = await tokenPage(key);

    // Without the header: asked, and each segment matches as its rules say.
    assert.equal(await see(host, path, '203.0.140.1'), 'Software');
    assert.equal(await see(host, path, '198.51.140.1'), 'Not Initech');
    const before = provider.asked.length;

    // With it: not asked (a network not yet known, so the cache cannot hide a question), and no
    // company.* condition matches, whatever its operator.
    assert.equal(await see(host, path, '203.0.141.1', GPC), 'Everyone');
    assert.equal(await see(host, path, '198.51.141.1', GPC), 'Everyone');
    assert.equal(await see(host, tokens, '203.0.142.1', GPC), 'Hello there');
    // A network already known is not read from the cache either.
    assert.equal(await see(host, path, '203.0.140.2', GPC), 'Everyone');
    assert.equal(provider.asked.length, before, JSON.stringify(provider.asked.slice(before)));

    // `Sec-GPC: 0` is not the signal.
    assert.equal(await see(host, path, '203.0.143.1', { 'sec-gpc': '0' }), 'Software');
  });
});

describe('a lead sent with Sec-GPC: 1', () => {
  const FORM_ACTION = { purpose: 'lead', buttonTitle: 'Send', actionType: 'form', url: '' };

  async function submit(host: string, path: string, fields: Record<string, string>, headers: Record<string, string>, address: string) {
    const html = (await visit(t, host, path)).body as string;
    const hidden = (name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html)?.[1] ?? '';
    const res = await visit(t, host, '/_pam/forms', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: new URLSearchParams({ token: hidden('token'), action: hidden('action'), path: hidden('path'), ...fields }).toString(),
      remoteAddress: address,
    });
    assert.equal(res.statusCode, 303, res.body);
  }

  const eventsOf = async (type: string, key: string) =>
    ok(await t.req('GET', `/v0/events?type=${type}&limit=100`, undefined, { key })).items.map((e: Json) => e.payload.data) as Json[];

  test('is never enriched: form.enrichment_failed not_shared, no account, and no request to the provider', async () => {
    const { key } = await t.newTenant('GPC leads');
    const host = await fallbackHost(t, key);
    const page = await publishedPage(t, { actions: [FORM_ACTION] }, key);
    const a = await audienceOf(t, page.pageId, {}, key);
    const path = unique('lead');
    await link(t, path, { targetType: 'audience', audienceId: a.audienceId }, key);
    const domain = `acme-${Date.now().toString(36)}.example`;

    const before = provider.asked.length;
    await submit(host, path, { name: 'Private', email: `private@${domain}` }, GPC, '198.51.150.1');
    assert.equal(provider.asked.length, before, 'nothing of the lead reached the provider');
    const submitted = (await eventsOf('form.submitted', key)).find((d) => d.email === `private@${domain}`);
    assert.ok(submitted);
    const failed = (await eventsOf('form.enrichment_failed', key)).filter((d) => d.formSubmissionId === submitted.formSubmissionId);
    assert.deepEqual(failed, [{ formSubmissionId: submitted.formSubmissionId, personId: submitted.personId, reason: 'not_shared' }]);
    assert.deepEqual(await eventsOf('form.enriched', key), []);
    assert.deepEqual(ok(await t.req('GET', '/v0/accounts/search', undefined, { key })).items, []);

    // The same lead without the header is enriched.
    await submit(host, path, { name: 'Plain', email: `plain@${domain}` }, { 'sec-gpc': '0' }, '198.51.150.2');
    assert.equal(provider.asked.length, before + 1);
    assert.equal((await eventsOf('form.enriched', key)).length, 1);
  });
});
