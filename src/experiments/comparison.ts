import { alwaysValidPValue, confidenceSequence } from './sequential.js';

/** Units and those of them that converted, in one arm during one period. */
export interface Cell {
  units: number;
  conversions: number;
}

export interface Comparison {
  /** The arm's rate minus the baseline's, averaged over periods (weighted by their information). */
  difference: number;
  /** Always-valid p-value, already multiplied by the number of comparisons (capped at 1). */
  pValue: number;
  lift: { estimate: number; low: number; high: number } | null;
  /** The baseline's and the arm's rates, stratified with the same weights as `difference`. */
  baseRate: number;
  armRate: number;
}

/**
 * The mixing distribution's standard deviation, relative to the pooled rate: the relative lifts
 * worth detecting are of this order (docs/experiments.md, "Method").
 */
export const MIXING_RELATIVE_SD = 0.1;

/**
 * The variance of a rate estimated from `cell`, with the rate taken as (x + 1) / (n + 2): never zero
 * (a period with no conversion yet would otherwise claim certainty), and larger than the plain
 * estimate's when the rate is near 0 or 1, so the intervals err wide.
 */
function rateVariance({ units, conversions }: Cell): number {
  const rate = (conversions + 1) / (units + 2);
  return (rate * (1 - rate)) / units;
}

/**
 * A period's information about the difference of two rates: n_A n_B / (n_A + n_B), the inverse of
 * the difference's variance up to the rates (Cochran–Mantel–Haenszel). Weighting by the period's
 * size instead lets a period with 1 unit in one arm dominate the variance, so that adding data
 * destroys the evidence (issue 45). It depends on the units only, never on the conversions, so
 * each period's difference stays unbiased and so does their weighted mean.
 */
export function periodInformation(base: Cell, other: Cell): number {
  return base.units > 0 && other.units > 0 ? (base.units * other.units) / (base.units + other.units) : 0;
}

/**
 * Compares `arm` with `baseline`, period by period: each period's difference of rates is weighted by
 * its information, so traffic moved between arms over time (a bandit, a PATCH of the weights) cannot
 * make one arm look better by having run more in a better period (Simpson's paradox), and a period
 * where one arm had a handful of units counts for what those units know. Periods where either arm
 * had no unit say nothing about the difference and are left out.
 * `comparisons` is the number of non-baseline arms: the level is split evenly between them (Bonferroni).
 */
export function compareArms(baseline: Cell[], arm: Cell[], comparisons: number, alpha: number): Comparison | null {
  const periods = baseline.flatMap((base, index) => {
    const other = arm[index];
    const information = other ? periodInformation(base, other) : 0;
    return other && information > 0 ? [{ base, other, information }] : [];
  });
  const totalInformation = periods.reduce((sum, { information }) => sum + information, 0);
  if (totalInformation === 0) return null;

  let baseRate = 0;
  let armRate = 0;
  let differenceVariance = 0;
  let baseVariance = 0;
  let pooledConversions = 0;
  let pooledUnits = 0;
  for (const { base, other, information } of periods) {
    const share = information / totalInformation;
    const baseVar = rateVariance(base);
    baseRate += share * (base.conversions / base.units);
    armRate += share * (other.conversions / other.units);
    differenceVariance += share * share * (baseVar + rateVariance(other));
    baseVariance += share * share * baseVar;
    pooledConversions += base.conversions + other.conversions;
    pooledUnits += base.units + other.units;
  }
  const difference = armRate - baseRate;
  const pooledRate = (pooledConversions + 1) / (pooledUnits + 2);
  const tau2 = (MIXING_RELATIVE_SD * pooledRate) ** 2;
  const level = alpha / comparisons;
  const pValue = Math.min(1, comparisons * alwaysValidPValue(difference, differenceVariance, tau2));
  const differenceBounds = confidenceSequence(difference, differenceVariance, tau2, level);
  const baseBounds = confidenceSequence(baseRate, baseVariance, tau2, level);
  return { difference, pValue, lift: relativeLift(difference, differenceBounds, baseRate, baseBounds), baseRate, armRate };
}

/**
 * The difference's interval divided by the baseline rate's own interval, taking whichever end of it
 * makes each bound the most extreme: wider than dividing by the estimated rate, and its sign always
 * agrees with the p-value. Unknown (null) while the baseline's interval still reaches zero.
 */
function relativeLift(
  difference: number,
  bounds: { low: number; high: number },
  baseRate: number,
  base: { low: number; high: number },
): Comparison['lift'] {
  if (!(base.low > 0) || !Number.isFinite(bounds.low) || !Number.isFinite(bounds.high)) return null;
  const low = bounds.low >= 0 ? bounds.low / base.high : bounds.low / base.low;
  const high = bounds.high >= 0 ? bounds.high / base.low : bounds.high / base.high;
  // A rate cannot fall below zero, so neither can the arm's: its lift is at least -100%.
  return { estimate: difference / baseRate, low: Math.max(-1, low), high: Math.max(-1, high) };
}
