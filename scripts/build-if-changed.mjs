#!/usr/bin/env node
// Run by `npm start` first (prestart): `npm run build` (about 50 s here) only when its inputs
// changed since the last build it made, or when an output is missing, so a restart takes seconds.
// The inputs are read by content (a SHA-256 of every file), not by modification time, which a
// checkout or a copy changes without changing anything. A fresh clone has no stamp, so it builds;
// a build that fails leaves no stamp, so the next start builds again. `npm run build` always builds.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** What the build reads: sources, the build's own scripts and configuration, the locked dependencies. */
export const INPUTS = [
  'src',
  'console',
  'sdk/src',
  'scripts/build-if-changed.mjs',
  'scripts/build-console.ts',
  'scripts/openapi.ts',
  'package.json',
  'package-lock.json',
  'sdk/package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'sdk/tsconfig.json',
  'console/tsconfig.json',
];
/** Written by the build from the inputs (the SDK's types): never an input itself. */
const GENERATED = new Set(['sdk/src/schema.ts']);
/** What `npm start` and the console need from the build. */
export const OUTPUTS = ['dist/server.js', 'dist/www/console/index.html', 'sdk/dist/index.js'];
export const STAMP = 'dist/.build-stamp';

function filesUnder(root, relative) {
  const full = path.join(root, relative);
  if (!fs.existsSync(full)) return [];
  if (!fs.statSync(full).isDirectory()) return [relative];
  return fs
    .readdirSync(full, { withFileTypes: true })
    .flatMap((entry) => filesUnder(root, path.posix.join(relative, entry.name)))
    .filter((file) => !GENERATED.has(file));
}

/** One hash of every input file's path and bytes. */
export function inputsHash(root = ROOT) {
  const hash = createHash('sha256');
  const files = [...new Set(INPUTS.flatMap((input) => filesUnder(root, input)))].sort();
  for (const file of files) {
    hash.update(`${file}\0`);
    hash.update(fs.readFileSync(path.join(root, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

function upToDate(root, hash) {
  const stamp = path.join(root, STAMP);
  if (!fs.existsSync(stamp) || fs.readFileSync(stamp, 'utf8').trim() !== hash) return false;
  return OUTPUTS.every((output) => fs.existsSync(path.join(root, output)));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const hash = inputsHash();
  if (upToDate(ROOT, hash)) {
    console.error('build: up to date (no input changed since the last build), skipped; `npm run build` forces one');
    process.exit(0);
  }
  fs.rmSync(path.join(ROOT, STAMP), { force: true });
  const build = spawnSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit', shell: process.platform === 'win32' });
  if (build.status !== 0) process.exit(build.status ?? 1);
  // The hash of the inputs as they were when the build began: an edit made during it builds again.
  fs.mkdirSync(path.dirname(path.join(ROOT, STAMP)), { recursive: true });
  fs.writeFileSync(path.join(ROOT, STAMP), `${hash}\n`);
}
