import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Json, ok, startApp, type TestApp } from '../helpers.js';

// PATCHes of one page at once: each is written whole or waits its turn, none undoes another's field
// (on PostgreSQL a patch is written only if the page is still as it read it, else again under the
// row's lock: pages/repository.ts), and each written patch has its one event.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const LINK = { purpose: 'book', buttonTitle: 'Book a demo', actionType: 'link', url: 'https://example.com/demo' };
const FORM = { purpose: 'lead', buttonTitle: 'Call me back', actionType: 'form' };

describe('concurrent PATCHes of one page', () => {
  test("a new action, renames and new contexts at once: every field keeps its last writer's value, one event each", async () => {
    const page = ok(
      await t.req('POST', '/v0/pages', { name: 'Busy', title: 'Busy', pageContext: 'c', pageType: 'inbound', actions: [LINK] }),
      201,
    );
    const bodies: Json[] = [
      { actions: [...page.actions, FORM] },
      ...Array.from({ length: 15 }, (_, i) => (i % 2 ? { name: `Busy ${i}` } : { pageContext: `Context ${i}` })),
    ];
    const answers = await Promise.all(bodies.map((body) => t.req('PATCH', `/v0/pages/${page.pageId}`, body)));
    for (const res of answers) ok(res);
    // Each answer is a state of its own, and, in the order written, each is the one before it with
    // its own PATCH's field set: no PATCH undid another's.
    const written = answers
      .map((res, i) => ({ state: res.body, body: bodies[i] }))
      .sort((a, b) => a.state.updatedAt.localeCompare(b.state.updatedAt));
    const states = written.map((w) => w.state);
    assert.equal(new Set(states.map((s) => s.updatedAt)).size, bodies.length);
    let expected = { name: page.name, pageContext: page.pageContext, actions: page.actions.map((a: Json) => a.purpose) };
    for (const { state, body } of written) {
      expected = {
        name: body.name ?? expected.name,
        pageContext: body.pageContext ?? expected.pageContext,
        actions: body.actions ? body.actions.map((a: Json) => a.purpose) : expected.actions,
      };
      assert.deepEqual({ name: state.name, pageContext: state.pageContext, actions: state.actions.map((a: Json) => a.purpose) }, expected);
    }

    const stored = ok(await t.req('GET', `/v0/pages/${page.pageId}`));
    const last = states.at(-1);
    assert.deepEqual(
      [stored.updatedAt, stored.name, stored.pageContext, stored.actions.length],
      [last.updatedAt, last.name, last.pageContext, 2],
    );

    const events = ok(await t.req('GET', '/v0/events?type=page.updated&limit=100')).items.filter(
      (e: Json) => e.payload.data.pageId === page.pageId,
    );
    assert.deepEqual(
      events.map((e: Json) => e.payload.data.updatedAt).sort(),
      states.map((s) => s.updatedAt),
    );
  });

  test('a PATCH racing a delete is 404 or written before it, never written after', async () => {
    const page = ok(await t.req('POST', '/v0/pages', { name: 'Doomed', title: 'T', pageContext: 'c', pageType: 'inbound' }), 201);
    const [renamed, deleted] = await Promise.all([
      t.req('PATCH', `/v0/pages/${page.pageId}`, { name: 'Doomed renamed' }),
      t.req('DELETE', `/v0/pages/${page.pageId}`),
    ]);
    assert.equal(deleted.status, 204);
    assert.ok([200, 404].includes(renamed.status), String(renamed.status));
    // Written (200) with its one event, or not at all (404) and without one.
    const events = ok(await t.req('GET', '/v0/events?type=page.updated&limit=100')).items.filter(
      (e: Json) => e.payload.data.pageId === page.pageId,
    );
    assert.equal(events.length, renamed.status === 200 ? 1 : 0);
    assert.equal((await t.req('GET', `/v0/pages/${page.pageId}`)).status, 404);
    assert.equal((await t.req('PATCH', `/v0/pages/${page.pageId}`, { name: 'After' })).status, 404);
  });
});
