import { type Cell, type Comparison, compareArms, periodInformation } from './comparison.js';
import { checkSeed, DEFAULT_DRAWS, probabilityBest } from './posterior.js';
import { type SrmResult, sampleRatioMismatch } from './srm.js';

/**
 * The results of an experiment from its counts: pure, no clock, no randomness but a seeded generator,
 * so the same counts and seed always give the same results. The method, and how to read each number,
 * is in docs/experiments.md.
 */

export interface ArmCounts {
  units: number;
  visits: number;
  /** Units with at least one converting visit. */
  conversions: number;
}

/** The counts of one period: a stretch of the experiment during which the weights did not change. */
export interface PeriodCounts {
  weights: Record<string, number>;
  arms: Record<string, ArmCounts>;
}

export interface AnalysisInput {
  /** Every arm with its current weight; the first is the baseline (control, for a holdout). */
  arms: { key: string; weight: number }[];
  /** Oldest first; arms missing from a period had nothing in it. */
  periods: PeriodCounts[];
  /** `decision` stays `collecting` until every arm has this many units. */
  minimumUnitsPerArm: number;
  /** Seeds the draws of probabilityBest (default 1). */
  seed?: number;
  /** How many joint posterior draws estimate probabilityBest (default 10,000). */
  draws?: number;
  /** What earlier looks found: the results' p-values are running minima, and a first winner stays. */
  earlier?: EarlierLooks;
}

/** Recorded by the scheduled looks (looks.ts): each arm's smallest p-value, and the first winner. */
export interface EarlierLooks {
  minima: Record<string, LookMinimum>;
  winner: string | null;
}

/** An arm's smallest p-value over the looks, with its difference from the baseline at that look. */
export interface LookMinimum {
  pValue: number;
  difference: number;
}

export interface ArmResult {
  key: string;
  weight: number;
  units: number;
  visits: number;
  conversions: number;
  conversionRate: number;
  /** Relative to the baseline; null for the baseline and while it cannot be bounded. */
  lift: { estimate: number; low: number; high: number } | null;
  probabilityBest: number;
  /** Always valid and Bonferroni-adjusted: the running minimum over looks; null for the baseline. */
  pValue: number | null;
  /** This look's own figures: its p-value may be above the running minimum. */
  current: { pValue: number | null; lift: ArmResult['lift'] };
}

export type Decision = 'collecting' | 'winner' | 'no_difference';

export interface Analysis {
  arms: ArmResult[];
  srm: SrmResult;
  /** Over every look: once `winner`, always `winner`, with the same arm. */
  decision: Decision;
  winner: string | null;
  /** What this look alone says. */
  current: { decision: Decision; winner: string | null };
  /** This look's p-values and differences, for the looks to keep their minima; empty while collecting. */
  looked: Record<string, LookMinimum>;
}

/** The false-positive rate the decision keeps, over every look and every arm together. */
export const ALPHA = 0.05;
/** `no_difference` needs every arm's lift interval inside plus or minus this (relative). */
export const EQUIVALENCE_MARGIN = 0.1;
export const DEFAULT_SEED = 1;

const EMPTY: ArmCounts = { units: 0, visits: 0, conversions: 0 };

export function analyse(input: AnalysisInput): Analysis {
  checkInput(input);
  const keys = input.arms.map((arm) => arm.key);
  const cells = keys.map((key) => input.periods.map((period) => period.arms[key] ?? EMPTY));
  const totals = cells.map((periods) => periods.reduce(add, EMPTY));
  const best = probabilityBest(totals, checkSeed(input.seed ?? DEFAULT_SEED), input.draws ?? DEFAULT_DRAWS);
  const [baseCells = [], ...others] = cells;
  const comparisons = others.map((armCells) => compareArms(baseCells.map(toCell), armCells.map(toCell), others.length, ALPHA));

  const rates = stratifiedRates(cells, comparisons);
  const running = comparisons.map((comparison, index) => runningMinimum(comparison, input.earlier?.minima[keys[index + 1] ?? '']));
  const arms = input.arms.map(({ key, weight }, index): ArmResult => {
    const total = totals[index] ?? EMPTY;
    const comparison = index === 0 ? undefined : comparisons[index - 1];
    const lift = comparison?.lift ?? null;
    const pValue = index === 0 ? null : (comparison?.pValue ?? 1);
    return {
      key,
      weight,
      ...total,
      conversionRate: rates[index] ?? 0,
      lift,
      probabilityBest: best[index] ?? 0,
      pValue: index === 0 ? null : (running[index - 1]?.pValue ?? 1),
      current: { pValue, lift },
    };
  });
  const collecting = totals.some((total) => total.units < input.minimumUnitsPerArm);
  const current = collecting ? { decision: 'collecting' as const, winner: null } : decide(keys, comparisons);
  const first = input.earlier?.winner;
  const overall =
    first != null && keys.includes(first) ? { decision: 'winner' as const, winner: first } : collecting ? current : decide(keys, running);
  const looked: Record<string, LookMinimum> = {};
  if (!collecting)
    comparisons.forEach((comparison, index) => {
      const key = keys[index + 1];
      if (comparison && key !== undefined) looked[key] = { pValue: comparison.pValue, difference: comparison.difference };
    });
  return { arms, srm: srm(input), ...overall, current, looked };
}

/**
 * The always-valid p-value is the smallest over every look so far (Johari et al.): a look that
 * crossed the boundary crossed it, whatever later looks show. The difference's sign goes with it,
 * so the winner is the arm that was significantly better when it was.
 */
function runningMinimum(comparison: Comparison | null | undefined, earlier: LookMinimum | undefined): Comparison | null {
  if (!earlier) return comparison ?? null;
  if (comparison && comparison.pValue <= earlier.pValue) return comparison;
  return { difference: earlier.difference, pValue: earlier.pValue, lift: comparison?.lift ?? null, baseRate: 0, armRate: 0 };
}

/**
 * A winner when some arm differs from the baseline at ALPHA (after Bonferroni): the best of those
 * significantly better, or the baseline when it is significantly better than every other arm.
 * No difference when every arm's lift interval lies within the equivalence margin. Otherwise, more
 * data is needed.
 */
export function decide(keys: string[], comparisons: (Comparison | null)[]): { decision: Decision; winner: string | null } {
  const significant = comparisons.map((comparison) => comparison !== null && comparison.pValue < ALPHA);
  let winner: string | null = null;
  let bestDifference = 0;
  comparisons.forEach((comparison, index) => {
    if (comparison && significant[index] && comparison.difference > bestDifference) {
      bestDifference = comparison.difference;
      winner = keys[index + 1] ?? null;
    }
  });
  if (winner === null && comparisons.length > 0 && significant.every(Boolean)) winner = keys[0] ?? null;
  if (winner !== null) return { decision: 'winner', winner };
  const equivalent =
    comparisons.length > 0 &&
    comparisons.every((c) => c?.lift != null && c.lift.low > -EQUIVALENCE_MARGIN && c.lift.high < EQUIVALENCE_MARGIN);
  return { decision: equivalent ? 'no_difference' : 'collecting', winner: null };
}

/**
 * Each arm's rate from the estimator its lift comes from: a non-baseline arm's is the one its
 * comparison stratified, the baseline's is stratified with each period weighted by its information
 * summed over the comparisons (with one other arm, exactly its comparison's, so the lift is the
 * ratio of the two rates shown). Pooled totals would read low for an arm the bandit starved after an
 * unlucky start. An arm that shares no period with another falls back to its pooled rate.
 */
function stratifiedRates(cells: ArmCounts[][], comparisons: (Comparison | null)[]): number[] {
  const pooled = (periods: ArmCounts[]) => {
    const { units, conversions } = periods.reduce(add, EMPTY);
    return units > 0 ? conversions / units : 0;
  };
  const [baseCells = [], ...others] = cells;
  let weightSum = 0;
  let weighted = 0;
  baseCells.forEach((base, period) => {
    if (base.units === 0) return;
    const information = others.reduce((sum, arm) => sum + periodInformation(base, arm[period] ?? EMPTY), 0);
    weightSum += information;
    weighted += (information * base.conversions) / base.units;
  });
  const baseline = weightSum > 0 ? weighted / weightSum : pooled(baseCells);
  return [baseline, ...others.map((arm, index) => comparisons[index]?.armRate ?? pooled(arm))];
}

/** Each period's units against its own weights: a change of weights is not itself a mismatch. */
function srm(input: AnalysisInput): SrmResult {
  return sampleRatioMismatch(
    input.periods.map((period) => ({
      observed: input.arms.map(({ key }) => period.arms[key]?.units ?? 0),
      weights: input.arms.map(({ key }) => period.weights[key] ?? 0),
    })),
  );
}

function add(sum: ArmCounts, counts: ArmCounts): ArmCounts {
  return { units: sum.units + counts.units, visits: sum.visits + counts.visits, conversions: sum.conversions + counts.conversions };
}

function toCell({ units, conversions }: ArmCounts): Cell {
  return { units, conversions };
}

function isCount(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0;
}

/** Counts come from the service's own tables: anything malformed is a bug upstream, thrown at once. */
function checkInput({ arms, periods, minimumUnitsPerArm }: AnalysisInput): void {
  if (arms.length === 0) throw new RangeError('an experiment has at least one arm');
  const keys = new Set(arms.map((arm) => arm.key));
  if (keys.size !== arms.length) throw new RangeError('arm keys must be unique');
  if (arms.some((arm) => !Number.isFinite(arm.weight) || arm.weight < 0)) throw new RangeError('weights must be finite and not negative');
  if (!Number.isFinite(minimumUnitsPerArm) || minimumUnitsPerArm < 0) throw new RangeError('minimumUnitsPerArm must be >= 0');
  for (const period of periods) {
    for (const [key, counts] of Object.entries(period.arms)) {
      if (!keys.has(key)) throw new RangeError(`period counts name an unknown arm: ${key}`);
      const { units, visits, conversions } = counts;
      if (![units, visits, conversions].every(isCount) || conversions > units) {
        throw new RangeError(`counts of arm ${key} must be whole numbers with conversions <= units`);
      }
    }
    for (const [key, weight] of Object.entries(period.weights)) {
      if (!keys.has(key)) throw new RangeError(`period weights name an unknown arm: ${key}`);
      if (!Number.isFinite(weight) || weight < 0) throw new RangeError(`weight of arm ${key} must be finite and not negative`);
    }
  }
}
