#!/usr/bin/env node
// Migrations are frozen: what a migration did to a database must not change when live code
// changes later, so a migration may import packages and src/db/ only. Fails naming every import
// of a project module outside src/db/. The imports are read by TypeScript's own pre-processor.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const MIGRATIONS = path.resolve('src/db/migrations');
const ALLOWED = path.resolve('src/db') + path.sep;

/** Why `specifier` (imported by `file`) is refused, or undefined when it is allowed. */
function refusal(file, specifier) {
  // A package (kysely) or a built-in (node:...): not project code that changes under a migration.
  if (!specifier.startsWith('.') && !path.isAbsolute(specifier)) {
    return specifier.startsWith('#') ? 'a subpath import may lead anywhere in the project' : undefined;
  }
  const target = path.resolve(path.dirname(file), specifier);
  return target.startsWith(ALLOWED) ? undefined : `resolves to ${path.relative(process.cwd(), target)}, outside src/db/`;
}

const failures = [];
for (const name of readdirSync(MIGRATIONS).sort()) {
  if (!/\.[cm]?[jt]s$/.test(name)) continue;
  const file = path.join(MIGRATIONS, name);
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  for (const { fileName: specifier } of importedFiles) {
    const why = refusal(file, specifier);
    if (why) failures.push(`${path.relative(process.cwd(), file)}: imports '${specifier}' (${why})`);
  }
}

if (failures.length > 0) {
  console.error(`Migrations may import packages and src/db/ only (migrations are frozen):\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
