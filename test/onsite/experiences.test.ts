import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, ISO_MS, type Json, ok, startApp, type TestApp } from '../helpers.js';
import { everyLayout, imageAsset } from '../pages/layout-fixtures.js';

// Experiences (issue 48 §2, §6) through the API: every field's bound just inside and just outside,
// the segment rules with the audiences' errors, each action's fields, hostile selectors and
// attribute values, sections as page content, round trips, the site filter, isolation.

let t: TestApp;
let siteId: string;
let images: string[];
before(async () => {
  t = await startApp();
  siteId = ok(await t.req('POST', '/v0/sites', { name: 'Shop', origins: ['https://shop.example'] }), 201).siteId;
  images = [(await imageAsset(t)).assetId, (await imageAsset(t)).assetId];
});
after(async () => t.close());

const TEXT = { selector: 'h1', action: 'text', value: 'Hello {{utm.term | there}}' };
const body = (fields: Json = {}): Json => ({
  siteId,
  name: 'Welcome',
  urlMatch: { type: 'exact', value: '/' },
  changes: [TEXT],
  ...fields,
});
const create = (fields: Json = {}, key?: string) => t.req('POST', '/v0/experiences', body(fields), key ? { key } : {});
const accepted = async (fields: Json): Promise<Json> => ok(await create(fields), 201);
const refused = async (fields: Json, ...paths: string[]) => {
  const res = await create(fields);
  expectProblem(res, 400, 'validation_failed', paths);
  return res.body;
};
const oneChange = (change: Json) => ({ changes: [change] });

describe('experiences: fields and defaults', () => {
  test('a minimal body: draft, priority 0, no holdout, every visitor, no conversion', async () => {
    const e = await accepted({});
    assert.match(e.experienceId, /^experience_[a-z0-9]{26}$/);
    assert.deepEqual(
      { ...e, experienceId: '', createdAt: '', updatedAt: '' },
      {
        experienceId: '',
        siteId,
        name: 'Welcome',
        status: 'draft',
        urlMatch: { type: 'exact', value: '/' },
        rules: null,
        priority: 0,
        holdoutPercent: 0,
        conversionUrl: null,
        changes: [TEXT],
        createdAt: '',
        updatedAt: '',
      },
    );
    assert.match(e.createdAt, ISO_MS);
    assert.deepEqual(ok(await t.req('GET', `/v0/experiences/${e.experienceId}`)), e);
  });

  test('every field given', async () => {
    const rules = { match: 'any', conditions: [{ field: 'utm.source', operator: 'equals', value: 'linkedin' }] };
    const e = await accepted({
      status: 'live',
      urlMatch: { type: 'glob', value: '/pricing/**' },
      rules,
      priority: 7,
      holdoutPercent: 20,
      conversionUrl: '/thanks/*',
    });
    assert.deepEqual(
      [e.status, e.urlMatch, e.rules, e.priority, e.holdoutPercent, e.conversionUrl],
      ['live', { type: 'glob', value: '/pricing/**' }, rules, 7, 20, '/thanks/*'],
    );
  });

  test('siteId must be a site of the tenant', async () => {
    const other = await t.newTenant('Foreign');
    const foreign = ok(await t.req('POST', '/v0/sites', { name: 'F', origins: ['https://f.example'] }, { key: other.key }), 201).siteId;
    await refused({ siteId: foreign }, '/siteId');
    await refused({ siteId: `site_${'0'.repeat(26)}` }, '/siteId');
    await refused({ siteId: 'nope' }, '/siteId');
    await refused({ siteId: '' }, '/siteId');
    await refused({ siteId: undefined }, '/siteId');
  });

  test('name 1–255, status draft|live|paused', async () => {
    await accepted({ name: 'x'.repeat(255) });
    await refused({ name: 'x'.repeat(256) }, '/name');
    await refused({ name: '' }, '/name');
    for (const status of ['draft', 'live', 'paused']) assert.equal((await accepted({ status })).status, status);
    await refused({ status: 'archived' }, '/status');
    await refused({ extra: true }, '/extra');
  });

  test('priority 0–1000 and holdoutPercent 0–90, integers', async () => {
    for (const priority of [0, 1000]) assert.equal((await accepted({ priority })).priority, priority);
    for (const priority of [-1, 1001, 1.5, '1']) await refused({ priority }, '/priority');
    for (const holdoutPercent of [0, 90]) assert.equal((await accepted({ holdoutPercent })).holdoutPercent, holdoutPercent);
    for (const holdoutPercent of [-1, 91, 10.5, null]) await refused({ holdoutPercent }, '/holdoutPercent');
  });

  test('urlMatch: exact, prefix, glob on the path', async () => {
    for (const urlMatch of [
      { type: 'exact', value: '/pricing' },
      { type: 'prefix', value: '/blog/' },
      { type: 'glob', value: '/**/compare/*' },
      { type: 'exact', value: `/${'a'.repeat(499)}` },
      { type: 'exact', value: '/caf%C3%A9' },
    ]) {
      assert.deepEqual((await accepted({ urlMatch })).urlMatch, urlMatch);
    }
    await refused({ urlMatch: { type: 'regex', value: '/' } }, '/urlMatch/type');
    await refused({ urlMatch: { type: 'exact', value: `/${'a'.repeat(500)}` } }, '/urlMatch/value');
    await refused({ urlMatch: { type: 'exact', value: '' } }, '/urlMatch/value');
    for (const value of ['pricing', 'https://shop.example/pricing', '/p?x=1', '/p#top', '/a b', '/<script>', '/50%']) {
      await refused({ urlMatch: { type: 'exact', value } }, '/urlMatch/value');
    }
    await refused({ urlMatch: { type: 'prefix', value: '/blog/*' } }, '/urlMatch/value');
    await refused({ urlMatch: { type: 'glob', value: '/***' } }, '/urlMatch/value');
    await refused({ urlMatch: { type: 'exact' } }, '/urlMatch/value');
    await refused({ urlMatch: { type: 'exact', value: '/', extra: 1 } }, '/urlMatch/extra');
    await refused({ urlMatch: undefined }, '/urlMatch');
  });

  test('conversionUrl: a path pattern, or null', async () => {
    for (const conversionUrl of ['/thanks', '/thanks/**', '/signup/*/done', null]) {
      assert.equal((await accepted({ conversionUrl })).conversionUrl, conversionUrl);
    }
    for (const conversionUrl of ['thanks', 'https://shop.example/thanks', '/t?x=1', '', `/${'a'.repeat(500)}`, '/***']) {
      await refused({ conversionUrl }, '/conversionUrl');
    }
  });
});

describe('experiences: rules are the segment grammar', () => {
  const rules = (conditions: Json[], match = 'all') => ({ rules: { match, conditions } });
  const c = (field: string, operator: string, value?: Json) => ({ field, operator, ...(value === undefined ? {} : { value }) });

  test('fields, operators and values as segment audiences take them', async () => {
    await accepted(
      rules([
        c('utm.campaign', 'contains', 'spring'),
        c('query.ref', 'exists'),
        c('visitor.device', 'equals', 'mobile'),
        c('company.employees', 'gte', 50),
        c('visitor.returning', 'equals', true),
        c('company.country', 'in', ['DE', 'FR']),
        c('referrer.channel', 'not_equals', 'paid'),
      ]),
    );
    const twenty = Array.from({ length: 20 }, () => c('utm.source', 'equals', 'x'));
    await accepted(rules(twenty));
    await refused(rules([...twenty, c('utm.source', 'equals', 'x')]), '/rules/conditions');
    await refused(rules([]), '/rules/conditions');
    await refused(rules([c('utm.nope', 'equals', 'x')]), '/rules/conditions/0/field');
    await refused(rules([c('utm.source', 'like', 'x')]), '/rules/conditions/0/operator');
    await refused(rules([c('utm.source', 'equals', 'x')], 'some'), '/rules/match');
    await refused(rules([c('utm.source', 'equals', 'x'.repeat(256))]), '/rules/conditions/0/value');
  });

  test('the checks a schema cannot say, at the same pointers', async () => {
    await refused(rules([c('utm.source', 'equals', 'x'), c('visitor.device', 'equals', 'fridge')]), '/rules/conditions/1/value');
    await refused(rules([c('company.employees', 'gte', 'many')]), '/rules/conditions/0/value');
    await refused(rules([c('utm.source', 'equals')]), '/rules/conditions/0/value');
    await refused(rules([c('visitor.country', 'in', ['DE', 'Germany'])]), '/rules/conditions/0/value/1');
    await refused(rules([c('visitor.returning', 'contains', 'x')]), '/rules/conditions/0/value');
  });

  test('null rules: every visitor', async () => {
    assert.equal((await accepted({ rules: null })).rules, null);
  });
});

describe('experiences: changes', () => {
  test('1 to 50 changes', async () => {
    await accepted({ changes: Array.from({ length: 50 }, () => TEXT) });
    await refused({ changes: Array.from({ length: 51 }, () => TEXT) }, '/changes');
    await refused({ changes: [] }, '/changes');
    await refused({ changes: undefined }, '/changes');
  });

  test('each action with its fields, stored as given', async () => {
    const changes = [
      { selector: '#hero h1', action: 'text', value: '{{company.name | Your team}}, meet us' },
      { selector: 'a.cta', action: 'attribute', attribute: 'href', value: 'https://shop.example/demo?src={{utm.source}}' },
      { selector: 'img.logo', action: 'attribute', attribute: 'src', value: '/logo-{{utm.campaign | default}}.png' },
      { selector: 'img.logo', action: 'attribute', attribute: 'alt', value: 'javascript: is only text here' },
      { selector: 'input[name=email]', action: 'attribute', attribute: 'placeholder', value: 'you@{{company.domain}}' },
      { selector: 'button', action: 'attribute', attribute: 'aria-label', value: 'Buy' },
      { selector: 'a', action: 'attribute', attribute: 'title', value: 'T' },
      { selector: '.banner', action: 'hide' },
      { selector: 'main > section:nth-of-type(2)', action: 'section', placement: 'before', value: { heading: 'Why us', body: '**Fast**' } },
    ];
    assert.deepEqual((await accepted({ changes })).changes, changes);
  });

  test('any other action is 400 at /changes/{i}/action', async () => {
    for (const action of ['script', 'html', 'remove', 'TEXT', '']) {
      await refused({ changes: [TEXT, { selector: 'h1', action, value: 'x' }] }, '/changes/1/action');
    }
    await refused(oneChange({ selector: 'h1', value: 'x' }), '/changes/0/action');
  });

  test('selectors: at most 500 characters, parsed on the server', async () => {
    await accepted(oneChange({ ...TEXT, selector: 'h'.repeat(500) }));
    await refused(oneChange({ ...TEXT, selector: 'h'.repeat(501) }), '/changes/0/selector');
    for (const selector of [
      '',
      'a,',
      '[href=',
      'a >',
      '> a',
      'a{color:red}',
      'a;b',
      'h1::before',
      'a:hover',
      'p:contains(x)',
      'li:nth-child(evil)',
      '</script><script>alert(1)</script>',
      '"><img src=x onerror=alert(1)>',
      'a\u0000',
      'svg|a',
      ':not(a >)',
    ]) {
      const res = await refused({ changes: [TEXT, { ...TEXT, selector }] }, '/changes/1/selector');
      assert.ok(
        res.errors.every((e: Json) => e.path.startsWith('/changes/1/selector')),
        JSON.stringify(res.errors),
      );
    }
    for (const selector of [
      '*',
      '#a.b[c="d"]',
      'ul > li + li ~ li',
      'div:has(> img)',
      ':is(h1, h2):not(.x)',
      'tr:nth-child(2n+1)',
      'my-card',
    ]) {
      await accepted(oneChange({ ...TEXT, selector }));
    }
  });

  test('text: value required, at most 5000 characters, kept as text', async () => {
    await accepted(oneChange({ ...TEXT, value: 'x'.repeat(5000) }));
    await accepted(oneChange({ ...TEXT, value: '' }));
    await refused(oneChange({ ...TEXT, value: 'x'.repeat(5001) }), '/changes/0/value');
    await refused(oneChange({ selector: 'h1', action: 'text' }), '/changes/0/value');
    await refused(oneChange({ ...TEXT, value: 5 }), '/changes/0/value');
    await refused(oneChange({ ...TEXT, value: { heading: '', body: '' } }), '/changes/0/value');
    await refused(oneChange({ ...TEXT, attribute: 'href' }), '/changes/0/attribute');
    await refused(oneChange({ ...TEXT, placement: 'after' }), '/changes/0/placement');
    const hostile = '<img src=x onerror=alert(1)>{{utm.term | <b>}}';
    assert.equal((await accepted(oneChange({ ...TEXT, value: hostile }))).changes[0].value, hostile);
  });

  test('attribute: one of six, href and src https or a path', async () => {
    const attr = (attribute: Json, value: Json = '/x') => oneChange({ selector: 'a', action: 'attribute', attribute, value });
    for (const attribute of ['onclick', 'style', 'srcdoc', 'formaction', 'HREF', 'data-x']) {
      await refused(attr(attribute), '/changes/0/attribute');
    }
    await refused(oneChange({ selector: 'a', action: 'attribute', value: '/x' }), '/changes/0/attribute');
    await refused(oneChange({ selector: 'a', action: 'attribute', attribute: 'href' }), '/changes/0/value');
    await refused(
      { changes: [{ selector: 'a', action: 'attribute', attribute: 'title', value: 'x', placement: 'after' }] },
      '/changes/0/placement',
    );
    await accepted(attr('title', 'x'.repeat(2048)));
    await refused(attr('title', 'x'.repeat(2049)), '/changes/0/value');
    await accepted(attr('href', `https://shop.example/${'x'.repeat(2000)}`));
    for (const value of [
      'javascript:alert(1)',
      'JAVASCRIPT:alert(1)',
      ' javascript:alert(1)',
      'java\nscript:alert(1)',
      '\u0001javascript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'vbscript:x',
      '//evil.example/x',
      '/\\evil.example',
      '\\\\evil.example',
      'http://shop.example',
      'mailto:a@b.example',
      'pricing',
      '',
      '{{utm.term}}',
      '/{{utm.term}}',
      'https://{{utm.term}}/',
      'https://shop.example{{utm.term}}/',
      'https://user:pw@shop.example/',
      '/a b',
    ]) {
      for (const attribute of ['href', 'src']) await refused(attr(attribute, value), '/changes/0/value');
    }
    // The others are text: any value, as text.
    for (const attribute of ['alt', 'title', 'placeholder', 'aria-label']) await accepted(attr(attribute, 'javascript:alert(1)'));
  });

  test('hide: the selector only', async () => {
    await accepted(oneChange({ selector: '.x', action: 'hide' }));
    await refused(oneChange({ selector: '.x', action: 'hide', value: 'x' }), '/changes/0/value');
    await refused(oneChange({ selector: '.x', action: 'hide', attribute: 'href' }), '/changes/0/attribute');
    await refused(oneChange({ selector: '.x', action: 'hide', placement: 'after' }), '/changes/0/placement');
  });

  test('section: one section of the page content schema, before or after', async () => {
    const section = (value: Json, placement: Json = 'after') => oneChange({ selector: 'main', action: 'section', placement, value });
    // Every layout but cta (an experience has no page actions to name).
    for (const value of everyLayout(images, 'unused').filter((s: Json) => s.layout !== 'cta')) {
      assert.deepEqual((await accepted(section(value))).changes[0].value, value);
    }
    await accepted(section({ heading: '', body: '', layout: 'pricing', items: [{ title: 'Pro', price: '$9', body: 'All' }] }));
    await refused(section({ heading: 'x', body: 'y' }, 'inside'), '/changes/0/placement');
    await refused(oneChange({ selector: 'main', action: 'section', value: { heading: 'x', body: 'y' } }), '/changes/0/placement');
    await refused(oneChange({ selector: 'main', action: 'section', placement: 'after' }), '/changes/0/value');
    await refused(
      oneChange({ selector: 'main', action: 'section', placement: 'after', attribute: 'href', value: { heading: '', body: '' } }),
      '/changes/0/attribute',
    );
    await refused(section('<h1>html</h1>'), '/changes/0/value');
    await refused(section({ heading: 'x' }), '/changes/0/value/body');
    await refused(section({ heading: 'x'.repeat(201), body: '' }), '/changes/0/value/heading');
    await refused(section({ heading: '', body: '', script: 'alert(1)' }), '/changes/0/value/script');
    await refused(section({ heading: '', body: '', layout: 'carousel' }), '/changes/0/value/layout');
    await refused(section({ heading: '', body: '', layout: 'faq', items: [] }), '/changes/0/value/items');
    await refused(section({ heading: '', body: '', layout: 'faq', items: [{ title: 'q' }] }), '/changes/0/value/items/0/body');
    await refused(section({ heading: '', body: '', layout: 'hero', imageAlt: '' }), '/changes/0/value/imageAssetId');
    await refused(section({ heading: '', body: '', layout: 'video', videoUrl: 'https://evil.example/v' }), '/changes/0/value/videoUrl');
    await refused(section({ heading: '', body: '', layout: 'cta', actionId: 'action_x' }), '/changes/0/value/actionId');
    await refused(section({ heading: '', body: '', layout: 'cta' }), '/changes/0/value/actionId');
    await refused(
      section({ heading: '', body: '', layout: 'pricing', items: [{ title: 'Pro', price: '$9', body: 'All', actionId: 'a' }] }),
      '/changes/0/value/items/0/actionId',
    );
    const other = await t.newTenant('Images');
    const foreign = (await imageAsset(t, other.key)).assetId;
    await refused(section({ heading: '', body: '', layout: 'hero', imageAssetId: foreign, imageAlt: '' }), '/changes/0/value/imageAssetId');
  });

  test('every bad change is named at once', async () => {
    const res = await refused(
      {
        urlMatch: { type: 'exact', value: 'x' },
        changes: [
          { selector: 'h1::after', action: 'text', value: 'x' },
          { selector: 'a', action: 'attribute', attribute: 'href', value: 'javascript:alert(1)' },
          {
            selector: 'main',
            action: 'section',
            placement: 'after',
            value: { heading: '', body: '', layout: 'faq', items: [{ title: 'q' }] },
          },
        ],
      },
      '/urlMatch/value',
      '/changes/0/selector',
      '/changes/1/value',
      '/changes/2/value/items/0/body',
    );
    assert.equal(res.errors.length, 4);
  });
});

describe('experiences: read, list, update, delete', () => {
  test('PATCH: a read sent back changes nothing; fields change; siteId is read-only', async () => {
    const e = await accepted({});
    assert.deepEqual(ok(await t.req('PATCH', `/v0/experiences/${e.experienceId}`, e)), e);
    const changes = [{ selector: '.promo', action: 'hide' }];
    const updated = ok(
      await t.req('PATCH', `/v0/experiences/${e.experienceId}`, {
        ...e,
        status: 'live',
        changes,
        rules: { match: 'all', conditions: [{ field: 'visitor.device', operator: 'equals', value: 'mobile' }] },
        holdoutPercent: 90,
        conversionUrl: '/thanks',
      }),
    );
    assert.deepEqual([updated.status, updated.changes, updated.holdoutPercent, updated.conversionUrl], ['live', changes, 90, '/thanks']);
    assert.ok(updated.updatedAt > e.updatedAt);
    const cleared = ok(await t.req('PATCH', `/v0/experiences/${e.experienceId}`, { rules: null, conversionUrl: null }));
    assert.deepEqual([cleared.rules, cleared.conversionUrl], [null, null]);
    const site2 = ok(await t.req('POST', '/v0/sites', { name: 'Two', origins: ['https://two.example'] }), 201).siteId;
    expectProblem(await t.req('PATCH', `/v0/experiences/${e.experienceId}`, { siteId: site2 }), 400, 'validation_failed', ['/siteId']);
    expectProblem(await t.req('PATCH', `/v0/experiences/${e.experienceId}`, { experienceId: 'x' }), 400, 'validation_failed', [
      '/experienceId',
    ]);
    expectProblem(await t.req('PATCH', `/v0/experiences/${e.experienceId}`, { holdoutPercent: 91 }), 400, 'validation_failed', [
      '/holdoutPercent',
    ]);
    expectProblem(await t.req('PATCH', `/v0/experiences/${e.experienceId}`, { changes: [] }), 400, 'validation_failed', ['/changes']);
    expectProblem(
      await t.req('PATCH', `/v0/experiences/${e.experienceId}`, {
        changes: [{ selector: 'a', action: 'attribute', attribute: 'src', value: 'data:x' }],
      }),
      400,
      'validation_failed',
      ['/changes/0/value'],
    );
    expectProblem(
      await t.req('PATCH', `/v0/experiences/${e.experienceId}`, {
        rules: { match: 'all', conditions: [{ field: 'visitor.device', operator: 'equals', value: 'fridge' }] },
      }),
      400,
      'validation_failed',
      ['/rules/conditions/0/value'],
    );
    expectProblem(
      await t.req('PATCH', `/v0/experiences/${e.experienceId}`, { urlMatch: { type: 'prefix', value: '/*' } }),
      400,
      'validation_failed',
      ['/urlMatch/value'],
    );
    // Nothing of the refused requests was kept.
    assert.deepEqual(ok(await t.req('GET', `/v0/experiences/${e.experienceId}`)), cleared);
  });

  test('list: newest first, by site and status, by cursor', async () => {
    const other = await t.newTenant('Lists');
    const key = other.key;
    const mySite = ok(await t.req('POST', '/v0/sites', { name: 'A', origins: ['https://a.example'] }, { key }), 201).siteId;
    const otherSite = ok(await t.req('POST', '/v0/sites', { name: 'B', origins: ['https://b.example'] }, { key }), 201).siteId;
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      made.push(
        ok(
          await t.req('POST', '/v0/experiences', body({ siteId: mySite, name: `e${i}`, status: i === 1 ? 'live' : 'draft' }), { key }),
          201,
        ).experienceId,
      );
    }
    const elsewhere = ok(await t.req('POST', '/v0/experiences', body({ siteId: otherSite }), { key }), 201).experienceId;
    const all = ok(await t.req('GET', '/v0/experiences', undefined, { key }));
    assert.equal(all.totalCount, 4);
    assert.deepEqual(
      all.items.map((e: Json) => e.experienceId),
      [elsewhere, made[2], made[1], made[0]],
    );
    const first = ok(await t.req('GET', `/v0/experiences?siteId=${mySite}&limit=2`, undefined, { key }));
    assert.deepEqual(
      first.items.map((e: Json) => e.experienceId),
      [made[2], made[1]],
    );
    assert.equal(first.totalCount, 3);
    const second = ok(await t.req('GET', `/v0/experiences?siteId=${mySite}&limit=2&cursor=${first.nextCursor}`, undefined, { key }));
    assert.deepEqual(
      second.items.map((e: Json) => e.experienceId),
      [made[0]],
    );
    assert.equal(second.hasMore, false);
    // A cursor is bound to its filters.
    expectProblem(
      await t.req('GET', `/v0/experiences?siteId=${otherSite}&cursor=${first.nextCursor}`, undefined, { key }),
      400,
      'validation_failed',
      ['/cursor'],
    );
    const live = ok(await t.req('GET', `/v0/experiences?siteId=${mySite}&status=live`, undefined, { key }));
    assert.deepEqual(
      live.items.map((e: Json) => e.experienceId),
      [made[1]],
    );
    expectProblem(await t.req('GET', '/v0/experiences?status=gone', undefined, { key }), 400, 'validation_failed', ['/status']);
    expectProblem(await t.req('GET', '/v0/experiences?limit=101', undefined, { key }), 400, 'validation_failed', ['/limit']);
    // Another tenant's site filters to nothing.
    assert.equal(ok(await t.req('GET', `/v0/experiences?siteId=${mySite}`)).totalCount, 0);
  });

  test("another tenant's experience is not found", async () => {
    const e = await accepted({});
    const other = await t.newTenant('Isolated');
    for (const [method, b] of [
      ['GET', undefined],
      ['PATCH', { name: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      expectProblem(await t.req(method, `/v0/experiences/${e.experienceId}`, b, { key: other.key }), 404, 'not_found');
    }
    assert.equal(ok(await t.req('GET', '/v0/experiences', undefined, { key: other.key })).totalCount, 0);
    assert.equal(ok(await t.req('GET', `/v0/experiences/${e.experienceId}`)).name, 'Welcome');
  });

  test('DELETE', async () => {
    const e = await accepted({});
    assert.equal((await t.req('DELETE', `/v0/experiences/${e.experienceId}`)).status, 204);
    expectProblem(await t.req('GET', `/v0/experiences/${e.experienceId}`), 404, 'not_found');
    expectProblem(await t.req('DELETE', `/v0/experiences/${e.experienceId}`), 404, 'not_found');
    expectProblem(await t.req('GET', '/v0/experiences/nope'), 400, 'validation_failed', ['/experience_id']);
  });

  test('Idempotency-Key replays the first answer', async () => {
    const headers = { 'idempotency-key': 'experience-once' };
    const first = ok(await t.req('POST', '/v0/experiences', body(), { headers }), 201);
    const again = await t.req('POST', '/v0/experiences', body(), { headers });
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body.experienceId, first.experienceId);
  });
});
