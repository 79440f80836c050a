/**
 * The "Current figures" table that opens BENCHMARKS.md: every scenario, its target and the figure
 * of the latest complete run, written by the harness between the `current` markers.
 */
import type { Run, ScenarioResult } from './report.js';

const START = '<!-- current:start -->';
const END = '<!-- current:end -->';
/** Issue 50: at most 300 MB of peak RSS in every scenario of a full run. */
const RSS_BUDGET_MB = 300;
const RSS_BUDGET = RSS_BUDGET_MB * 1048576;

type Results = ReadonlyMap<string, ScenarioResult>;
interface Target {
  /** As the table states it, with the issue that set it. */
  text: string;
  /** Whether a run meets it (undefined: the run lacks what it compares with); absent for figures only reported. */
  met?: (row: ScenarioResult, all: Results, run: Run) => boolean | undefined;
}

const compared = (other: ScenarioResult | undefined, test: (other: ScenarioResult) => boolean) => (other ? test(other) : undefined);
const ratioAtLeast = (min: number) => (row: ScenarioResult) => (row.ratioToCeiling ?? 0) >= min;
const rpsAtLeast = (min: number) => (row: ScenarioResult) => row.rps >= min;
const searchTargets: Target[] = [
  { text: '≥ 1,000 req/s (issue 18)', met: rpsAtLeast(1000) },
  { text: 'p99 < 20 ms', met: (row) => row.p99 < 20 },
];

/** Targets by scenario, for SQLite at full scale. A scenario missing here has none: its figure is reported. */
export const TARGETS: Readonly<Record<string, Target[]>> = {
  ceiling: [{ text: 'reference: a bare `node:http` server' }],
  'get-person': [
    { text: '≥ 0.5 × ceiling', met: ratioAtLeast(0.5) },
    { text: '≥ 3 × peer-prism', met: (row, all) => compared(all.get('peer-prism'), (prism) => row.rps >= 3 * prism.rps) },
  ],
  'get-person-metrics': [
    {
      text: 'metrics cost get-person ≤ 5% of its throughput, 6 alternating rounds (issue 18)',
      met: (_row, _all, run) => (run.metricsCost ? run.metricsCost.throughput <= 0.05 : undefined),
    },
  ],
  'list-persons-deep': [
    {
      text: 'p50 ≤ 1.5 × list-pages-first p50',
      met: (row, all) => compared(all.get('list-pages-first'), (first) => row.p50 <= 1.5 * first.p50),
    },
  ],
  'search-audiences': searchTargets,
  'search-accounts': searchTargets,
  'search-page-links': searchTargets,
  'analytics-page-30d': [{ text: '≥ 500 req/s (issue 17)', met: rpsAtLeast(500) }],
  'analytics-overview': [{ text: '≥ 500 req/s (issue 17)', met: rpsAtLeast(500) }],
  'analytics-page-groupby-channel': [{ text: '≥ 200 req/s (issue 28)', met: rpsAtLeast(200) }],
  'analytics-site': [{ text: '≥ 200 req/s (issue 28)', met: rpsAtLeast(200) }],
  'funnel-results': [{ text: '≥ 200 req/s (issue 28)', met: rpsAtLeast(200) }],
  'pipeline-linear': [{ text: '≥ 200 req/s (issue 49)', met: rpsAtLeast(200) }],
  heatmap: [{ text: '≥ 200 req/s (issue 49)', met: rpsAtLeast(200) }],
  'create-person': [{ text: '≥ 0.2 × ceiling', met: ratioAtLeast(0.2) }],
  'serve-page': [{ text: '≥ 0.4 × ceiling (issue 15)', met: ratioAtLeast(0.4) }],
  'serve-page-304': [{ text: '≥ 0.5 × ceiling (issue 15)', met: ratioAtLeast(0.5) }],
  'serve-page-experiment': [
    {
      text: '≥ 0.9 × serve-page, 6 alternating rounds (issue 27)',
      met: (_row, _all, run) => (run.experimentRatio === undefined ? undefined : run.experimentRatio >= 0.9),
    },
    { text: 'p99.9 < 50 ms (issue 50)', met: (row) => row.p999 < 50 },
  ],
  'serve-page-segments': [
    {
      text: '≥ 0.9 × serve-page, 6 alternating rounds (issue 50)',
      met: (_row, _all, run) => (run.segmentsRatio === undefined ? undefined : run.segmentsRatio >= 0.9),
    },
    {
      text: 'statements per request ≤ 1.05 × serve-page (issue 39)',
      met: (row, all) =>
        compared(
          all.get('serve-page'),
          (page) =>
            row.statementsPerRequest == null ||
            page.statementsPerRequest == null ||
            row.statementsPerRequest <= 1.05 * page.statementsPerRequest,
        ),
    },
    { text: 'p99.9 < 50 ms (issue 50)', met: (row) => row.p999 < 50 },
  ],
  collect: [{ text: '≥ 0.15 × ceiling (issue 15)', met: ratioAtLeast(0.15) }],
  decide: [
    { text: '≥ 0.4 × ceiling (issue 48)', met: ratioAtLeast(0.4) },
    { text: 'p99 < 20 ms at 50 connections (issue 48)', met: (row) => row.p99 < 20 },
  ],
  'agent-template': [{ text: '≥ 500 versions/s (issue 16)', met: rpsAtLeast(500) }],
  'agent-get-person': [{ text: '> 0.25 × ceiling while the agent works (issue 16)', met: (row) => (row.ratioToCeiling ?? 0) > 0.25 }],
  'peer-prism': [{ text: 'reference: Prism mocking the OpenAPI document' }],
};

/** What the table's heading says of the run. */
export interface RunInfo {
  date: Date;
  machine: string;
  scale: string;
  durationSeconds: number;
  command: string;
}

const n = (v: number) => Math.round(v).toLocaleString('en-US');
const megabytes = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MB`;
const backendName = (backend: string) => (backend === 'sqlite' ? 'SQLite' : 'PostgreSQL');

function status(name: string, row: ScenarioResult, all: Results, run: Run): string {
  const verdict = { true: 'met', false: '**not met**', undefined: 'not measured' } as const;
  const parts: string[] = (TARGETS[name] ?? []).flatMap(({ met }) => (met ? [verdict[`${met(row, all, run)}`]] : []));
  // Prism is the peer, not the service: the budgets are the service's.
  if (name !== 'peer-prism') {
    if (row.peakRssBytes >= RSS_BUDGET) parts.push(`**RSS over ${RSS_BUDGET_MB} MB**`);
    if (row.errors + row.non2xx > 0) parts.push(`**${n(row.errors + row.non2xx)} errors**`);
  }
  const cost = name === 'get-person-metrics' ? run.metricsCost : undefined;
  const percent = (v: number) => `${(v * 100).toFixed(1)}%`;
  const ratios: Record<string, number | undefined> = {
    'serve-page-experiment': run.experimentRatio,
    'serve-page-segments': run.segmentsRatio,
  };
  const ratio = ratios[name];
  const note = cost
    ? ` (${percent(cost.throughput)} less throughput, ${percent(cost.cpu)} more CPU a request)`
    : ratio !== undefined
      ? ` (${ratio.toFixed(2)} × serve-page)`
      : '';
  return parts.join('; ') + note;
}

/**
 * The section between the markers, from one run: `names` lists every scenario of the harness in
 * order, so one the run skipped still has its row. Targets are judged on the first run (SQLite when
 * it ran); a second backend adds its rates beside.
 */
export function currentSection(info: RunInfo, runs: Run[], names: string[]): string {
  const primary = runs.find((r) => r.backend === 'sqlite') ?? runs[0];
  const secondary = runs.find((r) => r !== primary);
  const byName = (run: Run | undefined): Results => new Map((run?.results ?? []).map((r) => [r.name, r]));
  const main = byName(primary);
  const other = byName(secondary);
  const scaleNote = info.scale === 'full' ? 'full scale' : `${info.scale} scale (the targets are set at full scale)`;
  const lines = [
    START,
    '## Current figures',
    '',
    `Written by the harness from one run: \`${info.command}\` on ${info.date.toISOString().slice(0, 10)}, ${info.machine}, ` +
      `${scaleNote}, ${info.durationSeconds} s per scenario. Targets are judged on ${backendName(primary?.backend ?? 'sqlite')}` +
      `; every scenario also has a budget of ${RSS_BUDGET_MB} MB of peak RSS (issue 50) and no errors. ` +
      '`agent-template` counts versions published a second.',
    '',
    `| scenario | target | req/s | × ceiling | p50 ms | p99 ms | peak RSS | status |${secondary ? ` ${backendName(secondary.backend)} req/s |` : ''}`,
    `|---|---|---:|---:|---:|---:|---:|---|${secondary ? '---:|' : ''}`,
  ];
  for (const name of names) {
    const target = (TARGETS[name] ?? []).map((t) => t.text).join('; ') || '–';
    const row = main.get(name);
    const cells =
      row && primary
        ? [
            n(row.rps),
            row.ratioToCeiling === null ? '–' : row.ratioToCeiling.toFixed(2),
            String(row.p50),
            String(row.p99),
            megabytes(row.peakRssBytes),
            status(name, row, main, primary),
          ]
        : ['–', '–', '–', '–', '–', 'not run'];
    const beside = secondary ? [other.has(name) ? n(other.get(name)!.rps) : '–'] : [];
    lines.push(`| ${name} | ${target} | ${[...cells, ...beside].join(' | ')} |`);
  }
  lines.push(END);
  return lines.join('\n');
}

/** `text` with its current-figures section replaced, or put right after the title the first time; the rest is kept as written. */
export function replaceCurrent(text: string, section: string): string {
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start !== -1 && end > start) return text.slice(0, start) + section + text.slice(end + END.length);
  const title = /^# .*\n/.exec(text);
  const at = title ? title[0].length : 0;
  return `${text.slice(0, at)}\n${section}\n\n${text.slice(at).replace(/^\n+/, '')}`;
}
