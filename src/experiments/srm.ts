import chisquareCdf from '@stdlib/stats-base-dists-chisquare-cdf';

/** Below this p-value the split of units is called a mismatch: rare by chance, so a sign of a bug. */
export const SRM_THRESHOLD = 0.001;

export interface SrmResult {
  pValue: number | null;
  mismatch: boolean;
}

/**
 * Sample ratio mismatch: Pearson's chi-square goodness-of-fit of the units each arm got against the
 * units its weights promised. `expected` sums, over periods, each period's units split by that
 * period's weights, so a change of weights is not itself a mismatch. Null p-value while there is
 * nothing to test (no unit, or a single arm able to receive any).
 */
export function sampleRatioMismatch(observed: number[], expected: number[]): SrmResult {
  let statistic = 0;
  let cells = 0;
  for (const [index, seen] of observed.entries()) {
    const promised = expected[index] ?? 0;
    if (promised > 0) {
      statistic += (seen - promised) ** 2 / promised;
      cells++;
    } else if (seen > 0) {
      // Units in an arm that was promised none: no chance explains that.
      return { pValue: 0, mismatch: true };
    }
  }
  if (cells < 2) return { pValue: null, mismatch: false };
  const pValue = Math.max(0, 1 - chisquareCdf(statistic, cells - 1));
  return { pValue, mismatch: pValue < SRM_THRESHOLD };
}
