import { checkSeed, DEFAULT_DRAWS, probabilityBest } from './posterior.js';

/** The bandit's weights are recomputed at most this often. */
export const BANDIT_INTERVAL_MS = 15 * 60 * 1000;
/** No arm's weight falls below this share of the total, so every arm keeps being measured. */
export const BANDIT_FLOOR = 0.01;
export const WEIGHT_TOTAL = 10_000;

export interface BanditArm {
  key: string;
  units: number;
  /** Units with at least one converting visit. */
  conversions: number;
}

/** Whether a recomputation is due at `now`, the last one having been at `last` (null: never). */
export function banditDue(last: Date | null, now: Date): boolean {
  return last === null || now.getTime() - last.getTime() >= BANDIT_INTERVAL_MS;
}

/**
 * Thompson sampling's weights: each arm's share of the total is its probability of being best under
 * Beta posteriors (seeded draws, so the same counts and seed give the same weights), raised to at
 * least 1% of the total, the rest shared in proportion. Whole numbers summing to `total`.
 */
export function thompsonWeights(arms: BanditArm[], options: { seed: number; draws?: number; total?: number }): Record<string, number> {
  const total = options.total ?? WEIGHT_TOTAL;
  const floor = Math.ceil(total * BANDIT_FLOOR);
  if (arms.length === 0) throw new RangeError('the bandit needs at least one arm');
  if (new Set(arms.map((arm) => arm.key)).size !== arms.length) throw new RangeError('arm keys must be unique');
  if (!Number.isInteger(total) || total < 1 || total > WEIGHT_TOTAL) throw new RangeError(`total must be an integer in 1..${WEIGHT_TOTAL}`);
  if (arms.length * floor > total) throw new RangeError(`${arms.length} arms cannot each get ${floor} of ${total}`);
  for (const { key, units, conversions } of arms) {
    if (![units, conversions].every((n) => Number.isSafeInteger(n) && n >= 0) || conversions > units) {
      throw new RangeError(`counts of arm ${key} must be whole numbers with conversions <= units`);
    }
  }
  const shares = probabilityBest(arms, checkSeed(options.seed), options.draws ?? DEFAULT_DRAWS);
  const weights = roundToTotal(withFloor(shares, floor, total), total);
  return Object.fromEntries(arms.map((arm, index) => [arm.key, weights[index] ?? 0]));
}

/**
 * Arms whose share of the total would fall below the floor are held at it, and the rest of the total
 * is shared among the others in proportion to their shares; repeated, since lowering the others' part
 * may push another below the floor.
 */
function withFloor(shares: number[], floor: number, total: number): number[] {
  const held = shares.map(() => false);
  for (;;) {
    const free = total - floor * held.filter(Boolean).length;
    const freeShare = shares.reduce((sum, share, index) => (held[index] ? sum : sum + share), 0);
    const freeCount = held.filter((isHeld) => !isHeld).length;
    const raw = shares.map((share, index) => {
      if (held[index]) return floor;
      return freeShare > 0 ? (free * share) / freeShare : free / freeCount;
    });
    const newlyHeld = raw.map((value, index) => !held[index] && value < floor);
    if (!newlyHeld.some(Boolean)) return raw;
    newlyHeld.forEach((isNew, index) => {
      if (isNew) held[index] = true;
    });
  }
}

/** Largest remainders: whole numbers summing to `total`, none below the floor the raw values kept. */
function roundToTotal(raw: number[], total: number): number[] {
  const whole = raw.map((value) => Math.floor(value));
  let left = total - whole.reduce((sum, value) => sum + value, 0);
  const order = raw.map((value, index) => ({ index, remainder: value - Math.floor(value) })).sort((a, b) => b.remainder - a.remainder);
  for (const { index } of order) {
    if (left <= 0) break;
    whole[index] = (whole[index] ?? 0) + 1;
    left--;
  }
  return whole;
}
