import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { expectProblem, startApp, type Json, type TestApp, ok } from '../helpers.js';

// Person and account logs as timelines: list, PATCH, DELETE, through HTTP only.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const OWNERS = [
  {
    owner: 'person',
    create: () => t.req('POST', '/v0/persons', { name: 'Timeline' }),
    id: (b: Json) => b.personId,
    base: '/v0/persons',
    logId: 'personLogId',
  },
  {
    owner: 'account',
    create: () => t.req('POST', '/v0/accounts', { name: 'Timeline Inc', domain: `t${Math.random().toString(36).slice(2)}.example` }),
    id: (b: Json) => b.accountId,
    base: '/v0/accounts',
    logId: 'accountLogId',
  },
] as const;

for (const o of OWNERS) {
  describe(`${o.owner} logs as a timeline`, () => {
    let logs: string;
    let entries: Json[];
    before(async () => {
      const owner = ok(await o.create(), 201);
      logs = `${o.base}/${o.id(owner)}/logs`;
      entries = [];
      for (const [source, type] of [
        ['crm', 'note'],
        ['crm', 'call'],
        ['web', 'note'],
        ['crm', 'note'],
        ['web', 'visit'],
      ]) {
        entries.push(ok(await t.req('POST', logs, { source, type, payload: { n: entries.length } }), 201));
        // Distinct instants, so that since/until can tell the entries apart.
        await new Promise((resolve) => setTimeout(resolve, 3));
      }
    });

    test('newest first, keyset-paginated, with totalCount', async () => {
      const all = ok(await t.req('GET', logs));
      assert.deepEqual(
        all.items.map((e: Json) => e[o.logId]),
        [...entries].reverse().map((e) => e[o.logId]),
      );
      assert.equal(all.totalCount, 5);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Json = ok(await t.req('GET', `${logs}?limit=2${cursor ? `&cursor=${cursor}` : ''}`));
        assert.ok(page.items.length <= 2);
        seen.push(...page.items.map((e: Json) => e[o.logId]));
        cursor = page.nextCursor;
        assert.equal(page.hasMore, cursor !== null);
      } while (cursor);
      assert.deepEqual(
        seen,
        all.items.map((e: Json) => e[o.logId]),
      );
    });

    test('filters: source, type (exact), since, until', async () => {
      const crm = ok(await t.req('GET', `${logs}?source=crm`));
      assert.equal(crm.totalCount, 3);
      assert.ok(crm.items.every((e: Json) => e.source === 'crm'));
      const notes = ok(await t.req('GET', `${logs}?source=crm&type=note`));
      assert.equal(notes.totalCount, 2);
      assert.equal(ok(await t.req('GET', `${logs}?type=not`)).totalCount, 0, 'exact, not a prefix');
      const [second, third] = [entries[1], entries[2]];
      const window = ok(
        await t.req('GET', `${logs}?since=${encodeURIComponent(second.createdAt)}&until=${encodeURIComponent(third.createdAt)}`),
      );
      assert.ok(
        window.items.some((e: Json) => e[o.logId] === second[o.logId]),
        'since is inclusive',
      );
      assert.ok(
        !window.items.some((e: Json) => e[o.logId] === third[o.logId]) || third.createdAt === second.createdAt,
        'until is exclusive',
      );
      for (const e of window.items) assert.ok(e.createdAt >= second.createdAt && e.createdAt < third.createdAt);
      expectProblem(await t.req('GET', `${logs}?since=yesterday`), 400, 'validation_failed', ['/since']);
      expectProblem(await t.req('GET', `${logs}?until=2026-13-01T00:00:00Z`), 400, 'validation_failed', ['/until']);
      expectProblem(await t.req('GET', `${logs}?source=Not_Kebab`), 400, 'validation_failed', ['/source']);
      expectProblem(await t.req('GET', `${logs}?sort=asc`), 400, 'validation_failed', ['/sort']);
      expectProblem(await t.req('GET', `${logs}?limit=0`), 400, 'validation_failed', ['/limit']);
      expectProblem(await t.req('GET', `${logs}?limit=101`), 400, 'validation_failed', ['/limit']);
      const first = ok(await t.req('GET', `${logs}?limit=1`));
      expectProblem(await t.req('GET', `${logs}?source=crm&cursor=${first.nextCursor}`), 400, 'validation_failed', ['/cursor']);
    });

    test('PATCH replaces the payload and sets updatedAt; DELETE is soft; a deleted entry cannot be patched', async () => {
      const entry = ok(
        await t.req('POST', logs, { source: 'api', type: 'edit', payload: { a: 1, b: 2 }, idempotencyKey: `k-${o.owner}` }),
        201,
      );
      assert.equal(entry.updatedAt, null);
      const patched = ok(await t.req('PATCH', `${logs}/${entry[o.logId]}`, { payload: { c: 3 } }));
      assert.deepEqual(patched.payload, { c: 3 });
      assert.ok(patched.updatedAt >= patched.createdAt);
      expectProblem(await t.req('PATCH', `${logs}/${entry[o.logId]}`, { payload: [1] }), 400, 'validation_failed', ['/payload']);
      expectProblem(await t.req('PATCH', `${logs}/${entry[o.logId]}`, { payload: {}, source: 'x' }), 400, 'validation_failed', ['/source']);
      expectProblem(await t.req('PATCH', `${logs}/${entry[o.logId]}`, {}), 400, 'validation_failed', ['/payload']);

      assert.equal((await t.req('DELETE', `${logs}/${entry[o.logId]}`)).status, 204);
      assert.equal((await t.req('DELETE', `${logs}/${entry[o.logId]}`)).status, 204, 'deleting twice is 204');
      const deleted = ok(await t.req('GET', `${logs}/${entry[o.logId]}`));
      assert.ok(deleted.deletedAt);
      assert.deepEqual(deleted.payload, { c: 3 });
      expectProblem(await t.req('PATCH', `${logs}/${entry[o.logId]}`, { payload: { d: 4 } }), 409, 'conflict');

      const listed = ok(await t.req('GET', logs)).items.map((e: Json) => e[o.logId]);
      assert.ok(!listed.includes(entry[o.logId]), 'deleted entries are left out');
      const withDeleted = ok(await t.req('GET', `${logs}?includeDeleted=true`)).items.map((e: Json) => e[o.logId]);
      assert.ok(withDeleted.includes(entry[o.logId]));

      const replay = await t.req('POST', logs, { source: 'api', type: 'edit', payload: { a: 1, b: 2 }, idempotencyKey: `k-${o.owner}` });
      assert.equal(replay.status, 201);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body[o.logId], entry[o.logId]);
      assert.equal(replay.body.deletedAt, deleted.deletedAt, 'a replay answers the deleted entry');

      const types = (ok(await t.req('GET', `/v0/events?limit=100`)).items as Json[]).map((e) => e.type);
      assert.ok(types.includes(`${o.owner}_log.updated`) && types.includes(`${o.owner}_log.deleted`));
      assert.equal(types.filter((x) => x === `${o.owner}_log.deleted`).length, 1, 'one event for two deletes');
    });

    test('isolation: another tenant, an unknown owner or entry is 404', async () => {
      const other = await t.newTenant('Other');
      expectProblem(await t.req('GET', logs, undefined, { key: other.key }), 404, 'not_found');
      const id = entries[0][o.logId];
      expectProblem(await t.req('PATCH', `${logs}/${id}`, { payload: {} }, { key: other.key }), 404, 'not_found');
      expectProblem(await t.req('DELETE', `${logs}/${id}`, undefined, { key: other.key }), 404, 'not_found');
      const owner2 = ok(await o.create(), 201);
      expectProblem(await t.req('GET', `${o.base}/${o.id(owner2)}/logs/${id}`), 404, 'not_found');
      assert.equal(ok(await t.req('GET', `${o.base}/${o.id(owner2)}/logs`)).totalCount, 0);
    });
  });
}
