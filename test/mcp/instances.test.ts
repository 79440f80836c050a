import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freshDatabase, onPostgres, startApp, type TestApp, type TestDatabase } from '../helpers.js';
import { listening, ok } from './helpers.js';

// No session lives in an instance: one client's messages may land on any instance of the service.
// PostgreSQL only, as test/multi-instance.test.ts: two apps of one process on one SQLite file lock each other out.
describe('MCP across two instances on one database', { skip: !onPostgres && 'PostgreSQL only' }, () => {
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let urls: string[];

  before(async () => {
    database = await freshDatabase();
    a = await startApp({ DATABASE_URL: database.url });
    b = await startApp({ DATABASE_URL: database.url });
    urls = [await listening(a), await listening(b)];
  });
  after(async () => {
    await a.close();
    await b.close();
    await database.drop();
  });

  test('messages alternate between the instances, like a load balancer without affinity', async () => {
    const landed: string[] = [];
    let n = 0;
    // Every request goes to the next instance in turn, whatever URL the client holds.
    const roundRobin: typeof fetch = (input, init) => {
      const target = new URL(input instanceof Request ? input.url : String(input));
      const base = new URL(urls[n++ % urls.length]!);
      target.host = base.host;
      landed.push(base.host);
      return fetch(target, init);
    };
    const client = new Client({ name: 'round-robin', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('/mcp', urls[0]), {
        fetch: roundRobin,
        requestInit: { headers: { authorization: `Bearer ${a.key}` } },
      }),
    );
    try {
      const page = await ok(client, 'create_page', { name: 'Shared', title: 'Shared', pageType: 'inbound', pageContext: 'x' });
      const read = await ok(client, 'get_page', { pageId: page.pageId });
      assert.equal(read.pageId, page.pageId);
      const list = await ok(client, 'list_pages', {});
      assert.deepEqual(
        list.items.map((p: { pageId: string }) => p.pageId),
        [page.pageId],
      );
      assert.deepEqual(new Set(landed), new Set(urls.map((u) => new URL(u).host)), 'both instances answered');
    } finally {
      await client.close();
    }
  });
});
