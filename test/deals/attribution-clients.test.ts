import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createClient } from '../../sdk/src/index.js';
import { newAudience, newPage, postSession } from '../analytics/helpers.js';
import { ok as okHttp, startApp, type TestApp } from '../helpers.js';
import { call, httpClient, listening, ok, textOf } from '../mcp/helpers.js';

// Issue 49: the SDK (generated from the OpenAPI document) and the MCP tool pipeline_report take
// the new models, halfLifeDays and groupings, and answer what the API answers.

let t: TestApp;
let baseUrl: string;
let client: Client;
const D = Date.parse('2026-06-01T12:00:00.000Z');
const query = {
  startDate: new Date(D).toISOString(),
  endDate: new Date(D + 1).toISOString(),
  model: 'time_decay',
  halfLifeDays: 3,
  windowDays: 30,
  groupBy: 'utmCampaign',
} as const;

before(async () => {
  t = await startApp();
  baseUrl = await listening(t);
  client = await httpClient(baseUrl, t.key);
  okHttp(await t.req('POST', '/v0/accounts', { name: 'Acme', domain: 'acme.com' }), 201);
  const person = okHttp(await t.req('POST', '/v0/persons', { name: 'Jane Doe', domain: 'acme.com' }), 201);
  const page = await newPage(t, 'Spring');
  const audienceId = await newAudience(t, page, { personId: person.personId });
  for (const [days, utmCampaign] of [
    [6, 'spring'],
    [3, 'summer'],
  ] as const) {
    await postSession(t, page, { audienceId, start: new Date(D - days * 86_400_000).toISOString(), utmSource: 'google', utmCampaign });
  }
  okHttp(
    await t.req('POST', '/v0/deals', {
      source: 'api',
      externalId: 'd-1',
      name: 'Acme',
      amount: 300,
      currency: 'EUR',
      stage: 'open',
      accountDomain: 'acme.com',
      createdAt: new Date(D).toISOString(),
    }),
    201,
  );
});
after(async () => {
  await client.close();
  await t.close();
});

describe('clients of the pipeline', () => {
  test('the SDK takes model=time_decay, halfLifeDays and groupBy=utmCampaign', async () => {
    const api = createClient({ baseUrl, apiKey: t.key });
    const { data } = await api.GET('/v0/analytics/pipeline', { params: { query } });
    // Weights 2^−2 and 2^−1 (ages 6 and 3 days, half-life 3): 1/3 and 2/3 of 300.
    assert.deepEqual(
      data.groups.map((g) => [g.key, g.attributedAmount]),
      [
        ['summer', 200],
        ['spring', 100],
      ],
    );
    assert.equal(data.halfLifeDays, 3);
    const linear = await api.GET('/v0/analytics/pipeline', { params: { query: { ...query, model: 'linear', halfLifeDays: undefined } } });
    assert.deepEqual(
      linear.data.groups.map((g) => g.attributedAmount),
      [150, 150],
    );
  });

  test('pipeline_report answers as the API does, and refuses a half-life outside 1–365', async () => {
    const direct = okHttp(
      await t.req('GET', `/v0/analytics/pipeline?${new URLSearchParams({ ...query, halfLifeDays: '3', windowDays: '30' })}`),
    );
    assert.deepEqual(await ok(client, 'pipeline_report', query), direct);
    for (const model of ['linear', 'position']) {
      const answer = await ok(client, 'pipeline_report', { ...query, model, halfLifeDays: undefined, groupBy: 'channelGroup' });
      assert.equal(answer.model, model);
    }
    const bad = await call(client, 'pipeline_report', { ...query, halfLifeDays: 0.5 });
    assert.equal(bad.isError, true);
    assert.match(textOf(bad), /halfLifeDays/);
  });
});
