import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Kysely } from 'kysely';
import * as versionOrigin from '../../src/db/migrations/2026_11_30_0030_version_origin.js';
import { ok, startApp, type Json, type TestApp } from '../helpers.js';

// Migration 0030 gives the versions written before it an origin from their history. The history is
// made through HTTP (the agent off: a client moves a version through queued as the agent would),
// then the migration is undone and applied again, and each version's inferred origin is read back.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const content = (headline: string) => ({ headline, subheadline: 'S', sections: [] });

test('backfill: content never queued is written, unless the agent published it before; the rest generated', async () => {
  const page = ok(await t.req('POST', '/v0/pages', { name: 'Backfill', title: 'T', pageContext: 'c', pageType: 'inbound' }), 201);
  const audience = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, {}), 201);
  const base = `/v0/pages/${page.pageId}/audiences/${audience.audienceId}/versions`;
  const create = async (body: Json) => ok(await t.req('POST', base, body), 201);
  const move = async (v: Json, ...statuses: string[]) => {
    for (const status of statuses) ok(await t.req('PATCH', `${base}/${v.versionId}`, { status }));
  };
  // 2: a person's words, published directly.
  await move(await create({ content: content('By hand') }), 'published');
  // 3: through the queue and published, as the agent does.
  await move(await create({ content: content('By the agent') }), 'queued', 'processing', 'published');
  // 4: a draft made without content: it carries the agent's words over.
  await create({});
  // 5: a person's words, queued then cancelled.
  const cancelled = await create({ content: content('Queued, then cancelled') });
  await move(cancelled, 'queued');
  ok(await t.req('POST', `${base}/${cancelled.versionId}/cancel`, {}));
  // 6: a draft a person wrote that repeats words of their own from version 2.
  await create({ content: content('By hand') });
  // 7: null content, chosen.
  await create({ content: null });

  const db = t.app.db as unknown as Kysely<unknown>;
  await versionOrigin.down(db);
  await versionOrigin.up(db);
  const rows = await t.app.db
    .selectFrom('audience_versions')
    .select(['version_number', 'origin'])
    .where('audience_id', '=', audience.audienceId)
    .orderBy('version_number')
    .execute();
  assert.deepEqual(
    rows.map((r) => [Number(r.version_number), r.origin]),
    [
      [1, 'generated'],
      [2, 'written'],
      [3, 'generated'],
      [4, 'generated'],
      [5, 'generated'],
      [6, 'written'],
      [7, 'generated'],
    ],
  );
  // The API reads them as the migration left them (newest first).
  const listed = ok(await t.req('GET', `${base}?limit=100`)).items;
  assert.deepEqual(
    listed.map((v: Json) => [v.versionNumber, v.origin]),
    rows.map((r) => [Number(r.version_number), r.origin]).reverse(),
  );
});
