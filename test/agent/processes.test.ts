import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type Db } from '../../src/db/connection.js';
import { freshDatabase, onPostgres, type Json, type TestDatabase } from '../helpers.js';
import { startServer, type ServerProcess } from '../server-process.js';
import { sleep, until } from './common.js';
import { contentFor, fakeOpenAi } from './fake-openai.js';

// The agent across processes: several servers on one database generate every version exactly
// once, and a server killed (kill -9) in the middle of generations leaves versions that another
// start takes over once their leases end, each published exactly once. Generations are made slow
// enough to kill mid-way by the openai generator against a slow fake server of this test's own.

const KEY = 'agent-process-bootstrap-key-0123456789';
const SECRET = 'sk-process-secret-0123456789abcdef';

interface Setup {
  database: TestDatabase;
  db: Db;
  fake: Awaited<ReturnType<typeof fakeOpenAi>>;
  env: Record<string, string>;
}

async function setup(delayMs: number, failFirstOf = new Set<number>(), timeoutMs = 1000): Promise<Setup> {
  const database = await freshDatabase();
  const tried = new Set<string>();
  let n = 0;
  const fake = await fakeOpenAi((request) => {
    const id = request.inputs?.version?.versionId as string;
    const first = !tried.has(id);
    tried.add(id);
    // A few first tries fail, so failures are logged (and the key must not be).
    if (first && failFirstOf.has(n++)) return { status: 500 };
    return { delayMs, content: contentFor(request.inputs?.audience?.name ?? 'you') };
  });
  const env = {
    DATABASE_URL: database.url,
    BOOTSTRAP_API_KEY: KEY,
    AGENT_GENERATOR: 'openai',
    AGENT_OPENAI_BASE_URL: fake.url,
    AGENT_OPENAI_API_KEY: SECRET,
    AGENT_OPENAI_MODEL: 'slow-model',
    AGENT_TIMEOUT_MS: String(timeoutMs),
    AGENT_CONCURRENCY: '4',
    LOG_LEVEL: 'info',
  };
  return { database, db: openDatabase(loadConfig({ DATABASE_URL: database.url }).database), fake, env };
}

async function call(server: ServerProcess, method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'x-api-key': KEY, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

async function pageOf(server: ServerProcess, audiences: number): Promise<string> {
  const page = await call(server, 'POST', '/v0/pages', { name: 'P', title: 'T', pageContext: 'c', pageType: 'inbound' });
  assert.equal(page.status, 201);
  for (let i = 0; i < audiences; i++) {
    assert.equal((await call(server, 'POST', `/v0/pages/${page.body.pageId}/audiences`, {})).status, 201);
  }
  return page.body.pageId;
}

/** The regenerated versions (number 2) by status. */
async function counts(db: Db): Promise<Record<string, number>> {
  const rows = await db.kysely.selectFrom('audience_versions').select(['status']).where('version_number', '=', 2).execute();
  const out: Record<string, number> = {};
  for (const r of rows) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}

/** Every regenerated version is published, and has exactly one event of each move. */
async function assertPublishedOnce(db: Db, expected: number): Promise<void> {
  const versions = await db.kysely.selectFrom('audience_versions').selectAll().where('version_number', '=', 2).execute();
  assert.equal(versions.length, expected);
  for (const v of versions) assert.equal(v.status, 'published', `${v.id} is ${v.status}`);
  const events = await db.kysely.selectFrom('events').select('payload').where('type', '=', 'audience_version.status_changed').execute();
  const moves = new Map<string, string[]>();
  for (const e of events) {
    const p = JSON.parse(e.payload);
    if (Number(p.data.versionNumber) !== 2) continue;
    moves.set(p.data.versionId, [...(moves.get(p.data.versionId) ?? []), p.data.status]);
  }
  for (const v of versions) assert.deepEqual(moves.get(v.id)?.sort(), ['processing', 'published', 'queued'], `the moves of ${v.id}`);
  const v1 = await db.kysely.selectFrom('audience_versions').select('status').where('version_number', '=', 1).execute();
  assert.ok(v1.every((r) => r.status === 'archived'));
}

describe('kill -9 in the middle of generations, then a restart', () => {
  let s: Setup;
  before(async () => {
    s = await setup(150, new Set([0, 1, 2]));
  });
  after(async () => {
    await s.db.close();
    await s.fake.close();
    await s.database.drop();
  });

  test('every version ends published exactly once; none stays processing longer than its lease', async () => {
    const first = await startServer(s.env);
    const pageId = await pageOf(first, 40);
    const res = await call(first, 'POST', `/v0/pages/${pageId}/regenerate`, {});
    assert.deepEqual([res.status, res.body], [202, { queued: 40, skipped: [] }]);
    await until('some versions published', async () => ((await counts(s.db)).published ?? 0) >= 6);
    assert.equal(await first.kill('SIGKILL'), 'SIGKILL');
    const killedAt = Date.now();
    const left = await counts(s.db);
    assert.ok((left.processing ?? 0) > 0, `versions were being generated at the kill: ${JSON.stringify(left)}`);
    assert.ok((left.published ?? 0) < 40);

    const second = await startServer(s.env);
    try {
      // The lease is the timeout (1 s) and a 10 s margin: the killed process's versions are taken over after it.
      await until('all 40 published', async () => ((await counts(s.db)).published ?? 0) === 40, 60_000);
      assert.ok(Date.now() - killedAt < 40_000);
      await assertPublishedOnce(s.db, 40);
      const logs = first.stdout() + first.stderr() + second.stdout() + second.stderr();
      assert.match(logs, /generation failed/, 'failures were logged');
      assert.ok(!logs.includes(SECRET), 'the API key is never logged');
    } finally {
      await second.kill();
    }
  });
});

describe('two server processes on one PostgreSQL database', { skip: !onPostgres && 'PostgreSQL only' }, () => {
  let s: Setup;
  let a: ServerProcess;
  let b: ServerProcess;
  before(async () => {
    // A generation that times out is rightly tried again, and would count twice here: under a loaded
    // machine's pauses a 10 ms answer may take a second, so this test allows ten.
    s = await setup(10, new Set(), 10_000);
    [a, b] = await Promise.all([startServer(s.env), startServer(s.env)]);
  });
  after(async () => {
    await Promise.all([a?.kill(), b?.kill()]);
    await s.db.close();
    await s.fake.close();
    await s.database.drop();
  });

  test('generate every version exactly once', async () => {
    const [pageA, pageB] = [await pageOf(a, 80), await pageOf(b, 80)];
    const [ra, rb] = await Promise.all([
      call(a, 'POST', `/v0/pages/${pageA}/regenerate`, {}),
      call(b, 'POST', `/v0/pages/${pageB}/regenerate`, {}),
    ]);
    assert.deepEqual(
      [ra.body, rb.body],
      [
        { queued: 80, skipped: [] },
        { queued: 80, skipped: [] },
      ],
    );
    await until('all 160 published', async () => ((await counts(s.db)).published ?? 0) === 160, 60_000);
    await sleep(200);
    await assertPublishedOnce(s.db, 160);
    const perVersion = new Map<string, number>();
    for (const r of s.fake.requests) perVersion.set(r.inputs.version.versionId, (perVersion.get(r.inputs.version.versionId) ?? 0) + 1);
    assert.equal(perVersion.size, 160);
    for (const [id, n] of perVersion) assert.equal(n, 1, `${id} was generated ${n} times`);
  });
});
