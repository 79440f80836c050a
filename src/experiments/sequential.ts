/**
 * Anytime-valid inference for a difference of conversion rates: the mixture sequential probability
 * ratio test (mSPRT) of Johari, Koomen, Pekelis and Walsh ("Always Valid Inference", 2022), with a
 * normal mixture N(0, tau^2) over the true difference and the normal approximation of the estimate
 * (its variance `variance`). The same likelihood ratio gives the p-value and, inverted, the
 * confidence sequence, so `pValue < alpha` exactly when the interval leaves out zero.
 * docs/experiments.md explains the choice of tau and the approximation.
 */

/** The mixture likelihood ratio against `difference = 0`, in logs (it overflows `exp` on large samples). */
function logLikelihoodRatio(estimate: number, variance: number, tau2: number): number {
  const spread = variance + tau2;
  return 0.5 * Math.log(variance / spread) + (tau2 * estimate * estimate) / (2 * variance * spread);
}

/**
 * The always-valid p-value at this sample size: 1 / Lambda, capped at 1. Rejecting the first time it
 * falls below alpha keeps the chance of any false rejection, over every look, below alpha.
 */
export function alwaysValidPValue(estimate: number, variance: number, tau2: number): number {
  if (!(variance > 0) || !(tau2 > 0)) return 1;
  return Math.min(1, Math.exp(-logLikelihoodRatio(estimate, variance, tau2)));
}

export interface Interval {
  low: number;
  high: number;
}

/** The (1 - alpha) confidence sequence: every difference the test at level alpha would not reject. */
export function confidenceSequence(estimate: number, variance: number, tau2: number, alpha: number): Interval {
  if (!(variance > 0) || !(tau2 > 0)) return { low: Number.NEGATIVE_INFINITY, high: Number.POSITIVE_INFINITY };
  const spread = variance + tau2;
  const half = Math.sqrt(((variance * spread) / tau2) * (2 * Math.log(1 / alpha) + Math.log(spread / variance)));
  return { low: estimate - half, high: estimate + half };
}
