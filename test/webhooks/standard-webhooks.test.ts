import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook } from '../../sdk/src/index.js';
import { verifyWebhook as verifyOnServer } from '../../src/webhooks/signing.js';
import { ok, startApp, type TestApp } from '../helpers.js';

// Webhook signatures cross-checked against `standardwebhooks`, the Standard Webhooks
// specification's reference library (issue 26): what the service signs verifies there, what the
// library signs verifies with the SDK's verifyWebhook (and the service's own), and both hold
// during a secret rotation, when a delivery carries two signatures.

interface Hit {
  headers: Record<string, string>;
  raw: string;
}

let t: TestApp;
let receiver: http.Server;
let url: string;
const hits: Hit[] = [];
const waiting: (() => void)[] = [];

before(async () => {
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[name] = value;
      hits.push({ headers, raw: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
      for (const wake of waiting.splice(0)) wake();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  t = await startApp({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '5000' });
});
after(async () => {
  await t.close();
  await new Promise((resolve) => receiver.close(resolve));
});

/** The `n`th delivery the receiver got (1-based), waiting up to 10 s for it. */
async function delivery(n: number): Promise<Hit> {
  const deadline = Date.now() + 10_000;
  while (hits.length < n) {
    assert.ok(Date.now() < deadline, `delivery ${n} within 10 s`);
    await new Promise<void>((resolve) => {
      waiting.push(resolve);
      setTimeout(resolve, 100);
    });
  }
  return hits[n - 1]!;
}

const randomSecret = () => `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')}`;

/** The library's verify as a boolean: it throws WebhookVerificationError on any failure. */
function libraryVerifies(secret: string, hit: Hit): boolean {
  try {
    new Webhook(secret).verify(hit.raw, hit.headers);
    return true;
  } catch {
    return false;
  }
}

/** What the library would send: its headers for `body`, signed by every secret given. */
function librarySigned(secrets: string[], body: string, id = 'msg_2mJcBBwLQmXnFpGnWvtuZ8HVSbN'): Hit {
  const at = new Date();
  return {
    raw: body,
    headers: {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': secrets.map((s) => new Webhook(s).sign(id, at, body)).join(' '),
    },
  };
}

test('a delivery signed by the service verifies with standardwebhooks, and only with its secret and body', async () => {
  const sub = ok(await t.req('POST', '/v0/webhook_subscriptions', { url, events: ['person.created'] }), 201);
  ok(await t.req('POST', '/v0/persons', { name: 'Signed Here' }), 201);
  const hit = await delivery(1);
  assert.equal(hit.headers['webhook-signature']!.split(' ').length, 1);
  assert.equal(libraryVerifies(sub.secret, hit), true, JSON.stringify(hit.headers));
  assert.deepEqual(new Webhook(sub.secret).verify(hit.raw, hit.headers), JSON.parse(hit.raw));
  // It can fail: another secret, a changed body, another id, a timestamp moved by a second.
  assert.equal(libraryVerifies(randomSecret(), hit), false);
  assert.equal(libraryVerifies(sub.secret, { ...hit, raw: hit.raw.replace(/}$/, ' }') }), false);
  assert.equal(libraryVerifies(sub.secret, { ...hit, headers: { ...hit.headers, 'webhook-id': `${hit.headers['webhook-id']}x` } }), false);
  const moved = String(Number(hit.headers['webhook-timestamp']) + 1);
  assert.equal(libraryVerifies(sub.secret, { ...hit, headers: { ...hit.headers, 'webhook-timestamp': moved } }), false);

  // Rotated: the next delivery carries two signatures, and the library accepts it by either secret.
  const rotated = ok(await t.req('POST', `/v0/webhook_subscriptions/${sub.subscriptionId}/rotate_secret`), 200);
  assert.notEqual(rotated.secret, sub.secret);
  ok(await t.req('POST', '/v0/persons', { name: 'Signed During Rotation' }), 201);
  const during = await delivery(2);
  const signatures = during.headers['webhook-signature']!.split(' ');
  assert.equal(signatures.length, 2, during.headers['webhook-signature']);
  assert.equal(libraryVerifies(rotated.secret, during), true);
  assert.equal(libraryVerifies(sub.secret, during), true);
  assert.equal(libraryVerifies(randomSecret(), during), false);
  // Each signature is one secret's: alone, the new one verifies only by the new secret, and the old by the old.
  const alone = (signature: string) => ({ ...during, headers: { ...during.headers, 'webhook-signature': signature } });
  assert.deepEqual(
    signatures.map((s) => [libraryVerifies(rotated.secret, alone(s)), libraryVerifies(sub.secret, alone(s))]),
    [
      [true, false],
      [false, true],
    ],
  );
});

test('what standardwebhooks signs verifies with the SDK and the service, and only with its secret and body', () => {
  const secret = randomSecret();
  const body = JSON.stringify({ type: 'person.created', data: { name: 'Signed There', note: 'é ✓ \u2028' } });
  const hit = librarySigned([secret], body);
  assert.equal(verifyWebhook(secret, hit.headers, hit.raw), true);
  assert.equal(verifyWebhook(secret, hit.headers, Buffer.from(hit.raw)), true, 'the raw bytes as well as the text');
  assert.equal(verifyOnServer(secret, hit.headers, hit.raw), true);
  assert.equal(verifyWebhook(randomSecret(), hit.headers, hit.raw), false);
  assert.equal(verifyWebhook(secret, hit.headers, `${hit.raw} `), false);
  assert.equal(verifyWebhook(secret, { ...hit.headers, 'webhook-id': 'msg_other' }, hit.raw), false);
  assert.equal(verifyOnServer(randomSecret(), hit.headers, hit.raw), false);

  // A secret given without its whsec_ prefix is the same key to the library.
  const bare = librarySigned([secret.slice('whsec_'.length)], body);
  assert.equal(verifyWebhook(secret, bare.headers, bare.raw), true);
});

test('during a rotation, a delivery the library signs with both secrets verifies with either, in either order', () => {
  const [older, newer, stranger] = [randomSecret(), randomSecret(), randomSecret()];
  const body = JSON.stringify({ type: 'person.updated', data: { personId: 'person_x' } });
  for (const order of [
    [newer, older],
    [older, newer],
  ]) {
    const hit = librarySigned(order, body);
    assert.equal(hit.headers['webhook-signature']!.split(' ').length, 2);
    assert.equal(verifyWebhook(newer, hit.headers, hit.raw), true);
    assert.equal(verifyWebhook(older, hit.headers, hit.raw), true);
    assert.equal(verifyWebhook(stranger, hit.headers, hit.raw), false);
    assert.equal(verifyOnServer(newer, hit.headers, hit.raw), true);
    assert.equal(verifyOnServer(older, hit.headers, hit.raw), true);
    assert.equal(verifyOnServer(stranger, hit.headers, hit.raw), false);
  }
});

test('a timestamp outside the tolerance is refused by the SDK as by the library', () => {
  const secret = randomSecret();
  const id = 'msg_old';
  const body = '{"type":"person.created"}';
  const at = new Date(Date.now() - 301_000);
  const stale = {
    raw: body,
    headers: {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(id, at, body),
    },
  };
  assert.equal(libraryVerifies(secret, stale), false);
  assert.equal(verifyWebhook(secret, stale.headers, stale.raw), false);
  // Just inside the tolerance both accept it.
  const recent = new Date(Date.now() - 290_000);
  const fresh = { ...stale, headers: { ...stale.headers, 'webhook-timestamp': String(Math.floor(recent.getTime() / 1000)) } };
  fresh.headers['webhook-signature'] = new Webhook(secret).sign(id, recent, body);
  assert.equal(libraryVerifies(secret, fresh), true);
  assert.equal(verifyWebhook(secret, fresh.headers, fresh.raw), true);
});
