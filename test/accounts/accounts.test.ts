import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, ISO_MS, startApp, type Json, type Res, type TestApp } from '../helpers.js';

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const ACCOUNT_ID = /^account_[a-z0-9]{26}$/;
const ACCOUNT_KEYS = ['accountId', 'createdAt', 'domain', 'latestActivityAt', 'linkedPersonsCount', 'name', 'updatedAt'];
const ENVELOPE_KEYS = ['hasMore', 'items', 'nextCursor', 'totalCount'];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A fresh tenant, so that a search sees only what the test itself created. */
async function freshKey(): Promise<string> {
  return (await t.newTenant('Accounts tenant')).key;
}

async function createAccount(key: string, name: string, domain: string): Promise<Json> {
  const res = await t.req('POST', '/v0/accounts', { name, domain }, { key });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

async function createPerson(key: string, name: string, domain?: string): Promise<Json> {
  const res = await t.req('POST', '/v0/persons', domain === undefined ? { name } : { name, domain }, { key });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

function searchUrl(params: Record<string, string | number> = {}): string {
  const qs = new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();
  return qs ? `/v0/accounts/search?${qs}` : '/v0/accounts/search';
}

async function search(key: string, params: Record<string, string | number> = {}): Promise<Json> {
  const res = await t.req('GET', searchUrl(params), undefined, { key });
  assert.equal(res.status, 200, res.text);
  assertEnvelope(res);
  return res.body;
}

function assertEnvelope(res: Res): void {
  assert.deepEqual(Object.keys(res.body).sort(), ENVELOPE_KEYS);
  assert.ok(Array.isArray(res.body.items));
  assert.equal(typeof res.body.hasMore, 'boolean');
  assert.ok(res.body.nextCursor === null || typeof res.body.nextCursor === 'string');
  assert.ok(Number.isInteger(res.body.totalCount));
}

function assertAccountShape(a: Json): void {
  assert.deepEqual(Object.keys(a).sort(), ACCOUNT_KEYS);
  assert.match(a.accountId, ACCOUNT_ID);
  assert.match(a.createdAt, ISO_MS);
  assert.match(a.updatedAt, ISO_MS);
  assert.match(a.latestActivityAt, ISO_MS);
  assert.ok(Number.isInteger(a.linkedPersonsCount));
  assert.ok(a.linkedPersonsCount >= 0);
}

const names = (page: Json): string[] => page.items.map((a: Json) => a.name);
const ids = (page: Json): string[] => page.items.map((a: Json) => a.accountId);

describe('POST /v0/accounts', () => {
  test('creates an account: 201 with every field', async () => {
    const key = await freshKey();
    const res = await t.req('POST', '/v0/accounts', { name: 'Globex Corporation', domain: 'globex.example' }, { key });
    assert.equal(res.status, 201, res.text);
    assert.ok(String(res.headers['content-type']).startsWith('application/json'));
    const a = res.body;
    assertAccountShape(a);
    assert.equal(a.name, 'Globex Corporation');
    assert.equal(a.domain, 'globex.example');
    assert.equal(a.linkedPersonsCount, 0);
    assert.equal(a.updatedAt, a.createdAt);
    assert.equal(a.latestActivityAt, a.updatedAt);
    assert.ok(Math.abs(Date.parse(a.createdAt) - Date.now()) < 60_000);

    // Search gives back exactly what creation answered.
    const page = await search(key);
    assert.deepEqual(page.items, [a]);
  });

  test('ids are distinct and later accounts sort after earlier ones', async () => {
    const key = await freshKey();
    const created: string[] = [];
    for (let i = 0; i < 5; i++) created.push((await createAccount(key, `Order ${i}`, `order-${i}.example`)).accountId);
    assert.equal(new Set(created).size, 5);
    assert.deepEqual([...created].sort(), created);
  });

  test('name: length 1 and 255 are accepted, 0 and 256 are 400 at /name', async () => {
    const key = await freshKey();
    const one = await t.req('POST', '/v0/accounts', { name: 'x', domain: 'one.example' }, { key });
    assert.equal(one.status, 201, one.text);
    assert.equal(one.body.name, 'x');
    const max = await t.req('POST', '/v0/accounts', { name: 'n'.repeat(255), domain: 'max.example' }, { key });
    assert.equal(max.status, 201, max.text);
    assert.equal(max.body.name, 'n'.repeat(255));

    expectProblem(await t.req('POST', '/v0/accounts', { name: '', domain: 'empty.example' }, { key }), 400, 'validation_failed', ['/name']);
    expectProblem(
      await t.req('POST', '/v0/accounts', { name: 'n'.repeat(256), domain: 'long.example' }, { key }),
      400,
      'validation_failed',
      ['/name'],
    );
    expectProblem(await t.req('POST', '/v0/accounts', { domain: 'noname.example' }, { key }), 400, 'validation_failed', ['/name']);
    expectProblem(await t.req('POST', '/v0/accounts', { name: null, domain: 'nullname.example' }, { key }), 400, 'validation_failed', [
      '/name',
    ]);
    expectProblem(await t.req('POST', '/v0/accounts', { name: 42, domain: 'numname.example' }, { key }), 400, 'validation_failed', [
      '/name',
    ]);

    // None of the rejected requests created anything.
    assert.deepEqual(names(await search(key)).sort(), ['n'.repeat(255), 'x'].sort());
  });

  test('domain is required: missing, empty, null or not a string is 400 at /domain', async () => {
    const key = await freshKey();
    expectProblem(await t.req('POST', '/v0/accounts', { name: 'No domain' }, { key }), 400, 'validation_failed', ['/domain']);
    expectProblem(await t.req('POST', '/v0/accounts', { name: 'Empty domain', domain: '' }, { key }), 400, 'validation_failed', [
      '/domain',
    ]);
    expectProblem(await t.req('POST', '/v0/accounts', { name: 'Null domain', domain: null }, { key }), 400, 'validation_failed', [
      '/domain',
    ]);
    expectProblem(await t.req('POST', '/v0/accounts', { name: 'Num domain', domain: 7 }, { key }), 400, 'validation_failed', ['/domain']);
    // Both fields missing: each is named at its own path.
    expectProblem(await t.req('POST', '/v0/accounts', {}, { key }), 400, 'validation_failed', ['/name', '/domain']);
    assert.equal((await search(key)).totalCount, 0);
  });

  test('an unknown field is 400 naming it', async () => {
    const key = await freshKey();
    expectProblem(
      await t.req('POST', '/v0/accounts', { name: 'Extra', domain: 'extra.example', industry: 'retail' }, { key }),
      400,
      'validation_failed',
      ['/industry'],
    );
    expectProblem(
      await t.req('POST', '/v0/accounts', { name: 'Extra', domain: 'extra.example', linkedPersonsCount: 3 }, { key }),
      400,
      'validation_failed',
      ['/linkedPersonsCount'],
    );
    assert.equal((await search(key)).totalCount, 0);
  });

  test('bad JSON and a body that is not an object are 400', async () => {
    const key = await freshKey();
    expectProblem(await t.req('POST', '/v0/accounts', '{"name": "x", ', { key }), 400, 'validation_failed');
    expectProblem(await t.req('POST', '/v0/accounts', '[]', { key }), 400, 'validation_failed');
  });

  test('a duplicate domain in the same tenant is 409 conflict, also when it differs only in case', async () => {
    const key = await freshKey();
    const first = await createAccount(key, 'Initech', 'initech.example');
    expectProblem(await t.req('POST', '/v0/accounts', { name: 'Initech again', domain: 'initech.example' }, { key }), 409, 'conflict');
    expectProblem(await t.req('POST', '/v0/accounts', { name: 'Initech shouting', domain: 'INITECH.Example' }, { key }), 409, 'conflict');
    // The first account is untouched and alone.
    const page = await search(key);
    assert.deepEqual(page.items, [first]);
    assert.equal(page.totalCount, 1);
  });

  test('the same domain in another tenant is fine', async () => {
    const keyA = await freshKey();
    const keyB = await freshKey();
    const a = await createAccount(keyA, 'Shared A', 'shared.example');
    const b = await createAccount(keyB, 'Shared B', 'shared.example');
    assert.notEqual(a.accountId, b.accountId);
    assert.deepEqual((await search(keyA)).items, [a]);
    assert.deepEqual((await search(keyB)).items, [b]);
  });

  test('concurrent creations with one domain: exactly one 201, the others 409', async () => {
    const key = await freshKey();
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        t.req('POST', '/v0/accounts', { name: `Race ${i}`, domain: i % 2 ? 'RACE.example' : 'race.example' }, { key }),
      ),
    );
    const created = results.filter((r) => r.status === 201);
    assert.equal(created.length, 1);
    for (const r of results) if (r.status !== 201) expectProblem(r, 409, 'conflict');
    const page = await search(key);
    assert.deepEqual(page.items, [created[0]!.body]);
  });

  test('without an API key it is 401', async () => {
    expectProblem(await t.req('POST', '/v0/accounts', { name: 'Anon', domain: 'anon.example' }, { key: null }), 401, 'unauthorized');
    expectProblem(await t.req('GET', '/v0/accounts/search', undefined, { key: null }), 401, 'unauthorized');
  });
});

describe('linkedPersonsCount', () => {
  test('counts persons whose domain equals the account domain ignoring case', async () => {
    const key = await freshKey();
    await createPerson(key, 'Before Creation', 'Linked.Example');
    const account = await createAccount(key, 'Linked', 'linked.example');
    // A person that existed before the account already counts at creation.
    assert.equal(account.linkedPersonsCount, 1);

    await createPerson(key, 'Lower Case', 'linked.example');
    await createPerson(key, 'Upper Case', 'LINKED.EXAMPLE');
    await createPerson(key, 'Sub Domain', 'sub.linked.example'); // not equal: does not count
    await createPerson(key, 'Prefix', 'linked.example.org'); // not equal: does not count
    await createPerson(key, 'No Domain'); // no domain: does not count

    const page = await search(key, { query: 'linked.example' });
    const item = page.items.find((a: Json) => a.accountId === account.accountId);
    assert.ok(item);
    assert.equal(item.linkedPersonsCount, 3);
  });

  test('changes when a person domain is PATCHed away, set to null, or PATCHed onto the account', async () => {
    const key = await freshKey();
    const account = await createAccount(key, 'Hooli', 'hooli.example');
    const p1 = await createPerson(key, 'Gavin', 'hooli.example');
    const p2 = await createPerson(key, 'Nelson', 'HOOLI.example');
    const p3 = await createPerson(key, 'Richard', 'piedpiper.example');
    const count = async () => {
      const page = await search(key);
      const item = page.items.find((a: Json) => a.accountId === account.accountId);
      assert.ok(item);
      return item.linkedPersonsCount;
    };
    assert.equal(await count(), 2);

    let res = await t.req('PATCH', `/v0/persons/${p1.personId}`, { domain: 'elsewhere.example' }, { key });
    assert.equal(res.status, 200, res.text);
    assert.equal(await count(), 1);

    res = await t.req('PATCH', `/v0/persons/${p2.personId}`, { domain: null }, { key });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.domain, null);
    assert.equal(await count(), 0);

    res = await t.req('PATCH', `/v0/persons/${p3.personId}`, { domain: 'Hooli.Example' }, { key });
    assert.equal(res.status, 200, res.text);
    assert.equal(await count(), 1);

    // Changing another field only keeps the link.
    res = await t.req('PATCH', `/v0/persons/${p3.personId}`, { name: 'Richard H.' }, { key });
    assert.equal(res.status, 200, res.text);
    assert.equal(await count(), 1);
  });

  test('persons of another tenant never count', async () => {
    const keyA = await freshKey();
    const keyB = await freshKey();
    const a = await createAccount(keyA, 'Umbrella', 'umbrella.example');
    await createPerson(keyB, 'Other Tenant 1', 'umbrella.example');
    await createPerson(keyB, 'Other Tenant 2', 'UMBRELLA.EXAMPLE');
    const b = await createAccount(keyB, 'Umbrella B', 'umbrella.example');
    assert.equal(b.linkedPersonsCount, 2);

    const pageA = await search(keyA);
    assert.equal(pageA.items.length, 1);
    assert.equal(pageA.items[0].accountId, a.accountId);
    assert.equal(pageA.items[0].linkedPersonsCount, 0);
    // Nor do they make A's account non-empty.
    assert.deepEqual(ids(await search(keyA, { includeEmptyOnly: 'true' })), [a.accountId]);

    await createPerson(keyA, 'Own Tenant', 'umbrella.example');
    assert.equal((await search(keyA)).items[0].linkedPersonsCount, 1);
    assert.equal((await search(keyB)).items[0].linkedPersonsCount, 2);
  });
});

describe('latestActivityAt', () => {
  test('equals updatedAt at creation and moves to the newest log createdAt', async () => {
    const key = await freshKey();
    const account = await createAccount(key, 'Active', 'active.example');
    assert.equal(account.latestActivityAt, account.updatedAt);

    await sleep(5);
    const log1 = await t.req('POST', `/v0/accounts/${account.accountId}/logs`, { source: 'crm', type: 'note', payload: { n: 1 } }, { key });
    assert.equal(log1.status, 201, log1.text);
    assert.ok(log1.body.createdAt > account.updatedAt);
    let item = (await search(key)).items[0];
    assert.equal(item.accountId, account.accountId);
    assert.equal(item.latestActivityAt, log1.body.createdAt);

    await sleep(5);
    const log2 = await t.req('POST', `/v0/accounts/${account.accountId}/logs`, { source: 'crm', type: 'note', payload: { n: 2 } }, { key });
    assert.equal(log2.status, 201, log2.text);
    assert.ok(log2.body.createdAt > log1.body.createdAt);
    item = (await search(key)).items[0];
    assert.equal(item.latestActivityAt, log2.body.createdAt);
    // The account itself is otherwise unchanged.
    assert.equal(item.createdAt, account.createdAt);
    assert.equal(item.name, account.name);
    assert.equal(item.domain, account.domain);
  });

  test('a log of another account does not move it', async () => {
    const key = await freshKey();
    const quiet = await createAccount(key, 'Quiet', 'quiet.example');
    const busy = await createAccount(key, 'Busy', 'busy.example');
    await sleep(5);
    const log = await t.req('POST', `/v0/accounts/${busy.accountId}/logs`, { source: 'crm', type: 'call', payload: {} }, { key });
    assert.equal(log.status, 201, log.text);
    const page = await search(key);
    const byId = new Map(page.items.map((a: Json) => [a.accountId, a]));
    assert.equal((byId.get(quiet.accountId) as Json).latestActivityAt, quiet.latestActivityAt);
    assert.equal((byId.get(busy.accountId) as Json).latestActivityAt, log.body.createdAt);
  });
});

describe('GET /v0/accounts/search', () => {
  test('envelope is exact; newest first; empty tenant gives an empty page', async () => {
    const key = await freshKey();
    const empty = await t.req('GET', '/v0/accounts/search', undefined, { key });
    assert.equal(empty.status, 200, empty.text);
    assert.deepEqual(empty.body, { items: [], hasMore: false, nextCursor: null, totalCount: 0 });

    const a = await createAccount(key, 'First', 'first.example');
    const b = await createAccount(key, 'Second', 'second.example');
    const c = await createAccount(key, 'Third', 'third.example');
    const res = await t.req('GET', '/v0/accounts/search', undefined, { key });
    assert.equal(res.status, 200, res.text);
    assertEnvelope(res);
    assert.deepEqual(res.body, { items: [c, b, a], hasMore: false, nextCursor: null, totalCount: 3 });
    for (const item of res.body.items) assertAccountShape(item);
  });

  test('query is a case-insensitive substring of name or domain', async () => {
    const key = await freshKey();
    const acme = await createAccount(key, 'Acme Corporation', 'acme.example');
    const wayne = await createAccount(key, 'Wayne Enterprises', 'wayne.test');
    const stark = await createAccount(key, 'Stark Industries', 'stark-acme.io');
    const soylent = await createAccount(key, 'Soylent', 'SOYLENT.Example');

    const q = async (query: string) => ids(await search(key, { query }));
    assert.deepEqual(await q('acme'), [stark.accountId, acme.accountId]); // name of one, domain of the other
    assert.deepEqual(await q('ACME'), [stark.accountId, acme.accountId]);
    assert.deepEqual(await q('me co'), [acme.accountId]); // substring across a space, in the name
    assert.deepEqual(await q('ENTERPRISES'), [wayne.accountId]);
    assert.deepEqual(await q('.TEST'), [wayne.accountId]); // domain only
    assert.deepEqual(await q('soylent.example'), [soylent.accountId]); // domain stored in mixed case
    assert.deepEqual(await q('example'), [soylent.accountId, acme.accountId]);
    assert.deepEqual(await q('rk ind'), [stark.accountId]);
    assert.deepEqual(await q('nothing-matches-this'), []);

    const page = await search(key, { query: 'acme' });
    assert.equal(page.totalCount, 2);
    assert.equal(page.hasMore, false);
    assert.equal(page.nextCursor, null);
  });

  test('LIKE wildcards and the escape character in the query are matched literally', async () => {
    const key = await freshKey();
    const percent = await createAccount(key, '100% Growth', 'growth.example');
    await createAccount(key, 'Plain Name', 'plain.example');
    const underscore = await createAccount(key, 'under_score', 'underscore.example');
    await createAccount(key, 'underXscore', 'underxscore.example');
    const backslash = await createAccount(key, 'back\\slash', 'backslash.example');
    const domainPercent = await createAccount(key, 'Weird Domain', 'we%ird.example');

    const q = async (query: string) => ids(await search(key, { query }));
    assert.deepEqual(await q('%'), [domainPercent.accountId, percent.accountId]);
    assert.deepEqual(await q('0%'), [percent.accountId]);
    assert.deepEqual(await q('_'), [underscore.accountId]);
    assert.deepEqual(await q('under_s'), [underscore.accountId]);
    assert.deepEqual(await q('\\'), [backslash.accountId]);
    assert.deepEqual(await q('k\\s'), [backslash.accountId]);
    assert.deepEqual(await q('%%'), []);
    // Longer queries (which an index may serve) are just as literal.
    assert.deepEqual(await q('0% g'), [percent.accountId]);
    assert.deepEqual(await q('100%'), [percent.accountId]);
    assert.deepEqual(await q('e%i'), [domainPercent.accountId]);
    assert.deepEqual(await q('er_s'), [underscore.accountId]);
    assert.deepEqual(await q('under_score'), [underscore.accountId]);
    assert.deepEqual(await q('k\\sl'), [backslash.accountId]);
    assert.deepEqual(await q('100%25'), []); // the literal text "100%25" (URL-encoded once by searchUrl)
    assert.deepEqual(await q('%ro%'), []);
    assert.deepEqual(await q('u_der'), []);
  });

  test('quotes, search-syntax words and non-ASCII letters in the query are plain text', async () => {
    const key = await freshKey();
    const quoted = await createAccount(key, 'Say "Hi" Now', 'quoted.example');
    const rock = await createAccount(key, 'Rock AND Roll*', 'rock.example');
    const umlaut = await createAccount(key, 'Straße Müller GmbH', 'mueller.example');
    const q = async (query: string) => ids(await search(key, { query }));
    assert.deepEqual(await q('"hi"'), [quoted.accountId]);
    assert.deepEqual(await q('y "h'), [quoted.accountId]);
    assert.deepEqual(await q('"'), [quoted.accountId]);
    assert.deepEqual(await q('and roll*'), [rock.accountId]);
    assert.deepEqual(await q('AND'), [rock.accountId]);
    assert.deepEqual(await q('roll*'), [rock.accountId]);
    assert.deepEqual(await q('ro*'), []);
    assert.deepEqual(await q('rock OR say'), []);
    assert.deepEqual(await q('MÜLLER'), [umlaut.accountId]);
    assert.deepEqual(await q('straße'), [umlaut.accountId]);
    assert.deepEqual(await q('müller gmbh'), [umlaut.accountId]);
  });

  test('an empty or absent query matches all', async () => {
    const key = await freshKey();
    const a = await createAccount(key, 'One', 'one.example');
    const b = await createAccount(key, 'Two', 'two.example');
    assert.deepEqual(ids(await search(key)), [b.accountId, a.accountId]);
    const res = await t.req('GET', '/v0/accounts/search?query=', undefined, { key });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(ids(res.body), [b.accountId, a.accountId]);
    assert.equal(res.body.totalCount, 2);
  });

  test('includeEmptyOnly: true keeps only accounts without a linked person, false keeps all', async () => {
    const key = await freshKey();
    const linked = await createAccount(key, 'Linked Co', 'linkedco.example');
    const empty1 = await createAccount(key, 'Empty Co', 'emptyco.example');
    const empty2 = await createAccount(key, 'Vacant Co', 'vacant.example');
    await createPerson(key, 'Employee', 'LinkedCo.Example');
    await createPerson(key, 'Freelancer'); // no domain, links to nothing

    const all = await search(key, { includeEmptyOnly: 'false' });
    assert.deepEqual(ids(all), [empty2.accountId, empty1.accountId, linked.accountId]);
    assert.equal(all.totalCount, 3);

    const onlyEmpty = await search(key, { includeEmptyOnly: 'true' });
    assert.deepEqual(ids(onlyEmpty), [empty2.accountId, empty1.accountId]);
    assert.equal(onlyEmpty.totalCount, 2);
    for (const item of onlyEmpty.items) assert.equal(item.linkedPersonsCount, 0);

    // Combined with a query.
    const combined = await search(key, { includeEmptyOnly: 'true', query: 'co' });
    assert.deepEqual(ids(combined), [empty2.accountId, empty1.accountId]); // "vacant Co" matches by name
    const combined2 = await search(key, { includeEmptyOnly: 'true', query: 'linked' });
    assert.deepEqual(combined2, { items: [], hasMore: false, nextCursor: null, totalCount: 0 });

    // Linking a person to an empty account removes it from the empty-only search.
    await createPerson(key, 'New Hire', 'vacant.example');
    assert.deepEqual(ids(await search(key, { includeEmptyOnly: 'true' })), [empty1.accountId]);
  });

  test('includeEmptyOnly with any other value is 400', async () => {
    const key = await freshKey();
    for (const value of ['TRUE', 'False', '1', '0', 'yes', '', 'null']) {
      const res = await t.req('GET', `/v0/accounts/search?includeEmptyOnly=${encodeURIComponent(value)}`, undefined, { key });
      expectProblem(res, 400, 'validation_failed', ['/includeEmptyOnly']);
    }
  });

  test('totalCount counts every match, not just the page', async () => {
    const key = await freshKey();
    for (let i = 0; i < 5; i++) await createAccount(key, `Match ${i}`, `match-${i}.example`);
    await createAccount(key, 'Other', 'other.example');
    const page = await search(key, { query: 'match', limit: 2 });
    assert.equal(page.items.length, 2);
    assert.equal(page.totalCount, 5);
    assert.equal(page.hasMore, true);
    assert.equal(typeof page.nextCursor, 'string');
    assert.deepEqual(names(page), ['Match 4', 'Match 3']);

    const whole = await search(key, { limit: 2 });
    assert.equal(whole.totalCount, 6);
  });

  test('limit: 1 and 100 are accepted; 0, 101 and non-integers are 400 at /limit', async () => {
    const key = await freshKey();
    const a = await createAccount(key, 'L1', 'l1.example');
    const b = await createAccount(key, 'L2', 'l2.example');
    const one = await search(key, { limit: 1 });
    assert.deepEqual(ids(one), [b.accountId]);
    assert.equal(one.hasMore, true);
    assert.equal(one.totalCount, 2);
    const hundred = await search(key, { limit: 100 });
    assert.deepEqual(ids(hundred), [b.accountId, a.accountId]);
    assert.equal(hundred.hasMore, false);
    assert.equal(hundred.nextCursor, null);

    for (const value of ['0', '101', '-1', '1.5', 'abc', '']) {
      expectProblem(await t.req('GET', `/v0/accounts/search?limit=${value}`, undefined, { key }), 400, 'validation_failed', ['/limit']);
    }
  });

  test('the default page size is 20', async () => {
    const key = await freshKey();
    for (let i = 0; i < 21; i++) await createAccount(key, `Default ${i}`, `default-${i}.example`);
    const page = await search(key);
    assert.equal(page.items.length, 20);
    assert.equal(page.hasMore, true);
    assert.equal(page.totalCount, 21);
    assert.equal(page.items[0].name, 'Default 20');
  });

  test('an unknown query parameter is 400 naming it', async () => {
    const key = await freshKey();
    expectProblem(await t.req('GET', '/v0/accounts/search?foo=bar', undefined, { key }), 400, 'validation_failed', ['/foo']);
    expectProblem(await t.req('GET', '/v0/accounts/search?query=a&domain=x', undefined, { key }), 400, 'validation_failed', ['/domain']);
  });

  test('a garbage cursor is 400 at /cursor', async () => {
    const key = await freshKey();
    await createAccount(key, 'C', 'c.example');
    const garbage = [
      'garbage',
      '!!!',
      Buffer.from('not json').toString('base64url'),
      Buffer.from(JSON.stringify(['accounts'])).toString('base64url'),
      Buffer.from(JSON.stringify({ createdAt: '2026-01-01T00:00:00.000Z' })).toString('base64url'),
      Buffer.from(JSON.stringify(['persons', 'x', '2026-01-01T00:00:00.000Z', 'person_01h00000000000000000000000'])).toString('base64url'),
    ];
    for (const cursor of garbage) {
      expectProblem(await t.req('GET', searchUrl({ cursor }), undefined, { key }), 400, 'validation_failed', ['/cursor']);
    }
    expectProblem(await t.req('GET', '/v0/accounts/search?cursor=', undefined, { key }), 400, 'validation_failed', ['/cursor']);
  });

  test('a cursor reused with a different query or includeEmptyOnly is 400 at /cursor', async () => {
    const key = await freshKey();
    for (let i = 0; i < 4; i++) await createAccount(key, `Cursor ${i}`, `cursor-${i}.example`);
    const first = await search(key, { query: 'cursor', limit: 2 });
    assert.equal(first.hasMore, true);
    const cursor: string = first.nextCursor;

    // With the same filters it works.
    const second = await search(key, { query: 'cursor', limit: 2, cursor });
    assert.deepEqual(names(second), ['Cursor 1', 'Cursor 0']);
    // A different limit is not a different list.
    const secondBy1 = await search(key, { query: 'cursor', limit: 1, cursor });
    assert.deepEqual(names(secondBy1), ['Cursor 1']);

    expectProblem(await t.req('GET', searchUrl({ query: 'cursor 1', limit: 2, cursor }), undefined, { key }), 400, 'validation_failed', [
      '/cursor',
    ]);
    expectProblem(await t.req('GET', searchUrl({ limit: 2, cursor }), undefined, { key }), 400, 'validation_failed', ['/cursor']);
    expectProblem(
      await t.req('GET', searchUrl({ query: 'cursor', includeEmptyOnly: 'true', limit: 2, cursor }), undefined, { key }),
      400,
      'validation_failed',
      ['/cursor'],
    );
  });

  test('pagination with limit 2, accounts inserted between pages: no duplicate, no skip', async () => {
    const key = await freshKey();
    const initial: string[] = [];
    for (let i = 0; i < 9; i++) initial.push((await createAccount(key, `Page ${i}`, `page-${i}.example`)).accountId);
    const expected = [...initial].reverse(); // newest first

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    let inserted = 0;
    do {
      const params: Record<string, string | number> = { limit: 2 };
      if (cursor !== null) params.cursor = cursor;
      const page = await search(key, params);
      pages++;
      assert.ok(page.items.length <= 2);
      assert.equal(page.totalCount, 9 + inserted);
      seen.push(...ids(page));
      assert.equal(page.hasMore, page.nextCursor !== null);
      cursor = page.nextCursor;
      // Rows inserted meanwhile (newer than everything) must not disturb the walk.
      await createAccount(key, `Inserted ${inserted}`, `inserted-${inserted}.example`);
      inserted++;
      assert.ok(pages < 20, 'pagination does not end');
    } while (cursor !== null);

    assert.equal(pages, 5);
    assert.deepEqual(seen, expected);
    assert.equal(new Set(seen).size, seen.length);
  });

  test('pagination of a filtered search, with matching and non-matching accounts inserted between pages', async () => {
    const key = await freshKey();
    const initial: string[] = [];
    for (let i = 0; i < 7; i++) {
      initial.push((await createAccount(key, `Walk ${i}`, `walk-${i}.example`)).accountId);
      await createAccount(key, `Noise ${i}`, `noise-${i}.example`);
    }
    const expected = [...initial].reverse();
    const seen: string[] = [];
    let cursor: string | null = null;
    let round = 0;
    do {
      const params: Record<string, string | number> = { query: 'WALK', limit: 2 };
      if (cursor !== null) params.cursor = cursor;
      const page = await search(key, params);
      seen.push(...ids(page));
      cursor = page.nextCursor;
      await createAccount(key, `Walk late ${round}`, `walk-late-${round}.example`);
      await createAccount(key, `Noise late ${round}`, `noise-late-${round}.example`);
      round++;
      assert.ok(round < 20, 'pagination does not end');
    } while (cursor !== null);
    assert.deepEqual(seen, expected);
  });

  test('another tenant accounts never appear', async () => {
    const keyA = await freshKey();
    const keyB = await freshKey();
    const mine = await createAccount(keyA, 'Mine Visible', 'mine.example');
    await createAccount(keyB, 'Theirs Visible', 'theirs.example');
    await createAccount(keyB, 'Mine Visible Too', 'mine-too.example');

    const all = await search(keyA);
    assert.deepEqual(all, { items: [mine], hasMore: false, nextCursor: null, totalCount: 1 });
    assert.deepEqual(ids(await search(keyA, { query: 'visible' })), [mine.accountId]);
    assert.deepEqual(ids(await search(keyA, { query: 'theirs' })), []);
    assert.equal((await search(keyA, { query: 'theirs' })).totalCount, 0);
    assert.deepEqual(ids(await search(keyA, { includeEmptyOnly: 'true' })), [mine.accountId]);

    // The first tenant's accounts (from other tests) are invisible to a fresh tenant as well.
    const keyC = await freshKey();
    assert.deepEqual(await search(keyC), { items: [], hasMore: false, nextCursor: null, totalCount: 0 });
  });

  test('a cursor from another tenant reveals nothing of it', async () => {
    const keyA = await freshKey();
    const keyB = await freshKey();
    for (let i = 0; i < 3; i++) await createAccount(keyA, `A ${i}`, `a-${i}.example`);
    const b = await createAccount(keyB, 'B only', 'b-only.example');
    const pageA = await search(keyA, { limit: 1 });
    const res = await t.req('GET', searchUrl({ limit: 1, cursor: pageA.nextCursor }), undefined, { key: keyB });
    // Either a 400 (the cursor is not of this caller's list) or a page of B's own data, never A's.
    if (res.status === 200) {
      for (const item of res.body.items) assert.equal(item.accountId, b.accountId);
    } else {
      expectProblem(res, 400, 'validation_failed', ['/cursor']);
    }
  });
});
