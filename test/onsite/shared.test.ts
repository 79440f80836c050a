import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { selectorProblem, urlValueProblem, filledUrlIsSafe } from '../../src/onsite/changes.js';
import { createExperience } from '../../src/onsite/experiences-repository.js';
import { liveExperiencesOfSite, siteByKey, touchSiteSeen } from '../../src/onsite/index.js';
import { createSite } from '../../src/onsite/sites-repository.js';
import { compileUrlMatch, urlMatchSource, urlPatternProblem } from '../../src/onsite/url-match.js';
import { startApp, type TestApp } from '../helpers.js';

// The pure pieces the snippet, decisions and measurement share (url-match.ts, changes.ts), and the
// repository reads they use (index.ts).

describe('url patterns', () => {
  const cases: [Parameters<typeof compileUrlMatch>[0], string, boolean][] = [
    [{ type: 'exact', value: '/pricing' }, '/pricing', true],
    [{ type: 'exact', value: '/pricing' }, '/pricing/', true],
    [{ type: 'exact', value: '/pricing/' }, '/pricing', true],
    [{ type: 'exact', value: '/pricing' }, '/pricing/x', false],
    [{ type: 'exact', value: '/pricing' }, '/Pricing', false],
    [{ type: 'exact', value: '/' }, '/', true],
    [{ type: 'exact', value: '/' }, '/a', false],
    [{ type: 'prefix', value: '/blog' }, '/blog', true],
    [{ type: 'prefix', value: '/blog' }, '/blog/x/y', true],
    [{ type: 'prefix', value: '/blog' }, '/blogger', false],
    [{ type: 'prefix', value: '/blog/' }, '/blog', false],
    [{ type: 'prefix', value: '/blog/' }, '/blog/x', true],
    [{ type: 'prefix', value: '/' }, '/anything/at/all', true],
    [{ type: 'glob', value: '/blog/*' }, '/blog/x', true],
    [{ type: 'glob', value: '/blog/*' }, '/blog/x/y', false],
    [{ type: 'glob', value: '/blog/**' }, '/blog/x/y', true],
    [{ type: 'glob', value: '/a.b' }, '/aXb', false],
    [{ type: 'glob', value: '/p/*/x' }, '/p/1/x/', true],
    [{ type: 'glob', value: '/p(x)+' }, '/p(x)+', true],
    [{ type: 'glob', value: '/**/pricing' }, '/en/us/pricing', true],
    [{ type: 'glob', value: '/*-offer' }, '/spring-offer', true],
    [{ type: 'glob', value: '/*-offer' }, '/a/spring-offer', false],
  ];
  for (const [match, path, want] of cases) {
    test(`${match.type} ${match.value} ${want ? 'matches' : 'does not match'} ${path}`, () => {
      assert.equal(compileUrlMatch(match).test(path), want);
      // The script compiles the same source text.
      assert.equal(new RegExp(urlMatchSource(match)).test(path), want);
    });
  }

  test('bad patterns are named', () => {
    assert.equal(urlPatternProblem('exact', '/ok'), undefined);
    assert.match(urlPatternProblem('exact', 'pricing') ?? '', /starting with \//);
    assert.match(urlPatternProblem('exact', 'https://x.com/pricing') ?? '', /starting with \//);
    assert.match(urlPatternProblem('exact', '/a?b=1') ?? '', /query/);
    assert.match(urlPatternProblem('exact', '/a#b') ?? '', /fragment/);
    assert.match(urlPatternProblem('exact', '/a b') ?? '', /path characters/);
    assert.match(urlPatternProblem('exact', '/a%zz') ?? '', /percent/);
    assert.match(urlPatternProblem('prefix', '/a/*') ?? '', /only in a glob/);
    assert.match(urlPatternProblem('glob', '/a/***') ?? '', /\*\*\*/);
    assert.equal(urlPatternProblem('glob', `/${'a'.repeat(499)}`), undefined);
    assert.match(urlPatternProblem('glob', `/${'a'.repeat(500)}`) ?? '', /1 to 500/);
  });
});

describe('selectors', () => {
  for (const good of [
    'h1',
    '#hero .title',
    'main > section:nth-of-type(2) h2',
    'a[href^="/pricing"]',
    'ul li:not(.done):first-child',
    'div:has(> img)',
    ':is(h1, h2).big',
    'my-element::part',
    'button[aria-label="Buy now"]',
    '*',
    'x'.repeat(500),
  ].filter((s) => !s.includes('::part'))) {
    test(`accepts ${good.slice(0, 60)}`, () => assert.equal(selectorProblem(good), undefined));
  }
  for (const bad of [
    '',
    'x'.repeat(501),
    'a,',
    '[x=',
    'a >',
    '> a',
    'a;b',
    'a{}',
    'a::before',
    'a:hover',
    'a:contains(x)',
    'li:nth-child(foo)',
    '</script><script>alert(1)</script>',
    'a\u0000b',
    'svg|a',
    ':not(a >)',
  ]) {
    test(`refuses ${JSON.stringify(bad.slice(0, 40))}`, () => assert.ok(selectorProblem(bad)));
  }
});

describe('href and src values', () => {
  for (const good of [
    '/pricing',
    '/p?utm={{utm.term}}',
    'https://example.com/x',
    'https://example.com/{{utm.term}}',
    'https://example.com?q={{utm.term | x}}',
  ]) {
    test(`accepts ${good}`, () => assert.equal(urlValueProblem(good), undefined));
  }
  for (const bad of [
    'javascript:alert(1)',
    'JavaScript:alert(1)',
    ' javascript:alert(1)',
    'java\tscript:alert(1)',
    'data:text/html,<script>',
    '//evil.example/x',
    '/\\evil.example',
    'http://example.com',
    'pricing',
    '{{utm.term}}',
    '/{{utm.term}}',
    'https://{{utm.term}}/x',
    'https://ex{{utm.term}}.com/',
    'https://user:pw@example.com/',
    '',
  ]) {
    test(`refuses ${JSON.stringify(bad)}`, () => assert.ok(urlValueProblem(bad)));
  }
  test('a filled value is checked again', () => {
    assert.equal(filledUrlIsSafe('https://a.example/x'), true);
    assert.equal(filledUrlIsSafe('/x'), true);
    assert.equal(filledUrlIsSafe('//a.example/x'), false);
    assert.equal(filledUrlIsSafe('javascript:x'), false);
    assert.equal(filledUrlIsSafe('/x y'), false);
  });
});

describe('the visitor plane reads', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp();
  });
  after(async () => t.close());

  test('siteByKey, liveExperiencesOfSite (by priority), touchSiteSeen at most once a minute', async () => {
    const site = await t.app.db
      .transaction()
      .execute((trx) => createSite(trx, 'https://pam.test', t.tenantId, { name: 'Shop', origins: ['https://Shop.Example'] }));
    assert.equal(site.snippet, `<script src="https://pam.test/_pam/site.js?site=${site.siteKey}"></script>`);
    const found = await siteByKey(t.app.db, site.siteKey);
    assert.deepEqual(found, {
      siteId: site.siteId,
      tenantId: t.tenantId,
      name: 'Shop',
      origins: ['https://shop.example'],
      siteKey: site.siteKey,
      lastSeenAt: null,
    });
    assert.equal(await siteByKey(t.app.db, 'nope'), undefined);
    const make = (name: string, status: 'live' | 'draft', priority: number) =>
      t.app.db.transaction().execute((trx) =>
        createExperience(trx, t.tenantId, {
          siteId: site.siteId,
          name,
          status,
          priority,
          urlMatch: { type: 'exact', value: '/' },
          changes: [{ selector: 'h1', action: 'text', value: 'Hi {{utm.term | there}}' }],
        }),
      );
    await make('low', 'live', 1);
    await make('draft', 'draft', 900);
    await make('high', 'live', 5);
    const live = await liveExperiencesOfSite(t.app.db, site.siteId);
    assert.deepEqual(
      live.map((e) => e.name),
      ['high', 'low'],
    );
    assert.equal(live[0]?.tenantId, t.tenantId);
    assert.deepEqual(live[0]?.changes, [{ selector: 'h1', action: 'text', value: 'Hi {{utm.term | there}}' }]);
    assert.equal(live[0]?.holdoutPercent, 0);
    assert.equal(live[0]?.rules, null);

    const at = '2026-12-06T10:00:00.000Z';
    await touchSiteSeen(t.app.db, site.siteId, Date.parse(at));
    assert.equal((await siteByKey(t.app.db, site.siteKey))?.lastSeenAt, at);
    await touchSiteSeen(t.app.db, site.siteId, Date.parse('2026-12-06T10:00:59.000Z'));
    assert.equal((await siteByKey(t.app.db, site.siteKey))?.lastSeenAt, at);
    await touchSiteSeen(t.app.db, site.siteId, Date.parse('2026-12-06T10:01:00.000Z'));
    assert.equal((await siteByKey(t.app.db, site.siteKey))?.lastSeenAt, '2026-12-06T10:01:00.000Z');
  });
});
