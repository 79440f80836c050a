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

/**
 * The collector's PostgreSQL function and its helpers are no migration's since issue 47: they live in
 * src/visits/collect.sql.ts, applied at start when its hash changes (src/visits/collect-function.ts),
 * the one mechanism besides the migrations that changes the schema. The migrations that made their
 * earlier versions stay as they ran.
 */
const COLLECT_FUNCTION = /\bfunction\s+pam_(collect|json_object|instant|note_change)\b/i;
const MADE_COLLECT_FUNCTION = new Set([
  '2026_11_28_0028_collect_function.ts',
  '2026_11_29_0029_end_due_follows.ts',
  '2026_11_30_0033_goal_limits.ts',
  '2026_12_02_0043_visit_gpc.ts',
  '2026_12_04_0045_channel_groups.ts',
]);

const failures = [];
for (const name of readdirSync(MIGRATIONS).sort()) {
  if (!/\.[cm]?[jt]s$/.test(name)) continue;
  const file = path.join(MIGRATIONS, name);
  const text = readFileSync(file, 'utf8');
  if (!MADE_COLLECT_FUNCTION.has(name) && COLLECT_FUNCTION.test(text)) {
    failures.push(`${path.relative(process.cwd(), file)}: defines pam_collect or a helper of it; change src/visits/collect.sql.ts instead`);
  }
  const { importedFiles } = ts.preProcessFile(text, true, true);
  for (const { fileName: specifier } of importedFiles) {
    const why = refusal(file, specifier);
    if (why) failures.push(`${path.relative(process.cwd(), file)}: imports '${specifier}' (${why})`);
  }
}

if (failures.length > 0) {
  console.error(
    `Migrations may import packages and src/db/ only (migrations are frozen), and leave pam_collect to src/visits/:\n  ${failures.join('\n  ')}`,
  );
  process.exit(1);
}
