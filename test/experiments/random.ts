import mt19937 from '@stdlib/random-base-mt19937';

/**
 * Exact binomial draws for the simulations: the number of `n` Bernoulli(p) trials that succeed, each
 * trial a uniform draw of a seeded MT19937 (53 bits) below `p`. @stdlib/random-base-binomial 0.2.2
 * returns about 0.5 too much once n·p >= 10 (n = 20, p = 0.5 averaged 10.55), so error rates
 * simulated with it rested on a biased generator (issue 45). A sum of Bernoulli trials costs n
 * uniforms a draw, which the simulations' sizes (at most thousands of units per look) afford.
 */
export type Binomial = (n: number, p: number) => number;

export function binomialFactory(seed: number): Binomial {
  const next = mt19937.factory({ seed });
  // 53 random bits from two 32-bit outputs, as the library's own `normalized` (absent from its types).
  const uniform = () => ((next() >>> 5) * 67_108_864 + (next() >>> 6)) / 9_007_199_254_740_992;
  return (n, p) => {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`n must be a whole number, not ${n}`);
    if (!(p >= 0 && p <= 1)) throw new RangeError(`p must be in [0, 1], not ${p}`);
    let successes = 0;
    for (let trial = 0; trial < n; trial++) if (uniform() < p) successes++;
    return successes;
  };
}
