import binomial from '@stdlib/random-base-binomial';
import { type Analysis, analyse } from '../../src/experiments/statistics.js';

// Simulated experiments for the statistical tests: counts grow by whole looks (binomial draws of
// conversions among each look's new units), not visitor by visitor, so 1,000 experiments take seconds.

export interface Simulation {
  /** True conversion rate of each arm; the first is the baseline. */
  rates: number[];
  experiments: number;
  looks: number;
  unitsPerArmPerLook: number;
  seed: number;
  minimumVisitsPerArm?: number;
}

export interface SimulationOutcome {
  /** Experiments declared `winner` at some look. */
  everWinner: number;
  /** How often each arm was the first winner declared (where a person would stop). */
  firstWinner: Record<string, number>;
  /** How often each arm was the winner at the last look. */
  finalWinner: Record<string, number>;
}

export const armKey = (index: number) => (index === 0 ? 'control' : `arm${index}`);

export function simulate({
  rates,
  experiments,
  looks,
  unitsPerArmPerLook,
  seed,
  minimumVisitsPerArm = 100,
}: Simulation): SimulationOutcome {
  const draw = binomial.factory({ seed });
  const keys = rates.map((_, index) => armKey(index));
  const arms = keys.map((key) => ({ key, weight: 1 }));
  const weights = Object.fromEntries(keys.map((key) => [key, 1]));
  const outcome: SimulationOutcome = { everWinner: 0, firstWinner: {}, finalWinner: {} };
  for (let experiment = 0; experiment < experiments; experiment++) {
    const conversions = rates.map(() => 0);
    let first: string | null = null;
    let last: Analysis | null = null;
    for (let look = 1; look <= looks; look++) {
      rates.forEach((rate, index) => {
        conversions[index] = (conversions[index] ?? 0) + draw(unitsPerArmPerLook, rate);
      });
      const units = look * unitsPerArmPerLook;
      const counts = Object.fromEntries(keys.map((key, index) => [key, { units, visits: units, conversions: conversions[index] ?? 0 }]));
      // A few draws suffice: probabilityBest plays no part in the decision, and this runs 20,000 times.
      last = analyse({ arms, periods: [{ weights, arms: counts }], minimumVisitsPerArm, seed: experiment + 1, draws: 50 });
      if (first === null && last.decision === 'winner') first = last.winner;
    }
    if (first !== null) {
      outcome.everWinner++;
      outcome.firstWinner[first] = (outcome.firstWinner[first] ?? 0) + 1;
    }
    if (last?.decision === 'winner' && last.winner !== null) {
      outcome.finalWinner[last.winner] = (outcome.finalWinner[last.winner] ?? 0) + 1;
    }
  }
  return outcome;
}
