import { createRequire } from 'node:module';
import type Beta from '@stdlib/random-base-beta';

// Required on first use, not imported: @stdlib's packages are about 500 modules, half a second
// of CPU at every start of the service, the CLI and each test process, most of which never use it.
const require = createRequire(import.meta.url);
let loaded: typeof Beta | undefined;
const betaDistribution = (): typeof Beta => (loaded ??= require('@stdlib/random-base-beta') as typeof Beta);

export interface Counts {
  units: number;
  conversions: number;
}

export const DEFAULT_DRAWS = 10_000;

/** A seed the library's generator (MT19937) accepts: a whole number from 1 to 2^32 - 1. */
export function checkSeed(seed: number): number {
  if (!Number.isInteger(seed) || seed < 1 || seed > 0xffff_ffff) throw new RangeError(`seed must be an integer in 1..4294967295`);
  return seed;
}

/**
 * The chance that each arm has the highest conversion rate, under independent Beta(1 + conversions,
 * 1 + units - conversions) posteriors (a uniform prior), by `draws` joint draws from a generator
 * seeded with `seed`: the same input and seed always give the same answer. Shares sum to 1.
 */
export function probabilityBest(arms: Counts[], seed: number, draws: number = DEFAULT_DRAWS): number[] {
  if (!Number.isInteger(draws) || draws < 1) throw new RangeError('draws must be a positive integer');
  const random = betaDistribution().factory({ seed: checkSeed(seed) });
  const params = arms.map(({ units, conversions }) => [1 + conversions, 1 + units - conversions] as const);
  // Identical posteriors are equally likely to be best: say so exactly rather than with sampling noise.
  const [first] = params;
  if (first && params.every(([a, b]) => a === first[0] && b === first[1])) return arms.map(() => 1 / arms.length);
  const wins = new Array<number>(arms.length).fill(0);
  for (let draw = 0; draw < draws; draw++) {
    let best = -1;
    let bestValue = Number.NEGATIVE_INFINITY;
    params.forEach(([a, b], index) => {
      const value = random(a, b);
      if (value > bestValue) {
        best = index;
        bestValue = value;
      }
    });
    if (best >= 0) wins[best] = (wins[best] ?? 0) + 1;
  }
  return wins.map((count) => count / draws);
}
