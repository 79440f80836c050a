import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ok, onPostgres, startApp, statementsRun, type Json, type TestApp } from '../helpers.js';

// Concurrent reads by id share statements on PostgreSQL (src/db/batch.ts): a page, an audience
// and its versions; a funnel and the counters a kept answer is checked against (db/changes.ts).
// Each request must still get its own tenant's rows, or 404, and never another's.
const TOKEN = 'batch-metrics-token-0123456789abcdef';

describe('concurrent reads of audiences by id, batched on PostgreSQL', () => {
  let t: TestApp;
  let other: { key: string; tenantId: string };
  const page = (key: string, name: string) =>
    t.req('POST', '/v0/pages', { name, title: name, pageContext: 'Context', pageType: 'inbound' }, { key }).then((r) => ok(r, 201));
  let mine: Json;
  let mineToo: Json;
  let theirs: Json;
  let deleted: Json;
  const audiences = { mine: [] as Json[], mineToo: [] as Json[], theirs: [] as Json[], deleted: undefined as Json };

  before(async () => {
    // The outbox's consumers run their own transactions in the background: off, so the count is
    // the reads' alone (what this test is about), not whichever poll falls inside the burst.
    t = await startApp({ METRICS_TOKEN: TOKEN, WEBHOOK_DISPATCHER: 'false' }, { crmSync: { consumeLeads: false } });
    other = await t.newTenant('Other');
    mine = await page(t.key, 'Mine');
    mineToo = await page(t.key, 'Mine too');
    theirs = await page(other.key, 'Theirs');
    deleted = await page(t.key, 'Deleted');
    for (let i = 0; i < 12; i++) {
      audiences.mine.push(ok(await t.req('POST', `/v0/pages/${mine.pageId}/audiences`, { customName: `Mine ${i}` }), 201));
      audiences.mineToo.push(ok(await t.req('POST', `/v0/pages/${mineToo.pageId}/audiences`, { customName: `Mine too ${i}` }), 201));
      audiences.theirs.push(
        ok(await t.req('POST', `/v0/pages/${theirs.pageId}/audiences`, { customName: `Theirs ${i}` }, { key: other.key }), 201),
      );
    }
    audiences.deleted = ok(await t.req('POST', `/v0/pages/${deleted.pageId}/audiences`, { customName: 'Gone' }), 201);
    ok(await t.req('DELETE', `/v0/pages/${deleted.pageId}`), 204);
  });
  after(async () => t.close());

  const statements = () => statementsRun(t, TOKEN);

  test('each answer is its own page’s audience; another page’s, another tenant’s and a deleted page’s are 404, in the same batch', async () => {
    const asks: { key: string; path: string; expect: Json | undefined }[] = [];
    const at = (p: Json, a: Json) => `/v0/pages/${p.pageId}/audiences/${a.audienceId}`;
    for (let i = 0; i < 12; i++) {
      asks.push({ key: t.key, path: at(mine, audiences.mine[i]), expect: audiences.mine[i] });
      asks.push({ key: t.key, path: at(mineToo, audiences.mineToo[i]), expect: audiences.mineToo[i] });
      asks.push({ key: other.key, path: at(theirs, audiences.theirs[i]), expect: audiences.theirs[i] });
      // The same audience asked twice at once; an audience under the tenant's other page; each
      // tenant asking for the other's page and audience.
      asks.push({ key: t.key, path: at(mine, audiences.mine[i]), expect: audiences.mine[i] });
      asks.push({ key: t.key, path: at(mineToo, audiences.mine[i]), expect: undefined });
      asks.push({ key: t.key, path: at(theirs, audiences.theirs[i]), expect: undefined });
      asks.push({ key: other.key, path: at(mine, audiences.mine[i]), expect: undefined });
    }
    asks.push({ key: t.key, path: at(deleted, audiences.deleted), expect: undefined });
    asks.push({ key: t.key, path: `/v0/pages/${mine.pageId}/audiences/audience_01m8b7adbyek4svenprs0sb9xs`, expect: undefined });
    const before = await statements();
    const answers = await Promise.all(asks.map((a) => t.req('GET', a.path, undefined, { key: a.key })));
    const used = (await statements()) - before;
    answers.forEach((res, i) => {
      const ask = asks[i]!;
      if (ask.expect) assert.deepEqual(ok(res), ask.expect, `ask ${i}`);
      else assert.equal(res.status, 404, `ask ${i}: ${res.text}`);
    });
    // 86 requests of three reads each at once (the page, the audience, its versions): on PostgreSQL
    // shared statements (key reads included), well under one a request, where unshared they are three.
    if (onPostgres) assert.ok(used < asks.length / 2, `${used} statements for ${asks.length} requests`);
  });

  test('a read right after a change sees it: the audience’s name, and its page’s metadata', async () => {
    const audience = audiences.mine[0]!;
    const path = `/v0/pages/${mine.pageId}/audiences/${audience.audienceId}`;
    for (let i = 0; i < 10; i++) {
      const customName = `Renamed ${i}`;
      ok(await t.req('PATCH', path, { customName }));
      ok(await t.req('PATCH', `/v0/pages/${mine.pageId}`, { metadata: { title: `Title ${i}` } }));
      const [a, b] = await Promise.all([t.req('GET', path), t.req('GET', path)]);
      for (const res of [a, b]) {
        assert.equal(ok(res).customName, customName);
        assert.equal(ok(res).effectiveMetadata?.title, `Title ${i}`);
      }
    }
  });
});

describe('concurrent kept answers, their counters and their funnel read together on PostgreSQL', () => {
  let t: TestApp;
  let other: { key: string; tenantId: string };
  const step = { kind: 'path', path: '/x' };
  before(async () => {
    t = await startApp({ METRICS_TOKEN: TOKEN, WEBHOOK_DISPATCHER: 'false' }, { crmSync: { consumeLeads: false } });
    other = await t.newTenant('Other');
  });
  after(async () => t.close());

  test('each tenant gets its own funnel’s results, or 404 for the other’s, and a change shows at once', async () => {
    const mine = ok(await t.req('POST', '/v0/funnels', { name: 'Mine', steps: [step, step] }), 201);
    const theirs = ok(await t.req('POST', '/v0/funnels', { name: 'Theirs', steps: [step, step, step] }, { key: other.key }), 201);
    const results = (f: Json, key: string) => t.req('GET', `/v0/funnels/${f.funnelId}/results`, undefined, { key });
    // Each answer is kept once asked: warm both, then ask many at once.
    ok(await results(mine, t.key));
    ok(await results(theirs, other.key));
    const asks: { funnel: Json; key: string; steps: number | undefined }[] = [];
    for (let i = 0; i < 20; i++) {
      asks.push({ funnel: mine, key: t.key, steps: 2 }, { funnel: theirs, key: other.key, steps: 3 });
      asks.push({ funnel: theirs, key: t.key, steps: undefined }, { funnel: mine, key: other.key, steps: undefined });
    }
    const before = await statementsRun(t, TOKEN);
    const answers = await Promise.all(asks.map((a) => results(a.funnel, a.key)));
    const used = (await statementsRun(t, TOKEN)) - before;
    answers.forEach((res, i) => {
      const ask = asks[i]!;
      if (ask.steps === undefined) assert.equal(res.status, 404, `ask ${i}: ${res.text}`);
      else assert.equal(ok(res).steps.length, ask.steps, `ask ${i}`);
    });
    // Unshared, each request reads its funnel and its sessions counter: two statements a request.
    if (onPostgres) assert.ok(used < asks.length / 2, `${used} statements for ${asks.length} requests`);

    for (let n = 3; n <= 6; n++) {
      ok(await t.req('PATCH', `/v0/funnels/${mine.funnelId}`, { steps: Array(n).fill(step) }));
      const [a, b] = await Promise.all([results(mine, t.key), results(mine, t.key)]);
      assert.equal(ok(a).steps.length, n);
      assert.equal(ok(b).steps.length, n);
    }
  });
});
