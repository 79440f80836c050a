import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/connection.js';
import { migrateDatabase } from '../../src/db/migrate.js';
import { applyCollectFunction } from '../../src/visits/index.js';
import { onPostgres, TEST_DATABASE_URL } from '../helpers.js';

// Deployments sharing one PostgreSQL database in schemas of their own, where another one's
// schema is on this one's search_path (as `public` is by default): migrating and starting one
// must neither trip over the other's functions nor drop them. Seen in CI: migration 0045's
// `drop function pam_collect` was "not unique" once `public` held a pam_collect of its own.

const skip = !onPostgres && 'PostgreSQL only';
const schemas: string[] = [];

/** A new schema, and the URL of a connection whose search_path is it, then `behind`, then public. */
async function schema(behind?: string): Promise<{ name: string; url: string }> {
  const name = `shared_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  // Where scripts/test.mjs makes it, for a run of this file alone.
  await admin.query('create extension if not exists pg_trgm schema public');
  await admin.query(`create schema ${name}`);
  await admin.end();
  schemas.push(name);
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${[name, behind, 'public'].filter(Boolean).join(',')}`);
  return { name, url: url.toString() };
}

/** Migrates the schema of `url` and applies pam_collect as a start does; the handle stays open. */
async function start(url: string) {
  const config = loadConfig({ DATABASE_URL: url }).database;
  await migrateDatabase(config);
  const db = openDatabase(config);
  await applyCollectFunction(db.kysely);
  return db;
}

/** Each pam_collect of the schema, by its arguments. */
async function collectFunctions(url: string, name: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ args: string }>(
      `select pg_get_function_identity_arguments(p.oid) as args from pg_proc p
        where p.proname = 'pam_collect' and p.pronamespace = $1::regnamespace`,
      [name],
    );
    return rows.map((r) => r.args);
  } finally {
    await client.end();
  }
}

after(async () => {
  if (schemas.length === 0) return;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  for (const name of schemas) await admin.query(`drop schema ${name} cascade`);
  await admin.end();
});

test('a schema migrates and starts behind another deployment on its search_path, which keeps its functions', { skip }, async () => {
  const other = await schema();
  const otherDb = await start(other.url);
  const before = await collectFunctions(other.url, other.name);
  assert.equal(before.length, 1);

  const mine = await schema(other.name);
  const db = await start(mine.url);
  try {
    assert.deepEqual(await collectFunctions(mine.url, mine.name), before, 'this schema has the same one function');
    // A changed collect.sql is applied again: its drop of the earlier signature must not reach
    // the other schema, where that signature does not exist either.
    await sql`comment on function ${sql.id(mine.name, 'pam_collect')} is 'collect.sql sha256:an older text'`.execute(db.kysely);
    assert.equal(await applyCollectFunction(db.kysely), true);
    assert.deepEqual(await collectFunctions(other.url, other.name), before, "the other deployment's function is untouched");
  } finally {
    await db.close();
    await otherDb.close();
  }
});

test("applying pam_collect never drops another schema's earlier version of it", { skip }, async () => {
  // The other deployment stopped at the migrations' pam_collect (an earlier signature): it is
  // exactly what collect.sql.ts drops in its own schema before creating the new one.
  const other = await schema();
  await migrateDatabase(loadConfig({ DATABASE_URL: other.url }).database);
  const before = await collectFunctions(other.url, other.name);

  const mine = await schema(other.name);
  const db = await start(mine.url);
  try {
    await sql`comment on function ${sql.id(mine.name, 'pam_collect')} is 'collect.sql sha256:an older text'`.execute(db.kysely);
    assert.equal(await applyCollectFunction(db.kysely), true);
    assert.deepEqual(await collectFunctions(other.url, other.name), before);
    assert.notDeepEqual(await collectFunctions(mine.url, mine.name), before, 'this schema has the new signature');
  } finally {
    await db.close();
  }
});
