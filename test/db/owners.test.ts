import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { ownerViolations, sources } from '../../scripts/check-owners.js';
import { OWNERS, READ_MODELS } from '../../src/db/owners.js';

// One table, one owner (issue 37): `npm run lint` (scripts/check-owners.ts) names every write of a
// table outside its owner's folder. These plant writes into made-up files and read the real src/.

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

test('a lease claimed or released on another owner’s table is a write too', () => {
  const text = [
    "claimLeases(db, { table: 'audience_versions', lease: 'agent_lease_until', limit: 1 });",
    "releaseLease(db, { table: 'events', lease: 'fan_lease_until', id, until });",
    "claimLeases(db, { table: 'webhook_deliveries', lease: 'lease_until', limit: 1 });",
  ].join('\n');
  assert.deepEqual(ownerViolations([{ path: 'webhooks/x.ts', text }]), [
    "webhooks/x.ts:1: claimLeases('audience_versions'), but audience_versions is owned by src/audiences/",
    "webhooks/x.ts:2: releaseLease('events'), but events is owned by src/events/",
  ]);
});

test('a write to a table the map does not list is named, even in a folder that owns others', () => {
  const text = "await trx.insertInto('audience_notes').values(row).execute();";
  assert.deepEqual(ownerViolations([{ path: 'audiences/notes.ts', text }]), [
    "audiences/notes.ts:1: insertInto('audience_notes') names a table src/db/owners.ts does not list",
  ]);
});

test("writes inside the owner's folder pass, nested folders and reads of others included", () => {
  const files = [
    {
      path: 'audiences/versions.ts',
      text: "await trx.updateTable('audience_versions').set(x).execute(); await trx.selectFrom('pages').execute();",
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

test('the real src/ writes every table only from its owner', () => {
  const files = sources(SRC);
  assert.ok(files.length > 100, 'the whole tree was read');
  assert.deepEqual(ownerViolations(files), []);
});

test('every owner and every read model names a folder or file that exists', () => {
  for (const [table, owner] of Object.entries(OWNERS)) {
    assert.ok(existsSync(path.join(SRC, owner)) && statSync(path.join(SRC, owner)).isDirectory(), `${table}: src/${owner}/ is a folder`);
  }
  for (const place of Object.keys(READ_MODELS)) assert.ok(existsSync(path.join(SRC, place)), `read model src/${place} exists`);
});

test('npm run lint:owners fails on a planted write and passes without it', () => {
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
    const passed = run();
    assert.equal(passed.status, 0, passed.stderr);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
