import assert from 'node:assert/strict';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { freshDatabase, onPostgres, type Json, type TestDatabase } from './helpers.js';
import { startServer, type ServerProcess } from './server-process.js';

// Issue 31: what one instance acknowledges, the other answers on its very next request, with the
// caches on (the served-document memo keyed by the tenant's change sequence, the API key rows kept
// up to 1 s behind the change feed). Write through A, read through B, 1,000 times each, in a tight
// loop: no stale answer. The listening connections are killed now and then meanwhile: between
// A's acknowledgement and B's read, and while B's read is under way.
const ROUNDS = 1000;

describe('two instances on one PostgreSQL database: no stale answer', { skip: !onPostgres && 'PostgreSQL only' }, () => {
  const KEY = 'freshness-bootstrap-key-0123456789abcdef';
  const ADMIN = 'freshness-admin-token-0123456789abcdef';
  let database: TestDatabase;
  let a: ServerProcess;
  let b: ServerProcess;
  let sqlClient: pg.Client;
  let site = '';
  let tenantId = '';

  /** One request: `host` sets the Host header (a visitor request on a tenant domain). */
  const send = (
    server: ServerProcess,
    method: string,
    path: string,
    options: { body?: unknown; key?: string | null; host?: string; admin?: boolean; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; type: string; text: string; json(): Json }> =>
    new Promise((resolve, reject) => {
      const url = new URL(path, server.url);
      const body = options.body === undefined ? undefined : JSON.stringify(options.body);
      const headers: Record<string, string> = { ...options.headers };
      if (options.host) headers.host = options.host;
      if (options.key !== null && !options.host && !options.admin) headers['x-api-key'] = options.key ?? KEY;
      if (options.admin) headers.authorization = `Bearer ${ADMIN}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const req = http.request(url, { method, headers, agent: keepAlive }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), text, json: () => JSON.parse(text) }),
        );
      });
      req.on('error', reject);
      req.end(body);
    });
  const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 4 });
  const ok = async (res: Promise<{ status: number; text: string; json(): Json }>, status = 200) => {
    const r = await res;
    assert.equal(r.status, status, r.text);
    return r.status === 204 ? {} : r.json();
  };

  /** The listening connections (src/db/change-feed.ts) die; B must answer as fresh meanwhile. How many were killed. */
  const killListeners = async (): Promise<number> => {
    const { rows } = await sqlClient.query<{ killed: boolean }>(
      `select pg_terminate_backend(pid) as killed from pg_stat_activity
       where application_name = 'pam-change-feed' and datname = current_database()`,
    );
    return rows.filter((r) => r.killed).length;
  };
  let killed = 0;
  let inFlight: Promise<void>[] = [];
  /**
   * Round `i`'s kill, if any, made after A's acknowledgement and before B's read: once in 250
   * rounds awaited, and once in 250 rounds not, so that it lands while B's read is under way. The
   * feed reconnects within a second or so, before the next.
   */
  const killIn = async (i: number): Promise<void> => {
    if (i % 250 !== 60 && i % 250 !== 185) return;
    const kill = killListeners().then((n) => {
      killed += n;
    });
    if (i % 250 === 60) await kill;
    else inFlight.push(kill);
  };
  /** Every kill of the test is done, and some hit a listening connection. */
  const killsLanded = async () => {
    await Promise.all(inFlight);
    inFlight = [];
    assert.ok(killed > 0, 'no listening connection was killed');
    killed = 0;
  };

  before(async () => {
    database = await freshDatabase();
    const env = {
      DATABASE_URL: database.url,
      BOOTSTRAP_API_KEY: KEY,
      ADMIN_TOKEN: ADMIN,
      DECIDE_RATE_PER_MINUTE: '1000000',
      DECIDE_SITE_RATE_PER_MINUTE: '1000000',
    };
    // Both at once (they race to migrate, as instances do): start-up under tsx is slow on a busy machine.
    [a, b] = await Promise.all([startServer(env, 60_000), startServer(env, 60_000)]);
    sqlClient = new pg.Client({ connectionString: database.url });
    await sqlClient.connect();
    const domains = (await ok(send(a, 'GET', '/v0/tenant_domains'))).items as Json[];
    site = domains.find((d) => d.isFallback).hostname;
    tenantId = domains[0].tenantId ?? (await sqlClient.query('select tenant_id from tenant_domains limit 1')).rows[0].tenant_id;
  });

  after(async () => {
    keepAlive.destroy();
    await Promise.all([a?.kill(), b?.kill()]);
    await sqlClient?.end();
    await database?.drop();
  });

  const servedPage = async (headline: string) => {
    const page = await ok(
      send(a, 'POST', '/v0/pages', {
        body: {
          name: `Page ${randomBytes(4).toString('hex')}`,
          title: 'Title',
          pageContext: 'ctx',
          pageType: 'inbound',
          status: 'published',
          content: { headline, subheadline: '', sections: [] },
        },
      }),
      201,
    );
    const path = `/fresh-${randomBytes(5).toString('hex')}`;
    const link = await ok(send(a, 'POST', '/v0/page_links', { body: { path, target: { targetType: 'page', pageId: page.pageId } } }), 201);
    return { page, path, link };
  };

  test("a page's content", async () => {
    const { page, path } = await servedPage('Start');
    assert.match((await send(b, 'GET', path, { host: site })).text, /<h1>Start<\/h1>/);
    let stale = 0;
    for (let i = 0; i < ROUNDS; i++) {
      await ok(
        send(a, 'PATCH', `/v0/pages/${page.pageId}`, { body: { content: { headline: `Round ${i}`, subheadline: '', sections: [] } } }),
      );
      await killIn(i);
      const res = await send(b, 'GET', path, { host: site });
      if (res.status !== 200 || !res.text.includes(`<h1>Round ${i}</h1>`)) stale++;
    }
    assert.equal(stale, 0);
    await killsLanded();
  });

  test('a link', async () => {
    const { link, path } = await servedPage('Linked');
    let stale = 0;
    let at = path;
    for (let i = 0; i < ROUNDS; i++) {
      // B has just answered the old path (and remembers it): the move must show at once.
      if ((await send(b, 'GET', at, { host: site })).status !== 200) stale++;
      const moved = `${path}-${i}`;
      await ok(send(a, 'PATCH', `/v0/page_links/${link.pageLinkId}`, { body: { path: moved } }));
      await killIn(i);
      if ((await send(b, 'GET', at, { host: site })).status !== 404) stale++;
      const res = await send(b, 'GET', moved, { host: site });
      if (res.status !== 200 || !res.text.includes('<h1>Linked</h1>')) stale++;
      at = moved;
    }
    assert.equal(stale, 0);
    await killsLanded();
  });

  test("a domain's status: verified, then deleted", async () => {
    const { page } = await servedPage('On a domain');
    let stale = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const hostname = `d${i}-${randomBytes(4).toString('hex')}.example.net`;
      const domain = await ok(send(a, 'POST', '/v0/tenant_domains', { body: { hostname } }), 201);
      // B remembers that the name is no tenant domain: the API answers there.
      if (!(await send(b, 'GET', '/here', { host: hostname })).type.startsWith('application/')) stale++;
      await ok(send(a, 'POST', `/admin/tenant_domains/${domain.tenantDomainId}/verify`, { admin: true }));
      await killIn(i);
      await ok(
        send(a, 'POST', '/v0/page_links', {
          body: { path: '/here', tenantDomainId: domain.tenantDomainId, target: { targetType: 'page', pageId: page.pageId } },
        }),
        201,
      );
      const served = await send(b, 'GET', '/here', { host: hostname });
      if (served.status !== 200 || !served.text.includes('<h1>On a domain</h1>')) stale++;
      await ok(send(a, 'DELETE', `/v0/tenant_domains/${domain.tenantDomainId}`), 204);
      // Deleted: its page is no longer served there.
      const after = await send(b, 'GET', '/here', { host: hostname });
      if (after.status === 200 || after.text.includes('<h1>On a domain</h1>')) stale++;
    }
    assert.equal(stale, 0);
    await killsLanded();
  });

  // Issue 50: 50 writers of one tenant at once commit on rows of their own connections (the
  // sequence's shards, migration 0063), and what each acknowledged is still what B serves next.
  test('50 concurrent writers of one tenant: the sequence on several rows, every last state served', async () => {
    const WRITERS = 50;
    const pages = [];
    for (let w = 0; w < WRITERS; w++) pages.push(await servedPage('Concurrent start'));
    const patch = (pageId: string, headline: string) =>
      fetch(new URL(`/v0/pages/${pageId}`, a.url), {
        method: 'PATCH',
        headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ name: headline, content: { headline, subheadline: '', sections: [] } }),
      });
    let stale = 0;
    for (let i = 0; i < 20; i++) {
      const answers: Response[] = await Promise.all(pages.map(({ page }, w) => patch(page.pageId, `Round ${i} writer ${w}`)));
      assert.deepEqual(
        answers.map((r) => r.status),
        answers.map(() => 200),
      );
      await Promise.all(answers.map((r) => r.arrayBuffer()));
      for (const [w, { path }] of pages.entries()) {
        const res = await send(b, 'GET', path, { host: site });
        if (res.status !== 200 || !res.text.includes(`<h1>Round ${i} writer ${w}</h1>`)) stale++;
      }
    }
    assert.equal(stale, 0);
    const { rows } = await sqlClient.query<{ scope: string }>(
      `select scope from change_counters where scope = $1 or scope like $1 || '#%'`,
      [`site:${tenantId}`],
    );
    assert.ok(rows.length > 1, `the sequence moved on one row only: ${rows.map((r) => r.scope).join(', ')}`);
  });

  // Issue 48: B keeps a site's live experiences under the tenant's sequence, vouched for by the
  // change feed, so an experience edited or paused through A shows in B's very next decision.
  test("a live experience's changes and status", async () => {
    const origin = 'https://fresh-shop.example';
    const shop = await ok(send(a, 'POST', '/v0/sites', { body: { name: 'Fresh shop', origins: [origin] } }), 201);
    const exp = await ok(
      send(a, 'POST', '/v0/experiences', {
        body: {
          siteId: shop.siteId,
          name: 'Fresh',
          status: 'live',
          urlMatch: { type: 'exact', value: '/fresh' },
          changes: [{ selector: 'h1', action: 'text', value: 'Start' }],
        },
      }),
      201,
    );
    const decide = async () => {
      const url = encodeURIComponent(`${origin}/fresh`);
      const res = await send(b, 'GET', `/_pam/decide?site=${shop.siteKey}&url=${url}&ref=`, {
        key: null,
        headers: { origin, 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0 Safari/537.36' },
      });
      assert.equal(res.status, 200, res.text);
      return (res.json().experiences as Json[]).find((e) => e.experienceId === exp.experienceId)?.changes[0]?.value;
    };
    assert.equal(await decide(), 'Start');
    let stale = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const paused = i % 10 === 9;
      await ok(
        send(a, 'PATCH', `/v0/experiences/${exp.experienceId}`, {
          body: paused ? { status: 'paused' } : { status: 'live', changes: [{ selector: 'h1', action: 'text', value: `Round ${i}` }] },
        }),
      );
      await killIn(i);
      const value = await decide();
      if (paused ? value !== undefined : value !== `Round ${i}`) stale++;
    }
    assert.equal(stale, 0);
    await killsLanded();
  });

  test("a key's revocation", async () => {
    let stale = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const created = await ok(send(a, 'POST', `/admin/tenants/${tenantId}/api_keys`, { admin: true, body: {} }), 201);
      // B reads the key and keeps its row.
      for (let j = 0; j < 2; j++) if ((await send(b, 'GET', '/v0/persons?limit=1', { key: created.apiKey })).status !== 200) stale++;
      await ok(send(a, 'DELETE', `/admin/api_keys/${created.apiKeyId}`, { admin: true }), 204);
      await killIn(i);
      if ((await send(b, 'GET', '/v0/persons?limit=1', { key: created.apiKey })).status !== 401) stale++;
    }
    assert.equal(stale, 0);
    await killsLanded();
  });
});
