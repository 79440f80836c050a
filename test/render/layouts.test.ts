import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Json, ok, startApp, type TestApp } from '../helpers.js';
import { everyLayout, imageAsset } from '../pages/layout-fixtures.js';
import { audienceOf, fallbackHost, link, publishedPage, unique, visit } from '../site/serve-helpers.js';

// Issue 38: every section layout as served, previewed and escaped.

let t: TestApp;
let host: string;
let images: Json[];
before(async () => {
  t = await startApp();
  host = await fallbackHost(t);
  images = [await imageAsset(t, t.key, 800, 600), await imageAsset(t, t.key, 200, 100)];
});
after(async () => {
  await t.close();
});

const HOSTILE = `"'><script>alert(1)</script><img src=x onerror=alert(2)>`;
const ESCAPED = '&quot;&#39;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;';
const FORM = { purpose: 'lead', buttonTitle: 'Send', actionType: 'form' };
const LINK = { purpose: 'demo', buttonTitle: 'Book a demo', actionType: 'link', url: 'https://example.com/demo' };

/** A published page whose sections are every layout, each text marked with its field, hostile and with a token. */
async function servedEveryLayout(action: Json, text: (field: string) => string, audience: Json | null = {}) {
  const page = await publishedPage(t, { actions: [action] });
  const actionId = page.actions[0].actionId;
  const sections = everyLayout(
    images.map((i) => i.assetId),
    actionId,
    text,
  );
  ok(await t.req('PATCH', `/v0/pages/${page.pageId}`, { headerActionId: actionId, content: { headline: 'H', subheadline: '', sections } }));
  const a = audience === null ? undefined : await audienceOf(t, page.pageId, audience);
  const path = unique('layouts');
  await link(t, path, a ? { targetType: 'audience', audienceId: a.audienceId } : { targetType: 'page', pageId: page.pageId });
  const res = await visit(t, host, path);
  assert.equal(res.statusCode, 200, res.body);
  // Markdown ends its blocks with a line break: the assertions read the markup without them.
  return { page, html: res.body.replaceAll('\n', ''), res, sections };
}

const FIELDS = [
  'hero heading',
  'hero body',
  'hero alt',
  'text heading',
  'text body',
  'image_text heading',
  'image_text body',
  'image_text alt',
  'features heading',
  'features body',
  'feature 1 title',
  'feature 1 body',
  'feature 3 title',
  'feature 3 body',
  'faq heading',
  'faq body',
  'question 2',
  'answer 2',
  'quote heading',
  'quote body',
  'quote author',
  'quote role',
  'logos heading',
  'logos body',
  'logo 1',
  'logo 2',
  'cta heading',
  'cta body',
  'video heading',
  'video body',
];

describe('section layouts as served', () => {
  test('hostile text in every field is escaped, and tokens are filled in every field', async () => {
    const person = ok(await t.req('POST', '/v0/persons', { name: 'Jane Doe' }), 201);
    const { html } = await servedEveryLayout(LINK, (f) => `[${f}] {{person.firstName | there}} ${HOSTILE}`, { personId: person.personId });
    assert.ok(!html.includes('<script>alert'), 'no hostile script');
    assert.ok(!html.includes('<img src=x'), 'no hostile image');
    assert.ok(!/onerror=alert\(2\)(?!&gt;)/.test(html.replaceAll(ESCAPED, '')), 'no hostile attribute');
    for (const field of FIELDS) {
      const filled = `[${field}] Jane`;
      assert.ok(html.includes(filled), `${field} is shown with its token filled`);
      assert.ok(!html.includes(`[${field}] {{`), `${field}: its token is filled`);
    }
    // In text, in Markdown and in attributes (alt, data-title) alike: escaped, never raw.
    assert.ok(html.split(ESCAPED).length > 20, 'escaped in every field');
    assert.ok(!html.includes('{{'), 'no token left');
  });

  test('each layout has its markup; images have size, alt, srcset; the hero first, the rest lazy', async () => {
    const { html, res, sections } = await servedEveryLayout(LINK, (f) => f);
    assert.match(
      html,
      /<section class="s l-hero"[^>]*><div class="l-text"><h2>hero heading<\/h2><p>hero body<\/p><a class="button" href="https:\/\/example.com\/demo">Book a demo<\/a><\/div><div class="l-img"><picture><source type="image\/webp" [^>]+><img /,
    );
    assert.match(html, /<section class="s"[^>]*><h2>text heading<\/h2><p>text body<\/p><\/section>/, 'a text section as before layouts');
    assert.match(html, /<section class="s l-side img-right"[^>]*>/);
    assert.match(
      html,
      /<ul class="cards g3"><li class="card"><picture><source [^>]+><img [^>]+><\/picture><h3>feature 1 title<\/h3><p>feature 1 body<\/p><\/li>/,
    );
    assert.match(html, /<details><summary>question 1<\/summary><p>answer 1<\/p><\/details>/);
    assert.match(
      html,
      /<figure class="quote"><blockquote><p>quote body<\/p><\/blockquote><figcaption><picture><source [^>]+><img [^>]+><\/picture><span><strong>quote author<\/strong><br>quote role<\/span>/,
    );
    assert.match(html, /<ul class="strip"><li><picture><source [^>]+><img [^>]*alt="logo 1"/);
    assert.match(
      html,
      /<section class="s l-cta"[^>]*><h2>cta heading<\/h2><p>cta body<\/p><div class="actions"><a class="button" href="https:\/\/example.com\/demo">Book a demo<\/a><\/div><\/section>/,
    );
    const imgs = html.match(/<img [^>]+>/g) ?? [];
    assert.equal(imgs.length, 6, 'hero, image_text, one feature card, the quote, two logos');
    for (const img of imgs) {
      assert.match(img, / width="\d+" height="\d+"/, img);
      assert.match(img, / alt="/, img);
      assert.match(img, / srcset="[^"]+ \d+w"/, img);
    }
    assert.equal(imgs.filter((i) => i.includes('fetchpriority="high"')).length, 1, 'one image fetched first');
    assert.ok(imgs[0]?.includes('fetchpriority="high"') && imgs[0].includes('alt="hero alt"'), 'the hero');
    assert.equal(imgs.filter((i) => i.includes('loading="lazy"')).length, 5, 'the others lazily');
    const hero = imgs[0] ?? '';
    const fileId = images[0].data.fileId;
    assert.ok(
      hero.includes(`/_pam/files/${fileId}/w320 320w`) &&
        hero.includes(`/_pam/files/${fileId}/w640 640w`) &&
        hero.includes(`/_pam/files/${fileId} 800w`),
      'its widths (issue 46) and the original',
    );
    assert.ok(hero.includes('width="800" height="600"'));
    assert.equal(sections.length, 9);
    // The video: a link to the privacy-enhanced player, and nothing loaded from it before a click.
    assert.match(html, /<a class="play" href="https:\/\/www.youtube-nocookie.com\/embed\/dQw4w9WgXcQ\?autoplay=1" data-embed=/);
    assert.ok(!/<(iframe|script src|link)[^>]*youtube/i.test(html), 'no request to the player before the click');
    assert.ok(!html.includes('youtube.com/'), 'never the tracking host');
    assert.match(String(res.headers['content-security-policy']), /; frame-src 'self' https:\/\/www.youtube-nocookie.com$/);
  });

  test("every image a served page shows is served on its domain (srcset included), and a trashed asset's file no longer is", async () => {
    // A variant of the hero's image, of the same shape: the srcset names its file too.
    const file = (await imageAsset(t, t.key, 400, 300, 'Hero, 400 px')).data.fileId;
    const variant = ok(
      await t.req('POST', '/v0/assets', { assetType: 'image', name: 'Hero, 400 px', fileId: file, parentAssetId: images[0].assetId }),
      201,
    );
    const { html } = await servedEveryLayout(LINK, (f) => f);
    const urls = new Set<string>();
    for (const [img] of html.matchAll(/<img [^>]+>/g)) {
      urls.add(/ src="([^"]+)"/.exec(img)?.[1] ?? '');
      for (const candidate of (/ srcset="([^"]+)"/.exec(img)?.[1] ?? '').split(', ')) urls.add(candidate.split(' ')[0] ?? '');
    }
    assert.ok(urls.has(`/_pam/files/${variant.data.fileId}`), 'the variant is in the srcset');
    assert.ok(urls.size >= 4, [...urls].join(' '));
    assert.ok(!urls.has(''), [...urls].join(' '));
    for (const url of urls) {
      const res = await visit(t, host, url.replaceAll('&amp;', '&'));
      assert.equal(res.statusCode, 200, `${url}: ${res.body.slice(0, 80)}`);
      assert.match(String(res.headers['content-type']), /^image\//, url);
    }
    const trashed = await imageAsset(t);
    const page = await publishedPage(t, {
      content: {
        headline: 'T',
        subheadline: '',
        sections: [{ layout: 'hero', heading: 'h', body: '', imageAssetId: trashed.assetId, imageAlt: 'a' }],
      },
    });
    await link(t, unique('trash'), { targetType: 'page', pageId: page.pageId });
    assert.equal((await visit(t, host, `/_pam/files/${trashed.data.fileId}`)).statusCode, 200, 'shown: served');
    ok(await t.req('PATCH', `/v0/assets/${trashed.assetId}`, { lifecycleState: 'trashed' }));
    assert.equal((await visit(t, host, `/_pam/files/${trashed.data.fileId}`)).statusCode, 404, 'trashed: no longer served');
  });

  test('only a page with a video frames its player; a text page renders and is served as before', async () => {
    const page = await publishedPage(t, { content: { headline: 'H', subheadline: '', sections: [{ heading: 'Why', body: 'Because' }] } });
    const path = unique('plain');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    const res = await visit(t, host, path);
    assert.equal(res.headers['content-security-policy'], "base-uri 'none'; object-src 'none'; form-action 'self'; frame-ancestors 'self'");
    assert.match(res.body, /<section class="s" data-pam-section="0" data-pam-layout="text"><h2>Why<\/h2><p>Because<\/p>\n<\/section>/);
    assert.ok(!res.body.includes('<script>'), 'no video script');
  });

  test("a cta on a form action shows the lead form, once; a vimeo video's player carries dnt=1", async () => {
    const { html } = await servedEveryLayout(FORM, (f) => f);
    const forms = html.match(/<form method="post" action="\/_pam\/forms">/g) ?? [];
    assert.equal(forms.length, 1, 'one form');
    assert.match(html, /<section class="s l-cta"[^>]*><h2>cta heading<\/h2><p>cta body<\/p><div class="actions"><section class="lead"/);
    const page = await publishedPage(t, {
      content: {
        headline: 'H',
        subheadline: '',
        sections: [{ layout: 'video', heading: 'V', body: '', videoUrl: 'https://vimeo.com/76979871' }],
      },
    });
    const path = unique('vimeo');
    await link(t, path, { targetType: 'page', pageId: page.pageId });
    const res = await visit(t, host, path);
    assert.ok(res.body.includes('href="https://player.vimeo.com/video/76979871?dnt=1&amp;autoplay=1"'), res.body);
    assert.match(String(res.headers['content-security-policy']), /frame-src 'self' https:\/\/player.vimeo.com$/);
  });

  test("a draft's image, picked and not saved, shows in its live preview by a signed link; once saved, from the tenant's domain", async () => {
    const { page } = await servedEveryLayout(LINK, (f) => f, null);
    const picked = await imageAsset(t, t.key, 800, 600, 'Picked');
    const sections = [
      { layout: 'hero', heading: 'Draft hero', body: '', imageAssetId: picked.assetId, imageAlt: 'picked' },
      { layout: 'image_text', heading: 'Saved', body: '', imageAssetId: images[0]!.assetId, imageAlt: 'saved', imageSide: 'left' },
    ];
    const draft = await t.req('POST', `/v0/pages/${page.pageId}/preview`, { content: { headline: 'D', subheadline: '', sections } });
    assert.equal(draft.status, 200, draft.text);
    const img = (alt: string) => {
      const tag = draft.text.match(new RegExp(`<img [^>]*alt="${alt}"[^>]*>`))?.[0] ?? '';
      const attrOf = (name: string) => (tag.match(new RegExp(` ${name}="([^"]*)"`))?.[1] ?? '').replaceAll('&amp;', '&');
      return { src: attrOf('src'), srcset: attrOf('srcset') };
    };
    const fileId = picked.data.fileId as string;
    const shown = img('picked');
    assert.match(shown.src, new RegExp(`^/files/${fileId}\\?expires=\\d+&signature=[\\w-]+$`), "a signed link on the API's origin");
    // Issue 46: its widths (made on upload), each by a signed link too.
    assert.match(shown.srcset, new RegExp(`/files/${fileId}/w320\\?expires=\\d+&signature=[\\w-]+ 320w`), 'its 320 px width, signed too');
    assert.match(shown.srcset, new RegExp(`/files/${fileId}/w640\\?expires=\\d+&signature=[\\w-]+ 640w`), 'and its 640 px');
    for (const url of [shown.src, shown.srcset.split(' ')[0]!]) {
      const got = await t.app.inject({ method: 'GET', url });
      assert.equal(got.statusCode, 200, url);
      assert.match(String(got.headers['content-type']), /^image\//);
    }
    // The same file on the tenant's domain is not served: no live page shows it yet.
    assert.equal((await visit(t, host, `/_pam/files/${fileId}`)).statusCode, 404);
    // A draft's images all come signed (the draft may name any of them); the rest of the page does not.
    assert.match(img('saved').src, new RegExp(`/files/${images[0]!.data.fileId}\\?expires=`));
    assert.doesNotMatch(draft.text, /\/_pam\/files\/[^"]*\?/, 'no signed query on a tenant-domain file');
    // Once saved, the preview names it on the tenant's domain like every served image.
    ok(await t.req('PATCH', `/v0/pages/${page.pageId}`, { content: { headline: 'D', subheadline: '', sections } }));
    const stored = await t.req('GET', `/v0/pages/${page.pageId}/preview`);
    assert.match(stored.text, new RegExp(`<img src="[^"]*/_pam/files/${fileId}"[^>]*alt="picked"`));
  });

  test('the preview and an audience version show the layouts; a trashed image leaves its section without it', async () => {
    const { page } = await servedEveryLayout(LINK, (f) => f, null);
    const preview = await t.req('GET', `/v0/pages/${page.pageId}/preview`);
    assert.equal(preview.status, 200);
    assert.match(preview.text.replaceAll('\n', ''), /<details><summary>question 1<\/summary>/);
    assert.match(preview.text, /<img [^>]*fetchpriority="high"/);
    const issued = ok(await t.req('GET', `/v0/pages/${page.pageId}/preview_link`));
    const linked = await t.app.inject({ method: 'GET', url: new URL(issued.url).pathname + new URL(issued.url).search });
    assert.equal(linked.statusCode, 200);
    assert.match(linked.body, /<blockquote>/);
    const extra = await imageAsset(t);
    const content = {
      headline: 'V',
      subheadline: '',
      sections: [{ layout: 'hero', heading: 'Version hero', body: '', imageAssetId: extra.assetId, imageAlt: 'alt' }],
    };
    const audience = await audienceOf(t, page.pageId, {});
    const versions = `/v0/pages/${page.pageId}/audiences/${audience.audienceId}/versions`;
    const draft = ok(await t.req('POST', versions, { content }), 201);
    ok(await t.req('PATCH', `${versions}/${draft.versionId}`, { status: 'published' }));
    const shown = await t.req('GET', `/v0/pages/${page.pageId}/preview?audienceId=${audience.audienceId}`);
    assert.match(shown.text, /<h2>Version hero<\/h2>.*<img [^>]*alt="alt"/s);
    ok(await t.req('PATCH', `/v0/assets/${extra.assetId}`, { lifecycleState: 'trashed' }));
    const after = await t.req('GET', `/v0/pages/${page.pageId}/preview?audienceId=${audience.audienceId}`);
    assert.match(after.text.replaceAll('\n', ''), /<section class="s l-hero no-img"[^>]*><div class="l-text"><h2>Version hero<\/h2>/);
  });
});
