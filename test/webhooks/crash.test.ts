import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { verifyWebhook } from '../../src/webhooks/signing.js';
import { freshDatabase, onPostgres, type Json, type TestDatabase } from '../helpers.js';
import { callServer, startServer, startsAndWork, type ServerProcess, waitFor } from '../server-process.js';

// Process-level webhook delivery: real server processes (killed with SIGKILL, or two at once on one
// database) delivering to a real HTTP receiver on 127.0.0.1.

const KEY = 'webhook-crash-bootstrap-key-0123456789';
const call = (server: ServerProcess, method: string, path: string, body?: unknown) => callServer(server, KEY, method, path, body);
/** A 1 s attempt timeout makes a lease (timeout + 5 s) expire about 6 s after a crash. */
const TIMEOUT_MS = 1000;

function serverEnv(database: TestDatabase, timeoutMs = TIMEOUT_MS): Record<string, string> {
  return {
    DATABASE_URL: database.url,
    BOOTSTRAP_API_KEY: KEY,
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_TIMEOUT_MS: String(timeoutMs),
    WEBHOOK_RETRY_SCHEDULE: '0.3,0.3,0.3,0.3,0.3',
    // Test files run in parallel against one PostgreSQL server: keep the pools small.
    DATABASE_POOL_SIZE: '5',
  };
}

interface Received {
  webhookId: string;
  body: Json;
  signed: boolean;
  at: number;
}

interface Receiver {
  url: string;
  received: Received[];
  /** Requests read in full but not answered yet (the sender is waiting on them). */
  open(): number;
  /** Verifies signatures with this secret from now on. */
  setSecret(secret: string): void;
  close(): Promise<void>;
}

/** Records every request (on arrival, once its body is read), then answers 200 after `holdMs`. */
async function startReceiver(holdMs: number): Promise<Receiver> {
  const received: Received[] = [];
  let open = 0;
  let secret = '';
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString();
      let body: Json;
      try {
        body = JSON.parse(raw);
      } catch {
        body = { unparsable: raw };
      }
      received.push({
        webhookId: String(req.headers['webhook-id']),
        body,
        signed: secret !== '' && verifyWebhook(secret, req.headers, raw),
        at: Date.now(),
      });
      open++;
      let answered = false;
      const done = () => {
        if (answered) return;
        answered = true;
        open--;
      };
      res.on('close', done); // answered, or the sender went away (killed)
      setTimeout(() => {
        if (!res.destroyed) res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        done();
      }, holdMs).unref();
    });
    req.on('error', () => {});
    res.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    open: () => open,
    setSecret: (s) => (secret = s),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function subscribe(server: ServerProcess, receiver: Receiver): Promise<Json> {
  const res = await call(server, 'POST', '/v0/webhook_subscriptions', { url: receiver.url, events: ['*'] });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  assert.equal(typeof res.body.secret, 'string');
  receiver.setSecret(res.body.secret);
  return res.body;
}

const personIdOf = (r: Received): string | undefined => r.body?.data?.personId;

/** Groups copies by the event they carry (its person), each group listing the webhook-ids seen. */
function idsByPerson(received: Received[]): Map<string, Set<string>> {
  const groups = new Map<string, Set<string>>();
  for (const r of received) {
    const personId = personIdOf(r);
    if (personId === undefined) continue;
    const ids = groups.get(personId) ?? new Set<string>();
    ids.add(r.webhookId);
    groups.set(personId, ids);
  }
  return groups;
}

describe('webhook delivery survives SIGKILL of the server', () => {
  /** At least this many persons are created (201) before the kill. */
  const PERSONS = 30;
  const WRITERS = 3;
  /** Long enough that deliveries are in flight at the kill, short enough (< the timeout) to succeed. */
  const HOLD_MS = 600;
  let database: TestDatabase | undefined;
  let receiver: Receiver | undefined;
  const servers: ServerProcess[] = [];

  after(async () => {
    await Promise.all(servers.map((s) => s.kill('SIGKILL')));
    await receiver?.close();
    await database?.drop();
  });

  test(
    'killed with events pending and in flight, restarted on the same database: every event arrives, duplicates only under one webhook-id',
    startsAndWork(2, 60_000),
    async (t) => {
      database = await freshDatabase();
      receiver = await startReceiver(HOLD_MS);
      const rx = receiver;
      const a = await startServer(serverEnv(database));
      servers.push(a);
      const subscription = await subscribe(a, rx);

      // Writers create persons quickly and keep going until the kill, so it also lands among writes
      // (events committed an instant before the crash). Only a dropped connection may end a write.
      const created: string[] = [];
      const unexpected: string[] = [];
      let writing = true;
      let n = 0;
      let cutOff = 0;
      const writer = async () => {
        while (writing) {
          const i = n++;
          try {
            const res = await call(a, 'POST', '/v0/persons', { name: `Crash Person ${i}`, domain: `crash${i}.example.com` });
            if (res.status === 201) created.push(res.body.personId);
            else unexpected.push(`${res.status} ${JSON.stringify(res.body)}`);
          } catch {
            cutOff++; // the process died under this request
            return;
          }
        }
      };
      const writers = Array.from({ length: WRITERS }, writer);

      // The kill: enough persons written, and deliveries in flight (held by the receiver).
      await waitFor(`${PERSONS} persons and a delivery in flight`, 20_000, () => created.length >= PERSONS && rx.open() > 0);
      const inFlightAtKill = rx.open();
      const seenBeforeKill = new Set(rx.received.map(personIdOf)).size;
      const createdAtKill = created.length;
      const exit = await a.kill('SIGKILL');
      writing = false;
      await Promise.all(writers);
      assert.equal(exit, 'SIGKILL');
      assert.deepEqual(unexpected, []);
      assert.equal(new Set(created).size, created.length);
      // The crash happened with work left: deliveries in flight and events not yet delivered at all.
      assert.ok(inFlightAtKill > 0);
      assert.ok(seenBeforeKill < createdAtKill, 'every event had already arrived before the kill: nothing was pending');
      const receivedBeforeRestart = rx.received.length;
      t.diagnostic(
        `at the kill: ${created.length} persons created (${cutOff} writes cut off), ${inFlightAtKill} deliveries in flight, ${seenBeforeKill} events seen`,
      );

      const b = await startServer(serverEnv(database));
      servers.push(b);
      // Every person that exists, which includes every 201 and any write committed but cut off before
      // its answer: each one's change committed, so its event must arrive.
      const listed = await call(b, 'GET', '/v0/persons?limit=100');
      assert.equal(listed.status, 200);
      assert.equal(listed.body.hasMore, false);
      const persons: string[] = listed.body.items.map((p: Json) => p.personId);
      assert.deepEqual(
        created.filter((id) => !persons.includes(id)),
        [],
        'a person answered with 201 is missing',
      );
      assert.ok(persons.length <= created.length + cutOff);

      await waitFor(
        `a person.created for each of the ${persons.length} persons`,
        40_000,
        () => {
          const seen = new Set(rx.received.filter((r) => r.body?.type === 'person.created').map(personIdOf));
          return persons.every((id) => seen.has(id));
        },
        () => `missing ${persons.filter((id) => !rx.received.some((r) => personIdOf(r) === id)).join(', ')}`,
      );
      // The restarted server records every outcome. Once all deliveries are settled no attempt is left to
      // make, so what the receiver holds then is final (the copies in flight at the kill are sent again
      // only when their leases expire, after the last event first arrived).
      const deliveries = async () =>
        (await call(b, 'GET', `/v0/webhook_subscriptions/${subscription.subscriptionId}/deliveries?limit=100`)).body;
      let last: Json;
      await waitFor(
        'every delivery to be recorded as succeeded',
        20_000,
        async () => {
          last = await deliveries();
          return (
            Array.isArray(last?.items) && last.items.length === persons.length && last.items.every((d: Json) => d.status === 'succeeded')
          );
        },
        () => JSON.stringify(last?.items?.filter((d: Json) => d.status !== 'succeeded')),
      );
      t.diagnostic(`${rx.received.length} requests for ${persons.length} events (${rx.received.length - persons.length} repeated)`);

      // None lost.
      const groups = idsByPerson(rx.received);
      assert.deepEqual(
        persons.filter((id) => !groups.has(id)),
        [],
      );
      // Nothing else: each copy is a signed person.created of an existing person.
      for (const r of rx.received) {
        assert.equal(r.body?.type, 'person.created', JSON.stringify(r.body));
        assert.ok(persons.includes(personIdOf(r)!), `event for a person that does not exist: ${personIdOf(r)}`);
        assert.ok(r.signed, `invalid signature on ${r.webhookId}`);
      }
      // Duplicates only under one webhook-id: all copies of one event carry the same id...
      const split = [...groups].filter(([, ids]) => ids.size !== 1).map(([personId, ids]) => `${personId}: ${[...ids].join(', ')}`);
      assert.deepEqual(split, [], 'an event arrived under more than one webhook-id');
      // ...and one webhook-id never carries two events.
      const personsById = new Map<string, Set<string>>();
      for (const r of rx.received) personsById.set(r.webhookId, (personsById.get(r.webhookId) ?? new Set()).add(personIdOf(r)!));
      assert.equal(personsById.size, persons.length);
      for (const [id, carried] of personsById) assert.equal(carried.size, 1, `webhook-id ${id} carried ${[...carried].join(', ')}`);
      // The webhook-ids are the deliveries' ids, one delivery per event.
      assert.deepEqual(new Set(last.items.map((d: Json) => d.deliveryId)), new Set(personsById.keys()));
      // The restarted server did deliver (the test is not passing on the first server's work alone).
      assert.ok(rx.received.length > receivedBeforeRestart);
    },
  );
});

describe('two server processes on one database deliver each attempt once', { skip: !onPostgres && 'PostgreSQL only' }, () => {
  const PERSONS = 40;
  let database: TestDatabase | undefined;
  let receiver: Receiver | undefined;
  const servers: ServerProcess[] = [];

  after(async () => {
    await Promise.all(servers.map((s) => s.kill('SIGKILL')));
    await receiver?.close();
    await database?.drop();
  });

  test(
    '40 persons created through two instances: each event arrives exactly once, under one webhook-id',
    startsAndWork(2, 30_000),
    async () => {
      database = await freshDatabase();
      receiver = await startReceiver(0);
      const rx = receiver;
      // No crash here, so a long attempt timeout: a retry (legitimately under the same webhook-id) must
      // not come from a slow machine, since any second copy counts against the instances.
      const env = serverEnv(database, 10_000);
      const started = await Promise.allSettled([startServer(env), startServer(env)]);
      for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
      for (const s of started) if (s.status === 'rejected') throw s.reason;
      const [a, b] = servers as [ServerProcess, ServerProcess];
      const subscription = await subscribe(a, rx);

      const results = await Promise.all(
        Array.from({ length: PERSONS }, (_, i) =>
          call(i % 2 ? b : a, 'POST', '/v0/persons', { name: `Twin Person ${i}`, domain: `twin${i}.example.com` }),
        ),
      );
      assert.deepEqual(
        results.map((r) => r.status),
        results.map(() => 201),
      );
      const created = results.map((r) => r.body.personId as string);
      assert.equal(new Set(created).size, PERSONS);

      await waitFor(
        `a person.created for each of the ${PERSONS} persons`,
        30_000,
        () => {
          const seen = new Set(rx.received.map(personIdOf));
          return created.every((id) => seen.has(id));
        },
        () => `missing ${created.filter((id) => !rx.received.some((r) => personIdOf(r) === id)).join(', ')}`,
      );
      // Time for a second, duplicate attempt to show up if one was going to.
      await new Promise((r) => setTimeout(r, 3000));

      for (const r of rx.received) {
        assert.equal(r.body?.type, 'person.created', JSON.stringify(r.body));
        assert.ok(r.signed, `invalid signature on ${r.webhookId}`);
      }
      const countBy = (key: (r: Received) => string) => {
        const counts = new Map<string, number>();
        for (const r of rx.received) counts.set(key(r), (counts.get(key(r)) ?? 0) + 1);
        return counts;
      };
      const byId = countBy((r) => r.webhookId);
      const byPerson = countBy((r) => personIdOf(r)!);
      const twice = (counts: Map<string, number>) => [...counts].filter(([, n]) => n !== 1).map(([k, n]) => `${k} x${n}`);
      assert.deepEqual(twice(byId), [], 'a webhook-id arrived more than once');
      assert.deepEqual(twice(byPerson), [], 'an event arrived more than once');
      assert.equal(byId.size, PERSONS);
      assert.deepEqual([...byPerson.keys()].sort(), [...created].sort());
      assert.equal(rx.received.length, PERSONS);
      // And the books agree: one delivery per event, each succeeded at its one attempt.
      const listed = await call(b, 'GET', `/v0/webhook_subscriptions/${subscription.subscriptionId}/deliveries?limit=100`);
      assert.equal(listed.status, 200);
      assert.deepEqual(new Set(listed.body.items.map((d: Json) => d.deliveryId)), new Set(byId.keys()));
      assert.deepEqual(
        listed.body.items.map((d: Json) => [d.status, d.attempts]),
        listed.body.items.map(() => ['succeeded', 1]),
      );
    },
  );
});
