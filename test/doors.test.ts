// Runs once (scripts/test.mjs): it reaches no database.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { doorViolations } from '../scripts/check-doors.js';
import { sources } from '../scripts/check-owners.js';

// Each area is entered by its front door (issue 47): `npm run lint` (scripts/check-doors.ts) names
// every import of another area's inner file. These plant imports into made-up files and read the real src/.

const SRC = path.resolve('src');

test('an import, a re-export, an import() or an import type of another area’s inner file is named', () => {
  const text = [
    "import { findAudience } from '../audiences/repository.js';",
    "export { runServe } from '../site/serve/run.js';",
    "const files = await import('../assets/files.js');",
    "type Lead = import('../leads/schemas.js').Lead;",
  ].join('\n');
  assert.deepEqual(doorViolations([{ path: 'pages/x.ts', text }]), [
    'pages/x.ts:1: imports src/audiences/repository.ts, inside src/audiences/: import it from src/audiences/index.ts (export it there if it is missing)',
    'pages/x.ts:2: imports src/site/serve/run.ts, inside src/site/: import it from src/site/index.ts (export it there if it is missing)',
    'pages/x.ts:3: imports src/assets/files.ts, inside src/assets/: import it from src/assets/index.ts (export it there if it is missing)',
    'pages/x.ts:4: imports src/leads/schemas.ts, inside src/leads/: import it from src/leads/index.ts (export it there if it is missing)',
  ]);
  // From a top-level file (app.ts) too: it is no area, and no door of its own lets it in.
  assert.equal(doorViolations([{ path: 'app.ts', text: "import { pageRoutes } from './pages/routes.js';" }]).length, 1);
});

test('a front door, the shared floors, top-level files, packages and an area’s own files pass', () => {
  const text = [
    "import { findAudience } from '../audiences/index.js';",
    "import type { Database } from '../db/types.js';",
    "import { notFound } from '../http/errors.js';",
    "import { newId } from '../ids.js';",
    "import { serveRoutes } from '../site/index.js';",
    "import { metadataOf } from './metadata.js';",
    "import { sql } from 'kysely';",
  ].join('\n');
  assert.deepEqual(doorViolations([{ path: 'pages/x.ts', text }]), []);
  // Deeper in one area, its other corners are its own.
  assert.deepEqual(doorViolations([{ path: 'site/serve/x.ts', text: "import { leadOf } from '../forms/leads.js';" }]), []);
});

test('the real src/ passes, and the lint fails once an inner import is planted in a copy of it', () => {
  assert.deepEqual(doorViolations(sources(SRC)), []);
  const copy = mkdtempSync(path.join(tmpdir(), 'pam-doors-'));
  try {
    cpSync(path.resolve('scripts'), path.join(copy, 'scripts'), { recursive: true });
    cpSync(SRC, path.join(copy, 'src'), { recursive: true });
    symlinkSync(path.resolve('node_modules'), path.join(copy, 'node_modules'));
    const lint = () =>
      spawnSync(process.execPath, ['--import', 'tsx', path.join(copy, 'scripts', 'check-doors.ts')], { cwd: copy, encoding: 'utf8' });
    assert.equal(lint().status, 0, lint().stderr);
    writeFileSync(path.join(copy, 'src', 'pages', 'planted.ts'), "export { findAudience } from '../audiences/repository.js';\n");
    const planted = lint();
    assert.equal(planted.status, 1);
    assert.match(planted.stderr, /pages\/planted\.ts:1: imports src\/audiences\/repository\.ts/);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
});
