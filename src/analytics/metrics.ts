import type { RollupSums } from '../db/types.js';
import type { Metrics } from './schemas.js';

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
