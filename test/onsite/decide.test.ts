import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { fileUrlSecret } from '../../src/assets/files.js';
import { type DecisionTokens, decisionTokens } from '../../src/onsite/decision-token.js';
import { expectProblem, ok, startApp, type Json, type Res, type TestApp } from '../helpers.js';
import { imageAsset } from '../pages/layout-fixtures.js';
import { visit } from '../site/serve-helpers.js';

// The site script's two requests on the API host (issue 48 §3, §6): GET /_pam/site.js and
// GET /_pam/decide, as a customer's page on another origin makes them.

// Injected requests come from 127.0.0.1: as a trusted proxy, each visitor's address is its X-Forwarded-For.
const PROXY = '127.0.0.1';
const ORIGIN = 'https://shop.example';
let t: TestApp;
let tokens: DecisionTokens;
let site: Json;

before(async () => {
  t = await startApp({ TRUST_PROXY: PROXY, DECIDE_RATE_PER_MINUTE: '30', DECIDE_SITE_RATE_PER_MINUTE: '100000' });
  tokens = decisionTokens(await fileUrlSecret(t.app.db, t.app.config.fileUrlSecret));
  site = ok(await t.req('POST', '/v0/sites', { name: 'Shop', origins: [ORIGIN, 'http://shop-x.localhost:8080'] }), 201);
});
after(async () => {
  await t?.close();
});

let nextAddress = 1;
/** Each visitor from an address of their own: the per-address limit of one never touches another. */
const visitor = () => `198.51.${100 + Math.floor(nextAddress / 250)}.${(nextAddress++ % 250) + 1}`;

async function experience(fields: Json): Promise<Json> {
  return ok(
    await t.req('POST', '/v0/experiences', {
      siteId: site.siteId,
      name: 'Pricing',
      status: 'live',
      urlMatch: { type: 'prefix', value: '/pricing' },
      changes: [{ selector: 'h1', action: 'text', value: 'Hello' }],
      ...fields,
    }),
    201,
  );
}

interface Ask {
  url?: string;
  ref?: string;
  origin?: string | null;
  address?: string;
  userAgent?: string;
  headers?: Record<string, string>;
  siteKey?: string;
  extra?: string;
}

async function decide(ask: Ask = {}): Promise<Res> {
  const url = ask.url ?? `${ORIGIN}/pricing`;
  const query = `site=${encodeURIComponent(ask.siteKey ?? site.siteKey)}&url=${encodeURIComponent(url)}&ref=${encodeURIComponent(ask.ref ?? '')}${ask.extra ?? ''}`;
  const headers: Record<string, string> = {
    'x-forwarded-for': ask.address ?? visitor(),
    'user-agent': ask.userAgent ?? 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0 Safari/537.36',
    ...ask.headers,
  };
  if (ask.origin !== null) headers.origin = ask.origin ?? ORIGIN;
  return t.req('GET', `/_pam/decide?${query}`, undefined, { key: null, headers });
}

const of = (res: Res, experienceId: string) => (res.body.experiences as Json[]).find((e) => e.experienceId === experienceId);

describe('GET /_pam/site.js', () => {
  test('is the script with its patterns, cached briefly, revalidated by its ETag, small', async () => {
    await experience({ urlMatch: { type: 'exact', value: '/script-page' }, conversionUrl: '/script-thanks' });
    const res = await t.req('GET', `/_pam/site.js?site=${site.siteKey}`, undefined, { key: null });
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^text\/javascript/);
    assert.match(String(res.headers['cache-control']), /max-age=60/);
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.ok(res.text.includes('script-page') && res.text.includes('script-thanks'), 'the live patterns are in it');
    assert.ok(gzipSync(res.text).length <= 4096, `${gzipSync(res.text).length} bytes gzipped`);
    const etag = String(res.headers.etag);
    const again = await t.req('GET', `/_pam/site.js?site=${site.siteKey}`, undefined, { key: null, headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    // A new live experience changes the script: its ETag follows.
    await experience({ urlMatch: { type: 'glob', value: '/docs/*/intro' } });
    const changed = await t.req('GET', `/_pam/site.js?site=${site.siteKey}`, undefined, { key: null, headers: { 'if-none-match': etag } });
    assert.equal(changed.status, 200);
    assert.notEqual(changed.headers.etag, etag);
  });

  test('a key of no site is 404, a malformed one 400 naming it', async () => {
    assert.equal((await t.req('GET', '/_pam/site.js?site=nosuchsitekey', undefined, { key: null })).status, 404);
    expectProblem(await t.req('GET', '/_pam/site.js?site=bad%20key', undefined, { key: null }), 400, 'validation_failed', ['/site']);
    expectProblem(await t.req('GET', '/_pam/site.js', undefined, { key: null }), 400, 'validation_failed', ['/site']);
  });

  test('marks the site installed when one of its pages fetches it', async () => {
    const fresh = ok(await t.req('POST', '/v0/sites', { name: 'Fresh', origins: ['https://fresh.example'] }), 201);
    assert.equal(fresh.lastSeenAt, null);
    await t.req('GET', `/_pam/site.js?site=${fresh.siteKey}`, undefined, { key: null, headers: { referer: 'https://elsewhere.example/' } });
    assert.equal(ok(await t.req('GET', `/v0/sites/${fresh.siteId}`)).lastSeenAt, null, 'not from another origin');
    await t.req('GET', `/_pam/site.js?site=${fresh.siteKey}`, undefined, {
      key: null,
      headers: { referer: 'https://fresh.example/a/page' },
    });
    const seen = await t.req('GET', `/v0/sites/${fresh.siteId}`);
    assert.notEqual(ok(seen).lastSeenAt, null);
  });
});

describe('GET /_pam/decide', () => {
  test("answers the site's own origin with CORS, Vary and no caching, and a token naming the decision", async () => {
    const exp = await experience({
      urlMatch: { type: 'prefix', value: '/cors' },
      conversionUrl: '/cors/**',
      changes: [
        { selector: 'h1.title', action: 'text', value: 'Built for {{utm.term | teams}}' },
        { selector: 'a.cta', action: 'attribute', attribute: 'href', value: 'https://shop.example/signup?plan={{utm.term | basic}}' },
        { selector: '.banner', action: 'hide' },
      ],
    });
    const res = await decide({ url: `${ORIGIN}/cors/page?utm_term=robots&utm_source=news`, ref: 'https://www.google.com/' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers['access-control-allow-origin'], ORIGIN);
    assert.match(String(res.headers.vary), /Origin/i);
    assert.equal(res.headers['cache-control'], 'private, no-store');
    const got = of(res, exp.experienceId);
    assert.deepEqual(got, {
      experienceId: exp.experienceId,
      arm: 'personalised',
      changes: [
        { selector: 'h1.title', action: 'text', value: 'Built for robots' },
        { selector: 'a.cta', action: 'attribute', attribute: 'href', value: 'https://shop.example/signup?plan=robots' },
        { selector: '.banner', action: 'hide' },
      ],
    });
    const claims = tokens.verify(res.body.token);
    assert.ok(claims, 'the token is genuine');
    assert.equal(claims.siteId, site.siteId);
    assert.equal(claims.tenantId, t.tenantId);
    assert.equal(claims.path, '/cors/page');
    assert.match(claims.unit, /^v:/);
    assert.deepEqual(claims.experiences, [{ experienceId: exp.experienceId, arm: 'personalised' }]);
    assert.ok(claims.converting.includes(exp.experienceId));
    assert.equal(claims.referrerHost, 'google.com');
    assert.equal(claims.utm?.utmTerm, 'robots');
    assert.equal(claims.preview, undefined);
    assert.notEqual(ok(await t.req('GET', `/v0/sites/${site.siteId}`)).lastSeenAt, null, 'a decision marks the site installed');
  });

  test('another origin, no origin, or a page on another origin is refused without CORS and without changes', async () => {
    await experience({ urlMatch: { type: 'prefix', value: '/foreign' } });
    for (const ask of [
      { origin: 'https://evil.example', url: 'https://evil.example/foreign' },
      { origin: 'https://evil.example', url: `${ORIGIN}/foreign` },
      { origin: null, url: `${ORIGIN}/foreign` },
      { origin: ORIGIN, url: 'http://shop-x.localhost:8080/foreign' },
      { origin: 'null', url: `${ORIGIN}/foreign` },
    ]) {
      const res = await decide(ask);
      expectProblem(res, 403, 'forbidden');
      assert.equal(res.headers['access-control-allow-origin'], undefined, JSON.stringify(ask));
      assert.equal(res.body.experiences, undefined);
      assert.match(String(res.headers.vary), /Origin/i);
    }
    // The second origin of the site is its own too.
    const second = await decide({ origin: 'http://shop-x.localhost:8080', url: 'http://shop-x.localhost:8080/foreign' });
    assert.equal(second.status, 200);
    assert.equal(second.headers['access-control-allow-origin'], 'http://shop-x.localhost:8080');
  });

  test('a path no experience matches gets none; rules decide who matches', async () => {
    const exp = await experience({
      urlMatch: { type: 'exact', value: '/ruled' },
      rules: { match: 'all', conditions: [{ field: 'utm.source', operator: 'equals', value: 'ads' }] },
    });
    assert.deepEqual((await decide({ url: `${ORIGIN}/elsewhere` })).body.experiences, []);
    assert.equal(of(await decide({ url: `${ORIGIN}/ruled?utm_source=news` }), exp.experienceId), undefined);
    assert.ok(of(await decide({ url: `${ORIGIN}/ruled?utm_source=ads` }), exp.experienceId));
    assert.ok(of(await decide({ url: `${ORIGIN}/ruled/?utm_source=ADS` }), exp.experienceId), 'a trailing slash and any case');
  });

  test('every edit shows in the next decision: changes, pause, origins, a deleted site', async () => {
    // A site and its live experiences are kept between edits (onsite/snippet/live-site.ts): each
    // write below must reach the very next request.
    const own = ok(await t.req('POST', '/v0/sites', { name: 'Kept', origins: ['https://kept.example'] }), 201);
    const exp = ok(
      await t.req('POST', '/v0/experiences', {
        siteId: own.siteId,
        name: 'Kept',
        status: 'live',
        urlMatch: { type: 'exact', value: '/kept' },
        changes: [{ selector: 'h1', action: 'text', value: 'First' }],
      }),
      201,
    );
    const ask = () => decide({ siteKey: own.siteKey, origin: 'https://kept.example', url: 'https://kept.example/kept' });
    const text = (res: Res) => of(res, exp.experienceId)?.changes[0]?.value;
    assert.equal(text(await ask()), 'First');
    ok(await t.req('PATCH', `/v0/experiences/${exp.experienceId}`, { changes: [{ selector: 'h1', action: 'text', value: 'Second' }] }));
    assert.equal(text(await ask()), 'Second');
    ok(await t.req('PATCH', `/v0/experiences/${exp.experienceId}`, { status: 'paused' }));
    assert.deepEqual((await ask()).body.experiences, []);
    ok(await t.req('PATCH', `/v0/experiences/${exp.experienceId}`, { status: 'live' }));
    assert.equal(text(await ask()), 'Second');
    ok(await t.req('PATCH', `/v0/sites/${own.siteId}`, { origins: ['https://moved.example'] }));
    expectProblem(await ask(), 403, 'forbidden');
    const moved = await decide({ siteKey: own.siteKey, origin: 'https://moved.example', url: 'https://moved.example/kept' });
    assert.equal(text(moved), 'Second');
    assert.equal((await t.req('DELETE', `/v0/experiences/${exp.experienceId}`)).status, 204);
    assert.equal((await t.req('DELETE', `/v0/sites/${own.siteId}`)).status, 204);
    expectProblem(
      await decide({ siteKey: own.siteKey, origin: 'https://moved.example', url: 'https://moved.example/kept' }),
      404,
      'not_found',
    );
  });

  test("a parameter given twice counts by its first value, in the rules, the tokens and the token's UTM", async () => {
    const exp = await experience({
      urlMatch: { type: 'exact', value: '/twice' },
      rules: { match: 'all', conditions: [{ field: 'utm.source', operator: 'equals', value: 'ads' }] },
      changes: [{ selector: 'h1', action: 'text', value: 'For {{utm.term | you}}' }],
    });
    const odd = '&__proto__=x&constructor=y&hasOwnProperty=z';
    const res = await decide({ url: `${ORIGIN}/twice?utm_source=ads&utm_source=news&utm_term=first&utm_term=second${odd}` });
    assert.equal(of(res, exp.experienceId).changes[0].value, 'For first');
    assert.deepEqual(tokens.verify(res.body.token)?.utm, { utmSource: 'ads', utmTerm: 'first' });
    const other = await decide({ url: `${ORIGIN}/twice?utm_source=news&utm_source=ads${odd}` });
    assert.equal(of(other, exp.experienceId), undefined);
    assert.deepEqual(tokens.verify(other.body.token)?.utm, { utmSource: 'news' });
  });

  test('a hostile UTM value never becomes markup: it takes the fallback, and a value is text anyway', async () => {
    const exp = await experience({
      urlMatch: { type: 'exact', value: '/hostile' },
      changes: [{ selector: 'h1', action: 'text', value: 'For {{utm.term | you}}' }],
    });
    const term = '<img src=x onerror=alert(1)>';
    const res = await decide({ url: `${ORIGIN}/hostile?utm_term=${encodeURIComponent(term)}` });
    assert.equal(of(res, exp.experienceId).changes[0].value, 'For you');
  });

  test('sections are rendered by the service, escaped, with the brand style beside them', async () => {
    const exp = await experience({
      urlMatch: { type: 'exact', value: '/section' },
      changes: [
        {
          selector: 'main',
          action: 'section',
          placement: 'before',
          value: { heading: 'Hi {{utm.term | there}} <script>', body: 'Some **bold** text', layout: 'text' },
        },
      ],
    });
    const res = await decide({ url: `${ORIGIN}/section?utm_term=Rob` });
    const [change] = of(res, exp.experienceId).changes;
    assert.equal(change.action, 'section');
    assert.equal(change.placement, 'before');
    assert.match(change.html, /<h2>Hi Rob &lt;script&gt;<\/h2>/);
    assert.match(change.html, /<strong>bold<\/strong>/);
    assert.ok(!change.html.includes('<script'), change.html);
    assert.match(res.body.style, /:host/);
  });

  test("a section's images are the tenant's files at their public URL, sized, their alt escaped", async () => {
    const hero = await imageAsset(t, t.key, 64, 48);
    const [a, b] = [await imageAsset(t), await imageAsset(t)];
    const exp = await experience({
      urlMatch: { type: 'exact', value: '/section-images' },
      changes: [
        {
          selector: 'main',
          action: 'section',
          placement: 'after',
          value: { layout: 'hero', heading: 'Hi', body: '', imageAssetId: hero.assetId, imageAlt: 'For {{utm.term | you}} "x"' },
        },
        {
          selector: 'footer',
          action: 'section',
          placement: 'before',
          value: {
            layout: 'features',
            heading: 'Why',
            body: '',
            items: [
              { title: 'One', body: 'a', imageAssetId: a.assetId },
              { title: 'Two', body: 'b', imageAssetId: b.assetId },
            ],
          },
        },
      ],
    });
    const hostile = '"><script>alert(1)</script>';
    const res = await decide({ url: `${ORIGIN}/section-images?utm_term=${encodeURIComponent(hostile)}` });
    const [first, second] = of(res, exp.experienceId).changes;
    const domain = (ok(await t.req('GET', '/v0/tenant_domains?limit=100')).items as Json[]).find((d) => d.isFallback);
    const img = /<img src="([^"]+)"[^>]* width="(\d+)" height="(\d+)" alt="([^"]*)"/.exec(first.html);
    assert.ok(img, first.html);
    // Absolute, on the tenant's fallback domain: the customer's page is on another origin.
    const src = new URL(img[1] ?? '');
    assert.equal(src.hostname, domain.hostname);
    assert.equal(src.pathname, `/_pam/files/${hero.data.fileId}`);
    // Served there without a signed link: a file an experience shows is a file of the tenant's site.
    const served = await visit(t, domain.hostname, src.pathname);
    assert.equal(served.statusCode, 200);
    assert.equal(served.headers['content-type'], 'image/png');
    assert.deepEqual([img[2], img[3]], ['64', '48']);
    // A hostile value is not a value the token takes: the fallback, escaped where it goes.
    assert.equal(img[4], 'For you &quot;x&quot;');
    assert.ok(!first.html.includes('<script'), first.html);
    const items = [...second.html.matchAll(/<img src="([^"]+)"/g)].map((m) => m[1]);
    assert.equal(items.length, 2, second.html);
    for (const [i, asset] of [a, b].entries()) assert.ok(items[i]?.includes(`/_pam/files/${asset.data.fileId}`), items[i]);
    assert.equal((await t.req('DELETE', `/v0/assets/${a.assetId}`)).status, 204);
    const after = await decide({ url: `${ORIGIN}/section-images` });
    const again = [...of(after, exp.experienceId).changes[1].html.matchAll(/<img src="([^"]+)"/g)];
    assert.equal(again.length, 1, 'an image whose asset is gone is left out, as on a served page');
  });

  test('the highest priority applies; another applies too only when no selector overlaps', async () => {
    const path = '/overlap';
    const high = await experience({
      urlMatch: { type: 'exact', value: path },
      priority: 10,
      changes: [{ selector: 'h1', action: 'hide' }],
    });
    const same = await experience({
      urlMatch: { type: 'exact', value: path },
      priority: 5,
      changes: [{ selector: 'H1 ', action: 'hide' }],
    });
    const apart = await experience({
      urlMatch: { type: 'exact', value: path },
      priority: 1,
      changes: [{ selector: '.footer', action: 'hide' }],
    });
    const res = await decide({ url: `${ORIGIN}${path}` });
    assert.deepEqual(
      (res.body.experiences as Json[]).map((e) => e.experienceId),
      [high.experienceId, apart.experienceId],
    );
    assert.equal(of(res, same.experienceId), undefined);
  });

  test('a holdout keeps a share on the original, each visitor keeping their arm', async () => {
    const exp = await experience({ urlMatch: { type: 'exact', value: '/held' }, holdoutPercent: 50 });
    const arms = new Map<string, string>();
    for (let i = 0; i < 40; i++) {
      const userAgent = `Mozilla/5.0 Visitor ${i}`;
      const address = visitor();
      const first = of(await decide({ url: `${ORIGIN}/held`, userAgent, address }), exp.experienceId);
      const second = of(await decide({ url: `${ORIGIN}/held`, userAgent, address }), exp.experienceId);
      assert.equal(second.arm, first.arm, 'the same visitor, the same arm');
      assert.deepEqual(first.changes, first.arm === 'holdout' ? [] : [{ selector: 'h1', action: 'text', value: 'Hello' }]);
      arms.set(userAgent, first.arm);
    }
    const held = [...arms.values()].filter((a) => a === 'holdout').length;
    assert.ok(held > 5 && held < 35, `${held} of 40 held out`);
  });

  test('bad parameters are 400 naming the field', async () => {
    const bad = async (query: string) =>
      t.req('GET', `/_pam/decide?${query}`, undefined, { key: null, headers: { origin: ORIGIN, 'x-forwarded-for': visitor() } });
    const url = encodeURIComponent(`${ORIGIN}/pricing`);
    expectProblem(await bad(`url=${url}`), 400, 'validation_failed', ['/site']);
    expectProblem(await bad(`site=${site.siteKey}`), 400, 'validation_failed', ['/url']);
    expectProblem(await bad(`site=${site.siteKey}&url=not-a-url`), 400, 'validation_failed', ['/url']);
    expectProblem(await bad(`site=${site.siteKey}&url=${encodeURIComponent('javascript:alert(1)')}`), 400, 'validation_failed', ['/url']);
    expectProblem(await bad(`site=${site.siteKey}&url=${encodeURIComponent(`${ORIGIN}/${'a'.repeat(2048)}`)}`), 400, 'validation_failed', [
      '/url',
    ]);
    expectProblem(await bad(`site=${site.siteKey}&url=${url}&ref=${'r'.repeat(2049)}`), 400, 'validation_failed', ['/ref']);
    expectProblem(await bad(`site=${site.siteKey}&url=${url}&other=1`), 400, 'validation_failed');
    assert.equal((await bad(`site=nosuchsite&url=${url}`)).status, 404);
  });

  test('decisions are rate-limited per address', async () => {
    const address = visitor();
    // At once, so that the bucket (30 a minute, one back every 2 s) hardly refills meanwhile.
    const answers = await Promise.all(Array.from({ length: 36 }, () => decide({ address, url: `${ORIGIN}/nothing-here` })));
    const passed = answers.filter((r) => r.status === 200).length;
    assert.ok(passed >= 30 && passed <= 32, `${passed} of 36 passed`);
    const limited = answers.find((r) => r.status === 429);
    assert.ok(limited, 'past 30 a minute, refused');
    expectProblem(limited, 429, 'rate_limited');
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    assert.equal(limited.headers['access-control-allow-origin'], undefined);
    assert.equal((await decide({ address: visitor(), url: `${ORIGIN}/nothing-here` })).status, 200, 'another address is not');
  });
});

describe('rate limit per site', () => {
  test('one site past its decisions a minute is refused, from any address', async () => {
    const other = await startApp({ TRUST_PROXY: PROXY, DECIDE_SITE_RATE_PER_MINUTE: '3' });
    try {
      const s = ok(await other.req('POST', '/v0/sites', { name: 'S', origins: [ORIGIN] }), 201);
      const ask = () =>
        other.req('GET', `/_pam/decide?site=${s.siteKey}&url=${encodeURIComponent(`${ORIGIN}/x`)}`, undefined, {
          key: null,
          headers: { origin: ORIGIN, 'x-forwarded-for': visitor() },
        });
      for (let i = 0; i < 3; i++) assert.equal((await ask()).status, 200);
      expectProblem(await ask(), 429, 'rate_limited');
    } finally {
      await other.close();
    }
  });
});

describe('pick and preview tokens', () => {
  test("a pick token is for its tenant's site, checked from its origin, held by the first browser", async () => {
    const other = await t.newTenant('Other');
    const res = await t.req('POST', `/v0/sites/${site.siteId}/pick-tokens`, undefined, { key: other.key });
    expectProblem(res, 404, 'not_found');
    const made = ok(await t.req('POST', `/v0/sites/${site.siteId}/pick-tokens`), 201);
    assert.match(made.token, /^pick_/);
    assert.ok(Date.parse(made.expiresAt) > Date.now() + 9 * 60_000);
    const pick = (token: string, headers: Record<string, string>) =>
      t.req('GET', `/_pam/pick?site=${site.siteKey}&token=${encodeURIComponent(token)}`, undefined, { key: null, headers });
    const address = visitor();
    const first = { origin: ORIGIN, 'x-forwarded-for': address, 'user-agent': 'Browser A' };
    expectProblem(await pick(made.token, { ...first, origin: 'https://evil.example' }), 403, 'forbidden');
    const checked = await pick(made.token, first);
    assert.equal(checked.status, 200);
    assert.equal(checked.headers['access-control-allow-origin'], ORIGIN);
    assert.equal(checked.body.consoleOrigin, new URL(t.app.config.publicBaseUrl).origin);
    assert.equal((await pick(made.token, first)).status, 200, 'the same browser again');
    expectProblem(await pick(made.token, { ...first, 'user-agent': 'Browser B' }), 404, 'not_found');
    expectProblem(await pick(`${made.token}x`, first), 404, 'not_found');
  });

  test('a preview token takes the described visit, and forces its experience unmeasured', async () => {
    const draft = await experience({
      status: 'draft',
      urlMatch: { type: 'exact', value: '/not-this-page' },
      changes: [{ selector: 'h1', action: 'text', value: 'Hi {{company.name | you}} from {{utm.source | x}}' }],
    });
    expectProblem(
      await t.req('POST', `/v0/experiences/${draft.experienceId}/preview-tokens`, { utm: { sauce: 'x' } }),
      400,
      'validation_failed',
      ['/utm/sauce'],
    );
    expectProblem(await t.req('POST', '/v0/experiences/experience_nosuch/preview-tokens', {}), 404, 'not_found');
    const made = ok(
      await t.req('POST', `/v0/experiences/${draft.experienceId}/preview-tokens`, {
        utm: { source: 'linkedin' },
        company: { name: 'Acme' },
      }),
      201,
    );
    const res = await decide({ url: `${ORIGIN}/elsewhere`, extra: `&preview=${encodeURIComponent(made.token)}` });
    assert.deepEqual(res.body.experiences, [
      {
        experienceId: draft.experienceId,
        arm: 'personalised',
        changes: [{ selector: 'h1', action: 'text', value: 'Hi Acme from linkedin' }],
      },
    ]);
    const claims = tokens.verify(res.body.token);
    assert.equal(claims?.preview, true);
    assert.deepEqual(claims?.converting, []);
  });
});
