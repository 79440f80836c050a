import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

// The benchmark itself is `npm run bench`, not part of the suite; this only proves the harness
// starts, drives a scenario and writes its result file.
test('the benchmark harness runs one short scenario and writes a result file', { timeout: 60_000 }, () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'pam-bench-smoke-'));
  try {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--only', 'ceiling', '--duration', '1', '--scale', 'tiny', '--out', out], {
      cwd: path.resolve(import.meta.dirname, '..'),
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stderr);
    const files = fs.readdirSync(out);
    assert.equal(files.length, 1);
    assert.match(files[0]!, /^\d{4}-\d{2}-\d{2}-sqlite-tiny\.json$/);
    const report = JSON.parse(fs.readFileSync(path.join(out, files[0]!), 'utf8'));
    assert.equal(report.results.length, 1);
    const [ceiling] = report.results;
    assert.equal(ceiling.name, 'ceiling');
    assert.ok(ceiling.rps > 100, `ceiling answered only ${ceiling.rps} req/s`);
    assert.equal(ceiling.errors + ceiling.non2xx, 0);
    assert.ok(ceiling.peakRssBytes > 0);
    assert.match(run.stdout, /ceiling/);
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});
