import assert from 'node:assert/strict';
import { after, describe, test, type TestContext } from 'node:test';
import { freshDatabase, type Json, type TestDatabase } from '../helpers.js';
import { startServer, startsAndWork, type ServerProcess } from '../server-process.js';
import { call, show, walk, waitFor, type Answer } from './api.js';

// Crash safety, process level (issue 8): several clients write through the API at full speed, the
// server is killed with SIGKILL mid-stream and restarted on the same database, twice. Every write
// that was answered 2xx must be there, exactly as answered; nothing half-written may exist: every
// listed person is readable and complete, counters agree with the rows, every idempotency key
// replays its log, and the outbox holds exactly one event per committed change.

const KEY = 'robustness-crash-bootstrap-key-0123456789';
/** Concurrent writers, each one request at a time (so its one unanswered request is known). */
const WRITERS = 6;
/** Writes answered 2xx in a round before the kill (the writers keep going until it lands). */
const KILL_AFTER = 400;
const ROUNDS = 3;

function serverEnv(database: TestDatabase): Record<string, string> {
  return {
    DATABASE_URL: database.url,
    BOOTSTRAP_API_KEY: KEY,
    // Test files run in parallel against one PostgreSQL server: keep the pool small.
    DATABASE_POOL_SIZE: '5',
  };
}

interface PersonModel {
  owner: number;
  /** The person as last answered 2xx (or as found after a crash, for a write left unanswered). */
  state: Json;
  /** The body of person.created: the person as first answered. */
  created: Json;
  /** A PATCH sent but never answered (the kill): it may or may not have committed. */
  pending?: Json;
}

interface LogModel {
  request: Json;
  body: Json;
  owner: number;
}

/** A write with no answer: the kill landed while it was in flight (or before it was sent). */
type Unanswered =
  | { kind: 'createPerson'; request: Json }
  | { kind: 'createLog'; personId: string; request: Json }
  | { kind: 'patchPerson'; personId: string; patch: Json }
  | { kind: 'createAccount'; request: Json }
  | { kind: 'replayLog'; personLogId: string };

/** Runs `fn` on every item, at most `limit` at a time. */
async function eachLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

describe('crash safety: SIGKILL mid-stream of concurrent writes, restart on the same database', () => {
  let database: TestDatabase | undefined;
  const servers: ServerProcess[] = [];

  after(async () => {
    await Promise.all(servers.map((s) => s.kill('SIGKILL')));
    await database?.drop();
  });

  test(
    `${WRITERS} writers, killed ${ROUNDS} times: every 2xx write is present and intact, nothing half-written`,
    startsAndWork(ROUNDS + 1, 60_000),
    async (t) => {
      database = await freshDatabase();
      const persons = new Map<string, PersonModel>();
      const logs = new Map<string, LogModel>();
      const accounts = new Map<string, Json>();
      let phone = 0;
      const nextPhone = () => `+1415${String(5_000_000 + phone++).padStart(7, '0')}`;

      let server = await startServer(serverEnv(database));
      servers.push(server);

      for (let round = 1; round <= ROUNDS; round++) {
        const unanswered: Unanswered[] = [];
        const unexpected: string[] = [];
        let answered = 0;
        let writing = true;
        const base = server.url;

        /** Sends one write; false when it got no answer (recorded as unanswered) or a wrong one (recorded). */
        const send = async (
          what: Unanswered,
          method: string,
          path: string,
          body: unknown,
          expected: number,
          check: (res: Answer) => void,
        ): Promise<Answer | undefined> => {
          let res: Answer;
          try {
            res = await call(base, KEY, method, path, body);
          } catch {
            unanswered.push(what);
            writing = false;
            return undefined;
          }
          if (res.status !== expected) {
            unexpected.push(`${method} ${path}: ${show(res)}`);
            return undefined;
          }
          try {
            check(res);
          } catch (err) {
            unexpected.push(`${method} ${path}: ${(err as Error).message}`);
            return undefined;
          }
          answered++;
          return res;
        };

        const writer = async (c: number) => {
          const mine = [...persons].filter(([, p]) => p.owner === c).map(([id]) => id);
          const myLogs = () => [...logs].filter(([, l]) => l.owner === c).map(([id]) => id);
          for (let i = 0; writing; i++) {
            const tag = `r${round}c${c}i${i}`;

            const personReq = {
              name: `Crash ${tag}`,
              domain: `${tag}.persons.example.com`,
              email: `${tag}@example.com`,
              phoneNumber: nextPhone(),
            };
            const created = await send({ kind: 'createPerson', request: personReq }, 'POST', '/v0/persons', personReq, 201, (res) => {
              for (const [k, v] of Object.entries(personReq)) assert.equal(res.body[k], v, k);
            });
            if (!created) return;
            const personId: string = created.body.personId;
            persons.set(personId, { owner: c, state: created.body, created: created.body });
            mine.push(personId);
            if (!writing) return;

            const logReq = {
              source: 'crash-test',
              type: 'note',
              payload: { tag, client: c, n: i, text: `écrit ✓ ${tag}`, nested: { list: [1, 2, 3], ok: true, none: null } },
              idempotencyKey: `log-${tag}`,
            };
            const log = await send(
              { kind: 'createLog', personId, request: logReq },
              'POST',
              `/v0/persons/${personId}/logs`,
              logReq,
              201,
              (res) => {
                assert.equal(res.headers.get('idempotent-replayed'), null);
                assert.deepEqual(res.body.payload, logReq.payload);
              },
            );
            if (!log) return;
            logs.set(log.body.personLogId, { request: logReq, body: log.body, owner: c });
            if (!writing) return;

            // Patch the new person, and now and then an older one of this writer (from this round or earlier).
            const targets = [personId];
            if (i % 2 === 1 && mine.length > 1) targets.push(mine[Math.floor(Math.random() * (mine.length - 1))]!);
            for (const [j, target] of targets.entries()) {
              const patch =
                j === 0
                  ? { name: `Renamed ${tag}`, phoneNumber: nextPhone() }
                  : { email: `${tag}.again@example.com`, phoneNumber: nextPhone(), domain: null };
              const model = persons.get(target)!;
              model.pending = patch;
              const patched = await send(
                { kind: 'patchPerson', personId: target, patch },
                'PATCH',
                `/v0/persons/${target}`,
                patch,
                200,
                (res) => {
                  assert.deepEqual(res.body, { ...model.state, ...patch, updatedAt: res.body.updatedAt });
                  assert.ok(res.body.updatedAt > model.state.updatedAt, 'updatedAt did not move');
                },
              );
              if (!patched) return;
              model.state = patched.body;
              delete model.pending;
              if (!writing) return;
            }

            if (i % 3 === 0) {
              const accountReq = { name: `Account ${tag}`, domain: `${tag}.accounts.example.org` };
              const account = await send({ kind: 'createAccount', request: accountReq }, 'POST', '/v0/accounts', accountReq, 201, (res) => {
                assert.equal(res.body.name, accountReq.name);
                assert.equal(res.body.domain, accountReq.domain);
                assert.equal(res.body.linkedPersonsCount, 0);
              });
              if (!account) return;
              accounts.set(account.body.accountId, account.body);
              if (!writing) return;
            }

            // A retry of an earlier log with its idempotency key replays it, under load too.
            const earlier = myLogs();
            if (i % 4 === 3 && earlier.length > 0) {
              const logId = earlier[Math.floor(Math.random() * earlier.length)]!;
              const stored = logs.get(logId)!;
              const replay = await send(
                { kind: 'replayLog', personLogId: logId },
                'POST',
                `/v0/persons/${stored.body.personId}/logs`,
                stored.request,
                201,
                (res) => {
                  assert.equal(res.headers.get('idempotent-replayed'), 'true');
                  assert.deepEqual(res.body, stored.body);
                },
              );
              if (!replay) return;
            }
          }
        };

        const writers = Array.from({ length: WRITERS }, (_, c) => writer(c));
        await waitFor(`${KILL_AFTER} answered writes`, 30_000, () => answered >= KILL_AFTER || unexpected.length > 0 || !writing);
        const answeredAtKill = answered;
        const exit = await server.kill('SIGKILL');
        writing = false;
        await Promise.all(writers);
        assert.equal(exit, 'SIGKILL');
        assert.deepEqual(unexpected, [], 'a write got an unexpected answer before the kill');
        // Mid-stream: the kill left requests unanswered (at most one per writer).
        assert.ok(unanswered.length >= 1 && unanswered.length <= WRITERS, `unanswered writes: ${unanswered.length}`);
        t.diagnostic(
          `round ${round}: ${answered} writes answered 2xx (${answeredAtKill} when the kill was sent), ${unanswered.length} unanswered: ${unanswered.map((u) => u.kind).join(', ')}`,
        );

        server = await startServer(serverEnv(database));
        servers.push(server);
        await verify(t, server, { persons, logs, accounts, unanswered });
      }
    },
  );
});

/**
 * Checks the database behind `server` against the model: what was answered 2xx is there and equal,
 * what was unanswered either committed whole or not at all (and the model learns which), nothing else
 * exists.
 */
async function verify(
  t: TestContext,
  server: ServerProcess,
  model: { persons: Map<string, PersonModel>; logs: Map<string, LogModel>; accounts: Map<string, Json>; unanswered: Unanswered[] },
): Promise<void> {
  const base = server.url;
  const { persons, logs, accounts, unanswered } = model;
  const get = async (path: string, expected = 200) => {
    const res = await call(base, KEY, 'GET', path);
    assert.equal(res.status, expected, `GET ${path}: ${show(res)}`);
    return res.body;
  };

  // Persons: the list walked to its end agrees with the counter, and holds every person answered 201.
  const listed = await walk(base, KEY, '/v0/persons');
  assert.deepEqual(
    listed.totalCounts,
    listed.totalCounts.map(() => listed.items.length),
    'totalCount differs from the persons listed',
  );
  const byId = new Map<string, Json>(listed.items.map((p) => [p.personId, p]));
  assert.equal(byId.size, listed.items.length, 'a person is listed twice');
  assert.deepEqual(
    [...persons.keys()].filter((id) => !byId.has(id)),
    [],
    'a person answered 201 is missing',
  );

  // A person nobody was answered for must be an unanswered create, committed whole.
  const unansweredCreates = unanswered.filter((u): u is Extract<Unanswered, { kind: 'createPerson' }> => u.kind === 'createPerson');
  for (const p of listed.items) {
    if (persons.has(p.personId)) continue;
    const i = unansweredCreates.findIndex((u) => u.request.name === p.name);
    assert.ok(i >= 0, `a person no write created (or a half-written one): ${JSON.stringify(p)}`);
    const [{ request }] = unansweredCreates.splice(i, 1) as [Extract<Unanswered, { kind: 'createPerson' }>];
    assert.deepEqual(p, { ...p, ...request, linkedinProfileUrl: null, updatedAt: p.createdAt }, 'an unanswered create committed in part');
    assert.match(p.slug, /^crash-/);
    persons.set(p.personId, { owner: -1, state: p, created: p });
  }

  // Every person reads back as listed, and as last answered (an unanswered PATCH: all of it or none).
  let patchedUnanswered = 0;
  await eachLimit([...persons], 8, async ([id, person]) => {
    const got = await get(`/v0/persons/${id}`);
    assert.deepEqual(got, byId.get(id), `GET and list disagree on ${id}`);
    if (person.pending) {
      const before = person.state;
      const applied = { ...before, ...person.pending, updatedAt: got.updatedAt };
      if (got.updatedAt === before.updatedAt) assert.deepEqual(got, before, `person ${id} changed in part`);
      else {
        assert.deepEqual(got, applied, `an unanswered PATCH of ${id} committed in part`);
        assert.ok(got.updatedAt > before.updatedAt);
        patchedUnanswered++;
      }
      person.state = got;
      delete person.pending;
    } else {
      assert.deepEqual(got, person.state, `person ${id} is not as last answered`);
    }
  });

  // Logs: each one answered reads back equal, and its idempotency key replays it (key and log committed together).
  await eachLimit([...logs], 8, async ([id, log]) => {
    assert.deepEqual(await get(`/v0/persons/${log.body.personId}/logs/${id}`), log.body);
    const replay = await call(base, KEY, 'POST', `/v0/persons/${log.body.personId}/logs`, log.request);
    assert.equal(replay.status, 201, show(replay));
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replay.body, log.body);
  });
  // An unanswered log, sent again with its key: replayed if it had committed, created now if not; once either way.
  let logsReplayed = 0;
  for (const u of unanswered) {
    if (u.kind !== 'createLog') continue;
    const retry = await call(base, KEY, 'POST', `/v0/persons/${u.personId}/logs`, u.request);
    assert.equal(retry.status, 201, show(retry));
    const { personLogId, createdAt, ...rest } = retry.body;
    assert.deepEqual(rest, { personId: u.personId, ...u.request, updatedAt: null, deletedAt: null });
    if (retry.headers.get('idempotent-replayed') === 'true') logsReplayed++;
    const again = await call(base, KEY, 'POST', `/v0/persons/${u.personId}/logs`, u.request);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(again.body, retry.body);
    assert.deepEqual(await get(`/v0/persons/${u.personId}/logs/${personLogId}`), retry.body);
    assert.equal(typeof createdAt, 'string');
    logs.set(personLogId, { request: u.request, body: retry.body, owner: -1 });
  }

  // Accounts: the search walked to its end agrees with its count, holds every account answered 201, equal.
  const listedAccounts = await walk(base, KEY, '/v0/accounts/search');
  assert.deepEqual(
    listedAccounts.totalCounts,
    listedAccounts.totalCounts.map(() => listedAccounts.items.length),
  );
  const accountsById = new Map<string, Json>(listedAccounts.items.map((a) => [a.accountId, a]));
  assert.equal(accountsById.size, listedAccounts.items.length, 'an account is listed twice');
  for (const [id, account] of accounts) assert.deepEqual(accountsById.get(id), account, `account ${id} is missing or not as answered`);
  const unansweredAccounts = unanswered.filter((u): u is Extract<Unanswered, { kind: 'createAccount' }> => u.kind === 'createAccount');
  for (const a of listedAccounts.items) {
    if (accounts.has(a.accountId)) continue;
    const i = unansweredAccounts.findIndex((u) => u.request.domain === a.domain);
    assert.ok(i >= 0, `an account no write created: ${JSON.stringify(a)}`);
    const [{ request }] = unansweredAccounts.splice(i, 1) as [Extract<Unanswered, { kind: 'createAccount' }>];
    assert.deepEqual(a, { ...a, ...request, linkedPersonsCount: 0, updatedAt: a.createdAt, latestActivityAt: a.createdAt });
    accounts.set(a.accountId, a);
  }

  // The outbox: exactly one event per committed change, written in its transaction.
  const events = async (type: string) =>
    (await walk(base, KEY, `/v0/events?type=${type}`)).items.map((e) => {
      assert.equal(e.type, type);
      assert.equal(e.payload.type, type);
      return e.payload.data as Json;
    });
  const createdEvents = await events('person.created');
  assert.deepEqual(createdEvents.map((d) => d.personId).sort(), [...persons.keys()].sort(), 'person.created events and persons differ');
  for (const data of createdEvents) assert.deepEqual(data, persons.get(data.personId)!.created);
  const latest = new Map<string, Json>(createdEvents.map((d) => [d.personId, d]));
  for (const data of await events('person.updated')) {
    assert.ok(persons.has(data.personId), `person.updated for a person that does not exist: ${data.personId}`);
    if (data.updatedAt > latest.get(data.personId)!.updatedAt) latest.set(data.personId, data);
  }
  for (const [id, person] of persons) assert.deepEqual(latest.get(id), person.state, `the last event of ${id} is not its state`);
  const logEvents = await events('person_log.created');
  assert.deepEqual(logEvents.map((d) => d.personLogId).sort(), [...logs.keys()].sort(), 'person_log.created events and logs differ');
  for (const data of logEvents) assert.deepEqual(data, logs.get(data.personLogId)!.body);
  const accountEvents = await events('account.created');
  assert.deepEqual(accountEvents.map((d) => d.accountId).sort(), [...accounts.keys()].sort(), 'account.created events and accounts differ');
  for (const data of accountEvents) assert.deepEqual(data, accounts.get(data.accountId));

  t.diagnostic(
    `after restart: ${persons.size} persons, ${logs.size} logs, ${accounts.size} accounts verified; ` +
      `unanswered writes that had committed: ${unanswered.filter((u) => u.kind === 'createPerson').length - unansweredCreates.length} person creates, ` +
      `${patchedUnanswered} patches, ${logsReplayed} logs, ${unanswered.filter((u) => u.kind === 'createAccount').length - unansweredAccounts.length} accounts`,
  );
}
