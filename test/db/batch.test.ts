import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ok, onPostgres, startApp, statementsRun, type Json, type TestApp } from '../helpers.js';

// Concurrent reads of a person by id share one statement on PostgreSQL (src/db/batch.ts): each
// request must still get its own tenant's row, or 404, and never another's.
const TOKEN = 'batch-metrics-token-0123456789abcdef';

describe('concurrent reads by id, batched on PostgreSQL', () => {
  let t: TestApp;
  let other: { key: string; tenantId: string };
  const mine: Json[] = [];
  const theirs: Json[] = [];
  before(async () => {
    // The outbox's consumers run their own transactions in the background: off, so the count is
    // the reads' alone (what this test is about), not whichever poll falls inside the burst.
    t = await startApp({ METRICS_TOKEN: TOKEN, WEBHOOK_DISPATCHER: 'false' }, { crmSync: { consumeLeads: false } });
    other = await t.newTenant('Other');
    for (let i = 0; i < 25; i++) {
      mine.push(ok(await t.req('POST', '/v0/persons', { name: `Mine ${i}` }), 201));
      theirs.push(ok(await t.req('POST', '/v0/persons', { name: `Theirs ${i}` }, { key: other.key }), 201));
    }
  });
  after(async () => t.close());

  const statements = () => statementsRun(t, TOKEN);

  test('each answer is its own tenant’s person; another tenant’s id and an unknown id are 404, in the same batch', async () => {
    const asks: { key: string; id: string; expect: Json | undefined }[] = [];
    for (let i = 0; i < 25; i++) {
      asks.push({ key: t.key, id: mine[i]!.personId, expect: mine[i] });
      asks.push({ key: other.key, id: theirs[i]!.personId, expect: theirs[i] });
      // The same id asked twice at once, and each tenant asking for the other's person.
      asks.push({ key: t.key, id: mine[i]!.personId, expect: mine[i] });
      asks.push({ key: t.key, id: theirs[i]!.personId, expect: undefined });
      asks.push({ key: other.key, id: mine[i]!.personId, expect: undefined });
    }
    asks.push({ key: t.key, id: 'person_01m8b7adbyek4svenprs0sb9xs', expect: undefined });
    const before = await statements();
    const answers = await Promise.all(asks.map((a) => t.req('GET', `/v0/persons/${a.id}`, undefined, { key: a.key })));
    const used = (await statements()) - before;
    answers.forEach((res, i) => {
      const ask = asks[i]!;
      if (ask.expect) assert.deepEqual(ok(res), ask.expect, `ask ${i}`);
      else assert.equal(res.status, 404, `ask ${i}: ${res.text}`);
    });
    // The reads of 126 requests at once: on PostgreSQL a few statements (key reads included), not one each.
    if (onPostgres) assert.ok(used < asks.length / 4, `${used} statements for ${asks.length} requests`);
  });

  test('a read right after a change sees it', async () => {
    const person = mine[0]!;
    for (let i = 0; i < 20; i++) {
      const name = `Renamed ${i}`;
      ok(await t.req('PATCH', `/v0/persons/${person.personId}`, { name }));
      const [a, b] = await Promise.all([t.req('GET', `/v0/persons/${person.personId}`), t.req('GET', `/v0/persons/${person.personId}`)]);
      assert.equal(ok(a).name, name);
      assert.equal(ok(b).name, name);
    }
  });
});
