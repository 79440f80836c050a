/**
 * The sums a rollup row holds and the session columns they add up: written with a session
 * (rollups.ts, the collector's function) and read by the analytics (analytics/metrics.ts).
 */
import { sql } from 'kysely';
import type { SessionColumn } from '../db/session-columns.js';
import type { RollupSums } from '../db/types.js';

/** The sums every rollup row holds, in one order (the columns of `RollupSums`). */
export const SUM_COLUMNS = [
  'visits',
  'bounces',
  'time_spent_seconds',
  'scroll_sum',
  'clicks',
  'questions',
  'form_submits',
  'conversions',
  'visitors',
  'site_visitors',
] as const satisfies readonly (keyof RollupSums)[];

export const zeroSums = (): RollupSums => ({
  visits: 0,
  bounces: 0,
  time_spent_seconds: 0,
  scroll_sum: 0,
  clicks: 0,
  questions: 0,
  form_submits: 0,
  conversions: 0,
  visitors: 0,
  site_visitors: 0,
});

/** Adds `row`'s sums (numbers or numeric strings, as a driver returns aggregates) into `into`. */
export function addInto(into: RollupSums, row: Record<(typeof SUM_COLUMNS)[number], unknown>): void {
  for (const c of SUM_COLUMNS) into[c] += Number(row[c]);
}

type SumColumn = (typeof SUM_COLUMNS)[number];

/**
 * Each sum and the session column it adds up; `visits` counts the sessions themselves. The one
 * place the rollups, their rebuild and the reads of raw sessions learn it from.
 */
const SUM_SOURCES = {
  bounces: 'is_bounce',
  time_spent_seconds: 'time_spent_seconds',
  scroll_sum: 'max_scroll_depth_percentage',
  clicks: 'total_clicks_count',
  questions: 'questions_asked_count',
  form_submits: 'has_form_submit',
  conversions: 'has_conversion',
  visitors: 'first_of_day_page',
  site_visitors: 'first_of_day_site',
} as const satisfies Record<Exclude<SumColumn, 'visits'>, SessionColumn<'counts'> | SessionColumn<'firsts'>>;
export type SummedColumn = (typeof SUM_SOURCES)[keyof typeof SUM_SOURCES];
/** Each sum but `visits` with its session column, in `SUM_COLUMNS`' order (statements bind them by position). */
export const SOURCED_SUMS = SUM_COLUMNS.filter((c): c is Exclude<SumColumn, 'visits'> => c !== 'visits').map(
  (sum) => [sum, SUM_SOURCES[sum]] as const,
);

/** A stored session's contribution, for the parts of a range that the rollups cannot serve. */
export type RawSession = Record<SummedColumn, number>;

/** What one session adds to a set's sums (`sign` 1), or takes from them (-1). */
export function sessionSums(s: RawSession, sign: 1 | -1): RollupSums {
  const sums = zeroSums();
  sums.visits = sign;
  for (const [sum, column] of SOURCED_SUMS) sums[sum] = sign * Number(s[column]);
  return sums;
}

export function addSession(into: RollupSums, s: RawSession): void {
  into.visits += 1;
  for (const [sum, column] of SOURCED_SUMS) into[sum] += Number(s[column]);
}

/** `count(*) as visits, sum(is_bounce) as bounces, …`: the sums of a set of sessions, named as the rollups name them. */
export const SESSION_SUMS = sql.join([
  sql`count(*) as visits`,
  ...SOURCED_SUMS.map(([sum, column]) => sql`sum(${sql.ref(column)}) as ${sql.ref(sum)}`),
]);
