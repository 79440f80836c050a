import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startApp, type TestApp } from './helpers.js';

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

test('health answers ok without a key', async () => {
  const res = await t.req('GET', '/healthz', undefined, { key: null });
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { status: 'ok' });
  assert.ok(res.headers['x-request-id']);
});
