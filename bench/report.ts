/** What a run reports: its table on stdout, and its section of BENCHMARKS.md. */
import type { LoadResult } from './load.js';

export interface ScenarioResult extends LoadResult {
  name: string;
  peakRssBytes: number;
  ratioToCeiling: number | null;
}
export interface Run {
  backend: string;
  results: ScenarioResult[];
}

const pad = (v: string, n: number) => v.padStart(n);
const ratio = (r: ScenarioResult) => (r.ratioToCeiling === null ? '-' : r.ratioToCeiling.toFixed(2));
const megabytes = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MB`;

export const HEADER = `${'backend'.padEnd(9)}${'scenario'.padEnd(22)}${pad('req/s', 9)}${pad('x ceiling', 10)}${pad('p50 ms', 8)}${pad('p99 ms', 8)}${pad('p99.9 ms', 10)}${pad('errors', 8)}${pad('peak RSS', 10)}`;
export function formatRow(backend: string, r: ScenarioResult): string {
  return `${backend.padEnd(9)}${r.name.padEnd(22)}${pad(r.rps.toFixed(0), 9)}${pad(ratio(r), 10)}${pad(String(r.p50), 8)}${pad(String(r.p99), 8)}${pad(String(r.p999), 10)}${pad(String(r.errors + r.non2xx), 8)}${pad(megabytes(r.peakRssBytes), 10)}`;
}

// Each scale has its own section, so a quick small run never replaces the full-scale tables.
const markers = (scale: string) => ({ start: `<!-- bench:${scale}:start -->`, end: `<!-- bench:${scale}:end -->` });

/** The run as a section of BENCHMARKS.md: the command, the machine, and a table per backend. */
export function markdownSection(run: {
  argv: string[];
  startedAt: Date;
  minutes: number;
  machine: string;
  scale: string;
  runs: Run[];
}): string {
  const n = (v: number) => Math.round(v).toLocaleString('en-US');
  const command = `npm run bench${run.argv.length ? ` -- ${run.argv.join(' ')}` : ''}`;
  const lines = [
    markers(run.scale).start,
    `## Latest ${run.scale}-scale run (written by the harness)`,
    '',
    `Command: \`${command}\` on ${run.startedAt.toISOString().slice(0, 10)}, taking ${run.minutes.toFixed(1)} min. Machine: ${run.machine}.`,
  ];
  for (const { backend, results } of run.runs) {
    lines.push(
      '',
      `### ${backend === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`,
      '',
      '| scenario | req/s | × ceiling | p50 ms | p99 ms | p99.9 ms | errors | peak RSS |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const r of results) {
      lines.push(
        `| ${r.name} | ${n(r.rps)} | ${ratio(r)} | ${r.p50} | ${r.p99} | ${r.p999} | ${r.errors + r.non2xx} | ${megabytes(r.peakRssBytes)} |`,
      );
    }
  }
  lines.push(markers(run.scale).end);
  return lines.join('\n');
}

/** `text` with the section of `scale` replaced by `section` (appended the first time); the rest is kept as written. */
export function replaceSection(text: string, scale: string, section: string): string {
  const { start: startMark, end: endMark } = markers(scale);
  const start = text.indexOf(startMark);
  const end = text.indexOf(endMark);
  if (start === -1 || end < start) return `${text.trimEnd()}\n\n${section}\n`;
  return text.slice(0, start) + section + text.slice(end + endMark.length);
}
