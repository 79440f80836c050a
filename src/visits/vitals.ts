// Field web vitals (issue 49): the histogram a page keeps per day and metric, and what it answers.
// The bucket rule is written again in SQL (collect-maps.sql.ts): test/visits/parity.test.ts holds them together.

export const VITALS = ['lcp', 'inp', 'cls', 'fcp', 'ttfb'] as const;
export type Vital = (typeof VITALS)[number];

/**
 * Google's thresholds (web.dev/vitals), in the stored unit (milliseconds; CLS in thousandths): a
 * value at most `good` is good, over `poor` is poor, between needs improvement.
 */
export const THRESHOLDS: Record<Vital, { good: number; poor: number }> = {
  lcp: { good: 2500, poor: 4000 },
  inp: { good: 200, poor: 500 },
  cls: { good: 100, poor: 250 },
  fcp: { good: 1800, poor: 3000 },
  ttfb: { good: 800, poor: 1800 },
};

/** A reported value as kept: below a millionth it is 0 (PostgreSQL refuses a subnormal number as input). */
export const keptValue = (value: number): number => (value < 1e-6 ? 0 : value);

const ceilTo = (u: number, step: number) => Math.ceil(u / step) * step;

/**
 * The bucket of a value: its upper bound in the stored unit, the value rounded to a whole unit first.
 * Times: 10 ms steps to 1 s, 50 ms to 5 s, 250 ms to 30 s, then seconds (an hour at most); CLS:
 * 0.01 to 1, then 0.1 (100 at most). Every threshold is a bucket's bound, so the shares are exact;
 * p75 is the bucket's upper bound, at most one step above the true value (≤ 5% above 200 ms).
 */
export function bucketOf(metric: Vital, value: number): number {
  const u = Math.floor(value * (metric === 'cls' ? 1000 : 1) + 0.5);
  if (u <= 0) return 0;
  if (metric === 'cls') return u <= 1000 ? ceilTo(u, 10) : Math.min(ceilTo(u, 100), 100_000);
  if (u <= 1000) return ceilTo(u, 10);
  if (u <= 5000) return ceilTo(u, 50);
  if (u <= 30_000) return ceilTo(u, 250);
  return Math.min(ceilTo(u, 1000), 3_600_000);
}

export interface VitalSummary {
  /** The 75th percentile: the upper bound of the bucket holding it (ms; CLS unitless). Null without visits. */
  p75: number | null;
  visits: number;
  good: number | null;
  needsImprovement: number | null;
  poor: number | null;
}

const share = (n: number, of: number) => (of > 0 ? Math.round((n / of) * 1e6) / 1e6 : null);

/** A metric's answer from its buckets' visits (bucket → visits). */
export function summarize(metric: Vital, buckets: ReadonlyMap<number, number>): VitalSummary {
  const sorted = [...buckets].filter(([, n]) => n > 0).sort(([a], [b]) => a - b);
  const visits = sorted.reduce((sum, [, n]) => sum + n, 0);
  const { good, poor } = THRESHOLDS[metric];
  let p75: number | null = null;
  let seen = 0;
  for (const [bucket, n] of sorted) {
    seen += n;
    if (seen >= 0.75 * visits) {
      p75 = metric === 'cls' ? bucket / 1000 : bucket;
      break;
    }
  }
  const count = (test: (b: number) => boolean) => sorted.filter(([b]) => test(b)).reduce((sum, [, n]) => sum + n, 0);
  return {
    p75,
    visits,
    good: share(
      count((b) => b <= good),
      visits,
    ),
    needsImprovement: share(
      count((b) => b > good && b <= poor),
      visits,
    ),
    poor: share(
      count((b) => b > poor),
      visits,
    ),
  };
}
