import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import * as migration from '../../src/db/migrations/2026_12_04_0051_page_itself_sessions.js';
import { USER_AGENT } from '../browser.js';
import { ok, onPostgres, startApp, type Json, type TestApp } from '../helpers.js';
import { audienceOf, fallbackHost, link, publishedPage, unique, visit } from '../site/serve-helpers.js';

// Migration 0051 (issue 45): the page itself's sessions name no audience, so the reference from
// audience_sessions to audiences goes, on both databases, keeping every row, column and index.

let t: TestApp;
let host: string;
before(async () => {
  t = await startApp();
  host = await fallbackHost(t);
});
after(async () => {
  await t.close();
});

const db = () => t.app.db as unknown as Kysely<unknown>;

async function indexes(): Promise<string[]> {
  const { rows } = onPostgres
    ? await sql<{
        name: string;
      }>`select indexname as name from pg_indexes where tablename = 'audience_sessions' and schemaname = current_schema()`.execute(db())
    : await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'audience_sessions'`.execute(db());
  return rows.map((r) => r.name).sort();
}

async function sessions(): Promise<Json[]> {
  const { rows } = await sql<Json>`select * from audience_sessions order by id`.execute(db());
  return rows;
}

/** A visit of `path`, reported once: a session (and its path occurrence in visit_events). */
async function visited(path: string) {
  const html = (await visit(t, host, path)).body;
  const token = /\{"token":"([^"]+)"\}/.exec(html)?.[1] ?? '';
  const res = await visit(t, host, '/_pam/collect', {
    method: 'POST',
    headers: { 'content-type': 'text/plain', 'user-agent': USER_AGENT },
    payload: JSON.stringify({ token, visibleMs: 1000, scroll: 10, clicks: 1, questions: 0, conversions: 0 }),
  });
  assert.equal(res.statusCode, 204);
}

test("down keeps audiences' sessions and restores the reference; up drops it again, keeping rows and indexes", async () => {
  const page = await publishedPage(t);
  const audience = await audienceOf(t, page.pageId);
  const own = unique('own');
  const itself = unique('itself');
  await link(t, own, { targetType: 'audience', audienceId: audience.audienceId });
  await link(t, itself, { targetType: 'page', pageId: page.pageId });
  await visited(own);
  await visited(itself);
  const before = await sessions();
  assert.deepEqual(before.map((s) => s.audience_id).sort(), [audience.audienceId, page.pageId].sort());
  const kept = await indexes();

  await migration.down(db());
  const down = await sessions();
  assert.deepEqual(
    down.map((s) => s.audience_id),
    [audience.audienceId],
    "the page itself's session cannot stay under the reference",
  );
  await assert.rejects(
    sql`update audience_sessions set audience_id = ${page.pageId}`.execute(db()),
    /foreign key/i,
    'the reference holds again',
  );
  assert.deepEqual(await indexes(), kept);

  await migration.up(db());
  assert.deepEqual(await sessions(), down, 'every row and column kept');
  assert.deepEqual(await indexes(), kept, 'every index kept');
  await visited(itself);
  const again = ok(await t.req('GET', `/v0/pages/${page.pageId}/audience_sessions?audienceId=${page.pageId}`)).items as Json[];
  assert.equal(again.length, 1, 'the page itself is recorded again');
});
