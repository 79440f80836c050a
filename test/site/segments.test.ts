import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Company } from '../../src/enrichment/visit.js';
import { ok, startApp, type Json, type TestApp } from '../helpers.js';
import { audienceOf, fallbackHost, link, publishedPage, unique, visit } from './serve-helpers.js';

// Which version a visitor sees (issue 39): segments matched from the visit, visit tokens, caches, headers.

let t: TestApp;
let host: string;
const lookups: string[] = [];
const ACME: Company = { name: 'Acme & Sons', domain: 'acme.com', industry: 'Software', employees: 250, country: 'DE' };
before(async () => {
  // The enrichment seam (src/enrichment/visit.ts): the provider itself is tested on its own side.
  t = await startApp(
    {},
    {
      companyLookup: async (_tenantId, address) => {
        lookups.push(address);
        return address === '85.214.132.117' ? ACME : null;
      },
    },
  );
  host = await fallbackHost(t);
});
after(async () => {
  await t.close();
});

const cond = (field: string, operator: string, value?: unknown) => ({ field, operator, ...(value === undefined ? {} : { value }) });
const all = (...conditions: unknown[]) => ({ match: 'all', conditions });
const content = (headline: string) => ({ headline, subheadline: '', sections: [] });

/** Publishes `headline` as the audience's content. */
async function publish(pageId: string, audienceId: string, headline: string) {
  const base = `/v0/pages/${pageId}/audiences/${audienceId}/versions`;
  const v = ok(await t.req('POST', base, { content: content(headline) }), 201);
  ok(await t.req('PATCH', `${base}/${v.versionId}`, { status: 'published' }));
}

async function segment(pageId: string, headline: string, rules: unknown, priority = 0, extra: Record<string, unknown> = {}) {
  const a = await audienceOf(t, pageId, { customName: headline, rules, priority, ...extra });
  await publish(pageId, a.audienceId, headline);
  return a;
}

const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const tokenIn = (html: string) => /\{"token":"([^"]+)"\}/.exec(html)?.[1] ?? '';
/** The visit's first report, from the same address and browser as its page view. */
async function report(html: string, who: { remoteAddress?: string; headers?: Record<string, string> }) {
  const res = await visit(t, host, '/_pam/collect', {
    method: 'POST',
    ...(who.remoteAddress ? { remoteAddress: who.remoteAddress } : {}),
    headers: { ...who.headers, 'content-type': 'text/plain;charset=UTF-8' },
    payload: JSON.stringify({ token: tokenIn(html), visibleMs: 0, scroll: 0, clicks: 0, questions: 0, conversions: 0 }),
  });
  assert.equal(res.statusCode, 204, res.body);
}

const h1 = (html: string) => /<h1>(.*?)<\/h1>/s.exec(html)?.[1] ?? '';
const see = async (path: string, init: Parameters<typeof visit>[3] = {}) => {
  const res = await visit(t, host, path, init);
  assert.equal(res.statusCode, 200, res.body);
  return res;
};

describe('which version a visitor sees', () => {
  test('precedence: a person link wins; then the highest-priority matching segment (ties oldest); else home; else the page', async () => {
    const page = await publishedPage(t, { content: content('Everyone') });
    const path = unique('seg');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    assert.equal(h1((await see(path)).body), 'Everyone', 'no audience at all: the page');
    const home = await audienceOf(t, page.pageId, { flags: ['home_page'] });
    await publish(page.pageId, home.audienceId, 'Home');
    const older = await segment(page.pageId, 'LinkedIn older', all(cond('utm.source', 'equals', 'linkedin')), 5);
    await segment(page.pageId, 'LinkedIn newer', all(cond('utm.source', 'equals', 'LinkedIn')), 5);
    await segment(page.pageId, 'Low', all(cond('utm.source', 'exists')), 1);
    await segment(page.pageId, 'High DE', all(cond('utm.source', 'exists'), cond('visitor.country', 'equals', 'de')), 9);
    assert.equal(h1((await see(path)).body), 'Home', 'no segment matches: home');
    assert.equal(h1((await see(`${path}?utm_source=LINKEDIN`)).body), 'LinkedIn older', 'ties: the oldest, case-insensitive');
    assert.equal(h1((await see(`${path}?utm_source=x`)).body), 'Low');
    assert.equal(h1((await see(`${path}?utm_source=linkedin`, { remoteAddress: '85.214.132.117' })).body), 'High DE', 'priority first');
    // A person's own link always wins, whatever the visit says.
    const person = ok(await t.req('POST', '/v0/persons', { name: 'Ann Lee', email: `ann${Date.now()}@lee.io` }), 201);
    const personal = await audienceOf(t, page.pageId, { personId: person.personId });
    await publish(page.pageId, personal.audienceId, 'For Ann');
    const personPath = unique('ann');
    await link(t, personPath, { targetType: 'audience', audienceId: personal.audienceId });
    assert.equal(h1((await see(`${personPath}?utm_source=linkedin`)).body), 'For Ann');
    // An archived segment no longer matches; the view token names the matched audience.
    ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences/${older.audienceId}/archive`, {}));
    assert.equal(h1((await see(`${path}?utm_source=linkedin`)).body), 'LinkedIn newer');
  });

  test('a rule change shows on the very next request', async () => {
    const page = await publishedPage(t, { content: content('Everyone') });
    const path = unique('fresh');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    const a = await segment(page.pageId, 'Google', all(cond('utm.source', 'equals', 'google')));
    assert.equal(h1((await see(`${path}?utm_source=google`)).body), 'Google');
    assert.equal(h1((await see(`${path}?utm_source=bing`)).body), 'Everyone');
    ok(await t.req('PATCH', `/v0/pages/${page.pageId}/audiences/${a.audienceId}`, { rules: all(cond('utm.source', 'equals', 'bing')) }));
    assert.equal(h1((await see(`${path}?utm_source=bing`)).body), 'Google', 'the new rule at once');
    assert.equal(h1((await see(`${path}?utm_source=google`)).body), 'Everyone');
    const b = await segment(page.pageId, 'Bing first', all(cond('utm.source', 'equals', 'bing')), 3);
    assert.equal(h1((await see(`${path}?utm_source=bing`)).body), 'Bing first', 'a new segment at once');
    ok(await t.req('PATCH', `/v0/pages/${page.pageId}/audiences/${b.audienceId}`, { priority: 0 }));
    assert.equal(h1((await see(`${path}?utm_source=bing`)).body), 'Google', 'a priority change at once (tie: oldest)');
  });

  test('visitor fields: device, language, returning; referrer channel from utm_source without medium', async () => {
    const page = await publishedPage(t, { content: content('Everyone') });
    const path = unique('vis');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    await segment(page.pageId, 'Mobile', all(cond('visitor.device', 'equals', 'mobile')), 4);
    await segment(page.pageId, 'German', all(cond('visitor.language', 'starts_with', 'de')), 3);
    await segment(page.pageId, 'Social', all(cond('referrer.channel', 'equals', 'social')), 2);
    await segment(page.pageId, 'Big company', all(cond('company.employees', 'gte', 250), cond('company.employees', 'lte', 250)), 1);
    const iphone = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148';
    assert.equal(h1((await see(path, { headers: { 'user-agent': iphone } })).body), 'Mobile');
    assert.equal(h1((await see(path, { headers: { 'accept-language': 'de-DE,de;q=0.9,en;q=0.5' } })).body), 'German');
    assert.equal(h1((await see(path, { headers: { 'accept-language': 'en-US,de;q=0.9' } })).body), 'Everyone');
    assert.equal(h1((await see(`${path}?utm_source=linkedin`)).body), 'Social', 'linkedin without medium: social');
    // GA4 files a social site's source under Organic Social whatever its medium, and the channel follows (issue 45).
    assert.equal(h1((await see(`${path}?utm_source=linkedin&utm_medium=newsletter`)).body), 'Social');
    assert.equal(h1((await see(`${path}?utm_source=newsletter&utm_medium=print`)).body), 'Everyone');
    assert.equal(h1((await see(path, { headers: { referer: 'https://www.facebook.com/' } })).body), 'Social');
    lookups.length = 0;
    assert.equal(h1((await see(path, { remoteAddress: '85.214.132.117' })).body), 'Big company', 'employees just inside both bounds');
    assert.equal(h1((await see(path, { remoteAddress: '8.8.8.8' })).body), 'Everyone');
    assert.deepEqual(lookups, ['85.214.132.117', '8.8.8.8'], 'the provider is asked per visit while the tenant reads a company');
  });

  test('fifty segments on a page: each visit its first match in priority, whichever condition names it', async () => {
    // Segments that require a value are matched by it without trying every segment (audiences/rules.ts,
    // indexRules): the answer must be the one trying them in turn would give.
    const page = await publishedPage(t, { content: content('Everyone') });
    const path = unique('fifty');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    for (let k = 0; k < 46; k++) await segment(page.pageId, `S${k}`, all(cond('utm.source', 'equals', `s${k}`)), 10 + k);
    // Above them all, but only with a campaign too: s7 without it falls through to S7.
    await segment(page.pageId, 'S7 spring', all(cond('utm.source', 'equals', 's7'), cond('utm.campaign', 'equals', 'Spring')), 100);
    // Any of two: not narrowed by one of them.
    await segment(
      page.pageId,
      'Either',
      { match: 'any', conditions: [cond('utm.source', 'equals', 's3'), cond('utm.medium', 'equals', 'cpc')] },
      30,
    );
    // A string equal to a number's value; and a company's name, never matched for a visitor who sent Sec-GPC.
    await segment(page.pageId, 'Employees', all(cond('company.employees', 'equals', '250')), 5);
    await segment(page.pageId, 'Acme', all(cond('company.name', 'equals', 'acme & sons')), 6);
    assert.equal(h1((await see(`${path}?utm_source=s0`)).body), 'S0');
    assert.equal(h1((await see(`${path}?utm_source=S45`)).body), 'S45', 'case-insensitive');
    assert.equal(h1((await see(`${path}?utm_source=s7`)).body), 'S7');
    assert.equal(h1((await see(`${path}?utm_source=s7&utm_campaign=spring`)).body), 'S7 spring');
    assert.equal(h1((await see(`${path}?utm_source=s3`)).body), 'Either', 'priority 30 above S3 (13)');
    assert.equal(h1((await see(`${path}?utm_source=s25`)).body), 'S25', 'priority 35 above Either (30)');
    assert.equal(h1((await see(`${path}?utm_source=s2&utm_medium=cpc`)).body), 'Either');
    assert.equal(h1((await see(`${path}?utm_source=s46`)).body), 'Everyone', 'no such segment');
    assert.equal(h1((await see(`${path}?utm_source=`)).body), 'Everyone', 'an empty value');
    const acme = { remoteAddress: '85.214.132.117' };
    assert.equal(h1((await see(path, acme)).body), 'Acme', 'priority 6 above Employees (5)');
    assert.equal(h1((await see(path, { ...acme, headers: { 'sec-gpc': '1' } })).body), 'Everyone', 'withheld: neither company segment');
    assert.equal(h1((await see(`${path}?utm_source=s1`, acme)).body), 'S1');
  });

  test('visitor.returning: seen today before', async () => {
    const page = await publishedPage(t, { content: content('Everyone') });
    const path = unique('ret');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    await segment(page.pageId, 'Back', all(cond('visitor.returning', 'equals', true)));
    const home = await audienceOf(t, page.pageId, { flags: ['home_page'] });
    await publish(page.pageId, home.audienceId, 'Home');
    const who = { remoteAddress: '2.16.0.1', headers: { 'user-agent': `${BROWSER} returning/${Date.now()}` } };
    const firstVisit = await see(path, who);
    assert.equal(h1(firstVisit.body), 'Home');
    await report(firstVisit.body, who);
    assert.equal(h1((await see(path, who)).body), 'Back');
  });
});

describe('visit tokens', () => {
  test('filled from the visit, held to the value rule, escaped; the fallback otherwise', async () => {
    const page = await publishedPage(t, {
      content: {
        headline: 'Hi {{utm.source | friend}} {{utm.medium|m}} {{utm.campaign|c}} {{utm.term|t}} {{utm.content|x}}',
        subheadline: 'From {{visitor.country | somewhere}} at {{company.name | your company}} in {{company.industry | business}}',
        sections: [{ heading: '{{query.ref | nobody}}', body: 'Body {{query.ref | nobody}} and {{query.my-param | none}}' }],
      },
    });
    // A company token asks the provider only while a segment of the tenant reads a company: one does (above).
    const path = unique('tok');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    const plain = await see(path);
    assert.equal(h1(plain.body), 'Hi friend m c t x');
    assert.match(plain.body, /From somewhere at your company in business/);
    const filled = await see(
      `${path}?utm_source=Linked%20In&utm_medium=cpc&utm_campaign=Q4-launch&utm_term=A%26B%27s&utm_content=v.2,x&ref=Ann&my-param=ok`,
      { remoteAddress: '85.214.132.117' },
    );
    assert.equal(h1(filled.body), 'Hi Linked In cpc Q4-launch A&amp;B&#39;s v.2,x');
    assert.match(filled.body, /From Germany at Acme &amp; Sons in Software/);
    assert.match(filled.body, /<h2>Ann<\/h2>/);
    assert.match(filled.body, /Body Ann and ok/);
    // Sixty characters are used; sixty-one take the fallback.
    const sixty = 'a'.repeat(60);
    assert.equal(h1((await see(`${path}?utm_source=${sixty}`)).body), `Hi ${sixty} m c t x`);
    assert.equal(h1((await see(`${path}?utm_source=${sixty}b`)).body), 'Hi friend m c t x');
    // Letters of any script and digits are letters and digits.
    assert.equal(h1((await see(`${path}?utm_source=${encodeURIComponent('Zürich 2026')}`)).body), 'Hi Zürich 2026 m c t x');
    // Hostile values in every token: the fallback, never markup.
    const hostile = [
      '<script>alert(1)</script>',
      '"><img src=x onerror=alert(1)>',
      '{{person.name}}',
      'a\u0000b',
      '%E0%A4%A',
      'x;y',
      'javascript:alert(1)',
    ];
    for (const bad of hostile) {
      const q = encodeURIComponent(bad);
      const res = await see(
        `${path}?utm_source=${q}&utm_medium=${q}&utm_campaign=${q}&utm_term=${q}&utm_content=${q}&ref=${q}&my-param=${q}`,
      );
      assert.equal(h1(res.body), 'Hi friend m c t x', bad);
      assert.match(res.body, /Body nobody and none/, bad);
      assert.doesNotMatch(res.body, /<script>alert|onerror=alert|<img src=x/, bad);
    }
    const raw = await see(`${path}?utm_term=<b>x</b>`);
    assert.equal(h1(raw.body), 'Hi friend m c t x');
  });

  test('Cache-Control private and a 304 per variant', async () => {
    const page = await publishedPage(t, { content: content('Hi {{utm.source | friend}}') });
    const path = unique('etag');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    const a = await see(`${path}?utm_source=alpha`);
    const b = await see(`${path}?utm_source=beta`);
    assert.equal(a.headers['cache-control'], 'private, no-cache');
    assert.notEqual(a.headers.etag, b.headers.etag);
    const etagA = String(a.headers.etag);
    assert.equal((await visit(t, host, `${path}?utm_source=alpha`, { headers: { 'if-none-match': etagA } })).statusCode, 304);
    const other = await visit(t, host, `${path}?utm_source=beta`, { headers: { 'if-none-match': etagA } });
    assert.equal(other.statusCode, 200);
    assert.equal(h1(other.body), 'Hi beta');
    // A page that depends on nothing of the visit keeps its shared-cacheable answer.
    const still = await publishedPage(t, { content: content('Same for all') });
    const stillPath = unique('same');
    await link(t, stillPath, { targetType: 'page', pageId: still.pageId });
    assert.equal((await see(`${stillPath}?utm_source=x`)).headers['cache-control'], 'no-cache');
    // A page with segments is private even for a visit that matches none.
    const seg = await publishedPage(t, { content: content('Base') });
    const segPath = unique('segp');
    await link(t, segPath, { targetType: 'page', pageId: seg.pageId });
    await segment(seg.pageId, 'S', all(cond('utm.source', 'equals', 's')));
    const none = await see(segPath);
    assert.equal(none.headers['cache-control'], 'private, no-cache');
    const matched = await see(`${segPath}?utm_source=s`);
    assert.notEqual(none.headers.etag, matched.headers.etag);
    assert.equal(
      (await visit(t, host, `${segPath}?utm_source=s`, { headers: { 'if-none-match': String(matched.headers.etag) } })).statusCode,
      304,
    );
    assert.equal((await visit(t, host, segPath, { headers: { 'if-none-match': String(matched.headers.etag) } })).statusCode, 200);
  });

  test('the session records the matched segment', async () => {
    const page = await publishedPage(t, { content: content('Everyone') });
    const path = unique('sess');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    const s = await segment(page.pageId, 'Recorded', all(cond('utm.source', 'equals', 'rec')));
    const res = await see(`${path}?utm_source=rec`, { remoteAddress: '198.51.100.77' });
    await report(res.body, { remoteAddress: '198.51.100.77', headers: { 'user-agent': BROWSER } });
    const sessions = ok(await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions?limit=100`)).items as Json[];
    assert.deepEqual(
      sessions.map((x) => x.audienceId),
      [s.audienceId],
    );
  });
});
