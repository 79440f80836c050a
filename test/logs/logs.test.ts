import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, ISO_MS, startApp, type Json, type TestApp } from '../helpers.js';

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const PERSON_LOG_ID = /^personlog_[a-z0-9]{26}$/;
const ACCOUNT_LOG_ID = /^accountlog_[a-z0-9]{26}$/;
const PERSON_LOG_KEYS = ['createdAt', 'deletedAt', 'idempotencyKey', 'payload', 'personId', 'personLogId', 'source', 'type', 'updatedAt'];
const ACCOUNT_LOG_KEYS = [
  'accountId',
  'accountLogId',
  'createdAt',
  'deletedAt',
  'idempotencyKey',
  'payload',
  'source',
  'type',
  'updatedAt',
];

// Well-formed identifiers that name nothing.
const UNKNOWN_PERSON = 'person_01h0000000000000000000000z';
const UNKNOWN_ACCOUNT = 'account_01h0000000000000000000000z';
const UNKNOWN_PERSON_LOG = 'personlog_01h0000000000000000000000z';
const UNKNOWN_ACCOUNT_LOG = 'accountlog_01h0000000000000000000000z';

let domainCounter = 0;

async function createPerson(key: string = t.key, name = 'Log Person'): Promise<string> {
  const res = await t.req('POST', '/v0/persons', { name }, { key });
  assert.equal(res.status, 201, res.text);
  return res.body.personId;
}

async function createAccount(key: string = t.key, name = 'Log Account'): Promise<string> {
  const res = await t.req('POST', '/v0/accounts', { name, domain: `logs-${++domainCounter}.example` }, { key });
  assert.equal(res.status, 201, res.text);
  return res.body.accountId;
}

type Owner = 'person' | 'account';
const OWNERS: Owner[] = ['person', 'account'];
const base = (owner: Owner, id: string) => (owner === 'person' ? `/v0/persons/${id}/logs` : `/v0/accounts/${id}/logs`);
const newOwner = (owner: Owner, key: string = t.key) => (owner === 'person' ? createPerson(key) : createAccount(key));
const logIdOf = (owner: Owner, log: Json): string => (owner === 'person' ? log.personLogId : log.accountLogId);

function assertLogShape(owner: Owner, ownerId: string, log: Json): void {
  if (owner === 'person') {
    assert.deepEqual(Object.keys(log).sort(), PERSON_LOG_KEYS);
    assert.equal(log.personId, ownerId);
    assert.match(log.personLogId, PERSON_LOG_ID);
  } else {
    assert.deepEqual(Object.keys(log).sort(), ACCOUNT_LOG_KEYS);
    assert.equal(log.accountId, ownerId);
    assert.match(log.accountLogId, ACCOUNT_LOG_ID);
  }
  assert.match(log.createdAt, ISO_MS);
  assert.ok(Math.abs(Date.parse(log.createdAt) - Date.now()) < 60_000);
  assert.equal(log.updatedAt, null);
  assert.equal(log.deletedAt, null);
}

for (const owner of OWNERS) {
  describe(`POST and GET ${owner} logs`, () => {
    test('creates a log: 201 with the full log, and GET gives it back', async () => {
      const ownerId = await newOwner(owner);
      const payload = {
        text: 'Called about renewal',
        score: 4.5,
        tags: ['a', 'b'],
        nested: { ok: true, none: null, list: [1, { x: 'y' }] },
        unicode: 'Zoë ✓',
      };
      const res = await t.req('POST', base(owner, ownerId), { source: 'crm-sync', type: 'call-note', payload }, {});
      assert.equal(res.status, 201, res.text);
      assert.ok(String(res.headers['content-type']).startsWith('application/json'));
      assert.equal(res.headers['idempotent-replayed'], undefined);
      const log = res.body;
      assertLogShape(owner, ownerId, log);
      assert.equal(log.source, 'crm-sync');
      assert.equal(log.type, 'call-note');
      assert.deepEqual(log.payload, payload);
      assert.equal(log.idempotencyKey, null);

      const got = await t.req('GET', `${base(owner, ownerId)}/${logIdOf(owner, log)}`);
      assert.equal(got.status, 200, got.text);
      assert.deepEqual(got.body, log);
    });

    test('idempotencyKey is echoed, and an empty payload object is accepted', async () => {
      const ownerId = await newOwner(owner);
      const res = await t.req('POST', base(owner, ownerId), { source: 'web', type: 'visit', payload: {}, idempotencyKey: 'echo-key-1' });
      assert.equal(res.status, 201, res.text);
      assertLogShape(owner, ownerId, res.body);
      assert.equal(res.body.idempotencyKey, 'echo-key-1');
      assert.deepEqual(res.body.payload, {});
      const got = await t.req('GET', `${base(owner, ownerId)}/${logIdOf(owner, res.body)}`);
      assert.equal(got.status, 200, got.text);
      assert.deepEqual(got.body, res.body);
    });

    test('source and type: length 1 and 100 are accepted, 0 and 101 are 400', async () => {
      const ownerId = await newOwner(owner);
      for (const field of ['source', 'type'] as const) {
        for (const value of ['a', 'a'.repeat(100), `${'a'.repeat(49)}-${'b'.repeat(50)}`]) {
          const res = await t.req('POST', base(owner, ownerId), { source: 'ok', type: 'ok', payload: {}, [field]: value });
          assert.equal(res.status, 201, `${field}=${value}: ${res.text}`);
          assert.equal(res.body[field], value);
        }
        for (const value of ['', 'a'.repeat(101), `${'a'.repeat(50)}-${'b'.repeat(50)}`]) {
          const res = await t.req('POST', base(owner, ownerId), { source: 'ok', type: 'ok', payload: {}, [field]: value });
          expectProblem(res, 400, 'validation_failed', [`/${field}`]);
        }
      }
    });

    test('source and type follow ^[a-z0-9]+(-[a-z0-9]+)*$', async () => {
      const ownerId = await newOwner(owner);
      for (const field of ['source', 'type'] as const) {
        for (const value of ['a', 'crm-sync', 'a1-b2', '0', 'x-y-z', '123-abc']) {
          const res = await t.req('POST', base(owner, ownerId), { source: 'ok', type: 'ok', payload: {}, [field]: value });
          assert.equal(res.status, 201, `${field}=${value}: ${res.text}`);
          assert.equal(res.body[field], value);
        }
        for (const value of ['A', 'Crm', 'a--b', '-a', 'a-', 'a_b', 'a b', ' a', 'a\n', 'a.b', 'é', '-']) {
          const res = await t.req('POST', base(owner, ownerId), { source: 'ok', type: 'ok', payload: {}, [field]: value });
          expectProblem(res, 400, 'validation_failed', [`/${field}`]);
        }
      }
    });

    test('source, type and payload are required and typed', async () => {
      const ownerId = await newOwner(owner);
      expectProblem(await t.req('POST', base(owner, ownerId), { type: 'x', payload: {} }), 400, 'validation_failed', ['/source']);
      expectProblem(await t.req('POST', base(owner, ownerId), { source: 'x', payload: {} }), 400, 'validation_failed', ['/type']);
      expectProblem(await t.req('POST', base(owner, ownerId), {}), 400, 'validation_failed', ['/source', '/type', '/payload']);
      expectProblem(await t.req('POST', base(owner, ownerId), { source: 1, type: true, payload: {} }), 400, 'validation_failed', [
        '/source',
        '/type',
      ]);
      expectProblem(await t.req('POST', base(owner, ownerId), { source: null, type: 'x', payload: {} }), 400, 'validation_failed', [
        '/source',
      ]);
    });

    test('payload must be an object: array, string, number, null or missing is 400 at /payload', async () => {
      const ownerId = await newOwner(owner);
      for (const payload of [[], [{ a: 1 }], 'text', 42, true, null]) {
        const res = await t.req('POST', base(owner, ownerId), { source: 'x', type: 'y', payload });
        expectProblem(res, 400, 'validation_failed', ['/payload']);
      }
      expectProblem(await t.req('POST', base(owner, ownerId), { source: 'x', type: 'y' }), 400, 'validation_failed', ['/payload']);
    });

    test('idempotencyKey: length 1 and 255 are accepted, "" and 256 are 400 at /idempotencyKey', async () => {
      const ownerId = await newOwner(owner);
      for (const key of ['k', 'k'.repeat(255)]) {
        const res = await t.req('POST', base(owner, ownerId), { source: 'x', type: 'y', payload: {}, idempotencyKey: key });
        assert.equal(res.status, 201, res.text);
        assert.equal(res.body.idempotencyKey, key);
      }
      for (const key of ['', 'k'.repeat(256)]) {
        const res = await t.req('POST', base(owner, ownerId), { source: 'x', type: 'y', payload: {}, idempotencyKey: key });
        expectProblem(res, 400, 'validation_failed', ['/idempotencyKey']);
      }
      expectProblem(
        await t.req('POST', base(owner, ownerId), { source: 'x', type: 'y', payload: {}, idempotencyKey: 5 }),
        400,
        'validation_failed',
        ['/idempotencyKey'],
      );
    });

    test('an unknown body field is 400 naming it; bad JSON is 400; a non-JSON body is 415', async () => {
      const ownerId = await newOwner(owner);
      expectProblem(
        await t.req('POST', base(owner, ownerId), { source: 'x', type: 'y', payload: {}, extra: 1 }),
        400,
        'validation_failed',
        ['/extra'],
      );
      expectProblem(
        await t.req('POST', base(owner, ownerId), { source: 'x', type: 'y', payload: {}, createdAt: '2026-01-01T00:00:00.000Z' }),
        400,
        'validation_failed',
        ['/createdAt'],
      );
      expectProblem(await t.req('POST', base(owner, ownerId), '{"source": "x",', {}), 400, 'validation_failed');
      expectProblem(
        await t.req('POST', base(owner, ownerId), 'source=x', { headers: { 'content-type': 'text/plain' } }),
        415,
        'unsupported_media_type',
      );
    });

    test('POST to an unknown owner is 404', async () => {
      const unknown = owner === 'person' ? UNKNOWN_PERSON : UNKNOWN_ACCOUNT;
      expectProblem(await t.req('POST', base(owner, unknown), { source: 'x', type: 'y', payload: {} }), 404, 'not_found');
      expectProblem(
        await t.req('POST', base(owner, unknown), { source: 'x', type: 'y', payload: {}, idempotencyKey: 'k-unknown' }),
        404,
        'not_found',
      );
    });

    test('POST to an owner of another tenant is 404 and creates nothing there', async () => {
      const other = await t.newTenant('Other logs tenant');
      const theirs = await newOwner(owner, other.key);
      expectProblem(
        await t.req('POST', base(owner, theirs), { source: 'x', type: 'y', payload: {}, idempotencyKey: 'cross' }),
        404,
        'not_found',
      );
      // The other tenant can still use the same key on its own owner: nothing was recorded for it.
      const own = await t.req(
        'POST',
        base(owner, theirs),
        { source: 'x', type: 'y', payload: { mine: true }, idempotencyKey: 'cross' },
        { key: other.key },
      );
      assert.equal(own.status, 201, own.text);
      assert.equal(own.headers['idempotent-replayed'], undefined);
      assert.deepEqual(own.body.payload, { mine: true });
    });

    test('GET: a log of another owner in the same tenant is 404', async () => {
      const a = await newOwner(owner);
      const b = await newOwner(owner);
      const res = await t.req('POST', base(owner, a), { source: 'x', type: 'y', payload: {} });
      assert.equal(res.status, 201, res.text);
      const logId = logIdOf(owner, res.body);
      expectProblem(await t.req('GET', `${base(owner, b)}/${logId}`), 404, 'not_found');
      const ok = await t.req('GET', `${base(owner, a)}/${logId}`);
      assert.equal(ok.status, 200, ok.text);
    });

    test('GET: a log of another tenant is 404', async () => {
      const ownerId = await newOwner(owner);
      const res = await t.req('POST', base(owner, ownerId), { source: 'x', type: 'y', payload: { secret: 1 } });
      assert.equal(res.status, 201, res.text);
      const other = await t.newTenant('Snooping tenant');
      const got = await t.req('GET', `${base(owner, ownerId)}/${logIdOf(owner, res.body)}`, undefined, { key: other.key });
      expectProblem(got, 404, 'not_found');
      assert.ok(!got.text.includes('secret'));
    });

    test('GET: an unknown log id, an unknown owner, or a log id of the other kind is 404', async () => {
      const ownerId = await newOwner(owner);
      const res = await t.req('POST', base(owner, ownerId), { source: 'x', type: 'y', payload: {} });
      assert.equal(res.status, 201, res.text);
      const logId = logIdOf(owner, res.body);
      const unknownLog = owner === 'person' ? UNKNOWN_PERSON_LOG : UNKNOWN_ACCOUNT_LOG;
      const unknownOwner = owner === 'person' ? UNKNOWN_PERSON : UNKNOWN_ACCOUNT;
      expectProblem(await t.req('GET', `${base(owner, ownerId)}/${unknownLog}`), 404, 'not_found');
      expectProblem(await t.req('GET', `${base(owner, ownerId)}/nope`), 404, 'not_found');
      expectProblem(await t.req('GET', `${base(owner, unknownOwner)}/${logId}`), 404, 'not_found');

      // A log of the other kind, under an owner of the other kind, is not found either.
      const otherKind: Owner = owner === 'person' ? 'account' : 'person';
      const otherOwner = await newOwner(otherKind);
      const otherLog = await t.req('POST', base(otherKind, otherOwner), { source: 'x', type: 'y', payload: {} });
      assert.equal(otherLog.status, 201, otherLog.text);
      expectProblem(await t.req('GET', `${base(owner, ownerId)}/${logIdOf(otherKind, otherLog.body)}`), 404, 'not_found');
    });

    test('without an API key it is 401', async () => {
      const ownerId = await newOwner(owner);
      expectProblem(await t.req('POST', base(owner, ownerId), { source: 'x', type: 'y', payload: {} }, { key: null }), 401, 'unauthorized');
      expectProblem(
        await t.req('GET', `${base(owner, ownerId)}/${owner === 'person' ? UNKNOWN_PERSON_LOG : UNKNOWN_ACCOUNT_LOG}`, undefined, {
          key: null,
        }),
        401,
        'unauthorized',
      );
    });
  });
}

describe('person logs: a malformed person id is 404', () => {
  test('GET and POST', async () => {
    expectProblem(await t.req('GET', `/v0/persons/not-an-id/logs/${UNKNOWN_PERSON_LOG}`), 404, 'not_found');
    expectProblem(await t.req('POST', '/v0/persons/not-an-id/logs', { source: 'x', type: 'y', payload: {} }), 404, 'not_found');
  });
});

describe('account logs: account_id in the path must match ^account_[a-z0-9]{26}$', () => {
  const malformed = [
    'account_ABC',
    'acc_1',
    `account_${'A'.repeat(26)}`,
    `account_${'a'.repeat(25)}`,
    `account_${'a'.repeat(27)}`,
    `person_${'a'.repeat(26)}`,
  ];
  for (const accountId of malformed) {
    test(`"${accountId}" is 400 on GET and POST`, async () => {
      expectProblem(await t.req('GET', `/v0/accounts/${accountId}/logs/${UNKNOWN_ACCOUNT_LOG}`), 400, 'validation_failed', ['/account_id']);
      expectProblem(
        await t.req('POST', `/v0/accounts/${accountId}/logs`, { source: 'x', type: 'y', payload: {} }),
        400,
        'validation_failed',
        ['/account_id'],
      );
    });
  }
});

for (const owner of OWNERS) {
  describe(`${owner} log idempotency`, () => {
    test('same key and same body replays the original 201 with idempotent-replayed: true', async () => {
      const ownerId = await newOwner(owner);
      const body = { source: 'crm', type: 'note', payload: { a: 1, b: { c: [1, 2] } }, idempotencyKey: 'replay-1' };
      const first = await t.req('POST', base(owner, ownerId), body);
      assert.equal(first.status, 201, first.text);
      assert.equal(first.headers['idempotent-replayed'], undefined);
      assert.equal(first.body.idempotencyKey, 'replay-1');

      const second = await t.req('POST', base(owner, ownerId), body);
      assert.equal(second.status, 201, second.text);
      assert.equal(second.headers['idempotent-replayed'], 'true');
      assert.deepEqual(second.body, first.body);
      assert.equal(logIdOf(owner, second.body), logIdOf(owner, first.body));

      const third = await t.req('POST', base(owner, ownerId), body);
      assert.equal(third.status, 201, third.text);
      assert.equal(third.headers['idempotent-replayed'], 'true');
      assert.deepEqual(third.body, first.body);

      const got = await t.req('GET', `${base(owner, ownerId)}/${logIdOf(owner, first.body)}`);
      assert.equal(got.status, 200, got.text);
      assert.deepEqual(got.body, first.body);
    });

    test('key order in the JSON does not make the body different', async () => {
      const ownerId = await newOwner(owner);
      const first = await t.req(
        'POST',
        base(owner, ownerId),
        '{"source":"crm","type":"note","payload":{"x":1,"y":{"p":true,"q":"s"}},"idempotencyKey":"order-1"}',
      );
      assert.equal(first.status, 201, first.text);
      const reordered = await t.req(
        'POST',
        base(owner, ownerId),
        '{"idempotencyKey":"order-1","payload":{"y":{"q":"s","p":true},"x":1},"type":"note","source":"crm"}',
      );
      assert.equal(reordered.status, 201, reordered.text);
      assert.equal(reordered.headers['idempotent-replayed'], 'true');
      assert.deepEqual(reordered.body, first.body);
    });

    test('same key and a different body is 422 idempotency_key_reused; the original stays replayable', async () => {
      const ownerId = await newOwner(owner);
      const body = { source: 'crm', type: 'note', payload: { v: 1 }, idempotencyKey: 'reuse-1' };
      const first = await t.req('POST', base(owner, ownerId), body);
      assert.equal(first.status, 201, first.text);

      expectProblem(await t.req('POST', base(owner, ownerId), { ...body, payload: { v: 2 } }), 422, 'idempotency_key_reused');
      expectProblem(await t.req('POST', base(owner, ownerId), { ...body, payload: {} }), 422, 'idempotency_key_reused');
      expectProblem(await t.req('POST', base(owner, ownerId), { ...body, source: 'web' }), 422, 'idempotency_key_reused');
      expectProblem(await t.req('POST', base(owner, ownerId), { ...body, type: 'call' }), 422, 'idempotency_key_reused');
      expectProblem(await t.req('POST', base(owner, ownerId), { ...body, payload: { v: '1' } }), 422, 'idempotency_key_reused');

      const again = await t.req('POST', base(owner, ownerId), body);
      assert.equal(again.status, 201, again.text);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.deepEqual(again.body, first.body);
    });

    test('the same key on a different owner creates a separate log', async () => {
      const a = await newOwner(owner);
      const b = await newOwner(owner);
      const body = { source: 'crm', type: 'note', payload: { same: true }, idempotencyKey: 'scoped-1' };
      const onA = await t.req('POST', base(owner, a), body);
      assert.equal(onA.status, 201, onA.text);
      const onB = await t.req('POST', base(owner, b), body);
      assert.equal(onB.status, 201, onB.text);
      assert.equal(onB.headers['idempotent-replayed'], undefined);
      assert.notEqual(logIdOf(owner, onB.body), logIdOf(owner, onA.body));
      assertLogShape(owner, b, onB.body);
      // A different body under the same key on yet another owner is not a reuse either.
      const c = await newOwner(owner);
      const onC = await t.req('POST', base(owner, c), { ...body, payload: { different: true } });
      assert.equal(onC.status, 201, onC.text);
      assert.equal(onC.headers['idempotent-replayed'], undefined);
      // Each owner keeps its own log.
      const gotA = await t.req('GET', `${base(owner, a)}/${logIdOf(owner, onA.body)}`);
      const gotB = await t.req('GET', `${base(owner, b)}/${logIdOf(owner, onB.body)}`);
      assert.deepEqual(gotA.body, onA.body);
      assert.deepEqual(gotB.body, onB.body);
    });

    test('a log without a key never replays', async () => {
      const ownerId = await newOwner(owner);
      const body = { source: 'crm', type: 'note', payload: { n: 1 } };
      const first = await t.req('POST', base(owner, ownerId), body);
      const second = await t.req('POST', base(owner, ownerId), body);
      assert.equal(first.status, 201, first.text);
      assert.equal(second.status, 201, second.text);
      assert.equal(second.headers['idempotent-replayed'], undefined);
      assert.notEqual(logIdOf(owner, second.body), logIdOf(owner, first.body));
      assert.equal(second.body.idempotencyKey, null);
    });

    test('concurrent identical requests with one key create one log', async () => {
      const ownerId = await newOwner(owner);
      const body = { source: 'crm', type: 'burst', payload: { n: 10 }, idempotencyKey: 'concurrent-1' };
      const results = await Promise.all(Array.from({ length: 10 }, () => t.req('POST', base(owner, ownerId), body)));
      for (const r of results) assert.equal(r.status, 201, r.text);
      const logIds = new Set(results.map((r) => logIdOf(owner, r.body)));
      assert.equal(logIds.size, 1);
      const fresh = results.filter((r) => r.headers['idempotent-replayed'] === undefined);
      assert.equal(fresh.length, 1, 'exactly one request created the log');
      for (const r of results) assert.deepEqual(r.body, results[0]!.body);

      // A later plain request with the key still replays that one log.
      const after = await t.req('POST', base(owner, ownerId), body);
      assert.equal(after.status, 201, after.text);
      assert.equal(after.headers['idempotent-replayed'], 'true');
      assert.deepEqual(after.body, results[0]!.body);
    });
  });
}

describe('person and account logs share no key space', () => {
  test('the same key on a person and on an account creates two logs', async () => {
    const personId = await createPerson();
    const accountId = await createAccount();
    const body = { source: 'crm', type: 'note', payload: {}, idempotencyKey: 'cross-kind' };
    const p = await t.req('POST', `/v0/persons/${personId}/logs`, body);
    const a = await t.req('POST', `/v0/accounts/${accountId}/logs`, body);
    assert.equal(p.status, 201, p.text);
    assert.equal(a.status, 201, a.text);
    assert.equal(a.headers['idempotent-replayed'], undefined);
    assert.match(p.body.personLogId, PERSON_LOG_ID);
    assert.match(a.body.accountLogId, ACCOUNT_LOG_ID);
  });
});
