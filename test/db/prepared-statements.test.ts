import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.js';
import { freshDatabase, ok, onPostgres, startApp, type TestApp, type TestDatabase } from '../helpers.js';

// Issue 31: named prepared statements on the hot paths, behind DATABASE_PREPARED_STATEMENTS.

test('DATABASE_PREPARED_STATEMENTS takes auto, on or off, and names itself when it is anything else', () => {
  const url = 'postgres://u@127.0.0.1:5432/db';
  for (const value of ['auto', 'on', 'off', 'ON']) {
    const config = loadConfig({ DATABASE_URL: url, DATABASE_PREPARED_STATEMENTS: value }).database;
    assert.equal(config.kind === 'postgres' && config.preparedStatements, value.toLowerCase());
  }
  const unset = loadConfig({ DATABASE_URL: url }).database;
  assert.equal(unset.kind === 'postgres' && unset.preparedStatements, 'auto');
  for (const value of ['yes', '1', 'transaction', ' ']) {
    if (value.trim() === '') continue;
    assert.throws(() => loadConfig({ DATABASE_URL: url, DATABASE_PREPARED_STATEMENTS: value }), /DATABASE_PREPARED_STATEMENTS/);
  }
});

describe('named statements on PostgreSQL', { skip: !onPostgres && 'PostgreSQL only' }, () => {
  const apps: TestApp[] = [];
  const databases: TestDatabase[] = [];
  after(async () => {
    for (const app of apps) await app.close();
    for (const database of databases) await database.drop();
  });

  /** An app whose pool holds one connection: what the app's own queries see is that connection's state. */
  const oneConnection = async (env: Record<string, string>, urlOf = (url: string) => url) => {
    const database = await freshDatabase();
    databases.push(database);
    const t = await startApp({ DATABASE_URL: urlOf(database.url), DATABASE_POOL_SIZE: '1', ...env });
    apps.push(t);
    return t;
  };
  const namedHere = async (t: TestApp) =>
    (await sql<{ name: string }>`select name from pg_prepared_statements`.execute(t.app.db)).rows
      .map((r) => r.name)
      .filter((name) => name.startsWith('pam_'));
  const person = async (t: TestApp) => ok(await t.req('POST', '/v0/persons', { name: 'Prepared Person' }), 201);

  test('on: the key lookup and reading a person by id are named statements, prepared once', async () => {
    const t = await oneConnection({ DATABASE_PREPARED_STATEMENTS: 'on' });
    const created = await person(t);
    for (let i = 0; i < 3; i++) ok(await t.req('GET', `/v0/persons/${created.personId}`));
    const names = await namedHere(t);
    assert.ok(names.length >= 2, `named: ${names.join(', ')}`);
    assert.equal(new Set(names).size, names.length);
  });

  test('off, and auto with a pooler in the connection string: nothing is named', async () => {
    const pooled = (url: string) => `${url}${url.includes('?') ? '&' : '?'}pgbouncer=true`;
    for (const [setting, urlOf] of [
      ['off', undefined],
      ['auto', pooled],
    ] as const) {
      const t = await oneConnection({ DATABASE_PREPARED_STATEMENTS: setting }, urlOf);
      const created = await person(t);
      ok(await t.req('GET', `/v0/persons/${created.personId}`));
      assert.deepEqual(await namedHere(t), []);
    }
  });

  test('a table changed under a prepared statement: prepared again, the request answered', async () => {
    const t = await oneConnection({ DATABASE_PREPARED_STATEMENTS: 'on' });
    const created = await person(t);
    ok(await t.req('GET', `/v0/persons/${created.personId}`));
    await sql`alter table persons add column prepared_probe integer`.execute(t.app.db);
    try {
      // "cached plan must not change result type" underneath: never an error here.
      for (let i = 0; i < 2; i++) assert.equal(ok(await t.req('GET', `/v0/persons/${created.personId}`)).personId, created.personId);
    } finally {
      await sql`alter table persons drop column prepared_probe`.execute(t.app.db);
    }
    assert.equal(ok(await t.req('GET', `/v0/persons/${created.personId}`)).personId, created.personId);
  });

  test('auto: a statement the server connection does not know (as behind a transaction-mode pooler) turns names off, and is answered', async () => {
    const t = await oneConnection({ DATABASE_PREPARED_STATEMENTS: 'auto' });
    const created = await person(t);
    ok(await t.req('GET', `/v0/persons/${created.personId}`));
    assert.ok((await namedHere(t)).length > 0);
    // What a pooler does: the next transaction lands on a server connection without the statement.
    await sql`deallocate all`.execute(t.app.db);
    for (let i = 0; i < 3; i++) assert.equal(ok(await t.req('GET', `/v0/persons/${created.personId}`)).personId, created.personId);
    assert.deepEqual(await namedHere(t), []);
  });
});
