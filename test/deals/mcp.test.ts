import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ok as okHttp, startApp, type Json, type TestApp } from '../helpers.js';
import { call, httpClient, listening, ok, textOf } from '../mcp/helpers.js';

// Issue 40: list_deals and pipeline_report answer what the API answers.

let t: TestApp;
let client: Client;
before(async () => {
  t = await startApp();
  client = await httpClient(await listening(t), t.key);
});
after(async () => {
  await client.close();
  await t.close();
});

describe('MCP deals tools', () => {
  test('list_deals and pipeline_report are read-only and answer as the API does', async () => {
    const tools = (await client.listTools()).tools;
    for (const name of ['list_deals', 'pipeline_report']) {
      const tool = tools.find((x) => x.name === name);
      assert.ok(tool, name);
      assert.equal(tool.annotations?.readOnlyHint, true);
    }
    for (const [i, stage] of ['open', 'won'].entries()) {
      okHttp(
        await t.req('POST', '/v0/deals', {
          source: 'hubspot',
          externalId: `h-${i}`,
          name: `Deal ${i}`,
          amount: 10 + i,
          currency: 'EUR',
          stage,
          createdAt: '2026-06-01T00:00:00Z',
        }),
        201,
      );
    }
    const listed = await ok(client, 'list_deals', { stage: 'won' });
    const direct = okHttp(await t.req('GET', '/v0/deals?stage=won'));
    assert.deepEqual(listed, direct);
    assert.equal(listed.items.length, 1);

    const query = { startDate: '2026-05-01T00:00:00.000Z', endDate: '2026-07-01T00:00:00.000Z', model: 'first', windowDays: '30' };
    const report: Json = await ok(client, 'pipeline_report', { ...query, windowDays: 30 });
    const same = okHttp(await t.req('GET', `/v0/analytics/pipeline?${new URLSearchParams(query)}`));
    assert.deepEqual(report, same);
    const summary = await call(client, 'pipeline_report', { ...query, windowDays: 30 });
    assert.match(textOf(summary), /0 deals/);

    const bad = await call(client, 'pipeline_report', { windowDays: 366 });
    assert.equal(bad.isError, true);
    assert.match(textOf(bad), /windowDays/);
  });
});
