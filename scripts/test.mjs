#!/usr/bin/env node
// Runs the whole suite with node's test runner, every test/**/*.test.ts file in parallel processes:
// first on SQLite, then on PostgreSQL when a server answers at TEST_DATABASE_URL
// (default postgres://postgres@127.0.0.1:5432/test). Under CI=true an unreachable PostgreSQL fails the run.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

const PG_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const inCi = process.env.CI === 'true';
/**
 * The longest file took 11 minutes in a loaded run here (multi-instance-freshness on PostgreSQL;
 * scripts/timing-reporter.mjs lists the slowest).
 */
const FILE_LIMIT_MS = 20 * 60_000;

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

/** Each pass's failed tests, one line each (scripts/failures-reporter.mjs), printed again at the very end. */
const failuresDir = mkdtempSync(path.join(os.tmpdir(), 'pam-test-'));
const failed = [];
const timings = [];

function run(label, env, files, concurrency = 4) {
  console.log(`\n# ${label}`);
  const failures = path.join(failuresDir, `${label}.txt`);
  const reporters = ['--test-reporter=tap', '--test-reporter-destination=stdout'];
  reporters.push('--test-reporter=./scripts/failures-reporter.mjs', `--test-reporter-destination=${failures}`);
  const timing = path.join(failuresDir, `${label}-timing.txt`);
  reporters.push('--test-reporter=./scripts/timing-reporter.mjs', `--test-reporter-destination=${timing}`);
  const started = Date.now();
  // A file that has not ended after FILE_LIMIT_MS fails on its own (the runner's timeout is per
  // file): one file that hangs must not hold the whole run until CI's limit.
  const limit = `--test-timeout=${FILE_LIMIT_MS}`;
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, limit, ...reporters, ...files],
    {
      stdio: 'inherit',
      env: { ...process.env, ...env },
    },
  );
  let lines = '';
  try {
    lines = readFileSync(failures, 'utf8').trim();
  } catch {
    // no file: the runner never started its reporters; its status says so
  }
  try {
    timings.push(`# ${label} pass: ${Math.round((Date.now() - started) / 1000)} s; ${readFileSync(timing, 'utf8').trim()}`);
  } catch {
    // no timings: the runner never started its reporters
  }
  if (result.status !== 0) failed.push(`# ${label} pass failed (exit ${result.status ?? result.signal})${lines ? `:\n${lines}` : ''}`);
  return result.status === 0;
}

/** Reachable, and ready for per-file schemas: pg_trgm is created once here, not raced by parallel files. */
async function preparePostgres() {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('create extension if not exists pg_trgm');
    return true;
  } catch (err) {
    console.log(`# PostgreSQL at ${PG_URL.replace(/\/\/[^@]*@/, '//***@')} is not usable: ${err.message}`);
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * A file that reaches no database (unit tests of pure functions, the linters' own tests) says so
 * with this line, and runs in the SQLite pass only: a second run on PostgreSQL would test the same
 * thing again. A file saying so while naming a way to a database fails the run.
 */
const ONCE = '// Runs once (scripts/test.mjs): it reaches no database.';
const REACHES_DATABASE = /\b(startApp|freshDatabase|twoHandles|startServer|consoleSuite|openDatabase|onPostgres|DATABASE_URL)\b/;

/**
 * The console's browser tests drive its views, whose every API call is tested on both databases by
 * the API's own tests: they run in the SQLite pass only (a browser is the suite's costliest part).
 * Browser tests of the visitor plane (serving, the snippet, measurement) run on both. Only a
 * browser test may say this.
 */
const CONSOLE_ONCE = '// Runs once (scripts/test.mjs): the console in a browser; its API is tested on both databases.';

function reachesDatabase(file) {
  const text = readFileSync(file, 'utf8');
  if (text.includes(CONSOLE_ONCE)) {
    if (!file.endsWith('.browser.test.ts')) throw new Error(`${file} is no browser test, yet says it is the console's`);
    return false;
  }
  if (!text.includes(ONCE)) return true;
  const way = REACHES_DATABASE.exec(text);
  if (way) throw new Error(`${file} says it reaches no database, yet names ${way[1]}`);
  return false;
}

const only = process.argv.slice(2);
const files = only.length > 0 ? only : testFiles('test').sort();
const postgresFiles = files.filter(reachesDatabase);

/**
 * A file that bounds how long this process holds its event loop says so with this line, and runs
 * after the others, by itself: beside three other files on two cores, its bound measured how long
 * the machine left the process waiting (session 52's CI run: 103 ms against 100; about 30 ms alone).
 */
const ALONE = '// Runs alone (scripts/test.mjs): it bounds how long the event loop is held.';
const alone = (file) => readFileSync(file, 'utf8').includes(ALONE);

/** One database's pass: the files together, then those that run alone, one at a time. */
function pass(label, env, list) {
  const together = list.filter((file) => !alone(file));
  const apart = list.filter(alone);
  let passed = together.length === 0 || run(label, env, together);
  if (apart.length > 0) passed = run(`${label}, alone`, env, apart, 1) && passed;
  return passed;
}

let ok = pass('SQLite', { TEST_DATABASE_URL: '', TEST_PASS: 'sqlite' }, files);
if (postgresFiles.length === 0) {
  console.log('# PostgreSQL pass: no file reaches a database');
} else if (await preparePostgres()) {
  ok = pass('PostgreSQL', { TEST_DATABASE_URL: PG_URL, TEST_PASS: 'postgresql' }, postgresFiles) && ok;
} else if (inCi) {
  console.log('# CI=true: the PostgreSQL pass is required');
  ok = false;
} else {
  console.log('# PostgreSQL pass skipped');
}
for (const summary of timings) console.log(`\n${summary}`);
for (const summary of failed) console.log(`\n${summary}`);
process.exit(ok ? 0 : 1);
