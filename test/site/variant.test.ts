// Runs once (scripts/test.mjs): it reaches no database.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Stamp } from '../../src/site/serve/stamp.js';
import { type Variant, variantKey } from '../../src/site/serve/variant.js';

// The served-document cache key is made of the whole Variant and the whole stamp (issue 47 §2):
// a value that joins either can never be left out of the key by hand.

const variant: Variant = {
  tenantId: 'tenant_1',
  pageId: 'page_1',
  audienceId: 'audience_1',
  shows: 'audience_1',
  versionId: null,
  origin: 'https://example.test',
  path: '/offer',
  submitted: false,
  linkId: 'link_1',
  linkUpdatedAt: '2026-12-01T00:00:00.000Z',
  arm: '',
};

const stamp: Stamp = {
  pageId: 'page_1',
  pageUpdatedAt: '2026-12-01T00:00:00.000Z',
  audienceId: 'audience_1',
  audienceUpdatedAt: '2026-12-01T00:00:01.000Z',
  versionId: 'version_1',
  versionStatus: 'published',
  personId: null,
  personUpdatedAt: null,
  accountId: null,
  accountUpdatedAt: null,
  gone: false,
  versionPublishedAt: '2026-12-01T00:00:02.000Z',
  experimentId: null,
  experimentKind: null,
  experimentArms: null,
  experimentUpdatedAt: null,
  controlSince: null,
  settingsUpdatedAt: null,
  homeAudienceId: null,
  homeUpdatedAt: null,
  homeVersionId: null,
};

/** Another value of the same type, so that only the value differs. */
const other = (value: unknown): unknown =>
  typeof value === 'boolean' ? !value : value === null ? 'x' : typeof value === 'string' ? `${value}x` : 1;

describe('the document cache key', () => {
  test('the same variant and stamp give the same key (a repeat visit is a cache hit)', () => {
    assert.equal(variantKey({ ...variant }, { ...stamp }), variantKey(variant, stamp));
  });

  test('every field of the variant is in the key', () => {
    const base = variantKey(variant, stamp);
    for (const field of Object.keys(variant) as (keyof Variant)[]) {
      assert.notEqual(variantKey({ ...variant, [field]: other(variant[field]) }, stamp), base, field);
    }
  });

  test('every field of the stamp is in the key', () => {
    const base = variantKey(variant, stamp);
    for (const field of Object.keys(stamp) as (keyof Stamp)[]) {
      assert.notEqual(variantKey(variant, { ...stamp, [field]: other(stamp[field]) }), base, field);
    }
  });

  test('a field added to the variant (a locale, a schedule) is in the key without any change to it', () => {
    const base = variantKey(variant, stamp);
    const withLocale = { ...variant, locale: 'fr' };
    assert.notEqual(variantKey(withLocale, stamp), base);
    assert.notEqual(variantKey(withLocale, stamp), variantKey({ ...variant, locale: 'de' } as Variant, stamp));
  });

  test('a value is never read as part of its neighbour (no separator can be forged)', () => {
    const a = variantKey({ ...variant, path: '/a|b', linkId: 'c' }, stamp);
    const b = variantKey({ ...variant, path: '/a', linkId: 'b|c' }, stamp);
    assert.notEqual(a, b);
  });
});
