/** What a run reports on stdout; bench/current.ts writes its table into BENCHMARKS.md. */
import type { LoadResult } from './load.js';

export interface ScenarioResult extends LoadResult {
  name: string;
  peakRssBytes: number;
  ratioToCeiling: number | null;
  /**
   * Statements the service ran a request, from its own query counter (db_query_duration_seconds'
   * counts at /metrics): counted on the metered process over a warmed pass of the same requests.
   */
  statementsPerRequest?: number | null;
  /** The answering process's CPU time (user and system, seconds) over the measured load, a request. */
  cpuPerRequest?: number;
}
export interface Run {
  backend: string;
  results: ScenarioResult[];
  /** What metrics on cost get-person, as fractions: the medians of the alternating rounds. */
  metricsCost?: { throughput: number; cpu: number };
  /** serve-page with holdouts running over without, as a fraction: the medians of the alternating rounds. */
  experimentRatio?: number;
  /** serve-page-segments over serve-page, as a fraction: the medians of their alternating rounds. */
  segmentsRatio?: number;
}

const pad = (v: string, n: number) => v.padStart(n);
const ratio = (r: ScenarioResult) => (r.ratioToCeiling === null ? '-' : r.ratioToCeiling.toFixed(2));
const megabytes = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MB`;

export const HEADER = `${'backend'.padEnd(9)}${'scenario'.padEnd(22)}${pad('req/s', 9)}${pad('x ceiling', 10)}${pad('p50 ms', 8)}${pad('p99 ms', 8)}${pad('p99.9 ms', 10)}${pad('errors', 8)}${pad('peak RSS', 10)}${pad('stmt/req', 10)}`;
export function formatRow(backend: string, r: ScenarioResult): string {
  return `${backend.padEnd(9)}${r.name.padEnd(22)}${pad(r.rps.toFixed(0), 9)}${pad(ratio(r), 10)}${pad(String(r.p50), 8)}${pad(String(r.p99), 8)}${pad(String(r.p999), 10)}${pad(String(r.errors + r.non2xx), 8)}${pad(megabytes(r.peakRssBytes), 10)}${pad(r.statementsPerRequest == null ? '-' : r.statementsPerRequest.toFixed(2), 10)}`;
}
