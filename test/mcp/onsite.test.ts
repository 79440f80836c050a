import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createApiKey } from '../../src/admin/repository.js';
import { type Json, startApp, type TestApp } from '../helpers.js';
import { call, httpClient, listening, ok, textOf } from './helpers.js';

// Sites and experiences through the MCP tools (issue 48 §6): each tool is the API's operation, its
// refusals tool errors naming the field, another tenant's records out of reach.

let t: TestApp;
let base: string;
let client: Client;

before(async () => {
  t = await startApp({ PUBLIC_BASE_URL: 'https://pam.example.com' });
  base = await listening(t);
  client = await httpClient(base, t.key);
});
after(async () => {
  await client.close();
  await t.close();
});

describe('MCP: sites and experiences', () => {
  test('create_site answers the snippet; list_sites lists it', async () => {
    const result = await call(client, 'create_site', { name: 'Shop', origins: ['https://shop.example'] });
    assert.ok(!result.isError, textOf(result));
    const site = result.structuredContent as Json;
    assert.equal(site.snippet, `<script src="https://pam.example.com/_pam/site.js?site=${site.siteKey}"></script>`);
    assert.match(textOf(result), /Paste into the head/);
    const listed = await ok(client, 'list_sites', {});
    assert.ok(listed.items.some((s: Json) => s.siteId === site.siteId));
    const refused = await call(client, 'create_site', { name: 'Bad', origins: ['http://shop.example'] });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /field \/origins\/0: must be https/);
  });

  test('create_experience, update_experience, list_experiences by site', async () => {
    const site = await ok(client, 'create_site', { name: 'Exp', origins: ['https://exp.example'] });
    const rules = { match: 'all', conditions: [{ field: 'utm.source', operator: 'equals', value: 'linkedin' }] };
    const result = await call(client, 'create_experience', {
      siteId: site.siteId,
      name: 'LinkedIn hero',
      urlMatch: { type: 'exact', value: '/' },
      rules,
      changes: [{ selector: 'h1', action: 'text', value: 'Hello {{company.name | there}}' }],
    });
    assert.ok(!result.isError, textOf(result));
    const experience = result.structuredContent as Json;
    assert.equal(experience.status, 'draft');
    assert.match(textOf(result), /Visitors whose UTM source is linkedin/);

    const tools = (await client.listTools()).tools;
    const update = tools.find((x) => x.name === 'update_experience')!;
    // The update's own fields, not the read-only ones sent back by API clients.
    assert.deepEqual(Object.keys(update.inputSchema.properties ?? {}).sort(), [
      'changes',
      'conversionUrl',
      'experienceId',
      'holdoutPercent',
      'idempotencyKey',
      'name',
      'priority',
      'rules',
      'status',
      'urlMatch',
    ]);
    assert.deepEqual(update.inputSchema.required, ['experienceId']);
    const live = await ok(client, 'update_experience', { experienceId: experience.experienceId, status: 'live', holdoutPercent: 10 });
    assert.deepEqual([live.status, live.holdoutPercent, live.changes], ['live', 10, experience.changes]);

    const hostile = await call(client, 'update_experience', {
      experienceId: experience.experienceId,
      changes: [{ selector: 'a', action: 'attribute', attribute: 'href', value: 'javascript:alert(1)' }],
    });
    assert.equal(hostile.isError, true);
    assert.match(textOf(hostile), /field \/changes\/0\/value/);
    const badSelector = await call(client, 'create_experience', {
      siteId: site.siteId,
      name: 'x',
      urlMatch: { type: 'exact', value: '/' },
      changes: [{ selector: 'a::before', action: 'hide' }],
    });
    assert.match(textOf(badSelector), /field \/changes\/0\/selector/);

    const listed = await ok(client, 'list_experiences', { siteId: site.siteId });
    assert.deepEqual(
      listed.items.map((e: Json) => e.experienceId),
      [experience.experienceId],
    );
    assert.equal((await ok(client, 'list_experiences', { siteId: site.siteId, status: 'draft' })).items.length, 0);
  });

  test("another tenant's site and experiences are out of reach; a read-only key cannot write", async () => {
    const site = await ok(client, 'create_site', { name: 'Mine', origins: ['https://mine.example'] });
    const other = await t.newTenant('Other');
    const stranger = await httpClient(base, other.key);
    try {
      const refused = await call(stranger, 'create_experience', {
        siteId: site.siteId,
        name: 'x',
        urlMatch: { type: 'exact', value: '/' },
        changes: [{ selector: 'h1', action: 'hide' }],
      });
      assert.match(textOf(refused), /field \/siteId: is not a site of this tenant/);
      assert.equal((await ok(stranger, 'list_sites', {})).items.length, 0);
    } finally {
      await stranger.close();
    }
    const { apiKey } = await t.app.db.transaction().execute((trx) => createApiKey(trx, t.tenantId, { scopes: ['read'] }));
    const reader = await httpClient(base, apiKey);
    try {
      assert.ok((await ok(reader, 'list_sites', {})).items.length > 0);
      const write = await call(reader, 'create_site', { name: 'No', origins: ['https://no.example'] });
      assert.equal(write.isError, true);
      assert.match(textOf(write), /may only read/);
    } finally {
      await reader.close();
    }
  });
});
