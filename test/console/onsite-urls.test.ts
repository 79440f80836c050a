// Runs once (scripts/test.mjs): it reaches no database.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { choicesOf, pageWith, pathOf } from '../../console/src/views/onsite-urls.js';

// What the console's "Pick an element" and "Preview" open (issue 48): a page the experience's URL
// match takes, on the site's own origin only, with its token; and the preview's visitor, only what
// was typed.

describe('the page an experience opens', () => {
  test('an exact or prefix path as it is; a glob up to the part before its first star', () => {
    assert.equal(pathOf({ type: 'exact', value: '/pricing' }), '/pricing');
    assert.equal(pathOf({ type: 'prefix', value: 'docs' }), '/docs');
    assert.equal(pathOf({ type: 'glob', value: '/blog/*/intro' }), '/blog/');
    assert.equal(pathOf({ type: 'glob', value: '/docs/**' }), '/docs/');
    assert.equal(pathOf({ type: 'glob', value: '/a*' }), '/');
    assert.equal(pathOf({ type: 'glob', value: '/no-star' }), '/no-star');
    assert.equal(pathOf({ type: 'exact', value: '  ' }), '/');
  });

  test('the token is added to the query, the rest kept', () => {
    assert.equal(pageWith('https://www.shop.example', '/pricing', 'pam_pick', 'tok'), 'https://www.shop.example/pricing?pam_pick=tok');
    assert.equal(
      pageWith('http://shop-x.localhost:8080/', '/p?utm_source=x&pam_pick=old', 'pam_pick', 'a b'),
      'http://shop-x.localhost:8080/p?utm_source=x&pam_pick=a+b',
    );
    assert.equal(pageWith('https://shop.example', 'pricing', 'pam_preview', 't'), 'https://shop.example/pricing?pam_preview=t');
  });

  test('a page that would leave the site is refused', () => {
    for (const hostile of ['//evil.example/x', '/\\evil.example', '\\\\evil.example', '  //evil.example'])
      assert.throws(() => pageWith('https://shop.example', hostile, 'pam_pick', 't'), /must be a path on https:\/\/shop\.example/, hostile);
    // An address typed as the page is read as a path of the site.
    assert.equal(
      pageWith('https://shop.example', 'https://evil.example/', 'pam_pick', 't'),
      'https://shop.example/https://evil.example/?pam_pick=t',
    );
  });
});

describe("the preview's visitor", () => {
  test('only the fields typed, trimmed; nothing typed is an empty body', () => {
    assert.deepEqual(choicesOf({ source: ' linkedin ', term: '', medium: '  ' }, { name: 'Acme', size: '' }), {
      utm: { source: 'linkedin' },
      company: { name: 'Acme' },
    });
    assert.deepEqual(choicesOf({}, {}), {});
    // A number of employees is a number; anything else is sent as typed, for the API to name.
    assert.deepEqual(choicesOf({}, { employees: ' 250 ' }), { company: { employees: 250 } });
    assert.deepEqual(choicesOf({}, { employees: 'many' }), { company: { employees: 'many' } });
  });
});
