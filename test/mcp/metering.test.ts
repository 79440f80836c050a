import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/admin/repository.js';
import { type Json, type Res, startApp, type TestApp, toRes } from '../helpers.js';

let t: TestApp;

before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

/** A key of the test tenant refilling one token a second, up to `burst`. */
const slowKey = async (burst: number, scopes: ('read' | 'write')[] = ['read', 'write']) =>
  (await t.app.db.transaction().execute((trx) => createApiKey(trx, t.tenantId, { scopes, rateLimitPerSecond: 1, rateLimitBurst: burst })))
    .apiKey;

/** One POST of raw JSON-RPC to /mcp, as an MCP client sends it. */
const post = async (key: string, body: unknown): Promise<Res> =>
  toRes(
    await t.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        authorization: `Bearer ${key}`,
      },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    }),
  );

const batch = (n: number, message: (i: number) => Json) =>
  Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, ...message(i) }));

const remaining = (res: Res) => Number(res.headers['ratelimit-remaining']);

function assertRateHeaders(res: Res, burst: number, what: string) {
  assert.equal(Number(res.headers['ratelimit-limit']), burst, `${what}: RateLimit-Limit`);
  assert.match(String(res.headers['ratelimit-remaining']), /^\d+$/, `${what}: RateLimit-Remaining`);
  assert.match(String(res.headers['ratelimit-reset']), /^\d+$/, `${what}: RateLimit-Reset`);
}

/** What the probe sent: messages that fail before any API request is made. */
const CHEAP: Record<string, (i: number) => Json> = {
  'tools/call of an unknown tool': (i) => ({ method: 'tools/call', params: { name: `no_such_tool_${i}`, arguments: {} } }),
  'tools/call with wrong arguments': () => ({ method: 'tools/call', params: { name: 'list_pages', arguments: { nope: 1, limit: 'x' } } }),
  'resources/read of an unknown URI': (i) => ({ method: 'resources/read', params: { uri: `pam://nothing/${i}` } }),
};

describe('MCP: every JSON-RPC message is metered (issue 45 §4)', () => {
  for (const [what, message] of Object.entries(CHEAP)) {
    test(`20 ${what} per POST take 20 tokens each, until the key is answered 429`, async () => {
      const key = await slowKey(45);
      const first = await post(key, batch(20, message));
      assert.equal(first.status, 200, first.text);
      assert.equal((first.body as Json[]).length, 20, 'every message is answered');
      assertRateHeaders(first, 45, 'first POST');
      assert.ok(remaining(first) >= 25 && remaining(first) <= 26, `45 - 20: ${remaining(first)}`);
      const second = await post(key, batch(20, message));
      assert.equal(second.status, 200);
      assert.ok(remaining(second) >= 5 && remaining(second) <= 7, `45 - 40: ${remaining(second)}`);
      // Five or so tokens are left: fewer than the next 20 messages need.
      const third = await post(key, batch(20, message));
      assert.equal(third.status, 429, third.text);
      assert.equal(third.body.code, 'rate_limited');
      assert.match(String(third.headers['content-type']), /problem\+json/);
      assert.ok(Number(third.headers['retry-after']) >= 1);
      assertRateHeaders(third, 45, 'the refusal');
      // Message by message, the bucket runs dry too: no message goes through unmetered.
      let refused: Res | undefined;
      for (let i = 0; i < 20 && !refused; i++) {
        const one = await post(key, batch(1, message)[0]);
        assertRateHeaders(one, 45, `message ${i}`);
        if (one.status === 429) refused = one;
        else assert.equal(one.status, 200);
      }
      assert.equal(refused?.body.code, 'rate_limited', 'single messages are refused once the bucket is empty');
    });
  }

  test('a tool that answers from one API request costs one token: 20 list_pages take 20, not 40', async () => {
    const key = await slowKey(50);
    const res = await post(
      key,
      batch(20, () => ({ method: 'tools/call', params: { name: 'list_pages', arguments: {} } })),
    );
    assert.equal(res.status, 200);
    for (const answer of res.body as Json[]) assert.notEqual(answer.result.isError, true, JSON.stringify(answer));
    const left = remaining(await post(key, { jsonrpc: '2.0', id: 99, method: 'ping' }));
    assert.ok(left >= 29 && left <= 31, `50 - 20 - 1 (one or two may have come back): ${left}`);
  });

  test('a batch the bucket cannot pay for is 429 whole: none of its messages runs', async () => {
    const key = await slowKey(30);
    const pages = async () => (await t.req('GET', '/v0/pages?limit=1')).body.totalCount as number;
    const before = await pages();
    const create = (i: number) => ({
      method: 'tools/call',
      params: { name: 'create_page', arguments: { name: `Metered ${i}`, title: 'T', pageType: 'inbound', pageContext: 'x' } },
    });
    // 20 of 30 tokens spent: about ten left, fewer than 20 create_page calls need.
    assert.equal(
      (
        await post(
          key,
          batch(20, () => ({ method: 'ping' })),
        )
      ).status,
      200,
    );
    const refused = await post(key, batch(20, create));
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.body.code, 'rate_limited');
    assert.equal(await pages(), before, 'no page was made');
    // Just inside: five calls fit, and each makes its page.
    const made = await post(key, batch(5, create));
    assert.equal(made.status, 200, made.text);
    for (const answer of made.body as Json[]) assert.notEqual(answer.result.isError, true, JSON.stringify(answer));
    assert.equal(await pages(), before + 5);
  });

  test('every answer to a live key carries the RateLimit headers: 405, malformed JSON, a batch too long, an empty batch', async () => {
    const key = await slowKey(100);
    for (const method of ['GET', 'DELETE'] as const) {
      const res = toRes(await t.app.inject({ method, url: '/mcp', headers: { authorization: `Bearer ${key}` } }));
      assert.equal(res.status, 405);
      assertRateHeaders(res, 100, method);
    }
    const malformed = await post(key, '{"jsonrpc": "2.0", ');
    assert.equal(malformed.status, 400);
    assertRateHeaders(malformed, 100, 'malformed JSON');
    const long = await post(
      key,
      batch(21, () => ({ method: 'ping' })),
    );
    assert.equal(long.status, 400);
    assert.equal(long.body.error.code, -32600);
    assertRateHeaders(long, 100, 'a batch of 21');
    const empty = await post(key, []);
    assertRateHeaders(empty, 100, 'an empty batch');
    // A notification is a message too.
    const before = remaining(await post(key, { jsonrpc: '2.0', id: 1, method: 'ping' }));
    const notified = await post(key, [
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'ping' },
    ]);
    assertRateHeaders(notified, 100, 'a notification and a ping');
    assert.ok(before - remaining(notified) >= 1 && before - remaining(notified) <= 2, `two tokens: ${before} → ${remaining(notified)}`);
    // Without a key there is no bucket to show.
    const anonymous = toRes(await t.app.inject({ method: 'POST', url: '/mcp', payload: { jsonrpc: '2.0', id: 1, method: 'ping' } }));
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.headers['ratelimit-limit'], undefined);
  });

  test('the prepaid header is no way around the bucket: sent by a client it is ignored', async () => {
    const key = await slowKey(2);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await t.req('GET', '/v0/pages?limit=1', undefined, { key, headers: { 'x-pam-prepaid': 'guess' } });
      statuses.push(res.status);
    }
    assert.ok(statuses.includes(429), statuses.join(','));
  });
});
