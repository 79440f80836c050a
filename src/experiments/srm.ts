import { createRequire } from 'node:module';
import type Gammaln from '@stdlib/math-base-special-gammaln';

// Required on first use, not imported: @stdlib's packages are about 500 modules, half a second
// of CPU at every start of the service, the CLI and each test process, most of which never use it.
const require = createRequire(import.meta.url);
let loaded: typeof Gammaln | undefined;
const logGamma = (): typeof Gammaln => (loaded ??= require('@stdlib/math-base-special-gammaln') as typeof Gammaln);

/**
 * Below this p-value the split of units is called a mismatch: rare by chance, so a sign of a bug.
 * The p-value is anytime-valid (below), so this bounds the chance of a false alarm over every look
 * at once, however many: 0.1%.
 */
export const SRM_THRESHOLD = 0.001;

/**
 * The Dirichlet prior's concentration around the weights (its pseudo-units). The alternative
 * spreads each arm's share by about sqrt(share (1 - share) / 101), 5 points on a 50/50 split: a
 * gross imbalance (150 against 50) is flagged at once, and a split off by a point or two once tens
 * of thousands of units show it. A concentration of 1,000 missed 150 against 50 (p = 0.017).
 */
export const SRM_CONCENTRATION = 100;

export interface SrmResult {
  pValue: number | null;
  mismatch: boolean;
}

/** One period's units per arm and the weights they were assigned under. */
export interface SrmPeriod {
  observed: number[];
  weights: number[];
}

/**
 * Sample ratio mismatch, read at any look: the sequential SRM test of Lindon and Malek (2022). Under
 * the weights, the units of a period are a multinomial sample; against a Dirichlet-multinomial
 * alternative centred on the weights, the Bayes factor is a nonnegative martingale with mean 1
 * under no mismatch, and the product over periods (each period's units drawn under its own
 * weights) is one too. By Ville's inequality it ever exceeds 1/alpha with chance at most alpha,
 * so `pValue = min(1, 1 / BF)` may be read after every new unit and the threshold still holds for
 * all looks together. Null while there is nothing to test (no unit, or no period with two arms able
 * to receive any); units in an arm weighted 0 are a mismatch at once (p = 0).
 */
export function sampleRatioMismatch(periods: SrmPeriod[]): SrmResult {
  let logFactor = 0;
  let tested = false;
  for (const { observed, weights } of periods) {
    const total = observed.reduce((sum, units) => sum + units, 0);
    const weightSum = weights.reduce((sum, weight) => sum + weight, 0);
    if (total === 0) continue;
    const cells: { units: number; share: number }[] = [];
    for (const [index, units] of observed.entries()) {
      const weight = weights[index] ?? 0;
      // Units in an arm that was promised none: no chance explains that.
      if (weight <= 0 && units > 0) return { pValue: 0, mismatch: true };
      if (weight > 0) cells.push({ units, share: weight / weightSum });
    }
    if (cells.length < 2) continue;
    tested = true;
    logFactor += logBayesFactor(cells, total);
  }
  if (!tested) return { pValue: null, mismatch: false };
  const pValue = Math.min(1, Math.exp(-logFactor));
  return { pValue, mismatch: pValue < SRM_THRESHOLD };
}

/**
 * log of the Dirichlet-multinomial marginal likelihood of the counts over their multinomial
 * likelihood under the shares (the multinomial coefficient cancels), with log-gamma from @stdlib.
 */
function logBayesFactor(cells: { units: number; share: number }[], total: number): number {
  const gammaln = logGamma();
  let value = gammaln(SRM_CONCENTRATION) - gammaln(SRM_CONCENTRATION + total);
  for (const { units, share } of cells) {
    const prior = SRM_CONCENTRATION * share;
    value += gammaln(prior + units) - gammaln(prior) - units * Math.log(share);
  }
  return value;
}
