import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, type Json, ok, startApp, type TestApp } from '../helpers.js';

// Issue 38: phone numbers as people type them (national in the tenant's defaultCountry, or
// international), stored and answered in E.164; defaultCountry as a site setting.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const setCountry = async (defaultCountry: string | null) => ok(await t.req('PATCH', '/v0/site_settings', { defaultCountry })) as Json;
const createWith = (phoneNumber: unknown) => t.req('POST', '/v0/persons', { name: 'Phone', phoneNumber });

/** The one error of a 400 at /phoneNumber: its message, checked to be words and never the pattern. */
function phoneError(res: { status: number; body: Json }): string {
  expectProblem(res as never, 400, 'validation_failed', ['/phoneNumber']);
  const message = (res.body.errors as Json[]).find((e) => e.path === '/phoneNumber')?.message as string;
  assert.doesNotMatch(message, /\^|\\d|\{1,14\}|pattern|format "/, message);
  assert.doesNotMatch(res.body.detail as string, /\^\\\+|\\d\{1,14\}/, res.body.detail);
  return message;
}

describe('defaultCountry (site setting)', () => {
  test('unset by default; ISO 3166-1 alpha-2 accepted (uppercased), cleared by null; unknown codes are 400 at /defaultCountry', async () => {
    assert.equal(ok(await t.req('GET', '/v0/site_settings')).defaultCountry, null);
    assert.equal((await setCountry('US')).defaultCountry, 'US');
    assert.equal((await setCountry('gb')).defaultCountry, 'GB');
    assert.equal(ok(await t.req('GET', '/v0/site_settings')).defaultCountry, 'GB');
    const before = ok(await t.req('GET', '/v0/site_settings'));
    for (const bad of ['XX', 'ZZ', 'U', 'USA', '', 'U1', '12', 'us ', 5, true, ['US'], 'É']) {
      const res = await t.req('PATCH', '/v0/site_settings', { defaultCountry: bad });
      expectProblem(res, 400, 'validation_failed', ['/defaultCountry']);
    }
    // A refused country next to a valid field writes neither.
    expectProblem(await t.req('PATCH', '/v0/site_settings', { defaultCountry: 'XX', font: 'serif' }), 400, 'validation_failed', [
      '/defaultCountry',
    ]);
    assert.deepEqual(ok(await t.req('GET', '/v0/site_settings')), before);
    assert.equal((await setCountry(null)).defaultCountry, null);
  });
});

describe('phone numbers as people type them', () => {
  test('without defaultCountry: international formats are stored in E.164; national ones ask for a country code', async () => {
    await setCountry(null);
    for (const [typed, stored] of [
      ['+44 20 7183 8750', '+442071838750'],
      ['+1 (415) 555-0100', '+14155550100'],
      ['+1415555 0100', '+14155550100'],
      ['+1-415-555-0100', '+14155550100'],
      ['+33 1 42 68 53 00', '+33142685300'],
    ]) {
      const res = await createWith(typed);
      assert.equal(ok(res, 201).phoneNumber, stored, typed);
      assert.equal(ok(await t.req('GET', `/v0/persons/${res.body.personId}`)).phoneNumber, stored);
    }
    const message = phoneError(await createWith('(415) 555-0100'));
    assert.match(message, /country code/);
    assert.match(message, /defaultCountry/);
  });

  test('with defaultCountry US: (415) 555-0100 is +14155550100; +44 still works; a number impossible in the US is refused naming US', async () => {
    await setCountry('US');
    assert.equal(ok(await createWith('(415) 555-0100'), 201).phoneNumber, '+14155550100');
    assert.equal(ok(await createWith('415.555.0100'), 201).phoneNumber, '+14155550100');
    assert.equal(ok(await createWith('+44 20 7183 8750'), 201).phoneNumber, '+442071838750');
    assert.equal(phoneError(await createWith('555-01')), 'is not a valid phone number for US');
    // One digit too many for a US number, just outside; ten digits, just inside.
    assert.equal(ok(await createWith('415 555 0100'), 201).phoneNumber, '+14155550100');
    assert.equal(phoneError(await createWith('415 555 01000')), 'is not a valid phone number for US');
    // With GB, the same national digits read as a British number.
    await setCountry('GB');
    assert.equal(ok(await createWith('020 7183 8750'), 201).phoneNumber, '+442071838750');
    await setCountry(null);
  });

  test('a value in the reference pattern is taken as it is, even when no country has it', async () => {
    for (const phoneNumber of ['+12', `+9${'0'.repeat(14)}`, '+14155550100']) {
      assert.equal(ok(await createWith(phoneNumber), 201).phoneNumber, phoneNumber);
    }
  });

  test('hostile and careless values: 400 at /phoneNumber in words, nothing written', async () => {
    await setCountry('US');
    const count = async () => ok(await t.req('GET', '/v0/persons?limit=1')).totalCount as number;
    const before = await count();
    for (const bad of [
      '',
      '1',
      '12',
      'bad',
      '+',
      '+1',
      '+0123',
      `+1${'2'.repeat(15)}`,
      '1-800-FLOWERS',
      '415 555 0100 call me',
      '<script>alert(1)</script>',
      "4155550100'; drop table persons; --",
      '+1 415 555 0100 ext. 12',
      '\u0000+14155550100',
      ' +14155550100',
      '+14155550100\n',
      'tel:+14155550100',
      '+1415555010a',
      '9'.repeat(64),
      `+1 ${'5'.repeat(61)}`,
      '9'.repeat(65),
      '𝟒𝟏𝟓𝟓𝟓𝟓𝟎𝟏𝟎𝟎',
    ]) {
      const res = await createWith(bad);
      assert.equal(res.status, 400, JSON.stringify(bad));
      phoneError(res);
    }
    for (const wrongType of [14155550100, null, ['+14155550100'], { n: 1 }]) {
      expectProblem(await createWith(wrongType), 400, 'validation_failed', ['/phoneNumber']);
    }
    assert.equal(await count(), before);
    await setCountry(null);
  });

  test('the input bound: 64 characters as typed, just inside and just outside', async () => {
    await setCountry(null);
    const spaced = `+44${' '.repeat(64 - 13)}2071838750`;
    assert.equal(spaced.length, 64);
    assert.equal(ok(await createWith(spaced), 201).phoneNumber, '+442071838750');
    const outside = `+44${' '.repeat(65 - 13)}2071838750`;
    assert.equal(outside.length, 65);
    phoneError(await createWith(outside));
  });

  test('PATCH normalises the same way; sending back the E.164 read changes nothing; a refused patch writes nothing', async () => {
    await setCountry('US');
    const p = ok(await t.req('POST', '/v0/persons', { name: 'Patchy' }), 201);
    const patched = ok(await t.req('PATCH', `/v0/persons/${p.personId}`, { phoneNumber: '(415) 555-0101' }));
    assert.equal(patched.phoneNumber, '+14155550101');
    const again = ok(await t.req('PATCH', `/v0/persons/${p.personId}`, patched));
    assert.equal(again.updatedAt, patched.updatedAt);
    // The same number typed another way is no change either.
    assert.equal(ok(await t.req('PATCH', `/v0/persons/${p.personId}`, { phoneNumber: '415-555-0101' })).updatedAt, patched.updatedAt);
    const res = await t.req('PATCH', `/v0/persons/${p.personId}`, { name: 'Changed', phoneNumber: '555' });
    phoneError(res);
    assert.deepEqual(ok(await t.req('GET', `/v0/persons/${p.personId}`)), patched);
    assert.equal(ok(await t.req('PATCH', `/v0/persons/${p.personId}`, { phoneNumber: null })).phoneNumber, null);
    await setCountry(null);
  });

  test('the OpenAPI request schema takes the typed form (the response keeps the pattern: test/http/openapi.test.ts)', async () => {
    const doc = ok(await t.req('GET', '/openapi.json'));
    const schemas = doc.components.schemas as Record<string, Json>;
    const bodyOf = (s: Json): Json => (s.$ref ? schemas[String(s.$ref).split('/').pop() as string] : s) as Json;
    for (const [path, method] of [
      ['/v0/persons', 'post'],
      ['/v0/persons/{person_id}', 'patch'],
    ] as const) {
      const body = bodyOf(doc.paths[path][method].requestBody.content['application/json'].schema);
      const input = body.properties.phoneNumber as Json;
      assert.equal(input.pattern, undefined, `${method} ${path}`);
      assert.equal(input.format, 'phone');
      assert.equal(input.maxLength, 64);
    }
  });
});
