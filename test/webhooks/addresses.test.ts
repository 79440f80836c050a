import assert from 'node:assert/strict';
import http from 'node:http';
import { type AddressInfo, isIP } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Resolve } from '../../src/events/send.js';
import { expectProblem, freshDatabase, startApp, type Json, type Res, type TestApp, type TestDatabase } from '../helpers.js';

// Where a webhook may be sent (issue 25): an address is judged by ipaddr.js's ranges and by any
// IPv4 address it carries, at creation for a literal address and at delivery for every address
// a name resolves to. Names resolve through the app's resolver, which here answers what an
// attacker's DNS would.

const BASE = '/v0/webhook_subscriptions';

/** Each replays an attack that no rule refused before. */
const ATTACKS = [
  ['64:ff9b::7f00:1', 'NAT64 of loopback'],
  ['2002:7f00:1::', '6to4 of loopback'],
  ['::127.0.0.1', 'IPv4-compatible loopback'],
  ['::ffff:0:7f00:1', 'IPv4-translated loopback'],
  ['fec0::1', 'site-local'],
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'Teredo with a loopback client'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::808:808', 'IPv4-compatible, of a public address'],
] as const;

/** The same loopback address written as a URL parser also reads it. */
const SPELLINGS = ['http://2130706433:8080/hook', 'http://0x7f.1:8080/hook', 'http://127.1:8080/hook', 'http://[0:0:0:0:0:0:7f00:1]/hook'];

/** What the attacker's DNS answers. */
const NAMES: Record<string, string[]> = {
  'mixed.attacker.test': ['8.8.8.8', '2606:4700:4700::1111', '64:ff9b::7f00:1'],
  'metadata.attacker.test': ['169.254.169.254'],
  ...Object.fromEntries(ATTACKS.map(([address], i) => [`a${i}.attacker.test`, [address]])),
};
const lookups: string[] = [];
/** Names a test points at a receiver of its own. */
const local = new Map<string, string>();

const resolve: Resolve = async (hostname) => {
  lookups.push(hostname);
  const addresses = local.has(hostname) ? [local.get(hostname) as string] : NAMES[hostname];
  if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return addresses.map((address) => ({ address, family: isIP(address) }));
};

const subscribe = (app: TestApp, url: string, key?: string) =>
  app.req('POST', BASE, { url, events: ['person.created'] }, key === undefined ? {} : { key });

function created(res: Res): Json {
  assert.equal(res.status, 201, res.text);
  return res.body;
}

const ENV = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_RETRY_SCHEDULE: '0.2', WEBHOOK_TIMEOUT_MS: '2000' };

let database: TestDatabase;
let guarded: TestApp;
/** Its own database, private addresses allowed. */
let open: TestApp;
/** For each attack, a tenant's key and its subscription to that address, stored while private addresses were allowed. */
const stored = new Map<string, { key: string; subscriptionId: string }>();

before(async () => {
  database = await freshDatabase();
  const maker = await startApp({ ...ENV, DATABASE_URL: database.url, WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_DISPATCHER: 'false' });
  for (const [address, what] of ATTACKS) {
    const { key } = await maker.newTenant(what);
    stored.set(address, { key, subscriptionId: created(await subscribe(maker, `http://[${address}]:8080/hook`, key)).subscriptionId });
  }
  await maker.close();
  guarded = await startApp({ ...ENV, DATABASE_URL: database.url }, { webhookResolve: resolve });
  open = await startApp({ ...ENV, WEBHOOK_ALLOW_PRIVATE: 'true' }, { webhookResolve: resolve });
});
after(async () => {
  await guarded?.close();
  await open?.close();
  await database?.drop();
});

/** The subscription's only delivery once it has finished (every attempt made). */
async function finished(app: TestApp, key: string, subscriptionId: string): Promise<Json> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const res = await app.req('GET', `${BASE}/${subscriptionId}/deliveries`, undefined, { key });
    assert.equal(res.status, 200, res.text);
    const [d] = res.body.items;
    if (d && d.status !== 'pending') return d;
    if (Date.now() > deadline) throw new Error(`no finished delivery: ${res.text}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const person = async (app: TestApp, key: string) => created(await app.req('POST', '/v0/persons', { name: 'Ada' }, { key }));

function assertRefused(d: Json, address: string): void {
  assert.equal(d.status, 'failed');
  assert.equal(d.attempts, 2, 'each attempt of the schedule was made, and refused');
  assert.equal(d.lastResponseStatus, null);
  assert.ok(d.lastError.startsWith('refused: '), d.lastError);
  assert.ok(d.lastError.includes(address), `${d.lastError} names ${address}`);
}

describe('literal addresses', () => {
  for (const [address, what] of ATTACKS) {
    test(`webhooks: a URL at ${address} (${what}) is refused`, { timeout: 30_000 }, async () => {
      const url = `http://[${address}]:8080/hook`;
      const { key } = await guarded.newTenant(what);
      expectProblem(await subscribe(guarded, url, key), 400, 'validation_failed', ['/url']);
      expectProblem(await subscribe(guarded, url.replace('http:', 'https:'), key), 400, 'validation_failed', ['/url']);
      const list = await guarded.req('GET', BASE, undefined, { key });
      assert.deepEqual(list.body.items, [], 'nothing was created');

      const sub = created(await subscribe(guarded, 'https://hooks.example.com/hook', key));
      const patch = await guarded.req('PATCH', `${BASE}/${sub.subscriptionId}`, { url }, { key });
      expectProblem(patch, 400, 'validation_failed', ['/url']);
      assert.equal(
        (await guarded.req('GET', `${BASE}/${sub.subscriptionId}`, undefined, { key })).body.url,
        'https://hooks.example.com/hook',
      );

      // Stored while private addresses were allowed: refused at delivery, on every attempt.
      const old = stored.get(address)!;
      await person(guarded, old.key);
      assertRefused(await finished(guarded, old.key, old.subscriptionId), new URL(url).hostname.slice(1, -1));
    });
  }

  test('webhooks: loopback spelled in decimal, hex, short or long form is refused', async () => {
    for (const url of SPELLINGS) {
      const res = await subscribe(guarded, url);
      expectProblem(res, 400, 'validation_failed', ['/url']);
      // The refusal names the setting that lifts it (issue 38).
      assert.match(res.body.errors[0].message, /private or reserved address.*WEBHOOK_ALLOW_PRIVATE/, url);
    }
  });

  test('public addresses and names are accepted; a name is judged only at delivery', async () => {
    for (const url of [
      'https://8.8.8.8/hook',
      'https://[2606:4700:4700::1111]/hook',
      'http://[2a00:1450:4001:82a::200e]:8443/x',
      'https://localhost/hook',
      'https://metadata.attacker.test/hook',
    ]) {
      assert.equal(created(await subscribe(guarded, url)).url, url);
    }
  });

  test('WEBHOOK_ALLOW_PRIVATE=true accepts every one of them', async () => {
    for (const [address] of ATTACKS) created(await subscribe(open, `http://[${address}]:8080/hook`));
    for (const url of SPELLINGS) created(await subscribe(open, url));
  });
});

describe('names, at delivery', () => {
  for (const [i, [address, what]] of ATTACKS.entries()) {
    test(`webhooks: a name that resolves to ${address} (${what}) is refused at delivery`, { timeout: 30_000 }, async () => {
      const { key } = await guarded.newTenant(what);
      const sub = created(await subscribe(guarded, `https://a${i}.attacker.test/hook`, key));
      await person(guarded, key);
      const d = await finished(guarded, key, sub.subscriptionId);
      assertRefused(d, address);
      assert.ok(d.lastError.includes(`a${i}.attacker.test`), d.lastError);
    });
  }

  test('webhooks: a name with two public addresses and one NAT64 of loopback is refused', { timeout: 30_000 }, async () => {
    const { key } = await guarded.newTenant('Mixed');
    const sub = created(await subscribe(guarded, 'https://mixed.attacker.test/hook', key));
    await person(guarded, key);
    assertRefused(await finished(guarded, key, sub.subscriptionId), '64:ff9b::7f00:1');
  });

  test('webhooks: a name that resolves to the cloud metadata address is refused', { timeout: 30_000 }, async () => {
    const { key } = await guarded.newTenant('Metadata');
    const sub = created(await subscribe(guarded, 'http://metadata.attacker.test/latest/meta-data/', key));
    await person(guarded, key);
    assertRefused(await finished(guarded, key, sub.subscriptionId), '169.254.169.254');
  });

  test('webhooks: one lookup per attempt, and the request goes to the address that lookup gave', { timeout: 30_000 }, async () => {
    const hits: string[] = [];
    const server = http.createServer((req, res) => {
      hits.push(String(req.headers.host));
      req.resume();
      req.on('end', () => res.writeHead(500).end());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      local.set('receiver.attacker.test', '127.0.0.1');
      const { key } = await open.newTenant('Lookups');
      const sub = created(await subscribe(open, `http://receiver.attacker.test:${port}/hook`, key));
      const before = lookups.filter((h) => h === 'receiver.attacker.test').length;
      await person(open, key);
      const d = await finished(open, key, sub.subscriptionId);
      assert.equal(d.attempts, 2);
      assert.equal(d.lastResponseStatus, 500, 'the receiver answered: the connection went where the lookup said');
      assert.deepEqual(hits, [`receiver.attacker.test:${port}`, `receiver.attacker.test:${port}`]);
      assert.equal(
        lookups.filter((h) => h === 'receiver.attacker.test').length - before,
        2,
        'one lookup per attempt, not one to check and one to connect',
      );
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
