import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EVENT_CATALOGUE } from '../fixtures.js';
import { expectProblem, ISO_MS, startApp, type Json, type Res, type TestApp } from '../helpers.js';

// Black-box tests of reference endpoint 21 (GET /v0/webhook_subscriptions) and the webhook
// subscription extensions (create, get, update, delete, rotate_secret), through HTTP only.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const BASE = '/v0/webhook_subscriptions';
const SUB_ID = /^whsub_[0-9a-z]{26}$/;
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const SUB_FIELDS = ['active', 'createdAt', 'events', 'subscriptionId', 'updatedAt', 'url'];
const SUB_FIELDS_WITH_SECRET = [...SUB_FIELDS, 'secret'].sort();
const ENVELOPE_FIELDS = ['hasMore', 'items', 'nextCursor', 'totalCount'];

const SUBSCRIBABLE = [...EVENT_CATALOGUE, '*'];

/** A well-formed subscription id that names nothing (TypeID body: first character 0-7). */
const UNKNOWN_ID = 'whsub_01h0000000000000000000000a';

const HOOK = 'https://hooks.example.com/receive';

/** An https URL of exactly `length` characters. */
function urlOfLength(length: number): string {
  const prefix = 'https://hooks.example.com/';
  return prefix + 'a'.repeat(length - prefix.length);
}

const opts = (key?: string) => (key === undefined ? {} : { key });

async function create(body: Json, key?: string, app: TestApp = t): Promise<Json> {
  const res = await app.req('POST', BASE, body, opts(key));
  assert.equal(res.status, 201, res.text);
  return res.body;
}

const get = (id: string, key?: string) => t.req('GET', `${BASE}/${id}`, undefined, opts(key));
const patch = (id: string, body: Json, key?: string) => t.req('PATCH', `${BASE}/${id}`, body, opts(key));
const del = (id: string, key?: string) => t.req('DELETE', `${BASE}/${id}`, undefined, opts(key));
const rotate = (id: string, key?: string, body?: unknown) => t.req('POST', `${BASE}/${id}/rotate_secret`, body, opts(key));
const list = (query = '', key?: string) => t.req('GET', `${BASE}${query}`, undefined, opts(key));

function assertJson(res: Res, status: number): void {
  assert.equal(res.status, status, res.text);
  assert.match(String(res.headers['content-type']), /^application\/json/);
}

function assertSubscriptionShape(s: Json): void {
  assert.deepEqual(Object.keys(s).sort(), SUB_FIELDS);
  assert.match(s.subscriptionId, SUB_ID);
  assert.equal(typeof s.url, 'string');
  assert.ok(Array.isArray(s.events));
  assert.equal(typeof s.active, 'boolean');
  assert.match(s.createdAt, ISO_MS);
  assert.match(s.updatedAt, ISO_MS);
}

function assertSecret(secret: unknown): void {
  assert.equal(typeof secret, 'string');
  assert.match(secret as string, SECRET);
  const raw = Buffer.from((secret as string).slice('whsec_'.length), 'base64');
  assert.equal(raw.length, 32);
  assert.equal(`whsec_${raw.toString('base64')}`, secret, 'canonical base64');
}

/** The subscription without its secret, as GET shows it. */
function withoutSecret(s: Json): Json {
  const { secret: _secret, ...rest } = s;
  return rest;
}

describe('POST /v0/webhook_subscriptions', () => {
  test('201 with exactly the subscription fields and a whsec_ secret of 32 random bytes', async () => {
    const res = await t.req('POST', BASE, { url: HOOK, events: ['page.created', 'person.updated'] });
    assertJson(res, 201);
    const s = res.body;
    assert.deepEqual(Object.keys(s).sort(), SUB_FIELDS_WITH_SECRET);
    assertSubscriptionShape(withoutSecret(s));
    assertSecret(s.secret);
    assert.equal(s.url, HOOK);
    assert.deepEqual(s.events, ['page.created', 'person.updated']);
    assert.equal(s.active, true);
    assert.equal(s.createdAt, s.updatedAt);
    assert.ok(Math.abs(Date.parse(s.createdAt) - Date.now()) < 60_000, 'createdAt is now');
    assert.ok(res.headers['x-request-id']);
  });

  test('two subscriptions get different ids and different secrets; a later id sorts after', async () => {
    const a = await create({ url: HOOK, events: ['*'] });
    const b = await create({ url: HOOK, events: ['*'] });
    assertSecret(a.secret);
    assertSecret(b.secret);
    assert.notEqual(a.secret, b.secret);
    assert.notEqual(a.subscriptionId, b.subscriptionId);
    assert.ok(a.subscriptionId < b.subscriptionId);
  });

  test('active defaults to true; true and false are honoured', async () => {
    assert.equal((await create({ url: HOOK, events: ['*'] })).active, true);
    assert.equal((await create({ url: HOOK, events: ['*'], active: true })).active, true);
    const inactive = await create({ url: HOOK, events: ['*'], active: false });
    assert.equal(inactive.active, false);
    assert.equal((await get(inactive.subscriptionId)).body.active, false);
  });

  test('active must be a boolean: "true", 1 and null are 400 at /active', async () => {
    for (const active of ['true', 1, null]) {
      expectProblem(await t.req('POST', BASE, { url: HOOK, events: ['*'], active }), 400, 'validation_failed', ['/active']);
    }
  });

  test('every catalogue event and "*" is accepted, alone and all together', async () => {
    for (const event of SUBSCRIBABLE) {
      const s = await create({ url: HOOK, events: [event] });
      assert.deepEqual(s.events, [event], event);
    }
    const all = await create({ url: HOOK, events: SUBSCRIBABLE });
    assert.deepEqual(all.events, SUBSCRIBABLE);
    assert.deepEqual((await get(all.subscriptionId)).body.events, SUBSCRIBABLE);
  });

  test('an unknown event is 400 at /events/<index>', async () => {
    const cases: [string[], number][] = [
      [['page.exploded'], 0],
      [['page.created', 'nope'], 1],
      [['page.created', 'person.created', 'Page.Created'], 2],
      [['page.*'], 0],
      [[''], 0],
      [['page.created '], 0],
      [['**'], 0],
    ];
    for (const [events, index] of cases) {
      expectProblem(await t.req('POST', BASE, { url: HOOK, events }), 400, 'validation_failed', [`/events/${index}`]);
    }
  });

  test('an event that is not a string is 400 at its index', async () => {
    expectProblem(await t.req('POST', BASE, { url: HOOK, events: ['page.created', 7] }), 400, 'validation_failed', ['/events/1']);
  });

  test('events [] is 400 at /events', async () => {
    expectProblem(await t.req('POST', BASE, { url: HOOK, events: [] }), 400, 'validation_failed', ['/events']);
  });

  test('duplicate events are 400 at /events', async () => {
    expectProblem(await t.req('POST', BASE, { url: HOOK, events: ['page.created', 'page.created'] }), 400, 'validation_failed', [
      '/events',
    ]);
    expectProblem(await t.req('POST', BASE, { url: HOOK, events: ['*', 'asset.created', '*'] }), 400, 'validation_failed', ['/events']);
  });

  test('events not an array, or missing, is 400 at /events', async () => {
    expectProblem(await t.req('POST', BASE, { url: HOOK, events: 'page.created' }), 400, 'validation_failed', ['/events']);
    expectProblem(await t.req('POST', BASE, { url: HOOK, events: null }), 400, 'validation_failed', ['/events']);
    expectProblem(await t.req('POST', BASE, { url: HOOK }), 400, 'validation_failed', ['/events']);
  });

  test('url missing, null or not a string is 400 at /url', async () => {
    expectProblem(await t.req('POST', BASE, { events: ['*'] }), 400, 'validation_failed', ['/url']);
    expectProblem(await t.req('POST', BASE, { url: null, events: ['*'] }), 400, 'validation_failed', ['/url']);
    expectProblem(await t.req('POST', BASE, { url: 42, events: ['*'] }), 400, 'validation_failed', ['/url']);
    expectProblem(await t.req('POST', BASE, {}), 400, 'validation_failed', ['/url', '/events']);
  });

  test('http:// is 400 at /url by default', async () => {
    expectProblem(await t.req('POST', BASE, { url: 'http://hooks.example.com/receive', events: ['*'] }), 400, 'validation_failed', [
      '/url',
    ]);
    expectProblem(await t.req('POST', BASE, { url: 'http://127.0.0.1:8080/hook', events: ['*'] }), 400, 'validation_failed', ['/url']);
    // The refusal names the setting that lifts it (issue 38).
    const res = await t.req('POST', BASE, { url: 'http://hooks.example.com/receive', events: ['*'] });
    assert.match(res.body.errors[0].message, /WEBHOOK_ALLOW_HTTP/);
    assert.match(res.body.detail, /WEBHOOK_ALLOW_HTTP/);
  });

  test('ftp://, "not a url", a bare scheme, a relative path and "" are 400 at /url', async () => {
    for (const url of [
      'ftp://hooks.example.com/receive',
      'not a url',
      'https://',
      'https:',
      '/relative/hook',
      'hooks.example.com/receive',
      '',
      'javascript:alert(1)',
      'file:///etc/passwd',
    ]) {
      expectProblem(await t.req('POST', BASE, { url, events: ['*'] }), 400, 'validation_failed', ['/url']);
    }
  });

  // WHATWG URL parsing forgives these (it strips outer spaces, drops tabs and newlines anywhere,
  // and reads "https:host" as "https://host"), so the stored string would not be the URL that
  // deliveries really target: a url must literally start with https:// and be one clean token.
  test('a url that is not literally https://..., or carries whitespace or control characters, is 400 at /url', async () => {
    for (const url of [
      ' https://hooks.example.com/receive',
      'https://hooks.example.com/receive ',
      'https://hooks.exa\nmple.com/receive',
      'https://hooks.example.com/a\tb',
      'https:hooks.example.com/receive',
      'https:/hooks.example.com/receive',
    ]) {
      expectProblem(await t.req('POST', BASE, { url, events: ['*'] }), 400, 'validation_failed', ['/url']);
    }
  });

  test('a url with credentials is 400 at /url', async () => {
    for (const url of [
      'https://user:pass@hooks.example.com/receive',
      'https://user@hooks.example.com/receive',
      'https://:pass@hooks.example.com/receive',
    ]) {
      expectProblem(await t.req('POST', BASE, { url, events: ['*'] }), 400, 'validation_failed', ['/url']);
    }
  });

  test('url of 2048 characters is accepted, 2049 is 400 at /url', async () => {
    const inside = urlOfLength(2048);
    assert.equal(inside.length, 2048);
    assert.equal((await create({ url: inside, events: ['*'] })).url, inside);
    const outside = urlOfLength(2049);
    assert.equal(outside.length, 2049);
    expectProblem(await t.req('POST', BASE, { url: outside, events: ['*'] }), 400, 'validation_failed', ['/url']);
  });

  test('a url with port, path and query is echoed exactly', async () => {
    const url = 'https://hooks.example.com:8443/a/b?tenant=acme&x=1';
    assert.equal((await create({ url, events: ['*'] })).url, url);
  });

  test('an unknown field is 400 at its own path and creates nothing', async () => {
    const key = (await t.newTenant('Unknown field')).key;
    expectProblem(await t.req('POST', BASE, { url: HOOK, events: ['*'], secret: 'whsec_mine' }, { key }), 400, 'validation_failed', [
      '/secret',
    ]);
    expectProblem(await t.req('POST', BASE, { url: HOOK, events: ['*'], nope: 1 }, { key }), 400, 'validation_failed', ['/nope']);
    expectProblem(await t.req('POST', BASE, { url: HOOK, events: ['*'], subscriptionId: UNKNOWN_ID }, { key }), 400, 'validation_failed', [
      '/subscriptionId',
    ]);
    assert.equal((await list('', key)).body.items.length, 0);
  });

  test('bad JSON is 400, a non-JSON content type is 415', async () => {
    expectProblem(await t.req('POST', BASE, '{"url":'), 400, 'validation_failed');
    expectProblem(
      await t.req('POST', BASE, 'url=x', { headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      415,
      'unsupported_media_type',
    );
  });

  test('without an API key every operation is 401', async () => {
    const s = await create({ url: HOOK, events: ['*'] });
    const id = s.subscriptionId;
    expectProblem(await t.req('POST', BASE, { url: HOOK, events: ['*'] }, { key: null }), 401, 'unauthorized');
    expectProblem(await t.req('GET', BASE, undefined, { key: null }), 401, 'unauthorized');
    expectProblem(await t.req('GET', `${BASE}/${id}`, undefined, { key: null }), 401, 'unauthorized');
    expectProblem(await t.req('PATCH', `${BASE}/${id}`, { active: false }, { key: null }), 401, 'unauthorized');
    expectProblem(await t.req('POST', `${BASE}/${id}/rotate_secret`, undefined, { key: null }), 401, 'unauthorized');
    expectProblem(await t.req('DELETE', `${BASE}/${id}`, undefined, { key: null }), 401, 'unauthorized');
    expectProblem(await t.req('GET', BASE, undefined, { key: 'pak_not_a_real_key_0123456789' }), 401, 'unauthorized');
    // Nothing happened to it.
    assert.deepEqual((await get(id)).body, withoutSecret(s));
  });
});

describe('WEBHOOK_ALLOW_HTTP=true', () => {
  let h: TestApp;
  before(async () => {
    h = await startApp({ WEBHOOK_ALLOW_HTTP: 'true' });
  });
  after(async () => {
    await h.close();
  });

  test('http:// is accepted on create and update; https:// still is', async () => {
    // A name: a literal private address is refused whatever the scheme (test/webhooks/addresses.test.ts).
    const url = 'http://hooks.example.com:8080/hook';
    const s = await create({ url, events: ['*'] }, undefined, h);
    assert.equal(s.url, url);
    assertSecret(s.secret);
    const https = await create({ url: HOOK, events: ['*'] }, undefined, h);
    const res = await h.req('PATCH', `${BASE}/${https.subscriptionId}`, { url: 'http://hooks.example.com/plain' });
    assertJson(res, 200);
    assert.equal(res.body.url, 'http://hooks.example.com/plain');
  });

  test('other schemes and credentials are still 400 at /url', async () => {
    for (const url of [
      'ftp://hooks.example.com/receive',
      'not a url',
      'http://user:pass@hooks.example.com/x',
      'ws://hooks.example.com/x',
    ]) {
      expectProblem(await h.req('POST', BASE, { url, events: ['*'] }), 400, 'validation_failed', ['/url']);
    }
  });
});

describe('the secret is shown only on creation and rotation', () => {
  test('GET one, GET list and PATCH responses carry no secret key', async () => {
    const key = (await t.newTenant('Secret shown once')).key;
    const s = await create({ url: HOOK, events: ['person.created'] }, key);
    assertSecret(s.secret);

    const one = await get(s.subscriptionId, key);
    assertJson(one, 200);
    assert.ok(!('secret' in one.body));
    assert.deepEqual(Object.keys(one.body).sort(), SUB_FIELDS);

    const all = await list('', key);
    assertJson(all, 200);
    assert.equal(all.body.items.length, 1);
    for (const item of all.body.items) {
      assert.ok(!('secret' in item));
      assert.deepEqual(Object.keys(item).sort(), SUB_FIELDS);
    }

    for (const body of [{ active: false }, {}, { url: `${HOOK}/v2` }, { events: ['*'] }]) {
      const res = await patch(s.subscriptionId, body, key);
      assertJson(res, 200);
      assert.deepEqual(Object.keys(res.body).sort(), SUB_FIELDS, JSON.stringify(body));
    }

    // The secret appears nowhere in the texts of those answers.
    for (const res of [await get(s.subscriptionId, key), await list('', key), await patch(s.subscriptionId, {}, key)]) {
      assert.ok(!res.text.includes(s.secret), 'secret leaked');
      assert.ok(!res.text.includes('whsec_'), 'a secret leaked');
    }
  });
});

describe('GET /v0/webhook_subscriptions/{subscription_id}', () => {
  test('200 with the subscription exactly as created, without its secret', async () => {
    const s = await create({ url: HOOK, events: ['asset.created', 'asset.deleted'], active: false });
    const res = await get(s.subscriptionId);
    assertJson(res, 200);
    assertSubscriptionShape(res.body);
    assert.deepEqual(res.body, withoutSecret(s));
  });

  test("an unknown id, a malformed id and another tenant's subscription are 404", async () => {
    expectProblem(await get(UNKNOWN_ID), 404, 'not_found');
    expectProblem(await get('nope'), 404, 'not_found');
    const other = await t.newTenant('Other tenant get');
    const theirs = await create({ url: HOOK, events: ['*'] }, other.key);
    expectProblem(await get(theirs.subscriptionId), 404, 'not_found');
    const mine = await create({ url: HOOK, events: ['*'] });
    expectProblem(await get(mine.subscriptionId, other.key), 404, 'not_found');
    // The owner still sees it.
    assertJson(await get(theirs.subscriptionId, other.key), 200);
  });

  test('a method the path does not have is 405', async () => {
    const s = await create({ url: HOOK, events: ['*'] });
    expectProblem(await t.req('PUT', `${BASE}/${s.subscriptionId}`, { url: HOOK, events: ['*'] }), 405, 'method_not_allowed');
    expectProblem(await t.req('GET', `${BASE}/${s.subscriptionId}/rotate_secret`), 405, 'method_not_allowed');
  });
});

describe('PATCH /v0/webhook_subscriptions/{subscription_id}', () => {
  test('url replaces the url, nothing else changes but updatedAt, which moves forward', async () => {
    const s = await create({ url: HOOK, events: ['page.created'] });
    const res = await patch(s.subscriptionId, { url: 'https://other.example.org/in?x=1' });
    assertJson(res, 200);
    assertSubscriptionShape(res.body);
    assert.equal(res.body.url, 'https://other.example.org/in?x=1');
    assert.deepEqual(res.body.events, ['page.created']);
    assert.equal(res.body.active, true);
    assert.equal(res.body.subscriptionId, s.subscriptionId);
    assert.equal(res.body.createdAt, s.createdAt);
    assert.ok(res.body.updatedAt > s.updatedAt, 'updatedAt moves');
    assert.deepEqual((await get(s.subscriptionId)).body, res.body);
  });

  test('events replaces the whole list (no merge), in the order given', async () => {
    const s = await create({ url: HOOK, events: ['page.created', 'page.updated', 'page.deleted'] });
    const res = await patch(s.subscriptionId, { events: ['topic.created', 'asset.updated'] });
    assertJson(res, 200);
    assert.deepEqual(res.body.events, ['topic.created', 'asset.updated']);
    assert.equal(res.body.url, HOOK);
    assert.ok(res.body.updatedAt > s.updatedAt);
    const star = await patch(s.subscriptionId, { events: ['*'] });
    assert.deepEqual(star.body.events, ['*']);
    assert.ok(star.body.updatedAt > res.body.updatedAt);
    assert.deepEqual((await get(s.subscriptionId)).body.events, ['*']);
  });

  test('active false then true', async () => {
    const s = await create({ url: HOOK, events: ['*'] });
    const off = await patch(s.subscriptionId, { active: false });
    assertJson(off, 200);
    assert.equal(off.body.active, false);
    assert.ok(off.body.updatedAt > s.updatedAt);
    assert.equal((await get(s.subscriptionId)).body.active, false);
    const on = await patch(s.subscriptionId, { active: true });
    assert.equal(on.body.active, true);
    assert.ok(on.body.updatedAt > off.body.updatedAt);
    assert.equal((await get(s.subscriptionId)).body.active, true);
  });

  test('all three at once', async () => {
    const s = await create({ url: HOOK, events: ['*'] });
    const res = await patch(s.subscriptionId, { url: `${HOOK}/all`, events: ['person.created'], active: false });
    assertJson(res, 200);
    assert.deepEqual(
      { url: res.body.url, events: res.body.events, active: res.body.active, createdAt: res.body.createdAt },
      { url: `${HOOK}/all`, events: ['person.created'], active: false, createdAt: s.createdAt },
    );
  });

  test('{} changes nothing, updatedAt included', async () => {
    const s = await create({ url: HOOK, events: ['account.created'], active: false });
    const res = await patch(s.subscriptionId, {});
    assertJson(res, 200);
    assert.deepEqual(res.body, withoutSecret(s));
    assert.deepEqual((await get(s.subscriptionId)).body, withoutSecret(s));
  });

  test('invalid values are 400 at their path (the rules of creation) and change nothing', async () => {
    const s = await create({ url: HOOK, events: ['page.created'] });
    const cases: [Json, string][] = [
      [{ url: 'http://hooks.example.com/receive' }, '/url'],
      [{ url: 'ftp://hooks.example.com/receive' }, '/url'],
      [{ url: 'not a url' }, '/url'],
      [{ url: 'https://user:pass@hooks.example.com/receive' }, '/url'],
      [{ url: 'https://user@hooks.example.com/receive' }, '/url'],
      [{ url: urlOfLength(2049) }, '/url'],
      [{ url: '' }, '/url'],
      [{ url: null }, '/url'],
      [{ events: [] }, '/events'],
      [{ events: ['page.created', 'page.created'] }, '/events'],
      [{ events: ['page.created', 'page.exploded'] }, '/events/1'],
      [{ events: null }, '/events'],
      [{ active: 'false' }, '/active'],
      [{ active: null }, '/active'],
      [{ secret: 'whsec_mine' }, '/secret'],
      [{ createdAt: '2020-01-01T00:00:00.000Z' }, '/createdAt'],
      [{ active: false, nope: 1 }, '/nope'],
    ];
    for (const [body, path] of cases) {
      expectProblem(await patch(s.subscriptionId, body), 400, 'validation_failed', [path]);
    }
    // A valid field next to an invalid one is not applied either.
    expectProblem(await patch(s.subscriptionId, { active: false, url: 'http://x.example.com/' }), 400, 'validation_failed', ['/url']);
    assert.deepEqual((await get(s.subscriptionId)).body, withoutSecret(s));
  });

  test('on update too, a url with whitespace or without the literal https:// is 400 at /url and changes nothing', async () => {
    const s = await create({ url: HOOK, events: ['*'] });
    for (const url of [' https://hooks.example.com/receive', 'https://hooks.exa\nmple.com/receive', 'https:hooks.example.com/receive']) {
      expectProblem(await patch(s.subscriptionId, { url }), 400, 'validation_failed', ['/url']);
    }
    assert.deepEqual((await get(s.subscriptionId)).body, withoutSecret(s));
  });

  test('2048-character url is accepted on update', async () => {
    const s = await create({ url: HOOK, events: ['*'] });
    const url = urlOfLength(2048);
    const res = await patch(s.subscriptionId, { url });
    assertJson(res, 200);
    assert.equal(res.body.url, url);
  });

  test("unknown id, malformed id and another tenant's subscription are 404 and change nothing", async () => {
    expectProblem(await patch(UNKNOWN_ID, { active: false }), 404, 'not_found');
    expectProblem(await patch(UNKNOWN_ID, {}), 404, 'not_found');
    expectProblem(await patch('nope', { active: false }), 404, 'not_found');
    const other = await t.newTenant('Other tenant patch');
    const theirs = await create({ url: HOOK, events: ['*'] }, other.key);
    expectProblem(await patch(theirs.subscriptionId, { active: false }), 404, 'not_found');
    expectProblem(await patch(theirs.subscriptionId, {}), 404, 'not_found');
    assert.deepEqual((await get(theirs.subscriptionId, other.key)).body, withoutSecret(theirs));
  });
});

describe('POST /v0/webhook_subscriptions/{subscription_id}/rotate_secret', () => {
  test('200 with a new secret; every other field unchanged but updatedAt, which moves', async () => {
    const s = await create({ url: HOOK, events: ['page_link.created', 'page_link.deleted'], active: false });
    const res = await rotate(s.subscriptionId);
    assertJson(res, 200);
    assert.deepEqual(Object.keys(res.body).sort(), SUB_FIELDS_WITH_SECRET);
    assertSecret(res.body.secret);
    assert.notEqual(res.body.secret, s.secret);
    assert.deepEqual({ ...withoutSecret(res.body), updatedAt: undefined }, { ...withoutSecret(s), updatedAt: undefined });
    assert.match(res.body.updatedAt, ISO_MS);
    assert.ok(res.body.updatedAt > s.updatedAt, 'updatedAt moves');
    // GET shows the rotated subscription, still without a secret.
    assert.deepEqual((await get(s.subscriptionId)).body, withoutSecret(res.body));
  });

  test('each rotation gives a fresh secret', async () => {
    const s = await create({ url: HOOK, events: ['*'] });
    const secrets = new Set([s.secret]);
    let updatedAt = s.updatedAt;
    for (let i = 0; i < 3; i++) {
      const res = await rotate(s.subscriptionId);
      assertJson(res, 200);
      assertSecret(res.body.secret);
      secrets.add(res.body.secret);
      assert.ok(res.body.updatedAt > updatedAt);
      updatedAt = res.body.updatedAt;
    }
    assert.equal(secrets.size, 4);
  });

  test('the body may be absent or {}; an unknown field is 400 and rotates nothing', async () => {
    const s = await create({ url: HOOK, events: ['*'] });
    assertJson(await rotate(s.subscriptionId, undefined, {}), 200);
    const before = (await get(s.subscriptionId)).body;
    expectProblem(await rotate(s.subscriptionId, undefined, { secret: 'whsec_mine' }), 400, 'validation_failed', ['/secret']);
    assert.deepEqual((await get(s.subscriptionId)).body, before);
  });

  test("unknown id, malformed id and another tenant's subscription are 404", async () => {
    expectProblem(await rotate(UNKNOWN_ID), 404, 'not_found');
    expectProblem(await rotate('nope'), 404, 'not_found');
    const other = await t.newTenant('Other tenant rotate');
    const theirs = await create({ url: HOOK, events: ['*'] }, other.key);
    expectProblem(await rotate(theirs.subscriptionId), 404, 'not_found');
    assert.deepEqual((await get(theirs.subscriptionId, other.key)).body, withoutSecret(theirs));
  });
});

describe('DELETE /v0/webhook_subscriptions/{subscription_id}', () => {
  test('204 with no body; then GET, PATCH, rotate and DELETE are 404 and it is gone from the list', async () => {
    const key = (await t.newTenant('Delete')).key;
    const keep = await create({ url: HOOK, events: ['*'] }, key);
    const s = await create({ url: HOOK, events: ['*'] }, key);
    const res = await del(s.subscriptionId, key);
    assert.equal(res.status, 204, res.text);
    assert.equal(res.text, '');
    expectProblem(await get(s.subscriptionId, key), 404, 'not_found');
    expectProblem(await patch(s.subscriptionId, { active: false }, key), 404, 'not_found');
    expectProblem(await rotate(s.subscriptionId, key), 404, 'not_found');
    expectProblem(await del(s.subscriptionId, key), 404, 'not_found');
    const all = await list('', key);
    assert.deepEqual(
      all.body.items.map((i: Json) => i.subscriptionId),
      [keep.subscriptionId],
    );
    assert.equal(all.body.totalCount, 1);
    // The other one is untouched.
    assert.deepEqual((await get(keep.subscriptionId, key)).body, withoutSecret(keep));
  });

  test('unknown and malformed ids are 404', async () => {
    expectProblem(await del(UNKNOWN_ID), 404, 'not_found');
    expectProblem(await del('nope'), 404, 'not_found');
  });

  test('another tenant cannot delete (404) and the subscription survives', async () => {
    const other = await t.newTenant('Other tenant delete');
    const theirs = await create({ url: HOOK, events: ['*'] }, other.key);
    expectProblem(await del(theirs.subscriptionId), 404, 'not_found');
    assert.deepEqual((await get(theirs.subscriptionId, other.key)).body, withoutSecret(theirs));
    assert.equal((await list('', other.key)).body.items.length, 1);
  });
});

describe('GET /v0/webhook_subscriptions (endpoint 21)', () => {
  test('an empty list is the envelope with nothing in it', async () => {
    const key = (await t.newTenant('Empty')).key;
    const res = await list('', key);
    assertJson(res, 200);
    assert.deepEqual(res.body, { items: [], hasMore: false, nextCursor: null, totalCount: 0 });
  });

  test('the envelope, newest first, each item a subscription without secret', async () => {
    const key = (await t.newTenant('Order')).key;
    const created: Json[] = [];
    for (let i = 0; i < 4; i++) created.push(await create({ url: `${HOOK}/${i}`, events: [EVENT_CATALOGUE[i]], active: i % 2 === 0 }, key));
    const res = await list('', key);
    assertJson(res, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ENVELOPE_FIELDS);
    assert.deepEqual(res.body.items, created.reverse().map(withoutSecret));
    assert.equal(res.body.hasMore, false);
    assert.equal(res.body.nextCursor, null);
    assert.equal(res.body.totalCount, 4);
    for (const item of res.body.items) assertSubscriptionShape(item);
  });

  test('5 subscriptions, limit 2: totalCount 2, 2, 1; hasMore true, true, false; no duplicate, no skip', async () => {
    const key = (await t.newTenant('Pages')).key;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create({ url: `${HOOK}/${i}`, events: ['*'] }, key)).subscriptionId);
    const newestFirst = [...ids].reverse();

    const p1 = await list('?limit=2', key);
    assertJson(p1, 200);
    assert.deepEqual(
      p1.body.items.map((i: Json) => i.subscriptionId),
      newestFirst.slice(0, 2),
    );
    assert.equal(p1.body.totalCount, 2);
    assert.equal(p1.body.hasMore, true);
    assert.equal(typeof p1.body.nextCursor, 'string');

    const p2 = await list(`?limit=2&cursor=${encodeURIComponent(p1.body.nextCursor)}`, key);
    assertJson(p2, 200);
    assert.deepEqual(
      p2.body.items.map((i: Json) => i.subscriptionId),
      newestFirst.slice(2, 4),
    );
    assert.equal(p2.body.totalCount, 2);
    assert.equal(p2.body.hasMore, true);
    assert.equal(typeof p2.body.nextCursor, 'string');

    const p3 = await list(`?limit=2&cursor=${encodeURIComponent(p2.body.nextCursor)}`, key);
    assertJson(p3, 200);
    assert.deepEqual(
      p3.body.items.map((i: Json) => i.subscriptionId),
      newestFirst.slice(4),
    );
    assert.equal(p3.body.totalCount, 1);
    assert.equal(p3.body.hasMore, false);
    assert.equal(p3.body.nextCursor, null);
  });

  test('4 subscriptions, limit 2: the second page is full and is the last (hasMore false, totalCount 2)', async () => {
    const key = (await t.newTenant('Exact pages')).key;
    for (let i = 0; i < 4; i++) await create({ url: HOOK, events: ['*'] }, key);
    const p1 = await list('?limit=2', key);
    assert.equal(p1.body.hasMore, true);
    const p2 = await list(`?limit=2&cursor=${encodeURIComponent(p1.body.nextCursor)}`, key);
    assertJson(p2, 200);
    assert.equal(p2.body.items.length, 2);
    assert.equal(p2.body.totalCount, 2);
    assert.equal(p2.body.hasMore, false);
    assert.equal(p2.body.nextCursor, null);
  });

  test('walk with limit 2 while subscriptions are inserted and one deleted between pages: no duplicate, no skip', async () => {
    const key = (await t.newTenant('Walk')).key;
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await create({ url: HOOK, events: ['*'] }, key)).subscriptionId);
    const expected = [...ids].reverse();
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url: string = cursor === null ? '?limit=2' : `?limit=2&cursor=${encodeURIComponent(cursor)}`;
      const res = await list(url, key);
      assertJson(res, 200);
      assert.equal(res.body.totalCount, res.body.items.length);
      seen.push(...res.body.items.map((i: Json) => i.subscriptionId));
      cursor = res.body.nextCursor;
      assert.equal(res.body.hasMore, cursor !== null);
      pages++;
      // Newer rows arrive meanwhile: they sort before the cursor and never show up in later pages.
      await create({ url: HOOK, events: ['*'] }, key);
    } while (cursor !== null && pages < 20);
    assert.equal(pages, 4);
    assert.deepEqual(seen, expected);
  });

  test('limit: default 20, 1 and 100 accepted', async () => {
    const key = (await t.newTenant('Limits')).key;
    for (let i = 0; i < 21; i++) await create({ url: HOOK, events: ['*'] }, key);
    const dflt = await list('', key);
    assert.equal(dflt.body.items.length, 20);
    assert.equal(dflt.body.totalCount, 20);
    assert.equal(dflt.body.hasMore, true);
    const one = await list('?limit=1', key);
    assertJson(one, 200);
    assert.equal(one.body.items.length, 1);
    assert.equal(one.body.totalCount, 1);
    assert.equal(one.body.hasMore, true);
    const hundred = await list('?limit=100', key);
    assertJson(hundred, 200);
    assert.equal(hundred.body.items.length, 21);
    assert.equal(hundred.body.totalCount, 21);
    assert.equal(hundred.body.hasMore, false);
    assert.equal(hundred.body.nextCursor, null);
  });

  test('limit outside 1-100 or not an integer is 400 at /limit', async () => {
    for (const limit of ['0', '101', '1.5', 'abc', '-1', '', '1e1', '0x10']) {
      expectProblem(await list(`?limit=${encodeURIComponent(limit)}`), 400, 'validation_failed', ['/limit']);
    }
  });

  test('a garbage cursor is 400 at /cursor', async () => {
    const garbage = [
      'nope',
      '!!!',
      Buffer.from('[]').toString('base64url'),
      Buffer.from(JSON.stringify(['webhook_subscriptions', 'x', 'y', 'z'])).toString('base64url'),
    ];
    for (const cursor of garbage) {
      expectProblem(await list(`?cursor=${encodeURIComponent(cursor)}`), 400, 'validation_failed', ['/cursor']);
    }
    expectProblem(await list('?cursor='), 400, 'validation_failed', ['/cursor']);
  });

  test('a cursor from another list is 400 at /cursor', async () => {
    const key = (await t.newTenant('Foreign cursor')).key;
    for (const name of ['A', 'B']) assert.equal((await t.req('POST', '/v0/persons', { name }, { key })).status, 201);
    const persons = await t.req('GET', '/v0/persons?limit=1', undefined, { key });
    assert.equal(typeof persons.body.nextCursor, 'string');
    expectProblem(await list(`?cursor=${encodeURIComponent(persons.body.nextCursor)}`, key), 400, 'validation_failed', ['/cursor']);
  });

  test('an unknown query parameter is 400 at its own path', async () => {
    expectProblem(await list('?active=true'), 400, 'validation_failed', ['/active']);
    expectProblem(await list('?nope=1'), 400, 'validation_failed', ['/nope']);
  });

  test("another tenant's subscriptions are absent", async () => {
    const a = await t.newTenant('Isolation A');
    const b = await t.newTenant('Isolation B');
    const mine = await create({ url: HOOK, events: ['*'] }, a.key);
    await create({ url: HOOK, events: ['*'] }, b.key);
    await create({ url: HOOK, events: ['*'] }, b.key);
    const res = await list('', a.key);
    assert.deepEqual(
      res.body.items.map((i: Json) => i.subscriptionId),
      [mine.subscriptionId],
    );
    assert.equal(res.body.totalCount, 1);
    assert.equal((await list('', b.key)).body.items.length, 2);
    // Nor does the first tenant's own list show theirs.
    const ownIds = (await list('?limit=100')).body.items.map((i: Json) => i.subscriptionId);
    assert.ok(!ownIds.includes(mine.subscriptionId));
  });
});

describe('OpenAPI document', () => {
  function resolve(doc: Json, schema: Json): Json {
    let s = schema;
    while (s && typeof s.$ref === 'string') {
      const parts = (s.$ref as string).replace(/^#\//, '').split('/');
      s = parts.reduce((node: Json, part: string) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    }
    return s;
  }

  test('the create and update bodies enumerate exactly the event catalogue and "*"', async () => {
    const res = await t.req('GET', '/openapi.json', undefined, { key: null });
    assert.equal(res.status, 200, res.text);
    const doc = res.body;
    const collection = doc.paths?.['/v0/webhook_subscriptions'];
    const item = doc.paths?.['/v0/webhook_subscriptions/{subscription_id}'];
    assert.ok(collection?.get, 'endpoint 21 is documented');
    assert.ok(doc.paths?.['/v0/webhook_subscriptions/{subscription_id}/rotate_secret']?.post, 'rotate_secret is documented');
    for (const [name, op] of [
      ['create', collection?.post],
      ['update', item?.patch],
    ] as const) {
      assert.ok(op, `${name} is documented`);
      const body = resolve(doc, op.requestBody?.content?.['application/json']?.schema);
      const events = resolve(doc, body?.properties?.events);
      const items = resolve(doc, events?.items);
      assert.deepEqual([...(items?.enum ?? [])].sort(), [...SUBSCRIBABLE].sort(), `${name} body events enum`);
    }
  });
});
