import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import { changeCount } from '../../src/db/changes.js';
import type { Database } from '../../src/db/types.js';
import { stickyArm } from '../../src/experiments/units.js';
import { USER_AGENT } from '../browser.js';
import { ok, onPostgres, startApp, type Json, type TestApp } from '../helpers.js';
import { startServer, START_MS, type ServerProcess } from '../server-process.js';
import { audienceOf, fallbackHost, link, publishedPage, unique, viewClaims, visit } from '../site/serve-helpers.js';

// Issue 36: a unit's arm is fixed at its first exposure and kept whatever the weights become; the
// results count each unit once, in its first arm; reading them writes nothing; and two instances
// assigning the same new unit at once agree.

let t: TestApp;
let host: string;
let db: Kysely<Database>;
before(async () => {
  // Looks for a first winner an hour apart: nothing but the requests of this file writes.
  t = await startApp({ FORM_RATE_PER_MINUTE: '1000', COLLECT_RATE_PER_MINUTE: '1000' }, { reweighEveryMs: 3_600_000 });
  host = await fallbackHost(t);
  db = t.app.db as Kysely<Database>;
});
after(async () => {
  await t.close();
});

const hidden = (html: string, name: string) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html)?.[1] ?? '';
const FORM = { purpose: 'lead', buttonTitle: 'Send', actionType: 'form', url: '' };
let address = 1;
const nextAddress = () => `198.51.${100 + Math.floor(address / 250)}.${(address++ % 250) + 1}`;

/** A page with a link per person: `count` persons. */
async function personsOnPage(count: number) {
  const page = await publishedPage(t, {
    content: { headline: 'Hello {{person.firstName | there}}', subheadline: '', sections: [] },
    actions: [FORM],
  });
  const people: { personId: string; path: string }[] = [];
  for (let i = 0; i < count; i++) {
    const person = ok(await t.req('POST', '/v0/persons', { name: `Sam${i}x Doe` }), 201);
    const audience = await audienceOf(t, page.pageId, { personId: person.personId });
    const path = unique(`s${i}`);
    await link(t, path, { targetType: 'audience', audienceId: audience.audienceId });
    people.push({ personId: person.personId, path });
  }
  return { page, people };
}

async function startHoldout(pageId: string, control: number, personalised: number): Promise<string> {
  const base = `/v0/pages/${pageId}/experiments`;
  const body = {
    name: 'Sticky',
    kind: 'holdout',
    minimumUnitsPerArm: 1,
    arms: [
      { key: 'control', weight: control },
      { key: 'personalised', weight: personalised },
    ],
  };
  const experiment = ok(await t.req('POST', base, body), 201);
  ok(await t.req('POST', `${base}/${experiment.experimentId}/start`));
  return experiment.experimentId;
}

/** Serves the person's link and reports the visit (converting when asked); the arm it was served. */
async function visitAndReport(path: string, converts: boolean): Promise<string> {
  const res = await visit(t, host, path, { remoteAddress: nextAddress(), headers: { 'user-agent': USER_AGENT } });
  assert.equal(res.statusCode, 200, res.body);
  const token = hidden(res.body, 'token');
  const report = await visit(t, host, '/_pam/collect', {
    method: 'POST',
    headers: { 'content-type': 'text/plain', 'user-agent': USER_AGENT },
    payload: JSON.stringify({ token, visibleMs: 1000, scroll: 10, clicks: 0, questions: 0, conversions: converts ? 1 : 0 }),
    remoteAddress: nextAddress(),
  });
  assert.equal(report.statusCode, 204, report.body);
  return viewClaims(token).arm as string;
}

describe('weights changed from 50/50 to 10/90 while 60 persons come back', () => {
  test('every one stays in its first arm, and the results count 60 units, each once', { timeout: 120_000 }, async () => {
    const { page, people } = await personsOnPage(60);
    const experimentId = await startHoldout(page.pageId, 50, 50);
    const base = `/v0/pages/${page.pageId}/experiments/${experimentId}`;
    const first = new Map<string, string>();
    for (const person of people) {
      const arm = await visitAndReport(person.path, false);
      first.set(person.personId, arm);
    }
    const firstCounts = { control: 0, personalised: 0 } as Record<string, number>;
    for (const arm of first.values()) firstCounts[arm] = (firstCounts[arm] ?? 0) + 1;
    assert.ok((firstCounts.control ?? 0) >= 15 && (firstCounts.personalised ?? 0) >= 15, JSON.stringify(firstCounts));

    const current = ok(await t.req('GET', base));
    const changed = ok(
      await t.req('PATCH', base, {
        ...current,
        arms: [
          { key: 'control', weight: 10 },
          { key: 'personalised', weight: 90 },
        ],
      }),
    );
    assert.deepEqual(
      changed.arms.map((a: Json) => a.weight),
      [10, 90],
    );
    // On their second visit, personalised units convert and control ones never: a clear winner, which
    // reading the results used to write down.
    for (const person of people) {
      const arm = await visitAndReport(person.path, first.get(person.personId) === 'personalised');
      assert.equal(arm, first.get(person.personId), `person ${person.personId} keeps its first arm`);
    }

    // One row per unit, its arm the first one.
    const stored = await db.selectFrom('experiment_units').select(['unit', 'arm']).where('experiment_id', '=', experimentId).execute();
    assert.equal(stored.length, 60);
    for (const row of stored) assert.equal(row.arm, first.get(row.unit.replace(/^person:/, '')));

    const results = ok(await t.req('GET', `${base}/results`));
    const byKey = Object.fromEntries(results.arms.map((a: Json) => [a.key, a]));
    assert.equal(byKey.control.units + byKey.personalised.units, 60, '60 persons are 60 units');
    for (const arm of ['control', 'personalised']) {
      assert.equal(byKey[arm].units, firstCounts[arm], `${arm} units`);
      assert.equal(byKey[arm].visits, (firstCounts[arm] ?? 0) * 2, `${arm} visits: both of each unit`);
    }
    assert.equal(byKey.personalised.conversions, firstCounts.personalised);
    assert.equal(byKey.control.conversions, 0);
    assert.deepEqual(
      results.periods.map((p: Json) => p.reason),
      ['start', 'weights_changed'],
    );
    // Every unit came in the first period: the second, at 10/90, has none to mismatch.
    assert.equal(results.srm.mismatch, false);
    assert.equal(results.decision, 'winner');
    assert.equal(results.winner, 'personalised');

    // Reading results writes nothing: not the first winner, not the tenant's change sequence.
    const sequence = await changeCount(db, `site:${t.tenantId}`);
    const before = await db.selectFrom('experiments').selectAll().where('id', '=', experimentId).executeTakeFirstOrThrow();
    for (let i = 0; i < 3; i++) assert.equal(ok(await t.req('GET', `${base}/results`)).firstWinnerAt, null);
    assert.equal(await changeCount(db, `site:${t.tenantId}`), sequence, 'the change sequence stands still');
    assert.deepEqual(await db.selectFrom('experiments').selectAll().where('id', '=', experimentId).executeTakeFirstOrThrow(), before);
  });
});

function databaseUrl(): string {
  const database = t.app.config.database;
  return database.kind === 'sqlite' ? database.path : database.url;
}

/** A GET of a tenant page on another instance (a server process), as a visitor. */
function fetchSite(server: ServerProcess, hostname: string, path: string): Promise<string> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, headers: { host: hostname, 'user-agent': USER_AGENT } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`${res.statusCode}: ${body}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('two instances on the same database', () => {
  let other: ServerProcess;
  before(async () => {
    other = await startServer({ DATABASE_URL: databaseUrl() });
  });
  after(async () => {
    await other?.kill();
  });

  test('serving the same new units at the same moment, while the weights change, they agree', { timeout: START_MS + 120_000 }, async () => {
    const { page, people } = await personsOnPage(30);
    const experimentId = await startHoldout(page.pageId, 50, 50);
    const base = `/v0/pages/${page.pageId}/experiments/${experimentId}`;
    const flip = (control: number) =>
      t.req('PATCH', base, {
        arms: [
          { key: 'control', weight: control },
          { key: 'personalised', weight: 100 - control },
        ],
      });
    const served = await Promise.all(
      people.map(async (person, i) => {
        // Weights flip under the requests: 10/90 then 90/10 then back.
        if (i % 10 === 5) ok(await flip(i % 20 === 5 ? 10 : 90));
        const [here, there] = await Promise.all([
          visit(t, host, person.path, { remoteAddress: nextAddress(), headers: { 'user-agent': USER_AGENT } }),
          fetchSite(other, host, person.path),
        ]);
        assert.equal(here.statusCode, 200, here.body);
        return { person, here: viewClaims(hidden(here.body, 'token')).arm, there: viewClaims(hidden(there, 'token')).arm };
      }),
    );
    const stored = new Map(
      (await db.selectFrom('experiment_units').select(['unit', 'arm']).where('experiment_id', '=', experimentId).execute()).map((r) => [
        r.unit,
        r.arm,
      ]),
    );
    assert.equal(stored.size, 30);
    for (const { person, here, there } of served) {
      assert.equal(here, there, `both instances serve person ${person.personId} one arm`);
      assert.equal(stored.get(`person:${person.personId}`), here);
    }
  });

  test('each asking to store a different arm for the same new unit at once: both get the one stored first', async () => {
    const { page } = await personsOnPage(0);
    const experimentId = await startHoldout(page.pageId, 50, 50);
    // PostgreSQL: a second app with its own pool, so the two statements truly race. SQLite: one
    // process must not open a second app on the file (its writers would wait on each other while
    // blocking the event loop), and its writes are serialised anyway; the test above races a process.
    const second = onPostgres ? await startApp({ DATABASE_URL: databaseUrl() }) : undefined;
    try {
      const otherDb = (second?.app.db ?? db) as Kysely<Database>;
      for (let i = 0; i < 40; i++) {
        const unit = `v:race-${i}`;
        const [a, b] = await Promise.all([
          stickyArm(db, experimentId, unit, 'control'),
          stickyArm(otherDb, experimentId, unit, 'personalised'),
        ]);
        assert.equal(a, b, `unit ${unit}`);
        const row = await db
          .selectFrom('experiment_units')
          .select('arm')
          .where('experiment_id', '=', experimentId)
          .where('unit', '=', unit)
          .executeTakeFirstOrThrow();
        assert.equal(row.arm, a);
        // Asked again with yet another candidate, from either side: the stored arm.
        assert.equal(await stickyArm(otherDb, experimentId, unit, a === 'control' ? 'personalised' : 'control'), a);
      }
    } finally {
      await second?.app.close();
    }
  });
});
