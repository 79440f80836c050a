// Runs once (scripts/test.mjs): it reaches no database.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { ownerViolations, sources } from '../../scripts/check-owners.js';
import { OWNERS, READ_MODELS, TABLE_GENERIC } from '../../src/db/owners.js';

// One table, one owner (issues 37 and 47): `npm run lint` (scripts/check-owners.ts) names every write
// of a table outside its owner's folder, and every read outside it and the declared read models.
// These plant writes and reads into made-up files and read the real src/.

const SRC = path.resolve('src');

test('a write outside its owner is named, with its file, line and owner', () => {
  const text = [
    "import type { Transaction } from 'kysely';",
    'export async function bump(trx: Transaction<Database>) {',
    "  await trx.insertInto('audiences').values(row).execute();",
    "  await trx.updateTable('page_links').set({ deleted_at: null }).execute();",
    "  await trx.deleteFrom('pages').execute();",
    "  await trx.replaceInto('events').values(row).execute();",
    '}',
  ].join('\n');
  assert.deepEqual(ownerViolations([{ path: 'pages/x.ts', text }]), [
    "pages/x.ts:3: insertInto('audiences'), but audiences is owned by src/audiences/",
    "pages/x.ts:4: updateTable('page_links'), but page_links is owned by src/page-links/",
    "pages/x.ts:6: replaceInto('events'), but events is owned by src/events/",
  ]);
});

test('a lease or a delivery queue claimed or released on another owner’s table is a write too', () => {
  const text = [
    "claimLeases(db, { table: 'audience_versions', lease: 'agent_lease_until', limit: 1 });",
    "releaseLease(db, { table: 'events', lease: 'fan_lease_until', id, until });",
    "claimLeases(db, { table: 'webhook_deliveries', lease: 'lease_until', limit: 1 });",
    "claimDueAttempts(db, { table: 'alert_messages', limit: 1, until, now });",
    "releaseAttempt(db, { table: 'alert_messages', id, until }, {});",
    "claimDueAttempts(db, { table: 'webhook_deliveries', limit: 1, until, now });",
  ].join('\n');
  assert.deepEqual(ownerViolations([{ path: 'webhooks/x.ts', text }]), [
    "webhooks/x.ts:1: claimLeases('audience_versions'), but audience_versions is owned by src/audiences/",
    "webhooks/x.ts:2: releaseLease('events'), but events is owned by src/events/",
    "webhooks/x.ts:4: claimDueAttempts('alert_messages'), but alert_messages is owned by src/alerts/",
    "webhooks/x.ts:5: releaseAttempt('alert_messages'), but alert_messages is owned by src/alerts/",
  ]);
});

test('a write to a table the map does not list is named, even in a folder that owns others', () => {
  const text = "await trx.insertInto('audience_notes').values(row).execute();";
  assert.deepEqual(ownerViolations([{ path: 'audiences/notes.ts', text }]), [
    "audiences/notes.ts:1: insertInto('audience_notes') names a table src/db/owners.ts does not list",
  ]);
});

test("writes and reads inside the owner's folder pass, nested folders included", () => {
  const files = [
    {
      path: 'audiences/versions.ts',
      text: "await trx.updateTable('audience_versions').set(x).execute(); await trx.selectFrom('audiences').execute();",
    },
    { path: 'site/forms/leads.ts', text: "await trx.insertInto('form_claims').values(x).execute();" },
    { path: 'db/search/sqlite.ts', text: "await trx.deleteFrom('search_disorder').execute();" },
    { path: 'db/slugs.ts', text: "await trx.deleteFrom('slug_counters').execute();" },
  ];
  assert.deepEqual(ownerViolations(files), []);
  // A folder whose name only starts like the owner's is another folder.
  assert.equal(ownerViolations([{ path: 'pages-old/x.ts', text: "trx.deleteFrom('pages')" }]).length, 1);
  assert.equal(ownerViolations([{ path: 'site/formsx.ts', text: "trx.deleteFrom('form_claims')" }]).length, 1);
});

test('a read outside its owner and the read models is named: selectFrom, every join, subqueries too', () => {
  const text = [
    "await db.selectFrom('pages').selectAll().execute();",
    "await db.selectFrom('page_links as l').innerJoin('audiences as a', 'a.id', 'l.target_audience_id').execute();",
    "await db.selectFrom('page_links').leftJoin('tenant_domains', 'tenant_domains.id', 'page_links.tenant_domain_id').execute();",
    "await db.selectFrom(['persons', 'page_links']).execute();",
    "await db.selectFrom('page_links').where('id', 'in', (eb) => eb.selectFrom('accounts').select('id')).execute();",
  ].join('\n');
  assert.deepEqual(ownerViolations([{ path: 'page-links/x.ts', text }]), [
    "page-links/x.ts:1: selectFrom('pages'), but pages is owned by src/pages/ (a read outside the read models)",
    "page-links/x.ts:2: innerJoin('audiences'), but audiences is owned by src/audiences/ (a read outside the read models)",
    "page-links/x.ts:3: leftJoin('tenant_domains'), but tenant_domains is owned by src/domains/ (a read outside the read models)",
    "page-links/x.ts:4: selectFrom('persons'), but persons is owned by src/persons/ (a read outside the read models)",
    "page-links/x.ts:5: selectFrom('accounts'), but accounts is owned by src/accounts/ (a read outside the read models)",
  ]);
});

test('raw sql names its reads and writes: from, join, insert into, update, delete from', () => {
  // `@{...}` stands for a template's `${...}` (written out, it would be a string's).
  const text = [
    'await sql`select c.value from change_counters c join "page_links" l on l.id = @{id}`.execute(db);',
    'await sql`insert into audiences (id) values (@{id})`.execute(db);',
    'await sql`update pages set name = @{name} where id = @{id}`.execute(db);',
    'await sql`delete from events where id = @{id}`.execute(db);',
    "await sql`select * from @{sql.table('persons')}`.execute(db);",
    "await sql.raw('select 1 from accounts').execute(db);",
    // A CTE, an alias and the owner's own table are not another owner's.
    'await sql`with e as (select 1) select * from e join tenant_domains d on true`.execute(db);',
  ]
    .join('\n')
    .replaceAll('@{', '${');
  assert.deepEqual(ownerViolations([{ path: 'domains/x.ts', text }]), [
    "domains/x.ts:1: sql 'from change_counters', but change_counters is owned by src/db/ (a read outside the read models)",
    "domains/x.ts:1: sql 'join page_links', but page_links is owned by src/page-links/ (a read outside the read models)",
    "domains/x.ts:2: sql 'insert into audiences', but audiences is owned by src/audiences/",
    "domains/x.ts:3: sql 'update pages', but pages is owned by src/pages/",
    "domains/x.ts:4: sql 'delete from events', but events is owned by src/events/",
    "domains/x.ts:5: sql.table('persons'), but persons is owned by src/persons/ (a read outside the read models)",
    "domains/x.ts:6: sql 'from accounts', but accounts is owned by src/accounts/ (a read outside the read models)",
  ]);
});

test('a table held in a variable is followed through its type, and one that cannot be followed fails', () => {
  const text = [
    "const TABLES = { person: 'persons', page: 'pages' } as const;",
    "export const f = (db: any, kind: 'person' | 'page', name: string, own: 'deals') => [",
    '  db.selectFrom(TABLES[kind]),',
    '  db.deleteFrom(name),',
    '  db.updateTable(own),',
    "  db.selectFrom(db.selectFrom('deals').as('d')),",
    '];',
  ].join('\n');
  assert.deepEqual(ownerViolations([{ path: 'deals/x.ts', text }]), [
    "deals/x.ts:3: selectFrom('persons'), but persons is owned by src/persons/ (a read outside the read models)",
    "deals/x.ts:3: selectFrom('pages'), but pages is owned by src/pages/ (a read outside the read models)",
    'deals/x.ts:4: deleteFrom(name) names its table in a variable the lint cannot follow',
  ]);
});

test("a queue's release names its table in the held row's type: followed, and another owner's fails", () => {
  const text = [
    "import { heldAttempt, releaseAttempt } from '../events/queue.js';",
    'export const f = (db: any, row: { id: string; lease_until: string | null }, held: { table: string; id: string; until: string }) => {',
    "  const mine = heldAttempt('alert_messages', row);",
    "  const theirs = heldAttempt('webhook_deliveries', row);",
    '  if (mine && theirs) return [releaseAttempt(db, mine), releaseAttempt(db, theirs), releaseAttempt(db, held as never)];',
    '};',
  ].join('\n');
  assert.deepEqual(ownerViolations([{ path: 'alerts/x.ts', text }]), [
    "alerts/x.ts:5: releaseAttempt('webhook_deliveries'), but webhook_deliveries is owned by src/webhooks/",
    'alerts/x.ts:5: releaseAttempt(held as never) names its table in a variable the lint cannot follow',
  ]);
});

test('a declared read model reads across owners, but writes only its own tables', () => {
  const text =
    "await db.selectFrom('deals').innerJoin('persons', 'persons.id', 'deals.id').execute(); await db.deleteFrom('persons').execute();";
  assert.deepEqual(ownerViolations([{ path: 'deals/touches.ts', text }]), [
    "deals/touches.ts:1: deleteFrom('persons'), but persons is owned by src/persons/",
  ]);
  assert.equal(ownerViolations([{ path: 'deals/other.ts', text }]).length, 2);
});

test('the real src/ writes and reads every table only from its owner and the read models', () => {
  const files = sources(SRC);
  assert.ok(files.length > 100, 'the whole tree was read');
  assert.deepEqual(ownerViolations(files), []);
});

test('every owner and every read model names a folder or file that exists', () => {
  for (const [table, owner] of Object.entries(OWNERS)) {
    assert.ok(existsSync(path.join(SRC, owner)) && statSync(path.join(SRC, owner)).isDirectory(), `${table}: src/${owner}/ is a folder`);
  }
  for (const place of [...Object.keys(READ_MODELS), ...Object.keys(TABLE_GENERIC)]) {
    assert.ok(existsSync(path.join(SRC, place)), `declared src/${place} exists`);
  }
});

test('npm run lint:owners fails on a planted write, cross-area read and raw-SQL write, and passes without them', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'owners-'));
  try {
    mkdirSync(path.join(root, 'src', 'pages'), { recursive: true });
    const planted = path.join(root, 'src', 'pages', 'x.ts');
    writeFileSync(planted, "export const f = (trx: any) => trx.insertInto('audiences').values({}).execute();\n");
    const run = () =>
      spawnSync(process.execPath, [path.resolve('node_modules/tsx/dist/cli.mjs'), path.resolve('scripts/check-owners.ts')], {
        cwd: root,
        encoding: 'utf8',
      });
    const failed = run();
    assert.equal(failed.status, 1, failed.stderr);
    assert.match(failed.stderr, /pages\/x\.ts:1: insertInto\('audiences'\), but audiences is owned by src\/audiences\//);
    writeFileSync(planted, "export const f = (trx: any) => trx.selectFrom('audiences').execute();\n");
    const read = run();
    assert.equal(read.status, 1, read.stderr);
    assert.match(read.stderr, /pages\/x\.ts:1: selectFrom\('audiences'\), but audiences is owned by src\/audiences\/ \(a read outside/);
    writeFileSync(
      planted,
      "import { sql } from 'kysely';\nexport const f = (db: any) => sql`update audiences set name = 'x'`.execute(db);\n",
    );
    const raw = run();
    assert.equal(raw.status, 1, raw.stderr);
    assert.match(raw.stderr, /pages\/x\.ts:2: sql 'update audiences', but audiences is owned by src\/audiences\//);
    writeFileSync(planted, "export const f = (trx: any) => trx.selectFrom('pages').execute();\n");
    const passed = run();
    assert.equal(passed.status, 0, passed.stderr);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
