#!/usr/bin/env node
// Runs the whole suite with node's test runner: every test/**/*.test.ts file, in parallel processes.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

const only = process.argv.slice(2);
const files = only.length > 0 ? only : testFiles('test').sort();
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=4', ...files],
  { stdio: 'inherit', env: process.env },
);
process.exit(result.status ?? 1);
