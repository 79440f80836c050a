import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { expectProblem, startApp, type TestApp } from '../helpers.js';

// The bounds of the search `query` the reference leaves open (docs/decisions.md#api-conventions):
// just inside is answered, just outside is 400 at /query, nothing in between.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const SEARCHES = [
  ['/v0/audiences/search', 255],
  ['/v0/accounts/search', 255],
  ['/v0/page_links/search', 2048],
] as const;

for (const [path, max] of SEARCHES) {
  test(`${path}: a query of ${max} characters is answered, ${max + 1} is 400 at /query`, async () => {
    for (const query of ['q'.repeat(max), 'é'.repeat(max)]) {
      const res = await t.req('GET', `${path}?query=${encodeURIComponent(query)}`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.items, []);
    }
    for (const query of ['q'.repeat(max + 1), 'é'.repeat(max + 1)]) {
      expectProblem(await t.req('GET', `${path}?query=${encodeURIComponent(query)}`), 400, 'validation_failed', ['/query']);
    }
  });
}
