import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, type Json, ok, startApp, type TestApp, toRes } from '../helpers.js';
import { audienceOf, publishedPage } from '../site/serve-helpers.js';

// Issue 46 §7, "preview as a visitor": POST /v0/pages/{page_id}/preview (and the console's frame)
// take a described visit: it chooses the segment a served page would, and fills the visit's tokens.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => t?.close());

const cond = (field: string, operator: string, value: unknown) => ({ field, operator, value });
const all = (...conditions: unknown[]) => ({ match: 'all', conditions });
const content = (headline: string) => ({ headline, subheadline: '', sections: [] });
const h1 = (html: string) => /<h1>(.*?)<\/h1>/s.exec(html)?.[1] ?? '';
const preview = (pageId: string, body: Json) => t.req('POST', `/v0/pages/${pageId}/preview`, body);

async function publish(pageId: string, audienceId: string, headline: string) {
  const base = `/v0/pages/${pageId}/audiences/${audienceId}/versions`;
  const v = ok(await t.req('POST', base, { content: content(headline) }), 201);
  ok(await t.req('PATCH', `${base}/${v.versionId}`, { status: 'published' }));
}
async function segment(pageId: string, headline: string, rules: unknown, priority: number) {
  const a = await audienceOf(t, pageId, { customName: headline, rules, priority });
  await publish(pageId, a.audienceId, headline);
  return a;
}

/** A page with three segments and no home audience, its events counted to show nothing is written. */
async function segmentedPage(home: boolean) {
  const page = await publishedPage(t, { status: 'draft', content: content('The page itself') });
  const spring = await segment(
    page.pageId,
    'Spring for {{company.name | you}} in {{visitor.country | your country}}',
    all(cond('utm.campaign', 'equals', 'spring')),
    3,
  );
  const german = await segment(page.pageId, 'German {{query.ref | direct}}', all(cond('visitor.country', 'equals', 'DE')), 2);
  const phones = await segment(
    page.pageId,
    'Phones in {{company.industry | any trade}}',
    all(cond('visitor.device', 'equals', 'mobile'), cond('company.industry', 'equals', 'Software')),
    1,
  );
  const homeAudience = home ? await audienceOf(t, page.pageId, { customName: 'Home', flags: ['home_page'] }) : undefined;
  if (homeAudience) await publish(page.pageId, homeAudience.audienceId, 'Home for {{utm.source | everyone}}');
  return { page, spring, german, phones, homeAudience };
}

describe('POST /v0/pages/{page_id}/preview with a visit', () => {
  test('the visit chooses the segment a served page would, fills its tokens, names it, and writes nothing', async () => {
    const { page, spring, german, phones } = await segmentedPage(false);
    const events = ok(await t.req('GET', '/v0/events?limit=100')).items.length;

    const bySpring = await preview(page.pageId, {
      visit: { utm: { campaign: 'spring' }, country: 'DE', company: { name: 'Acme & Sons' } },
    });
    assert.equal(bySpring.status, 200, bySpring.text);
    assert.equal(h1(bySpring.text), 'Spring for Acme &amp; Sons in Germany', 'the highest priority first; tokens filled and escaped');
    assert.equal(bySpring.headers['x-pam-audience-id'], spring.audienceId);

    const byCountry = await preview(page.pageId, { visit: { country: 'DE', query: { ref: 'newsletter' } } });
    assert.equal(h1(byCountry.text), 'German newsletter');
    assert.equal(byCountry.headers['x-pam-audience-id'], german.audienceId);

    const byPhone = await preview(page.pageId, { visit: { device: 'mobile', company: { industry: 'Software' } } });
    assert.equal(h1(byPhone.text), 'Phones in Software');
    assert.equal(byPhone.headers['x-pam-audience-id'], phones.audienceId);

    // One condition short of every segment: the page itself, and no header.
    const none = await preview(page.pageId, { visit: { device: 'mobile', utm: { campaign: 'autumn' } } });
    assert.equal(h1(none.text), 'The page itself');
    assert.equal(none.headers['x-pam-audience-id'], undefined);
    // Without a visit the preview is as before: the page, with no segment chosen.
    const plain = await preview(page.pageId, { content: content('Unsaved') });
    assert.equal(h1(plain.text), 'Unsaved');

    assert.equal(ok(await t.req('GET', '/v0/events?limit=100')).items.length, events, 'a preview writes no event');
  });

  test('a visit no segment matches gets the home audience; a value the token rule refuses takes the fallback, escaped', async () => {
    const { page, homeAudience } = await segmentedPage(true);
    const res = await preview(page.pageId, { visit: { utm: { source: 'news letter' } } });
    assert.equal(h1(res.text), 'Home for news letter');
    assert.equal(res.headers['x-pam-audience-id'], homeAudience?.audienceId);
    const hostile = await preview(page.pageId, { visit: { utm: { source: '<script>alert(1)</script>' } } });
    assert.equal(h1(hostile.text), 'Home for everyone');
    assert.ok(!hostile.text.includes('<script>alert'));
    // Unsaved content with a visit: shown in place of what the visit chose, tokens filled.
    const drafted = await preview(page.pageId, { content: content('Draft for {{utm.source | all}}'), visit: { utm: { source: 'ads' } } });
    assert.equal(h1(drafted.text), 'Draft for ads');
  });

  test('bounds: just inside is 200, just outside is 400 at the pointer; a visit with an audience is 400', async () => {
    const { page, spring } = await segmentedPage(false);
    const inside = {
      utm: { source: 's'.repeat(200), medium: 'm', campaign: 'c', term: 't', content: 'x' },
      query: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`${'k'.repeat(38)}${String(i).padStart(2, '0')}`, 'v'.repeat(200)])),
      country: 'ZZ',
      device: 'tablet',
      company: { name: 'n'.repeat(200), domain: 'acme.com', industry: 'i', employees: 10_000_000, country: 'FR' },
    };
    assert.equal((await preview(page.pageId, { visit: inside })).status, 200);
    assert.equal((await preview(page.pageId, { visit: {} })).status, 200);
    const outside: [Json, string][] = [
      [{ utm: { source: 's'.repeat(201) } }, '/visit/utm/source'],
      [{ utm: { source: '' } }, '/visit/utm/source'],
      [{ utm: { id: 'x' } }, '/visit/utm/id'],
      [{ query: { ['k'.repeat(41)]: 'v' } }, `/visit/query/${'k'.repeat(41)}`],
      [{ query: { 'a.b': 'v' } }, '/visit/query/a.b'],
      [{ query: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) }, '/visit/query'],
      [{ query: { ref: 'v'.repeat(201) } }, '/visit/query/ref'],
      [{ country: 'de' }, '/visit/country'],
      [{ country: 'DEU' }, '/visit/country'],
      [{ device: 'watch' }, '/visit/device'],
      [{ company: { employees: 10_000_001 } }, '/visit/company/employees'],
      [{ company: { name: 'x', ceo: 'y' } }, '/visit/company/ceo'],
      [{ referrer: 'x' }, '/visit/referrer'],
    ];
    for (const [visit, pointer] of outside) expectProblem(await preview(page.pageId, { visit }), 400, 'validation_failed', [pointer]);
    expectProblem(await preview(page.pageId, { audienceId: spring.audienceId, visit: {} }), 400, 'validation_failed', ['/audienceId']);
  });
});

describe('POST /previews/{page_id} (the console frame) with a visit', () => {
  const post = async (url: string, draft: Json) => {
    const form = new URLSearchParams({ draft: JSON.stringify(draft) });
    return toRes(
      await t.app.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: form.toString(),
      }),
    );
  };
  const linkOf = async (pageId: string, audienceId?: string) => {
    const issued = ok(await t.req('GET', `/v0/pages/${pageId}/preview_link${audienceId ? `?audienceId=${audienceId}` : ''}`));
    const url = new URL(issued.url);
    return url.pathname + url.search;
  };

  test("the frame shows the visit's segment under the link's policy; a link for an audience with a visit is 400", async () => {
    const { page, spring } = await segmentedPage(false);
    const res = await post(await linkOf(page.pageId), { visit: { utm: { campaign: 'spring' }, country: 'FR' } });
    assert.equal(res.status, 200, res.text);
    assert.equal(h1(res.text), 'Spring for you in France');
    assert.match(String(res.headers['content-security-policy']), /; sandbox$/);
    expectProblem(await post(await linkOf(page.pageId, spring.audienceId), { visit: {} }), 400, 'validation_failed', ['/audienceId']);
  });
});
