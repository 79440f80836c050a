import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, ISO_MS, startApp, type Json, type Res, type TestApp } from '../helpers.js';

// Black-box tests of reference endpoints 11 (list topics), 12 (create topic), 13 (list topic
// entries) and the POST /v0/topics/{topic_id}/entries extension, through HTTP only.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const TOPIC_ID = /^topic_[0-9a-z]{26}$/;
const ENTRY_ID = /^entry_[0-9a-z]{26}$/;
const TOPIC_FIELDS = ['createdAt', 'entries', 'isDefault', 'purpose', 'sortOrder', 'title', 'topicId', 'updatedAt'];
const ENTRY_FIELDS = ['content', 'createdAt', 'sortOrder', 'topicEntryId', 'topicId', 'updatedAt'];
const ENVELOPE_FIELDS = ['hasMore', 'items', 'nextCursor', 'totalCount'];
const MAX = 9007199254740991;

/** Well-formed ids that name nothing (TypeID body: first character 0-7). */
const UNKNOWN_TOPIC = 'topic_01h0000000000000000000000a';

type Opts = { key?: string };
const as = (key?: string) => (key === undefined ? {} : { key });

async function createTopic(body: Json, key?: string): Promise<Json> {
  const res = await t.req('POST', '/v0/topics', body, as(key));
  assertJson(res, 201);
  return res.body;
}

async function createEntry(topicId: string, body: Json, key?: string): Promise<Json> {
  const res = await t.req('POST', `/v0/topics/${topicId}/entries`, body, as(key));
  assertJson(res, 201);
  return res.body;
}

const entry = (type: string, content: string, sortOrder?: number): Json =>
  sortOrder === undefined ? { content: { type, content } } : { content: { type, content }, sortOrder };

async function listTopics(query = '', opts: Opts = {}): Promise<Res> {
  return t.req('GET', `/v0/topics${query ? `?${query}` : ''}`, undefined, as(opts.key));
}

async function listEntries(topicId: string, query = '', opts: Opts = {}): Promise<Res> {
  return t.req('GET', `/v0/topics/${topicId}/entries${query ? `?${query}` : ''}`, undefined, as(opts.key));
}

function assertJson(res: Res, status: number): void {
  assert.equal(res.status, status, res.text);
  assert.match(String(res.headers['content-type']), /^application\/json/);
}

function assertTopicShape(topic: Json): void {
  assert.deepEqual(Object.keys(topic).sort(), TOPIC_FIELDS);
  assert.match(topic.topicId, TOPIC_ID);
  assert.equal(typeof topic.title, 'string');
  assert.ok(topic.purpose === null || typeof topic.purpose === 'string');
  assert.ok(Number.isSafeInteger(topic.sortOrder) && topic.sortOrder >= 0);
  assert.equal(typeof topic.isDefault, 'boolean');
  assert.match(topic.createdAt, ISO_MS);
  assert.match(topic.updatedAt, ISO_MS);
  assert.ok(Array.isArray(topic.entries));
  for (const e of topic.entries) assertEntryShape(e);
}

function assertEntryShape(e: Json): void {
  assert.deepEqual(Object.keys(e).sort(), ENTRY_FIELDS);
  assert.match(e.topicEntryId, ENTRY_ID);
  assert.match(e.topicId, TOPIC_ID);
  assert.ok(Number.isSafeInteger(e.sortOrder) && e.sortOrder >= 0);
  assert.deepEqual(Object.keys(e.content).sort(), ['content', 'type']);
  assert.equal(typeof e.content.type, 'string');
  assert.equal(typeof e.content.content, 'string');
  assert.match(e.createdAt, ISO_MS);
  assert.match(e.updatedAt, ISO_MS);
}

/** Ascending by sortOrder, ties by id: the order every topic and entry list must have. */
const bySortOrderThenId = (idField: string) => (a: Json, b: Json) =>
  a.sortOrder - b.sortOrder || (a[idField] < b[idField] ? -1 : a[idField] > b[idField] ? 1 : 0);

/** Walks a list with `limit`, calling `between` after each page; returns the pages. */
async function walk(url: string, limit: number, key: string | undefined, between?: (pageNo: number) => Promise<void>): Promise<Json[]> {
  const pages: Json[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 100; i++) {
    const sep = url.includes('?') ? '&' : '?';
    const res = await t.req(
      'GET',
      `${url}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      undefined,
      as(key),
    );
    assertJson(res, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ENVELOPE_FIELDS);
    pages.push(res.body);
    assert.ok(res.body.items.length <= limit);
    if (!res.body.hasMore) {
      assert.equal(res.body.nextCursor, null);
      return pages;
    }
    assert.equal(typeof res.body.nextCursor, 'string');
    assert.equal(res.body.items.length, limit, 'a page with more after it is full');
    cursor = res.body.nextCursor;
    if (between) await between(i);
  }
  throw new Error('pagination did not end');
}

describe('POST /v0/topics', () => {
  test('201 Topic with exactly the reference fields, purpose null, entries [], the first one default', async () => {
    const { key } = await t.newTenant('Topics Shape');
    const res = await t.req('POST', '/v0/topics', { title: 'Pricing' }, { key });
    assertJson(res, 201);
    const topic = res.body;
    assertTopicShape(topic);
    assert.equal(topic.title, 'Pricing');
    assert.equal(topic.purpose, null);
    assert.deepEqual(topic.entries, []);
    assert.equal(topic.isDefault, true);
    assert.equal(topic.sortOrder, 0);
    assert.equal(topic.createdAt, topic.updatedAt);
    assert.ok(Math.abs(Date.parse(topic.createdAt) - Date.now()) < 60_000, 'createdAt is now');
    assert.ok(res.headers['x-request-id']);
  });

  test('only the first topic of a tenant is default; sortOrder defaults to 0, 1, 2, ...', async () => {
    const { key } = await t.newTenant('Topics Defaults');
    const created: Json[] = [];
    for (let i = 0; i < 5; i++) created.push(await createTopic({ title: `T${i}` }, key));
    assert.deepEqual(
      created.map((x) => x.sortOrder),
      [0, 1, 2, 3, 4],
    );
    assert.deepEqual(
      created.map((x) => x.isDefault),
      [true, false, false, false, false],
    );
    const ids = created.map((x) => x.topicId);
    assert.equal(new Set(ids).size, 5);
    assert.deepEqual([...ids].sort(), ids, 'ids are time-ordered');
    const list = await listTopics('', { key });
    assertJson(list, 200);
    assert.deepEqual(list.body, { items: created, hasMore: false, nextCursor: null, totalCount: 5 });
    assert.equal(list.body.items.filter((x: Json) => x.isDefault).length, 1);
  });

  test('the default sortOrder is one more than the highest, whatever came before', async () => {
    const { key } = await t.newTenant('Topics Highest');
    assert.equal((await createTopic({ title: 'a', sortOrder: 10 }, key)).sortOrder, 10);
    assert.equal((await createTopic({ title: 'b' }, key)).sortOrder, 11);
    assert.equal((await createTopic({ title: 'c', sortOrder: 3 }, key)).sortOrder, 3);
    assert.equal((await createTopic({ title: 'd' }, key)).sortOrder, 12);
  });

  test('each tenant has its own default topic and its own sortOrder sequence', async () => {
    const a = await t.newTenant('Topics A');
    const b = await t.newTenant('Topics B');
    await createTopic({ title: 'A0' }, a.key);
    await createTopic({ title: 'A1' }, a.key);
    const b0 = await createTopic({ title: 'B0' }, b.key);
    assert.equal(b0.isDefault, true);
    assert.equal(b0.sortOrder, 0);
  });

  test('sortOrder 0 and 9007199254740991 are accepted and echoed exactly', async () => {
    const { key } = await t.newTenant('Topics Bounds');
    const zero = await createTopic({ title: 'Zero', sortOrder: 0 }, key);
    assert.equal(zero.sortOrder, 0);
    assert.equal(zero.isDefault, true);
    const max = await createTopic({ title: 'Max', sortOrder: MAX }, key);
    assert.equal(max.sortOrder, MAX);
    assert.equal(max.isDefault, false);
    const list = await listTopics('', { key });
    assert.deepEqual(
      list.body.items.map((x: Json) => [x.title, x.sortOrder]),
      [
        ['Zero', 0],
        ['Max', MAX],
      ],
    );
  });

  test('after a topic at sortOrder 9007199254740991, a default sortOrder never leaves the range 0..9007199254740991', async () => {
    // The reference bounds Topic.sortOrder to 0..9007199254740991; "one more than the highest" cannot be
    // honoured past it, so the service must refuse (a problem) or pick a value inside the range.
    const { key } = await t.newTenant('Topics Past Max');
    await createTopic({ title: 'Max', sortOrder: MAX }, key);
    const res = await t.req('POST', '/v0/topics', { title: 'Next' }, { key });
    if (res.status === 201) {
      assert.ok(Number.isSafeInteger(res.body.sortOrder) && res.body.sortOrder <= MAX, `sortOrder ${res.body.sortOrder} is past ${MAX}`);
    } else {
      assert.ok(res.status === 400 || res.status === 409, res.text);
      expectProblem(res, res.status, res.status === 400 ? 'validation_failed' : 'conflict');
    }
    for (const item of (await listTopics('', { key })).body.items) {
      assert.ok(Number.isSafeInteger(item.sortOrder) && item.sortOrder <= MAX, `listed sortOrder ${item.sortOrder}`);
    }
  });

  test('sortOrder -1, 1.5, 9007199254740992, a string, null are 400 at /sortOrder and create nothing', async () => {
    const { key } = await t.newTenant('Topics Bad Sort');
    for (const sortOrder of [-1, 1.5, 9007199254740992, 1e300, '1', null, true]) {
      const res = await t.req('POST', '/v0/topics', { title: 'Bad', sortOrder }, { key });
      expectProblem(res, 400, 'validation_failed', ['/sortOrder']);
    }
    // The raw text too, so that no JSON round-trip in the test hides the digit.
    expectProblem(await t.req('POST', '/v0/topics', '{"title":"Bad","sortOrder":9007199254740992}', { key }), 400, 'validation_failed', [
      '/sortOrder',
    ]);
    assert.equal((await listTopics('', { key })).body.totalCount, 0);
  });

  test('title "" is 400, a missing title is 400 at /title; title "x" is accepted', async () => {
    expectProblem(await t.req('POST', '/v0/topics', { title: '' }), 400, 'validation_failed', ['/title']);
    expectProblem(await t.req('POST', '/v0/topics', {}), 400, 'validation_failed', ['/title']);
    expectProblem(await t.req('POST', '/v0/topics', { sortOrder: 1 }), 400, 'validation_failed', ['/title']);
    expectProblem(await t.req('POST', '/v0/topics', { title: null }), 400, 'validation_failed', ['/title']);
    expectProblem(await t.req('POST', '/v0/topics', { title: 5 }), 400, 'validation_failed', ['/title']);
    assert.equal((await createTopic({ title: 'x' })).title, 'x');
  });

  test('an unknown field is 400 at its own path (purpose, isDefault and entries are not inputs)', async () => {
    const { key } = await t.newTenant('Topics Unknown');
    for (const [field, value] of [
      ['color', 'red'],
      ['purpose', 'p'],
      ['isDefault', true],
      ['entries', []],
      ['topicId', UNKNOWN_TOPIC],
    ] as const) {
      expectProblem(await t.req('POST', '/v0/topics', { title: 'U', [field]: value }, { key }), 400, 'validation_failed', [`/${field}`]);
    }
    const all = await t.req('POST', '/v0/topics', { title: '', sortOrder: -1, extra: 1 }, { key });
    expectProblem(all, 400, 'validation_failed', ['/title', '/sortOrder', '/extra']);
    assert.equal((await listTopics('', { key })).body.totalCount, 0);
  });

  test('bad JSON, a non-object body and a non-JSON content type are refused', async () => {
    expectProblem(await t.req('POST', '/v0/topics', '{"title": '), 400, 'validation_failed');
    expectProblem(await t.req('POST', '/v0/topics', '[]'), 400, 'validation_failed');
    expectProblem(
      await t.req('POST', '/v0/topics', '{"title":"x"}', { headers: { 'content-type': 'text/plain' } }),
      415,
      'unsupported_media_type',
    );
  });

  test('an explicit sortOrder lower than the others moves the topic up the list', async () => {
    const { key } = await t.newTenant('Topics Reorder');
    const a = await createTopic({ title: 'A' }, key); // 0
    const b = await createTopic({ title: 'B' }, key); // 1
    const c = await createTopic({ title: 'C' }, key); // 2
    const first = await createTopic({ title: 'First', sortOrder: 0 }, key); // ties with A, after it by id
    assert.equal(first.isDefault, false, 'the default stays the first topic created');
    const mid = await createTopic({ title: 'Mid', sortOrder: 1 }, key); // ties with B
    const next = await createTopic({ title: 'Next' }, key); // 3
    assert.equal(next.sortOrder, 3);
    const res = await listTopics('', { key });
    assertJson(res, 200);
    assert.deepEqual(
      res.body.items.map((x: Json) => x.title),
      ['A', 'First', 'B', 'Mid', 'C', 'Next'],
    );
    assert.deepEqual(
      res.body.items.map((x: Json) => x.topicId),
      [a, first, b, mid, c, next].map((x) => x.topicId),
    );
    assert.deepEqual(
      res.body.items.map((x: Json) => x.isDefault),
      [true, false, false, false, false, false],
    );
  });

  test('10 concurrent creates on a fresh tenant: exactly one default, sortOrders 0..9', async () => {
    const { key } = await t.newTenant('Topics Race');
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => t.req('POST', '/v0/topics', { title: `Race ${i}` }, { key })));
    for (const r of results) assertJson(r, 201);
    assert.equal(results.filter((r) => r.body.isDefault === true).length, 1);
    assert.deepEqual(
      results.map((r) => r.body.sortOrder).sort((x, y) => x - y),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
    const list = await listTopics('limit=100', { key });
    assert.equal(list.body.totalCount, 10);
    assert.equal(list.body.items.filter((x: Json) => x.isDefault).length, 1);
    const def = results.find((r) => r.body.isDefault)!.body;
    assert.equal(def.sortOrder, 0, 'the default is the one created first');
  });

  test('10 concurrent creates on two fresh tenants at once: one default in each', async () => {
    const a = await t.newTenant('Race A');
    const b = await t.newTenant('Race B');
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => t.req('POST', '/v0/topics', { title: `R${i}` }, { key: i % 2 === 0 ? a.key : b.key })),
    );
    for (const r of results) assertJson(r, 201);
    for (const key of [a.key, b.key]) {
      const list = await listTopics('', { key });
      assert.equal(list.body.totalCount, 5);
      assert.equal(list.body.items.filter((x: Json) => x.isDefault).length, 1);
      assert.deepEqual(
        list.body.items.map((x: Json) => x.sortOrder),
        [0, 1, 2, 3, 4],
      );
    }
  });
});

describe('GET /v0/topics', () => {
  test('envelope exactly; an empty tenant lists nothing', async () => {
    const { key } = await t.newTenant('Topics Empty');
    const res = await listTopics('', { key });
    assertJson(res, 200);
    assert.deepEqual(res.body, { items: [], hasMore: false, nextCursor: null, totalCount: 0 });
  });

  test('ordered by sortOrder then id, each topic with all its entries in sortOrder order', async () => {
    const { key } = await t.newTenant('Topics Entries');
    const t1 = await createTopic({ title: 'One', sortOrder: 5 }, key);
    const t2 = await createTopic({ title: 'Two', sortOrder: 2 }, key);
    const t3 = await createTopic({ title: 'Three', sortOrder: 5 }, key);
    const t4 = await createTopic({ title: 'Empty', sortOrder: 1 }, key);
    const e1 = [
      await createEntry(t1.topicId, entry('text', 'late', 9), key),
      await createEntry(t1.topicId, entry('text', 'early', 1), key),
      await createEntry(t1.topicId, entry('faq', 'default'), key), // 10
      await createEntry(t1.topicId, entry('text', 'tie', 1), key), // ties with "early", after it by id
    ];
    assert.equal(e1[2].sortOrder, 10);
    const e2 = [await createEntry(t2.topicId, entry('text', 'only'), key)];
    assert.equal(e2[0].sortOrder, 0);
    const e3 = [await createEntry(t3.topicId, entry('a', 'x', 0), key), await createEntry(t3.topicId, entry('b', 'y', MAX), key)];
    const res = await listTopics('', { key });
    assertJson(res, 200);
    const items = res.body.items;
    for (const item of items) assertTopicShape(item);
    assert.deepEqual(
      items.map((x: Json) => x.topicId),
      [t4, t2, t1, t3].map((x) => x.topicId),
    );
    const byId = new Map(items.map((x: Json) => [x.topicId, x]));
    const ent = (id: string) => (byId.get(id) as Json).entries;
    assert.deepEqual(ent(t1.topicId), [e1[1], e1[3], e1[0], e1[2]]);
    assert.deepEqual(
      ent(t1.topicId).map((e: Json) => e.content.content),
      ['early', 'tie', 'late', 'default'],
    );
    assert.deepEqual(ent(t2.topicId), e2);
    assert.deepEqual(ent(t3.topicId), e3);
    assert.deepEqual(ent(t4.topicId), []);
    assert.equal(res.body.totalCount, 4);
    // The topics carry what was created, apart from the moved updatedAt.
    for (const created of [t1, t2, t3, t4]) {
      const listed = byId.get(created.topicId) as Json;
      assert.deepEqual({ ...listed, entries: [], updatedAt: created.updatedAt }, created);
    }
  });

  test('a topic with more than the page limit of entries lists all of them', async () => {
    const { key } = await t.newTenant('Topics Many Entries');
    const topic = await createTopic({ title: 'Many' }, key);
    const made: Json[] = [];
    for (let i = 0; i < 25; i++) made.push(await createEntry(topic.topicId, entry('text', `e${i}`, 24 - i), key));
    const res = await listTopics('limit=1', { key });
    assertJson(res, 200);
    assert.equal(res.body.items[0].entries.length, 25);
    assert.deepEqual(res.body.items[0].entries, [...made].sort(bySortOrderThenId('topicEntryId')));
  });

  test('pagination with limit 2 walked to the end: no duplicate, no skip, totalCount', async () => {
    const { key } = await t.newTenant('Topics Pages');
    const orders = [3, 1, 4, 1, 5, 9, 2]; // ties on 1
    const made: Json[] = [];
    for (const [i, sortOrder] of orders.entries()) made.push(await createTopic({ title: `P${i}`, sortOrder }, key));
    await createEntry(made[0].topicId, entry('text', 'with entry'), key);
    const expected = [...made].sort(bySortOrderThenId('topicId')).map((x) => x.topicId);
    const pages = await walk('/v0/topics', 2, key);
    assert.deepEqual(
      pages.map((p) => p.items.length),
      [2, 2, 2, 1],
    );
    for (const p of pages) assert.equal(p.totalCount, 7);
    const seen = pages.flatMap((p) => p.items.map((x: Json) => x.topicId));
    assert.deepEqual(seen, expected);
    const withEntry = pages.flatMap((p) => p.items).find((x: Json) => x.topicId === made[0].topicId);
    assert.deepEqual(
      withEntry.entries.map((e: Json) => e.content.content),
      ['with entry'],
    );
  });

  test('topics created between pages: one after the cursor shows up, one before it does not, nothing twice', async () => {
    const { key } = await t.newTenant('Topics Pages Insert');
    const made: Json[] = [];
    for (let i = 0; i < 6; i++) made.push(await createTopic({ title: `I${i}` }, key)); // 0..5
    let late: Json;
    const pages = await walk('/v0/topics', 2, key, async (pageNo) => {
      if (pageNo === 0) {
        late = await createTopic({ title: 'Late' }, key); // 6: after the cursor
        await createTopic({ title: 'Early', sortOrder: 0 }, key); // before the cursor
      }
    });
    const seen = pages.flatMap((p) => p.items.map((x: Json) => x.topicId));
    assert.deepEqual(seen, [...made.map((x) => x.topicId), late!.topicId]);
    assert.equal(new Set(seen).size, seen.length);
    assert.equal(pages[0].totalCount, 6);
    assert.equal(pages[pages.length - 1].totalCount, 8);
  });

  test('limit 1 and 100 are accepted; 0, 101, 1.5, x are 400 at /limit; unknown parameters are 400', async () => {
    const { key } = await t.newTenant('Topics Limits');
    for (let i = 0; i < 3; i++) await createTopic({ title: `L${i}` }, key);
    const one = await listTopics('limit=1', { key });
    assertJson(one, 200);
    assert.equal(one.body.items.length, 1);
    assert.equal(one.body.hasMore, true);
    assert.equal(one.body.totalCount, 3);
    const hundred = await listTopics('limit=100', { key });
    assertJson(hundred, 200);
    assert.equal(hundred.body.items.length, 3);
    assert.equal(hundred.body.hasMore, false);
    for (const limit of ['0', '101', '1.5', 'x', '-1', '']) {
      expectProblem(await listTopics(`limit=${limit}`, { key }), 400, 'validation_failed', ['/limit']);
    }
    expectProblem(await listTopics('sort=title', { key }), 400, 'validation_failed', ['/sort']);
  });

  test('the default limit is 20', async () => {
    const { key } = await t.newTenant('Topics Default Limit');
    for (let i = 0; i < 21; i++) await createTopic({ title: `D${i}` }, key);
    const res = await listTopics('', { key });
    assert.equal(res.body.items.length, 20);
    assert.equal(res.body.hasMore, true);
    assert.equal(res.body.totalCount, 21);
    const rest = await listTopics(`cursor=${encodeURIComponent(res.body.nextCursor)}`, { key });
    assert.deepEqual(
      rest.body.items.map((x: Json) => x.title),
      ['D20'],
    );
    assert.equal(rest.body.hasMore, false);
    assert.equal(rest.body.nextCursor, null);
  });

  test('a cursor that does not decode or came from another list is 400 at /cursor', async () => {
    const { key } = await t.newTenant('Topics Cursors');
    const topic = await createTopic({ title: 'C0' }, key);
    await createTopic({ title: 'C1' }, key);
    for (let i = 0; i < 3; i++) await createEntry(topic.topicId, entry('text', `c${i}`), key);
    await t.req('POST', '/v0/persons', { name: 'P1' }, { key });
    await t.req('POST', '/v0/persons', { name: 'P2' }, { key });

    const topicsCursor = (await listTopics('limit=1', { key })).body.nextCursor;
    const entriesCursor = (await listEntries(topic.topicId, 'limit=1', { key })).body.nextCursor;
    const personsCursor = (await t.req('GET', '/v0/persons?limit=1', undefined, { key })).body.nextCursor;
    for (const c of [topicsCursor, entriesCursor, personsCursor]) assert.equal(typeof c, 'string');

    // Each cursor works on its own list.
    assertJson(await listTopics(`limit=1&cursor=${encodeURIComponent(topicsCursor)}`, { key }), 200);
    assertJson(await listEntries(topic.topicId, `limit=1&cursor=${encodeURIComponent(entriesCursor)}`, { key }), 200);

    for (const c of [
      entriesCursor,
      personsCursor,
      'not-a-cursor',
      '',
      'W10',
      Buffer.from('["topics",null,"x","y"]').toString('base64url'),
    ]) {
      expectProblem(await listTopics(`cursor=${encodeURIComponent(c)}`, { key }), 400, 'validation_failed', ['/cursor']);
    }
    for (const c of [topicsCursor, personsCursor, 'not-a-cursor']) {
      expectProblem(await listEntries(topic.topicId, `cursor=${encodeURIComponent(c)}`, { key }), 400, 'validation_failed', ['/cursor']);
    }
    // The entries cursor of one topic is not a cursor of another topic's entries.
    const other = await createTopic({ title: 'C2' }, key);
    await createEntry(other.topicId, entry('text', 'o'), key);
    expectProblem(await listEntries(other.topicId, `cursor=${encodeURIComponent(entriesCursor)}`, { key }), 400, 'validation_failed', [
      '/cursor',
    ]);
  });
});

describe('POST /v0/topics/{topic_id}/entries (extension)', () => {
  test('201 TopicEntry with exactly the reference fields', async () => {
    const { key } = await t.newTenant('Entries Shape');
    const topic = await createTopic({ title: 'Topic' }, key);
    const res = await t.req(
      'POST',
      `/v0/topics/${topic.topicId}/entries`,
      { content: { type: 'markdown', content: '# Hello\nworld' } },
      { key },
    );
    assertJson(res, 201);
    const e = res.body;
    assertEntryShape(e);
    assert.equal(e.topicId, topic.topicId);
    assert.deepEqual(e.content, { type: 'markdown', content: '# Hello\nworld' });
    assert.equal(e.sortOrder, 0);
    assert.equal(e.createdAt, e.updatedAt);
    assert.ok(Math.abs(Date.parse(e.createdAt) - Date.now()) < 60_000);
  });

  test('sortOrder defaults to one more than the highest in the topic, 0 for the first, per topic', async () => {
    const { key } = await t.newTenant('Entries Defaults');
    const a = await createTopic({ title: 'A' }, key);
    const b = await createTopic({ title: 'B' }, key);
    assert.equal((await createEntry(a.topicId, entry('t', '1'), key)).sortOrder, 0);
    assert.equal((await createEntry(a.topicId, entry('t', '2'), key)).sortOrder, 1);
    assert.equal((await createEntry(a.topicId, entry('t', '3'), key)).sortOrder, 2);
    assert.equal((await createEntry(b.topicId, entry('t', '1'), key)).sortOrder, 0, 'another topic starts at 0');
    assert.equal((await createEntry(a.topicId, entry('t', '4', 40), key)).sortOrder, 40);
    assert.equal((await createEntry(a.topicId, entry('t', '5'), key)).sortOrder, 41);
    assert.equal((await createEntry(a.topicId, entry('t', '6', 7), key)).sortOrder, 7);
    assert.equal((await createEntry(a.topicId, entry('t', '7'), key)).sortOrder, 42);
    assert.equal((await createEntry(b.topicId, entry('t', '2'), key)).sortOrder, 1);
  });

  test('sortOrder 0 and 9007199254740991 are accepted; -1, 1.5, 9007199254740992, "1", null are 400 at /sortOrder', async () => {
    const { key } = await t.newTenant('Entries Bounds');
    const topic = await createTopic({ title: 'Bounds' }, key);
    assert.equal((await createEntry(topic.topicId, entry('t', 'zero', 0), key)).sortOrder, 0);
    assert.equal((await createEntry(topic.topicId, entry('t', 'max', MAX), key)).sortOrder, MAX);
    for (const sortOrder of [-1, 1.5, 9007199254740992, '1', null]) {
      const res = await t.req('POST', `/v0/topics/${topic.topicId}/entries`, { content: { type: 't', content: 'c' }, sortOrder }, { key });
      expectProblem(res, 400, 'validation_failed', ['/sortOrder']);
    }
    const list = await listEntries(topic.topicId, '', { key });
    assert.deepEqual(
      list.body.items.map((e: Json) => [e.content.content, e.sortOrder]),
      [
        ['zero', 0],
        ['max', MAX],
      ],
    );
  });

  test('after an entry at sortOrder 9007199254740991, a default sortOrder never leaves the range', async () => {
    const { key } = await t.newTenant('Entries Past Max');
    const topic = await createTopic({ title: 'Past max' }, key);
    await createEntry(topic.topicId, entry('t', 'max', MAX), key);
    const res = await t.req('POST', `/v0/topics/${topic.topicId}/entries`, entry('t', 'next'), { key });
    if (res.status === 201) {
      assert.ok(Number.isSafeInteger(res.body.sortOrder) && res.body.sortOrder <= MAX, `sortOrder ${res.body.sortOrder} is past ${MAX}`);
    } else {
      assert.ok(res.status === 400 || res.status === 409, res.text);
      expectProblem(res, res.status, res.status === 400 ? 'validation_failed' : 'conflict');
    }
    for (const e of (await listEntries(topic.topicId, '', { key })).body.items) {
      assert.ok(Number.isSafeInteger(e.sortOrder) && e.sortOrder <= MAX, `listed sortOrder ${e.sortOrder}`);
    }
  });

  test('content: type "" is 400 at /content/type, type "x" and content "" are accepted', async () => {
    const { key } = await t.newTenant('Entries Content');
    const topic = await createTopic({ title: 'Content' }, key);
    const url = `/v0/topics/${topic.topicId}/entries`;
    expectProblem(await t.req('POST', url, { content: { type: '', content: 'c' } }, { key }), 400, 'validation_failed', ['/content/type']);
    assert.deepEqual((await createEntry(topic.topicId, { content: { type: 'x', content: '' } }, key)).content, { type: 'x', content: '' });
    const long = 'é'.repeat(10_000);
    assert.equal((await createEntry(topic.topicId, { content: { type: 'any-type', content: long } }, key)).content.content, long);
  });

  test('missing or malformed content is 400 at the field', async () => {
    const { key } = await t.newTenant('Entries Missing');
    const topic = await createTopic({ title: 'Missing' }, key);
    const url = `/v0/topics/${topic.topicId}/entries`;
    const cases: [Json, string[]][] = [
      [{}, ['/content']],
      [{ sortOrder: 1 }, ['/content']],
      [{ content: null }, ['/content']],
      [{ content: 'text' }, ['/content']],
      [{ content: {} }, ['/content/type', '/content/content']],
      [{ content: { type: 't' } }, ['/content/content']],
      [{ content: { content: 'c' } }, ['/content/type']],
      [{ content: { type: 't', content: 5 } }, ['/content/content']],
      [{ content: { type: 5, content: 'c' } }, ['/content/type']],
      [{ content: { type: 't', content: 'c', extra: 1 } }, ['/content/extra']],
      [{ content: { type: 't', content: 'c' }, topicId: topic.topicId }, ['/topicId']],
      [{ content: { type: 't', content: 'c' }, extra: 1 }, ['/extra']],
    ];
    for (const [body, paths] of cases) {
      expectProblem(await t.req('POST', url, body, { key }), 400, 'validation_failed', paths);
    }
    expectProblem(await t.req('POST', url, '{"content":', { key }), 400, 'validation_failed');
    assert.equal((await listEntries(topic.topicId, '', { key })).body.totalCount, 0, 'nothing was created');
  });

  test("creating an entry moves the topic's updatedAt strictly later, nothing else", async () => {
    const { key } = await t.newTenant('Entries UpdatedAt');
    const topic = await createTopic({ title: 'Moves' }, key);
    const e1 = await createEntry(topic.topicId, entry('t', '1'), key);
    const after1 = (await listTopics('', { key })).body.items[0];
    assert.ok(Date.parse(after1.updatedAt) > Date.parse(topic.updatedAt), `${after1.updatedAt} > ${topic.updatedAt}`);
    assert.ok(Date.parse(after1.updatedAt) >= Date.parse(e1.createdAt));
    assert.match(after1.updatedAt, ISO_MS);
    assert.deepEqual({ ...after1, updatedAt: topic.updatedAt, entries: [] }, topic);
    await createEntry(topic.topicId, entry('t', '2'), key);
    const after2 = (await listTopics('', { key })).body.items[0];
    assert.ok(Date.parse(after2.updatedAt) > Date.parse(after1.updatedAt), `${after2.updatedAt} > ${after1.updatedAt}`);
    assert.equal(after2.createdAt, topic.createdAt);
    // A refused entry does not move it.
    expectProblem(
      await t.req('POST', `/v0/topics/${topic.topicId}/entries`, { content: { type: '', content: 'x' } }, { key }),
      400,
      'validation_failed',
      ['/content/type'],
    );
    assert.equal((await listTopics('', { key })).body.items[0].updatedAt, after2.updatedAt);
  });

  test('an unknown or malformed topic id is 404', async () => {
    for (const id of [UNKNOWN_TOPIC, 'nope', 'entry_01h0000000000000000000000a']) {
      expectProblem(await t.req('POST', `/v0/topics/${id}/entries`, entry('t', 'c')), 404, 'not_found');
    }
  });

  test('10 concurrent entries on one topic get distinct default sortOrders 0..9', async () => {
    const { key } = await t.newTenant('Entries Race');
    const topic = await createTopic({ title: 'Race' }, key);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => t.req('POST', `/v0/topics/${topic.topicId}/entries`, entry('t', `r${i}`), { key })),
    );
    for (const r of results) assertJson(r, 201);
    assert.deepEqual(
      results.map((r) => r.body.sortOrder).sort((x, y) => x - y),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
  });
});

describe('GET /v0/topics/{topic_id}/entries', () => {
  test("envelope of the topic's entries in sortOrder then id order", async () => {
    const { key } = await t.newTenant('Entries List');
    const topic = await createTopic({ title: 'List' }, key);
    const other = await createTopic({ title: 'Other' }, key);
    const made = [
      await createEntry(topic.topicId, entry('t', 'c', 5), key),
      await createEntry(topic.topicId, entry('t', 'a', 0), key),
      await createEntry(topic.topicId, entry('t', 'b', 5), key),
      await createEntry(topic.topicId, entry('t', 'd'), key), // 6
    ];
    await createEntry(other.topicId, entry('t', 'elsewhere'), key);
    const res = await listEntries(topic.topicId, '', { key });
    assertJson(res, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ENVELOPE_FIELDS);
    for (const e of res.body.items) assertEntryShape(e);
    assert.deepEqual(res.body, { items: [made[1], made[0], made[2], made[3]], hasMore: false, nextCursor: null, totalCount: 4 });
    const empty = await createTopic({ title: 'Empty' }, key);
    assert.deepEqual((await listEntries(empty.topicId, '', { key })).body, { items: [], hasMore: false, nextCursor: null, totalCount: 0 });
  });

  test('pagination with limit 2 walked to the end while entries are added between pages', async () => {
    const { key } = await t.newTenant('Entries Pages');
    const topic = await createTopic({ title: 'Pages' }, key);
    const made: Json[] = [];
    for (const sortOrder of [2, 7, 1, 7, 3]) made.push(await createEntry(topic.topicId, entry('t', `s${sortOrder}`, sortOrder), key));
    const expected = [...made].sort(bySortOrderThenId('topicEntryId'));
    let late: Json;
    const pages = await walk(`/v0/topics/${topic.topicId}/entries`, 2, key, async (pageNo) => {
      if (pageNo === 0) {
        late = await createEntry(topic.topicId, entry('t', 'late'), key); // 8: after the cursor
        await createEntry(topic.topicId, entry('t', 'early', 0), key); // before the cursor
      }
    });
    const seen = pages.flatMap((p) => p.items);
    assert.deepEqual(seen, [...expected, late!]);
    assert.equal(new Set(seen.map((e: Json) => e.topicEntryId)).size, seen.length);
    assert.equal(pages[0].totalCount, 5);
    assert.equal(pages[pages.length - 1].totalCount, 7);
  });

  test('pagination without inserts: pages of 2, 2, 1 and totalCount 5 on each', async () => {
    const { key } = await t.newTenant('Entries Pages 2');
    const topic = await createTopic({ title: 'Pages 2' }, key);
    const made: Json[] = [];
    for (let i = 0; i < 5; i++) made.push(await createEntry(topic.topicId, entry('t', `${i}`), key));
    const pages = await walk(`/v0/topics/${topic.topicId}/entries`, 2, key);
    assert.deepEqual(
      pages.map((p) => p.items.length),
      [2, 2, 1],
    );
    for (const p of pages) assert.equal(p.totalCount, 5);
    assert.deepEqual(
      pages.flatMap((p) => p.items),
      made,
    );
  });

  test('limit bounds and unknown parameters', async () => {
    const topic = await createTopic({ title: 'Entry limits' });
    assertJson(await listEntries(topic.topicId, 'limit=1'), 200);
    assertJson(await listEntries(topic.topicId, 'limit=100'), 200);
    for (const limit of ['0', '101', 'x']) {
      expectProblem(await listEntries(topic.topicId, `limit=${limit}`), 400, 'validation_failed', ['/limit']);
    }
    expectProblem(await listEntries(topic.topicId, 'type=text'), 400, 'validation_failed', ['/type']);
  });

  test('an unknown or malformed topic id is 404', async () => {
    for (const id of [UNKNOWN_TOPIC, 'nope', 'topic_']) {
      expectProblem(await listEntries(id), 404, 'not_found');
    }
  });
});

describe('tenant isolation', () => {
  test("another tenant's topic is 404 for listing and creating entries, and is absent from the list", async () => {
    const owner = await t.newTenant('Owner');
    const intruder = await t.newTenant('Intruder');
    const theirs = await createTopic({ title: 'Theirs' }, owner.key);
    const theirEntry = await createEntry(theirs.topicId, entry('t', 'secret'), owner.key);
    const before = (await listTopics('', { key: owner.key })).body;

    expectProblem(await listEntries(theirs.topicId, '', { key: intruder.key }), 404, 'not_found');
    expectProblem(
      await t.req('POST', `/v0/topics/${theirs.topicId}/entries`, entry('t', 'injected'), { key: intruder.key }),
      404,
      'not_found',
    );

    const intruderList = await listTopics('', { key: intruder.key });
    assert.deepEqual(intruderList.body, { items: [], hasMore: false, nextCursor: null, totalCount: 0 });
    const mine = await createTopic({ title: 'Mine' }, intruder.key);
    assert.equal(mine.isDefault, true, "another tenant's topic does not take this tenant's default");
    assert.equal(mine.sortOrder, 0);
    assert.deepEqual(
      (await listTopics('', { key: intruder.key })).body.items.map((x: Json) => x.topicId),
      [mine.topicId],
    );

    // The owner's topic is unchanged: no entry added, updatedAt not moved.
    assert.deepEqual((await listTopics('', { key: owner.key })).body, before);
    assert.deepEqual((await listEntries(theirs.topicId, '', { key: owner.key })).body.items, [theirEntry]);
  });

  test('missing or unknown x-api-key is 401 on every topics route', async () => {
    const topic = await createTopic({ title: 'Auth' });
    const calls: [string, string, Json][] = [
      ['GET', '/v0/topics', undefined],
      ['POST', '/v0/topics', { title: 'x' }],
      ['GET', `/v0/topics/${topic.topicId}/entries`, undefined],
      ['POST', `/v0/topics/${topic.topicId}/entries`, entry('t', 'c')],
    ];
    for (const [method, url, body] of calls) {
      expectProblem(await t.req(method, url, body, { key: null }), 401, 'unauthorized');
      expectProblem(await t.req(method, url, body, { key: `pak_${'x'.repeat(43)}` }), 401, 'unauthorized');
    }
  });
});
