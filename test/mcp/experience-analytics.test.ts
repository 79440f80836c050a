import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type Json, ok as okHttp, startApp, type TestApp } from '../helpers.js';
import { beacon, claimsOf, signerOf } from '../onsite/measure-helpers.js';
import { call, httpClient, listening, ok, textOf } from './helpers.js';

// An experience's analytics through the MCP tool (issue 48 §4): the API's answer, said in a line.

let t: TestApp;
let client: Client;

before(async () => {
  t = await startApp({ COLLECT_RATE_PER_MINUTE: '100000' });
  client = await httpClient(await listening(t), t.key);
});
after(async () => {
  await client.close();
  await t.close();
});

test('get_experience_analytics answers the counts and, with a holdout, the decision', async () => {
  const site = okHttp(await t.req('POST', '/v0/sites', { name: 'Shop', origins: ['https://shop.example'] }), 201);
  const experience = okHttp(
    await t.req('POST', '/v0/experiences', {
      siteId: site.siteId,
      name: 'Held',
      status: 'live',
      holdoutPercent: 20,
      urlMatch: { type: 'exact', value: '/pricing' },
      changes: [{ selector: 'h1', action: 'text', value: 'Hi' }],
    }),
    201,
  );
  const token = (await signerOf(t)).sign(
    claimsOf({ tenantId: t.tenantId, siteId: site.siteId, experiences: [{ experienceId: experience.experienceId, arm: 'personalised' }] }),
  );
  assert.equal((await beacon(t, { token, clicks: { [experience.experienceId]: 2 } }, 'https://shop.example')).status, 204);
  const result = await call(client, 'get_experience_analytics', { experienceId: experience.experienceId });
  assert.ok(!result.isError, textOf(result));
  const body = result.structuredContent as Json;
  assert.deepEqual(body.totals, { views: 1, visitors: 1, clicks: 2, conversions: 0 });
  assert.equal(body.decision, 'collecting');
  assert.match(textOf(result), /1 views, 1 visitors, 2 clicks, 0 conversions; against the holdout: collecting/);
  const refused = await call(client, 'get_experience_analytics', { experienceId: experience.experienceId, startDate: 'soon' });
  assert.equal(refused.isError, true);
  assert.deepEqual((await ok(client, 'get_experience_analytics', { experienceId: experience.experienceId })).arms.length, 2);
});
