import { thompsonWeights } from '../../src/experiments/bandit.js';
import { periodInformation } from '../../src/experiments/comparison.js';
import { type Analysis, analyse, type PeriodCounts } from '../../src/experiments/statistics.js';
import { binomialFactory } from './random.js';

// Simulated experiments for the statistical tests: counts grow by whole looks (binomial draws of
// conversions among each look's new units), not visitor by visitor, so 1,000 experiments take seconds.

export interface Simulation {
  /** True conversion rate of each arm; the first is the baseline. */
  rates: number[];
  experiments: number;
  looks: number;
  unitsPerArmPerLook: number;
  seed: number;
  minimumUnitsPerArm?: number;
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

export function simulate({ rates, experiments, looks, unitsPerArmPerLook, seed, minimumUnitsPerArm = 100 }: Simulation): SimulationOutcome {
  const draw = binomialFactory(seed);
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
      last = analyse({ arms, periods: [{ weights, arms: counts }], minimumUnitsPerArm, seed: experiment + 1, draws: 50 });
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

export interface StickySimulation {
  rates: number[];
  experiments: number;
  looks: number;
  /** New units per look, split by the weights of the look (each unit stays in its arm: sticky). */
  unitsPerLook: number;
  seed: number;
  /**
   * `change`: 50/50 then 10/90 (first arm 10) from the middle look; `starve`: 50/50 then 1/99 from
   * the second look; `bandit`: Thompson weights recomputed at every look.
   */
  weights: 'change' | 'starve' | 'bandit';
  minimumUnitsPerArm?: number;
  /**
   * Stop once the first two arms' information, sum over periods of n_A n_B / (n_A + n_B), reaches
   * this (10,000 units per arm at 50/50 give 5,000), `looks` being then the most looks run.
   */
  information?: number;
}

/**
 * Experiments whose weights change while they run, as the service counts them: each unit once, in
 * the arm and period of its first exposure; every change of weights is a new period.
 */
export function simulateSticky({
  rates,
  experiments,
  looks,
  unitsPerLook,
  seed,
  weights: schedule,
  minimumUnitsPerArm = 100,
  information: target,
}: StickySimulation): StickyOutcome {
  const draw = binomialFactory(seed);
  const keys = rates.map((_, index) => armKey(index));
  const outcome: StickyOutcome = { everWinner: 0, everSrm: 0, firstWinner: {}, meanRate: keys.map(() => 0), meanLift: 0, liftNull: 0 };
  let lifts = 0;
  for (let experiment = 0; experiment < experiments; experiment++) {
    const periods: PeriodCounts[] = [];
    let current: number[] = keys.map(() => 1);
    let winner: string | null = null;
    let srm = false;
    let last: Analysis | null = null;
    for (let look = 1; look <= looks; look++) {
      const next =
        schedule === 'change'
          ? look > looks / 2
            ? keys.map((_, i) => (i === 0 ? 10 : 90))
            : keys.map(() => 50)
          : schedule === 'starve'
            ? keys.map((_, i) => (look === 1 ? 50 : i === 0 ? 1 : 99))
            : look === 1
              ? keys.map(() => 5000)
              : keys.map((key) => banditWeights(periods, keys, experiment * looks + look)[key] ?? 0);
      if (periods.length === 0 || next.some((w, i) => w !== current[i])) {
        current = next;
        periods.push({ weights: Object.fromEntries(keys.map((key, i) => [key, current[i] ?? 0])), arms: {} });
      }
      const period = periods[periods.length - 1] as PeriodCounts;
      // A multinomial split of the look's new units by the current weights, arm by arm.
      let left = unitsPerLook;
      let weightLeft = current.reduce((sum, w) => sum + w, 0);
      keys.forEach((key, i) => {
        const weight = current[i] ?? 0;
        const units = i === keys.length - 1 ? left : draw(left, weightLeft > 0 ? weight / weightLeft : 0);
        left -= units;
        weightLeft -= weight;
        const conversions = draw(units, rates[i] ?? 0);
        const was = period.arms[key] ?? { units: 0, visits: 0, conversions: 0 };
        period.arms[key] = { units: was.units + units, visits: was.visits + units, conversions: was.conversions + conversions };
      });
      const arms = keys.map((key, i) => ({ key, weight: current[i] ?? 0 }));
      last = analyse({ arms, periods, minimumUnitsPerArm, seed: experiment + 1, draws: 50 });
      if (winner === null && last.decision === 'winner') winner = last.winner;
      if (last.srm.mismatch) srm = true;
      if (target !== undefined && informationOf(periods, keys) >= target) break;
    }
    if (winner !== null) {
      outcome.everWinner++;
      outcome.firstWinner[winner] = (outcome.firstWinner[winner] ?? 0) + 1;
    }
    if (srm) outcome.everSrm++;
    last?.arms.forEach((arm, i) => {
      outcome.meanRate[i] = (outcome.meanRate[i] ?? 0) + arm.conversionRate / experiments;
    });
    const lift = last?.arms[1]?.lift;
    if (lift) {
      outcome.meanLift += lift.estimate;
      lifts++;
    } else outcome.liftNull++;
  }
  outcome.meanLift = lifts > 0 ? outcome.meanLift / lifts : Number.NaN;
  return outcome;
}

export interface StickyOutcome {
  /** Experiments declared `winner` at some look, and how often each arm was the first declared. */
  everWinner: number;
  firstWinner: Record<string, number>;
  everSrm: number;
  /** Each arm's `conversionRate` at the last look, averaged over the experiments. */
  meanRate: number[];
  /** The second arm's lift estimate at the last look, averaged over the experiments where it was known. */
  meanLift: number;
  /** Experiments whose second arm's lift was null at the last look. */
  liftNull: number;
}

function informationOf(periods: PeriodCounts[], [a = '', b = '']: string[]): number {
  return periods.reduce((sum, period) => sum + periodInformation(period.arms[a] ?? EMPTY_CELL, period.arms[b] ?? EMPTY_CELL), 0);
}

const EMPTY_CELL = { units: 0, conversions: 0 };

function banditWeights(periods: PeriodCounts[], keys: string[], seed: number): Record<string, number> {
  const totals = keys.map((key) => {
    const sum = { units: 0, conversions: 0 };
    for (const period of periods) {
      sum.units += period.arms[key]?.units ?? 0;
      sum.conversions += period.arms[key]?.conversions ?? 0;
    }
    return { key, ...sum };
  });
  return thompsonWeights(totals, { seed, draws: 200 });
}
