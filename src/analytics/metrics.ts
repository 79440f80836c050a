import type { RollupSums } from '../db/types.js';
import type { Metrics } from './schemas.js';

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

/** A stored session's contribution, for the parts of a range that the rollups cannot serve. */
export interface RawSession {
  time_spent_seconds: number;
  max_scroll_depth_percentage: number;
  total_clicks_count: number;
  questions_asked_count: number;
  is_bounce: number;
  has_form_submit: number;
  has_conversion: number;
  first_of_day_page: number;
  first_of_day_site: number;
}

export function addSession(into: RollupSums, s: RawSession): void {
  into.visits += 1;
  into.bounces += Number(s.is_bounce);
  into.time_spent_seconds += Number(s.time_spent_seconds);
  into.scroll_sum += Number(s.max_scroll_depth_percentage);
  into.clicks += Number(s.total_clicks_count);
  into.questions += Number(s.questions_asked_count);
  into.form_submits += Number(s.has_form_submit);
  into.conversions += Number(s.has_conversion);
  into.visitors += Number(s.first_of_day_page);
  into.site_visitors += Number(s.first_of_day_site);
}

/**
 * Sums of fractional values (seconds, percentages) gather binary rounding noise as rows are added
 * and updated; answers carry six decimals, far below anything measured.
 */
const round = (x: number): number => (Math.abs(x) >= 1e9 ? x : Math.round(x * 1e6) / 1e6 || 0);
const ratio = (part: number, visits: number): number | null => (visits > 0 ? round(part / visits) : null);

/**
 * The metrics of a set of sessions. Averages and rates are null without a visit (docs/analytics.md).
 * `scope` says whose distinct visitors count: a page's (a visitor of two pages counts on each) or
 * the whole site's (once).
 */
export function toMetrics(s: RollupSums, scope: 'page' | 'site' = 'page'): Metrics {
  return {
    visits: s.visits,
    visitors: scope === 'site' ? s.site_visitors : s.visitors,
    bounces: s.bounces,
    bounceRate: ratio(s.bounces, s.visits),
    timeSpentSeconds: s.visits > 0 ? round(s.time_spent_seconds) : 0,
    avgTimeSpentSeconds: ratio(s.time_spent_seconds, s.visits),
    avgMaxScrollDepthPercentage: ratio(s.scroll_sum, s.visits),
    clicks: s.clicks,
    questionsAsked: s.questions,
    formSubmits: s.form_submits,
    conversions: s.conversions,
    conversionRate: ratio(s.conversions, s.visits),
  };
}
