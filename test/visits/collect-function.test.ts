import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { COLLECT_SQL_HASH } from '../../src/visits/collect-function.js';
import { applyCollectFunction } from '../../src/visits/index.js';
import { onPostgres, startApp, type TestApp } from '../helpers.js';

// pam_collect follows src/visits/collect.sql.ts: applied at start when its hash changed, once
// however many instances start at once.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const comment = async () =>
  (
    await sql<{ hash: string | null }>`select obj_description(p.oid, 'pg_proc') as hash from pg_proc p
      where p.proname = 'pam_collect' and p.pronamespace = current_schema()::regnamespace`.execute(t.app.db)
  ).rows.map((r) => r.hash);

test('start applied it: the function names the text it was made from, and a second start changes nothing', async () => {
  if (!onPostgres) {
    assert.equal(await applyCollectFunction(t.app.db), false, 'SQLite has no such function');
    return;
  }
  assert.deepEqual(await comment(), [COLLECT_SQL_HASH]);
  assert.equal(await applyCollectFunction(t.app.db), false);
});

test('a changed text is applied once when several instances start at once', { skip: !onPostgres && 'PostgreSQL only' }, async () => {
  await sql`comment on function pam_collect is 'collect.sql sha256:an older text'`.execute(t.app.db);
  const applied = await Promise.all([1, 2, 3].map(() => applyCollectFunction(t.app.db)));
  assert.deepEqual(
    applied.filter((a) => a),
    [true],
  );
  assert.deepEqual(await comment(), [COLLECT_SQL_HASH]);
});
