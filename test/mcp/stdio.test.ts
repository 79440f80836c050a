import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createApiKey } from '../../src/admin/repository.js';
import { type Json, startApp, type TestApp, verifiedDomain } from '../helpers.js';
import { call, fetchServed, listening, ok, TOOL_NAMES, textOf } from './helpers.js';

// The bin as npm links it for the workspace (`npx pam-mcp`).
const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../node_modules/.bin/pam-mcp');

let t: TestApp;
let base: string;

async function stdioClient(env: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'pam-stdio-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: BIN, env: { ...getDefaultEnvironment(), ...env }, stderr: 'pipe' }));
  return client;
}

/** Runs the bin to its exit (when it must refuse to start): its exit code and what it said on stderr. */
function runToExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(BIN, [], { env: { ...getDefaultEnvironment(), ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

before(async () => {
  t = await startApp();
  base = await listening(t);
});
after(async () => t.close());

describe('pam-mcp: MCP on stdio against a running service', () => {
  test('lists every tool and runs the page flow to a served URL', async () => {
    const client = await stdioClient({ PAM_API_URL: base, PAM_API_KEY: t.key });
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((x) => x.name).sort(), [...TOOL_NAMES].sort());
      const domain = await verifiedDomain(t, 'mcp-stdio.example.com');
      const page = await ok(client, 'create_page', {
        name: 'Stdio page',
        title: 'Stdio page',
        pageType: 'inbound',
        pageContext: 'x',
        status: 'published',
        idempotencyKey: 'stdio-page-1',
      });
      const again = await ok(client, 'create_page', {
        name: 'Stdio page',
        title: 'Stdio page',
        pageType: 'inbound',
        pageContext: 'x',
        status: 'published',
        idempotencyKey: 'stdio-page-1',
      });
      assert.equal(again.pageId, page.pageId);
      const audience = await ok(client, 'create_audience', { pageId: page.pageId, customName: 'Desktop readers' });
      const draft = await ok(client, 'write_version', {
        pageId: page.pageId,
        audienceId: audience.audienceId,
        content: { headline: 'Written from a desktop', subheadline: 'via stdio', sections: [] },
      });
      await ok(client, 'publish_version', { pageId: page.pageId, audienceId: audience.audienceId, versionId: draft.versionId });
      const link: Json = await ok(client, 'create_link', {
        path: '/desktop',
        tenantDomainId: domain.tenantDomainId,
        target: { targetType: 'audience', audienceId: audience.audienceId },
      });
      assert.equal(link.url, `http://mcp-stdio.example.com:${new URL(base).port}/desktop`);
      const res = await fetchServed(base, link.url);
      assert.equal(res.status, 200);
      assert.match(res.text, /Written from a desktop/);

      const invalid = await call(client, 'create_audience', { pageId: page.pageId, personRouteKey: 'no spaces' });
      assert.equal(invalid.isError, true);
      assert.match(textOf(invalid), /\/personRouteKey/);

      const resources = await client.listResources();
      assert.ok(resources.resources.some((r) => r.uri === `pam://pages/${page.pageId}`));
    } finally {
      await client.close();
    }
  });

  test('a read-only key cannot write through the bin', async () => {
    const { apiKey } = await t.app.db.transaction().execute((trx) => createApiKey(trx, t.tenantId, { scopes: ['read'] }));
    const client = await stdioClient({ PAM_API_URL: base, PAM_API_KEY: apiKey });
    try {
      const refused = await call(client, 'create_page', { name: 'No', title: 'No', pageType: 'inbound', pageContext: 'x' });
      assert.equal(refused.isError, true);
      assert.match(textOf(refused), /may only read/);
    } finally {
      await client.close();
    }
  });

  test('without its settings, or with a wrong key, the bin says so and exits', async () => {
    const missing = await runToExit({ PAM_API_URL: base });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /PAM_API_KEY/);
    const wrong = await runToExit({ PAM_API_URL: base, PAM_API_KEY: 'not-a-key' });
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /refused PAM_API_KEY \(401\)/);
  });
});
