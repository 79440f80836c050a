import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_TOKEN, expectProblem, ISO_MS, startApp, type Res, type TestApp } from '../helpers.js';

const TENANT_ID = /^tenant_[0-9a-z]{26}$/;
const KEY_ID = /^key_[0-9a-z]{26}$/;
const UNKNOWN_TENANT = 'tenant_01jd0000000000000000000000';
const UNKNOWN_KEY = 'key_01jd0000000000000000000000';

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const bearer = (token = ADMIN_TOKEN) => ({ authorization: `Bearer ${token}` });
const admin = (method: string, url: string, body?: unknown, headers: Record<string, string> = bearer()) =>
  t.req(method, url, body, { key: null, headers });

/** A random-part check: a readable lowercase prefix, `_`, then at least 43 URL-safe characters (>= 256 bits in base62/base64url). */
function assertApiKey(key: unknown): asserts key is string {
  assert.equal(typeof key, 'string');
  const m = /^([a-z]{2,8})_([A-Za-z0-9_-]+)$/.exec(key as string);
  assert.ok(m, `readable prefix: ${String(key)}`);
  assert.ok(m[2]!.length >= 43, `>= 32 bytes of entropy needs >= 43 base62/base64url characters, got ${m[2]!.length}`);
}

async function createTenantViaAdmin(name: string): Promise<Res> {
  const res = await admin('POST', '/admin/tenants', { name });
  assert.equal(res.status, 201, res.text);
  return res;
}

async function worksOnV0(key: string): Promise<number> {
  return (await t.req('GET', '/v0/accounts/search', undefined, { key })).status;
}

describe('API key on /v0', () => {
  test('a missing x-api-key is 401 unauthorized', async () => {
    for (const [method, url, body] of [
      ['GET', '/v0/accounts/search', undefined],
      ['GET', '/v0/persons', undefined],
      ['POST', '/v0/persons', { name: 'No Key' }],
      ['GET', '/v0/persons/person_01jd0000000000000000000000', undefined],
    ] as const) {
      const res = await t.req(method, url, body, { key: null });
      expectProblem(res, 401, 'unauthorized');
    }
    // Nothing was created by the unauthenticated POST.
    const list = await t.req('GET', '/v0/persons');
    assert.equal(list.body.totalCount, 0);
  });

  test('an empty, unknown, or very long (10 KB) key is 401', async () => {
    for (const key of [
      '',
      'pak_unknownunknownunknownunknownunknownunknown1',
      `${t.key}x`,
      t.key.slice(0, -1),
      `pak_${'a'.repeat(10 * 1024)}`,
    ]) {
      const res = await t.req('GET', '/v0/accounts/search', undefined, { key });
      expectProblem(res, 401, 'unauthorized');
    }
  });

  test('the key is matched exactly (not by prefix, not case-insensitively)', async () => {
    const swapped =
      t.key.slice(0, 4) + [...t.key.slice(4)].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('');
    assert.notEqual(swapped, t.key);
    expectProblem(await t.req('GET', '/v0/accounts/search', undefined, { key: swapped }), 401, 'unauthorized');
    assert.equal(await worksOnV0(t.key), 200);
  });

  test('the Authorization header is not an API key', async () => {
    const res = await t.req('GET', '/v0/accounts/search', undefined, { key: null, headers: { authorization: `Bearer ${t.key}` } });
    expectProblem(res, 401, 'unauthorized');
  });

  test("a key revoked via the admin API gets 401 at once; the tenant's other keys keep working", async () => {
    const created = await createTenantViaAdmin('Revoke Co');
    const { apiKey, apiKeyId } = created.body;
    const second = await admin('POST', `/admin/tenants/${created.body.tenant.tenantId}/api_keys`);
    assert.equal(second.status, 201, second.text);
    assert.equal(await worksOnV0(apiKey), 200);
    assert.equal(await worksOnV0(second.body.apiKey), 200);

    const revoked = await admin('DELETE', `/admin/api_keys/${apiKeyId}`);
    assert.equal(revoked.status, 204, revoked.text);
    assert.equal(revoked.text, '');

    expectProblem(await t.req('GET', '/v0/accounts/search', undefined, { key: apiKey }), 401, 'unauthorized');
    expectProblem(await t.req('POST', '/v0/persons', { name: 'After Revoke' }, { key: apiKey }), 401, 'unauthorized');
    assert.equal(await worksOnV0(second.body.apiKey), 200);
  });
});

describe('tenant isolation', () => {
  test("tenant B cannot see, change or list tenant A's person (404, as if it did not exist)", async () => {
    const b = await t.newTenant('Tenant B');
    const created = await t.req('POST', '/v0/persons', { name: 'Only In A', domain: 'a.example' });
    assert.equal(created.status, 201, created.text);
    const personId = created.body.personId as string;

    const asB = await t.req('GET', `/v0/persons/${personId}`, undefined, { key: b.key });
    expectProblem(asB, 404, 'not_found');
    const missing = await t.req('GET', '/v0/persons/person_01jd0000000000000000000000', undefined, { key: b.key });
    assert.equal(asB.body.detail, missing.body.detail, "another tenant's person reads exactly like a missing one");
    assert.equal(asB.body.title, missing.body.title);

    expectProblem(await t.req('PATCH', `/v0/persons/${personId}`, { name: 'Stolen' }, { key: b.key }), 404, 'not_found');
    expectProblem(
      await t.req('POST', `/v0/persons/${personId}/logs`, { source: 'crm', type: 'note', payload: {} }, { key: b.key }),
      404,
      'not_found',
    );
    const listB = await t.req('GET', '/v0/persons', undefined, { key: b.key });
    assert.equal(listB.status, 200);
    assert.ok(!listB.body.items.some((p: { personId: string }) => p.personId === personId));

    const asA = await t.req('GET', `/v0/persons/${personId}`);
    assert.equal(asA.status, 200);
    assert.equal(asA.body.name, 'Only In A', "B's PATCH changed nothing");
  });

  test("tenant B cannot find tenant A's accounts in search, nor read their logs", async () => {
    const b = await t.newTenant('Tenant B2');
    const account = await t.req('POST', '/v0/accounts', { name: 'Isolated Inc', domain: 'isolated.example' });
    assert.equal(account.status, 201, account.text);
    const log = await t.req('POST', `/v0/accounts/${account.body.accountId}/logs`, { source: 'crm', type: 'note', payload: { a: 1 } });
    assert.equal(log.status, 201, log.text);

    const search = await t.req('GET', '/v0/accounts/search?query=isolated', undefined, { key: b.key });
    assert.equal(search.status, 200);
    assert.deepEqual(search.body.items, []);
    assert.equal(search.body.totalCount, 0);
    const getLog = await t.req('GET', `/v0/accounts/${account.body.accountId}/logs/${log.body.accountLogId}`, undefined, { key: b.key });
    expectProblem(getLog, 404, 'not_found');
  });
});

describe('admin API authentication', () => {
  test('without a bearer token, or with a wrong one, every admin route is 401', async () => {
    const created = await createTenantViaAdmin('Auth Probe');
    const wrongHeaders: Record<string, string>[] = [
      {},
      bearer('wrong-token'),
      bearer(`${ADMIN_TOKEN}x`),
      bearer(ADMIN_TOKEN.slice(0, -1)),
      { authorization: ADMIN_TOKEN },
      { authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}` },
      { authorization: 'Bearer ' },
      { 'x-api-key': t.key },
    ];
    for (const headers of wrongHeaders) {
      for (const [method, url, body] of [
        ['GET', '/admin/tenants', undefined],
        ['POST', '/admin/tenants', { name: 'Nope' }],
        ['POST', `/admin/tenants/${created.body.tenant.tenantId}/api_keys`, undefined],
        ['DELETE', `/admin/api_keys/${created.body.apiKeyId}`, undefined],
      ] as const) {
        const res = await t.req(method, url, body, { key: null, headers });
        expectProblem(res, 401, 'unauthorized');
      }
    }
    // None of those did anything: the key was not revoked.
    assert.equal(await worksOnV0(created.body.apiKey), 200);
  });

  test('an API key does not open the admin API, and the admin token does not open /v0', async () => {
    expectProblem(await t.req('GET', '/admin/tenants', undefined, { key: t.key }), 401, 'unauthorized');
    expectProblem(await t.req('GET', '/v0/accounts/search', undefined, { key: ADMIN_TOKEN }), 401, 'unauthorized');
  });
});

describe('admin API: tenants and keys', () => {
  test('POST /admin/tenants → 201 {tenant: {tenantId, name, slug, createdAt}, apiKey, apiKeyId}; the key works on /v0', async () => {
    const before = Date.now();
    const res = await createTenantViaAdmin('Globex Corporation');
    assert.deepEqual(Object.keys(res.body).sort(), ['apiKey', 'apiKeyId', 'tenant']);
    const { tenant, apiKey, apiKeyId } = res.body;
    assert.match(tenant.tenantId, TENANT_ID);
    assert.equal(tenant.name, 'Globex Corporation');
    assert.equal(tenant.slug, 'globex-corporation');
    assert.match(tenant.createdAt, ISO_MS);
    assert.ok(Math.abs(Date.parse(tenant.createdAt) - before) < 60_000);
    for (const k of ['tenantId', 'name', 'createdAt', 'slug']) assert.ok(k in tenant, k);
    assertApiKey(apiKey);
    assert.match(apiKeyId, KEY_ID);
    assert.ok(!apiKey.includes(apiKeyId) && !apiKeyId.includes(apiKey), 'the id is not the key');

    // The new key is the new tenant's: it works, and sees none of the first tenant's data.
    const person = await t.req('POST', '/v0/persons', { name: 'Globex Person' }, { key: apiKey });
    assert.equal(person.status, 201, person.text);
    const mine = await t.req('GET', `/v0/persons/${person.body.personId}`, undefined, { key: apiKey });
    assert.equal(mine.status, 200);
    expectProblem(await t.req('GET', `/v0/persons/${person.body.personId}`), 404, 'not_found');
  });

  test('keys are random: two tenants never share a key, and the key is not derived from the name', async () => {
    const a = await createTenantViaAdmin('Same Name');
    const b = await createTenantViaAdmin('Same Name');
    assert.notEqual(a.body.apiKey, b.body.apiKey);
    assert.notEqual(a.body.apiKeyId, b.body.apiKeyId);
    assert.notEqual(a.body.tenant.tenantId, b.body.tenant.tenantId);
    assert.ok(!a.body.apiKey.toLowerCase().includes('same'));
    // The key prefixes agree (one readable prefix for every key).
    assert.equal(a.body.apiKey.split('_')[0], b.body.apiKey.split('_')[0]);
  });

  test('tenant names need not be unique; slugs are (initech, initech-2, initech-3), and the first tenant "Acme" holds acme', async () => {
    const one = await createTenantViaAdmin('Initech');
    const two = await createTenantViaAdmin('Initech');
    const three = await createTenantViaAdmin('INITECH!');
    assert.deepEqual([one.body.tenant.slug, two.body.tenant.slug, three.body.tenant.slug], ['initech', 'initech-2', 'initech-3']);
    assert.equal(two.body.tenant.name, 'Initech');
    assert.equal(three.body.tenant.name, 'INITECH!');

    const acme = await createTenantViaAdmin('Acme');
    assert.equal(acme.body.tenant.slug, 'acme-2', 'the harness tenant "Acme" already holds "acme"');
    const all = await admin('GET', '/admin/tenants?limit=100');
    const first = all.body.items.find((x: { tenantId: string }) => x.tenantId === t.tenantId);
    assert.equal(first.slug, 'acme');
  });

  test('tenant name bounds: "" and 256 characters are 400 at /name, 1 and 255 are fine; missing and unknown fields are 400', async () => {
    expectProblem(await admin('POST', '/admin/tenants', { name: '' }), 400, 'validation_failed', ['/name']);
    expectProblem(await admin('POST', '/admin/tenants', { name: 'n'.repeat(256) }), 400, 'validation_failed', ['/name']);
    expectProblem(await admin('POST', '/admin/tenants', {}), 400, 'validation_failed', ['/name']);
    expectProblem(await admin('POST', '/admin/tenants', { name: 42 }), 400, 'validation_failed', ['/name']);
    expectProblem(await admin('POST', '/admin/tenants', { name: null }), 400, 'validation_failed', ['/name']);
    expectProblem(await admin('POST', '/admin/tenants', { name: 'Ok', plan: 'gold' }), 400, 'validation_failed', ['/plan']);
    expectProblem(await admin('POST', '/admin/tenants'), 400, 'validation_failed');
    expectProblem(await admin('POST', '/admin/tenants', '{"name":'), 400, 'validation_failed');

    const shortest = await createTenantViaAdmin('x');
    assert.equal(shortest.body.tenant.name, 'x');
    const longest = await createTenantViaAdmin('n'.repeat(255));
    assert.equal(longest.body.tenant.name, 'n'.repeat(255));
  });

  test('POST /admin/tenants/{tenantId}/api_keys → 201 {apiKey, apiKeyId}, with no body and with {}; each key works', async () => {
    const tenant = await createTenantViaAdmin('Key Maker');
    const tenantId = tenant.body.tenant.tenantId as string;
    const noBody = await admin('POST', `/admin/tenants/${tenantId}/api_keys`);
    const emptyObject = await admin('POST', `/admin/tenants/${tenantId}/api_keys`, {});
    const keys = [tenant.body, noBody.body, emptyObject.body];
    for (const res of [noBody, emptyObject]) {
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(Object.keys(res.body).sort(), ['apiKey', 'apiKeyId', 'expiresAt', 'rateLimitBurst', 'rateLimitPerSecond', 'scopes']);
      assert.deepEqual(res.body.scopes, ['read', 'write']);
      assert.equal(res.body.expiresAt, null);
      assertApiKey(res.body.apiKey);
      assert.match(res.body.apiKeyId, KEY_ID);
    }
    assert.equal(new Set(keys.map((k) => k.apiKey)).size, 3);
    assert.equal(new Set(keys.map((k) => k.apiKeyId)).size, 3);

    // All three keys act as the same tenant.
    const person = await t.req('POST', '/v0/persons', { name: 'Shared' }, { key: noBody.body.apiKey });
    assert.equal(person.status, 201);
    for (const k of keys) {
      assert.equal((await t.req('GET', `/v0/persons/${person.body.personId}`, undefined, { key: k.apiKey })).status, 200);
    }
  });

  test('POST /admin/tenants/{tenantId}/api_keys: unknown tenant → 404; unknown body field → 400', async () => {
    expectProblem(await admin('POST', `/admin/tenants/${UNKNOWN_TENANT}/api_keys`), 404, 'not_found');
    expectProblem(await admin('POST', '/admin/tenants/not-a-tenant-id/api_keys', {}), 404, 'not_found');
    expectProblem(await admin('POST', `/admin/tenants/${t.tenantId}/api_keys`, { color: 'red' }), 400, 'validation_failed', ['/color']);
    expectProblem(await admin('POST', `/admin/tenants/${t.tenantId}/api_keys`, { scopes: ['all'] }), 400, 'validation_failed', [
      '/scopes/0',
    ]);
  });

  test('DELETE /admin/api_keys/{apiKeyId}: unknown key → 404', async () => {
    expectProblem(await admin('DELETE', `/admin/api_keys/${UNKNOWN_KEY}`), 404, 'not_found');
    expectProblem(await admin('DELETE', '/admin/api_keys/garbage'), 404, 'not_found');
  });

  test('GET /admin/tenants → the list envelope, walked page by page, newest first, no duplicate, no skip', async () => {
    for (let i = 0; i < 5; i++) await createTenantViaAdmin(`Walker ${i}`);
    const full = await admin('GET', '/admin/tenants?limit=100');
    assert.equal(full.status, 200, full.text);
    assert.deepEqual(Object.keys(full.body).sort(), ['hasMore', 'items', 'nextCursor', 'totalCount']);
    assert.equal(full.body.hasMore, false);
    assert.equal(full.body.nextCursor, null);
    assert.equal(full.body.totalCount, full.body.items.length);
    assert.ok(full.body.totalCount >= 6);
    for (const item of full.body.items) {
      assert.match(item.tenantId, TENANT_ID);
      assert.match(item.createdAt, ISO_MS);
      assert.equal(typeof item.name, 'string');
      assert.equal(typeof item.slug, 'string');
      assert.equal(item.apiKey, undefined, 'a list never shows keys');
    }
    const expected = full.body.items.map((x: { tenantId: string }) => x.tenantId) as string[];
    const newestFirst = [...full.body.items].sort((a, b) =>
      a.createdAt === b.createdAt ? (a.tenantId < b.tenantId ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1,
    );
    assert.deepEqual(
      expected,
      newestFirst.map((x) => x.tenantId),
    );

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url: string = `/admin/tenants?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = await admin('GET', url);
      assert.equal(page.status, 200, page.text);
      assert.equal(page.body.totalCount, expected.length);
      assert.ok(page.body.items.length <= 2);
      assert.equal(page.body.hasMore, page.body.nextCursor !== null);
      seen.push(...page.body.items.map((x: { tenantId: string }) => x.tenantId));
      cursor = page.body.nextCursor;
      pages++;
      assert.ok(pages < 50);
    } while (cursor !== null);
    assert.deepEqual(seen, expected);
    assert.equal(pages, Math.ceil(expected.length / 2));
  });

  test('GET /admin/tenants: bad limit, bad cursor, unknown parameter → 400', async () => {
    for (const [qs, path] of [
      ['limit=0', '/limit'],
      ['limit=101', '/limit'],
      ['limit=x', '/limit'],
      ['cursor=zzz', '/cursor'],
      ['name=acme', '/name'],
    ] as const) {
      expectProblem(await admin('GET', `/admin/tenants?${qs}`), 400, 'validation_failed', [path]);
    }
    // A cursor from another list is 400 as well.
    for (let i = 0; i < 3; i++) assert.equal((await t.req('POST', '/v0/persons', { name: `Cursor ${i}` })).status, 201);
    const persons = await t.req('GET', '/v0/persons?limit=1');
    assert.ok(persons.body.nextCursor, persons.text);
    expectProblem(await admin('GET', `/admin/tenants?cursor=${encodeURIComponent(persons.body.nextCursor)}`), 400, 'validation_failed', [
      '/cursor',
    ]);
  });
});

describe('admin API off', () => {
  let off: TestApp;
  before(async () => {
    off = await startApp({ ADMIN_TOKEN: '' });
  });
  after(async () => {
    await off.close();
  });

  test('with ADMIN_TOKEN unset, every /admin route answers 404 not_found, whatever the Authorization', async () => {
    for (const headers of [
      {},
      { authorization: 'Bearer ' },
      { authorization: `Bearer ${ADMIN_TOKEN}` },
      { authorization: 'Bearer undefined' },
    ] as Record<string, string>[]) {
      for (const [method, url, body] of [
        ['GET', '/admin/tenants', undefined],
        ['POST', '/admin/tenants', { name: 'Nope' }],
        ['POST', `/admin/tenants/${off.tenantId}/api_keys`, {}],
        ['DELETE', '/admin/api_keys/key_01jd0000000000000000000000', undefined],
      ] as const) {
        const res = await off.req(method, url, body, { key: null, headers });
        expectProblem(res, 404, 'not_found');
      }
    }
    // /v0 is unaffected.
    assert.equal((await off.req('GET', '/v0/accounts/search')).status, 200);
  });
});
