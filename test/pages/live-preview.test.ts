import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, type Json, ok, startApp, type TestApp, toRes } from '../helpers.js';
import { audienceOf, publishedPage } from '../site/serve-helpers.js';
import { imageAsset } from './layout-fixtures.js';

// Issue 38, "a block editor with a live preview": POST /v0/pages/{page_id}/preview renders unsaved
// content through the served pages' renderer, checked as a PATCH checks it, and writes nothing;
// POST /previews/{page_id} (the console's frame) does the same through a signed preview link.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => t?.close());

const HOSTILE = `"'><script>alert(1)</script><img src=x onerror=alert(2)>`;
const LINK = { purpose: 'demo', buttonTitle: 'Book a demo', actionType: 'link', url: 'https://example.com/demo' };
const content = (fields: Json = {}) => ({ headline: 'Draft headline', subheadline: '', sections: [], ...fields });
const preview = (pageId: string, body: Json, key?: string) => t.req('POST', `/v0/pages/${pageId}/preview`, body, key ? { key } : {});

/** What a write would change: the page as read and the tenant's events. */
async function stored(pageId: string) {
  const page = ok(await t.req('GET', `/v0/pages/${pageId}`));
  const events = ok(await t.req('GET', '/v0/events?limit=100')).items.length;
  return { page, events };
}

describe('POST /v0/pages/{page_id}/preview', () => {
  test("the body's content is rendered as served, for the page or an audience, and nothing is stored", async () => {
    const person = ok(await t.req('POST', '/v0/persons', { name: 'Jane Doe' }), 201);
    const page = await publishedPage(t, { status: 'draft', actions: [LINK], content: content({ headline: 'Stored headline' }) });
    const audience = await audienceOf(t, page.pageId, { personId: person.personId });
    const image = await imageAsset(t, t.key, 800, 600);
    const before = await stored(page.pageId);
    const sections = [
      {
        layout: 'hero',
        heading: 'Hi {{person.firstName | there}}',
        body: '**Bold** move',
        imageAssetId: image.assetId,
        imageAlt: 'A hero',
      },
      { layout: 'cta', heading: 'Go', body: '', actionId: page.actions[0].actionId },
    ];
    const res = await preview(page.pageId, { content: content({ sections }) });
    assert.equal(res.status, 200, res.text);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers['x-robots-tag'], 'noindex, nofollow');
    assert.equal(res.headers['content-security-policy'], "frame-ancestors 'self'");
    assert.ok(res.text.includes('<h1>Draft headline</h1>'), 'the body, not the stored headline');
    assert.ok(!res.text.includes('Stored headline'));
    assert.ok(res.text.includes('<h2>Hi there</h2>'), 'a token without an audience: its fallback');
    assert.ok(res.text.includes('<strong>Bold</strong> move'), 'Markdown as served');
    // An unsaved image is on no live page, so it comes by the API's signed link (issue 38).
    assert.match(
      res.text,
      /<img [^>]*srcset="[^"]*\/files\/file_[0-9a-z]{26}\?expires=\d+&amp;signature=[\w-]+ 800w"[^>]*alt="A hero"[^>]*fetchpriority="high"/,
    );
    assert.ok(res.text.includes('>Book a demo</a>'), "the cta shows the page's action");
    assert.ok(!res.text.includes('/_pam/m.js'), 'no measuring script');

    const forJane = await preview(page.pageId, { content: content({ sections }), audienceId: audience.audienceId });
    assert.equal(forJane.status, 200, forJane.text);
    assert.ok(forJane.text.includes('<h2>Hi Jane</h2>'), "the audience's person fills the token");

    // The body's actions, in place of the stored ones: a new button, shown; not kept.
    const withActions = await preview(page.pageId, {
      content: content(),
      actions: [
        { ...LINK, actionId: page.actions[0].actionId },
        { ...LINK, buttonTitle: 'Unsaved button', url: 'https://example.com/x' },
      ],
    });
    assert.equal(withActions.status, 200, withActions.text);
    assert.ok(withActions.text.includes('>Unsaved button</a>'));

    // An Idempotency-Key replays nothing: each answer is a fresh rendering.
    const keyed = { 'idempotency-key': 'live-preview-1' };
    const a = await t.req('POST', `/v0/pages/${page.pageId}/preview`, { content: content({ headline: 'One' }) }, { headers: keyed });
    const b = await t.req('POST', `/v0/pages/${page.pageId}/preview`, { content: content({ headline: 'Two' }) }, { headers: keyed });
    assert.ok(a.text.includes('<h1>One</h1>') && b.text.includes('<h1>Two</h1>'));

    assert.deepEqual(await stored(page.pageId), before, 'the page and the events are unchanged');
    assert.equal(ok(await t.req('GET', `/v0/pages/${page.pageId}/audiences/${audience.audienceId}/versions`)).items.length, 1);
  });

  test('hostile text in every field is escaped, never markup', async () => {
    const page = await publishedPage(t, { actions: [LINK] });
    const image = await imageAsset(t);
    const sections = [
      { layout: 'hero', heading: HOSTILE, body: HOSTILE, imageAssetId: image.assetId, imageAlt: HOSTILE },
      { layout: 'faq', heading: HOSTILE, body: HOSTILE, items: [{ title: HOSTILE, body: HOSTILE }] },
      { layout: 'quote', heading: HOSTILE, body: HOSTILE, author: HOSTILE, role: HOSTILE },
      {
        layout: 'features',
        heading: HOSTILE,
        body: HOSTILE,
        items: [
          { title: HOSTILE, body: HOSTILE },
          { title: HOSTILE, body: HOSTILE },
        ],
      },
    ];
    const res = await preview(page.pageId, {
      content: { headline: HOSTILE, subheadline: HOSTILE, sections },
      actions: [{ ...LINK, buttonTitle: HOSTILE }],
    });
    assert.equal(res.status, 200, res.text);
    assert.ok(!res.text.includes('<script>alert'), 'no hostile script');
    assert.ok(!res.text.includes('<img src=x'), 'no hostile image');
    assert.ok(res.text.split('&lt;script&gt;alert(1)&lt;/script&gt;').length > 15, 'escaped wherever it is shown');
  });

  test('bounds: each just inside is rendered, just outside is 400 naming the field', async () => {
    const page = await publishedPage(t);
    const path = page.pageId;
    assert.equal((await preview(path, { content: content({ headline: 'h'.repeat(200) }) })).status, 200);
    expectProblem(await preview(path, { content: content({ headline: 'h'.repeat(201) }) }), 400, 'validation_failed', [
      '/content/headline',
    ]);
    assert.equal((await preview(path, { content: content({ subheadline: 's'.repeat(500) }) })).status, 200);
    expectProblem(await preview(path, { content: content({ subheadline: 's'.repeat(501) }) }), 400, 'validation_failed', [
      '/content/subheadline',
    ]);
    const text = (n: number) => Array.from({ length: n }, (_, i) => ({ heading: `S${i}`, body: '' }));
    assert.equal((await preview(path, { content: content({ sections: text(50) }) })).status, 200);
    expectProblem(await preview(path, { content: content({ sections: text(51) }) }), 400, 'validation_failed', ['/content/sections']);
    const faq = (n: number) => [
      { layout: 'faq', heading: 'Q', body: '', items: Array.from({ length: n }, () => ({ title: 'q', body: 'a' })) },
    ];
    assert.equal((await preview(path, { content: content({ sections: faq(30) }) })).status, 200);
    expectProblem(await preview(path, { content: content({ sections: faq(31) }) }), 400, 'validation_failed', [
      '/content/sections/0/items',
    ]);
    expectProblem(await preview(path, { content: content(), audienceId: 'a'.repeat(65) }), 400, 'validation_failed', ['/audienceId']);
    expectProblem(await preview(path, { content: content(), audienceId: '' }), 400, 'validation_failed', ['/audienceId']);
    expectProblem(await preview(path, { content: content(), extra: 1 }), 400, 'validation_failed');
    expectProblem(await preview(path, { content: { ...content(), extra: 1 } }), 400, 'validation_failed');
    assert.equal((await preview(path, {})).status, 200, 'no content: the stored content (issue 46)');
    expectProblem(await preview(path, { content: { subheadline: '', sections: [] } }), 400, 'validation_failed', ['/content/headline']);
  });

  test("another tenant's asset, an unknown action, a bad action and another page's audience are 400 at their pointer; nothing is stored", async () => {
    const other = await t.newTenant();
    const theirs = await imageAsset(t, other.key);
    const page = await publishedPage(t, { actions: [LINK] });
    const otherPage = await publishedPage(t);
    const elsewhere = await audienceOf(t, otherPage.pageId, {});
    const before = await stored(page.pageId);
    const hero = (imageAssetId: string) => ({ layout: 'hero', heading: 'h', body: '', imageAssetId, imageAlt: 'a' });
    expectProblem(await preview(page.pageId, { content: content({ sections: [hero(theirs.assetId)] }) }), 400, 'validation_failed', [
      '/content/sections/0/imageAssetId',
    ]);
    expectProblem(await preview(page.pageId, { content: content({ sections: [hero('asset_nope')] }) }), 400, 'validation_failed', [
      '/content/sections/0/imageAssetId',
    ]);
    const cta = { layout: 'cta', heading: 'c', body: '', actionId: 'action_unknown' };
    expectProblem(await preview(page.pageId, { content: content({ sections: [cta] }) }), 400, 'validation_failed', [
      '/content/sections/0/actionId',
    ]);
    expectProblem(
      await preview(page.pageId, { content: content(), actions: [{ ...LINK, url: 'http://example.com/' }] }),
      400,
      'validation_failed',
      ['/actions/0/url'],
    );
    expectProblem(await preview(page.pageId, { content: content(), audienceId: elsewhere.audienceId }), 400, 'validation_failed', [
      '/audienceId',
    ]);
    // Another tenant's page, and none at all: 404.
    const res = await preview(page.pageId, { content: content() }, other.key);
    expectProblem(res, 404, 'not_found');
    expectProblem(await preview('page_nope', { content: content() }), 404, 'not_found');
    assert.deepEqual(await stored(page.pageId), before);
  });
});

describe('POST /previews/{page_id} (the console frame)', () => {
  const post = async (url: string, draft: Json | string | undefined) => {
    const form = new URLSearchParams();
    if (draft !== undefined) form.set('draft', typeof draft === 'string' ? draft : JSON.stringify(draft));
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

  test("a link's form post renders the draft under the link's policy, escaped, storing nothing", async () => {
    const person = ok(await t.req('POST', '/v0/persons', { name: 'Sam Lee' }), 201);
    const page = await publishedPage(t, { content: content({ headline: 'Stored' }) });
    const audience = await audienceOf(t, page.pageId, { personId: person.personId });
    const before = await stored(page.pageId);
    const link = await linkOf(page.pageId, audience.audienceId);
    const res = await post(link, { content: content({ headline: `Hello {{person.firstName | there}} ${HOSTILE}` }) });
    assert.equal(res.status, 200, res.text);
    assert.ok(res.text.includes('<h1>Hello Sam &quot;&#39;&gt;&lt;script&gt;'), res.text.slice(0, 400));
    assert.ok(!res.text.includes('<script>alert'));
    const policy = String(res.headers['content-security-policy']);
    assert.match(policy, /^default-src 'none'; style-src 'sha256-/);
    assert.match(policy, /; sandbox$/);
    assert.equal(res.headers['x-frame-options'], 'SAMEORIGIN');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.deepEqual(await stored(page.pageId), before);
  });

  test('a changed link is 403; a bad draft is 400 at its pointer; no draft shows what is stored', async () => {
    const page = await publishedPage(t);
    const link = await linkOf(page.pageId);
    const forged = link.replace(/signature=[^&]+/, 'signature=forged');
    expectProblem(await post(forged, { content: content() }), 403, 'forbidden');
    expectProblem(await post(link, { content: content({ headline: 'h'.repeat(201) }) }), 400, 'validation_failed', ['/content/headline']);
    // No draft is the stored content (issue 46: a preview as a visitor sends only its visit).
    assert.equal((await post(link, undefined)).status, 200);
    expectProblem(await post(link, '{not json'), 400, 'validation_failed');
    expectProblem(await post(`/previews/${page.pageId}`, { content: content() }), 400, 'validation_failed');
  });
});
