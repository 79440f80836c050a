import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { isPostgres } from '../../src/db/adapter.js';
import { emitMany } from '../../src/events/index.js';
import { ok, startApp, type Json, type TestApp } from '../helpers.js';
import { pageWithAudiences } from './common.js';

// A regenerate writes its versions' events a statement per 200, not one each (events/outbox.ts
// `emitMany`), in transactions of 100 audiences. With the agent off, so nothing else writes
// between: 101 audiences give 202 events over two transactions, and each must be there once, whole,
// in the order a client's create and PATCH give them. A regenerate's transaction never holds more
// than one statement's 200, so the second test crosses statements with emitMany itself. The third
// holds the batches' order (the page's index: created_at, then id) to audiences created in one instant.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

async function allEvents(type: string): Promise<Json[]> {
  const events: Json[] = [];
  let cursor: string | null = null;
  do {
    const page: Json = ok(await t.req('GET', `/v0/events?type=${type}&limit=100${cursor ? `&cursor=${cursor}` : ''}`));
    events.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return events;
}

test('a regenerate of 101 audiences records each version created, then queued, once', async () => {
  const { page, audiences } = await pageWithAudiences(t, 101);
  assert.deepEqual(ok(await t.req('POST', `/v0/pages/${page.pageId}/regenerate`, {}), 202), { queued: 101, skipped: [] });

  const versions = new Map<string, Json>();
  for (const a of audiences) {
    const audience = ok(await t.req('GET', `/v0/pages/${page.pageId}/audiences/${a.audienceId}`));
    assert.equal(audience.latestVersion.status, 'queued');
    versions.set(audience.latestVersion.versionId, audience.latestVersion);
  }
  const created = (await allEvents('audience_version.created')).filter((e) => versions.has(e.payload.data.versionId));
  const changed = (await allEvents('audience_version.status_changed')).filter((e) => versions.has(e.payload.data.versionId));
  assert.equal(created.length, 101);
  assert.equal(changed.length, 101);
  assert.equal(new Set(created.map((e) => e.payload.data.versionId)).size, 101);
  for (const e of created) {
    assert.equal(e.payload.type, 'audience_version.created');
    assert.equal(e.payload.data.status, 'draft');
    assert.equal(e.payload.data.versionNumber, 2);
  }
  for (const e of changed) {
    assert.equal(e.payload.previousStatus, 'draft');
    assert.equal(e.payload.data.status, 'queued');
    assert.deepEqual(e.payload.data, versions.get(e.payload.data.versionId));
  }

  // The order the consumers (webhooks, alerts) read them in: each version's creation before its move.
  const positions = await sql<{ id: string; position: string | number }>`select id, position from events`.execute(t.app.db);
  const kept = new Map(positions.rows.map((r) => [r.id, Number(r.position)]));
  const at = (eventId: string) => {
    const position = kept.get(eventId);
    assert.ok(position !== undefined, `event ${eventId} has a position`);
    return position;
  };
  const createdAt = new Map(created.map((e) => [e.payload.data.versionId, at(e.eventId)]));
  const creationOf = (e: Json) => createdAt.get(e.payload.data.versionId) ?? Number.POSITIVE_INFINITY;
  for (const e of changed) assert.ok(at(e.eventId) >= creationOf(e));
  if (!isPostgres(t.app.db)) {
    // SQLite numbers every event apart (PostgreSQL's position is its transaction's id): the 202 and
    // one emitted after them, each its own and later than those before.
    const ours = [...created, ...changed].map((e) => at(e.eventId));
    assert.equal(new Set(ours).size, 202);
    for (const e of changed) assert.ok(at(e.eventId) > creationOf(e));
    ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, {}), 201);
    const [newest] = (await allEvents('audience.created')).slice(0, 1);
    const highest = Math.max(...ours);
    const again = await sql<{ position: string | number }>`select position from events where id = ${newest?.eventId}`.execute(t.app.db);
    assert.ok(Number(again.rows[0]?.position ?? 0) > highest);
  }
});

test('emitMany records 401 events over three statements, in order, each once', async () => {
  const marker = `emit-many-${Date.now()}`;
  const events = Array.from({ length: 401 }, (_, i) => ({
    tenantId: t.tenantId,
    type: 'audience.created' as const,
    data: { marker, i },
  }));
  await t.app.db.transaction().execute((trx) => emitMany(trx, events));
  const listed = (await allEvents('audience.created')).filter((e) => e.payload.data.marker === marker);
  assert.equal(listed.length, 401);
  assert.deepEqual(
    listed.map((e) => e.payload.data.i).sort((a: number, b: number) => a - b),
    [...Array(401).keys()],
  );
  const rows = await sql<{ id: string; position: string | number; payload: string }>`select id, position, payload from events`.execute(
    t.app.db,
  );
  const ours = rows.rows
    .map((r) => ({ position: Number(r.position), payload: JSON.parse(r.payload) }))
    .filter((r) => r.payload.data?.marker === marker)
    .sort((a, b) => a.payload.data.i - b.payload.data.i);
  for (let k = 1; k < ours.length; k++) {
    const [before, here] = [ours[k - 1]?.position ?? Number.NaN, ours[k]?.position ?? Number.NaN];
    // In order on both; apart on SQLite, where PostgreSQL's are one transaction's id.
    if (isPostgres(t.app.db)) assert.equal(here, before);
    else assert.ok(here > before, `event ${k} after event ${k - 1}`);
  }
});

test('audiences created in one instant are each queued once, across batches, archived ones left', async () => {
  const { page, audiences } = await pageWithAudiences(t, 230);
  // One instant for all, with microseconds on PostgreSQL (more than a JS date holds): the batches go
  // on from the last row of the one before by (created, id), and must neither repeat nor skip a tie.
  const instant = isPostgres(t.app.db) ? '2026-01-01T00:00:00.123456Z' : '2026-01-01T00:00:00.123Z';
  await sql`update audiences set created_at = ${instant} where page_id = ${page.pageId}`.execute(t.app.db);
  const archived = audiences.filter((_, i) => i % 50 === 7).map((a) => a.audienceId as string);
  for (const id of archived) ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences/${id}/archive`, {}));
  const live = audiences.length - archived.length;
  assert.deepEqual(ok(await t.req('POST', `/v0/pages/${page.pageId}/regenerate`, {}), 202), { queued: live, skipped: [] });
  for (const a of audiences) {
    const audience = ok(await t.req('GET', `/v0/pages/${page.pageId}/audiences/${a.audienceId}`));
    const expected = archived.includes(a.audienceId) ? 1 : 2;
    assert.equal(audience.latestVersion.versionNumber, expected, `audience ${a.audienceId}`);
  }
});
