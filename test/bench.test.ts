import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { markdownSection, replaceSection, type ScenarioResult } from '../bench/report.js';

// The benchmark itself is `npm run bench`, not part of the suite; this only proves the harness
// starts, drives a scenario and writes its result file.
test('the benchmark harness runs one short scenario and writes a result file', { timeout: 60_000 }, () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'pam-bench-smoke-'));
  try {
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'bench/run.ts', '--only', 'ceiling', '--duration', '1', '--scale', 'tiny', '--out', out],
      {
        cwd: path.resolve(import.meta.dirname, '..'),
        encoding: 'utf8',
      },
    );
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

test("a run replaces only its own scale's section of BENCHMARKS.md, and appends it the first time", () => {
  const row = (name: string, rps: number, ratio: number | null): ScenarioResult => ({
    name,
    rps,
    ratioToCeiling: ratio,
    requests: rps * 10,
    p50: 1,
    p99: 4,
    p999: 9,
    errors: 0,
    non2xx: 0,
    peakRssBytes: 150 * 1048576,
  });
  const section = (scale: string, rps: number) =>
    markdownSection({
      argv: ['--scale', scale],
      startedAt: new Date('2026-11-22T10:00:00Z'),
      minutes: 9.6,
      machine: 'Test CPU, 2 cores',
      scale,
      runs: [{ backend: 'sqlite', results: [row('ceiling', 50_000, 1), row('get-person', rps, rps / 50_000)] }],
    });
  const full = section('full', 30_000);
  assert.match(full, /^<!-- bench:full:start -->\n## Latest full-scale run/);
  assert.match(full, /Command: `npm run bench -- --scale full` on 2026-11-22, taking 9\.6 min\. Machine: Test CPU, 2 cores\./);
  assert.match(full, /\| get-person \| 30,000 \| 0\.60 \| 1 \| 4 \| 9 \| 0 \| 150 MB \|/);
  assert.match(full, /<!-- bench:full:end -->$/);

  const written = replaceSection('# Benchmarks\n\nIntro.\n', 'full', full);
  assert.equal(written, `# Benchmarks\n\nIntro.\n\n${full}\n`);
  const withSmall = replaceSection(`${written}\n## Targets\nkept\n`, 'small', section('small', 20_000));
  const again = replaceSection(withSmall, 'full', section('full', 31_000));
  assert.match(again, /\| get-person \| 31,000 \|/);
  assert.doesNotMatch(again, /\| get-person \| 30,000 \|/);
  assert.match(again, /\| get-person \| 20,000 \|/, 'the small section is untouched');
  assert.match(again, /^# Benchmarks\n\nIntro\.\n\n<!-- bench:full:start -->/);
  assert.match(again, /## Targets\nkept\n/);
  assert.equal(again.split('<!-- bench:full:start -->').length, 2, 'one full section');
});
