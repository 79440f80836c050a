import { AppError } from '../http/errors.js';
import type { PipelineModel } from './pipeline-schemas.js';
import { slicer } from './sliced-sort.js';
import type { Touches } from './touches.js';

/**
 * The walk over each deal's touches: a deal's window is a slice [lo, hi) of its account's touches
 * (sorted by instant, then key), found by binary search, and a model credits groups from that
 * slice, each with a weight. `any`, `first` and `last` give a weight of 1; a model that spreads
 * credit over the touches (linear, time decay, position) gives each touch's share the same way.
 */

/** Credits one deal: `give(key, weight)` once per group the deal is credited to. */
export type Credit = (deal: number, lo: number, hi: number, give: (key: number, weight: number) => void) => void;

interface Model {
  /** Whether the model reads every touch of a window (its cost grows with the slice), or only its ends. */
  walks: boolean;
  make(touches: Touches): Credit;
}

/** Lowest index in [lo, hi) whose instant is at least `ms` (hi when none). */
function firstAtOrAfter(at: Float64Array, lo: number, hi: number, ms: number): number {
  let a = lo;
  let b = hi;
  while (a < b) {
    const mid = (a + b) >>> 1;
    if ((at[mid] as number) < ms) a = mid + 1;
    else b = mid;
  }
  return a;
}

/** Lowest index in [lo, hi) whose instant is after `ms` (hi when none). */
function firstAfter(at: Float64Array, lo: number, hi: number, ms: number): number {
  let a = lo;
  let b = hi;
  while (a < b) {
    const mid = (a + b) >>> 1;
    if ((at[mid] as number) <= ms) a = mid + 1;
    else b = mid;
  }
  return a;
}

export const MODELS: Record<PipelineModel, Model> = {
  // Every group touched in the window, once: a stamp per group says whether this deal gave it already.
  any: {
    walks: true,
    make: (touches) => {
      const stamp = new Int32Array(touches.keys.length).fill(-1);
      return (deal, lo, hi, give) => {
        for (let j = lo; j < hi; j++) {
          const k = touches.key[j] as number;
          if (stamp[k] === deal) continue;
          stamp[k] = deal;
          give(k, 1);
        }
      };
    },
  },
  // The earliest touch; among touches at that instant, the smallest key comes first.
  first: { walks: false, make: (touches) => (_deal, lo, _hi, give) => give(touches.key[lo] as number, 1) },
  // The latest touch; among touches at that instant, the smallest key (the first of that instant's run).
  last: {
    walks: false,
    make: (touches) => (_deal, lo, hi, give) =>
      give(touches.key[firstAtOrAfter(touches.at, lo, hi, touches.at[hi - 1] as number)] as number, 1),
  },
};

/** Pairs of a deal and a touch in its window that a walking model reads at most: beyond, the query is refused. */
export const MAX_PIPELINE_PAIRS = 10_000_000;

/** Each deal's window as a slice of its account's touches. */
export interface Windows {
  lo: Int32Array;
  hi: Int32Array;
  /** The touches in all the windows together. */
  pairs: number;
}

export async function windowsOf(touches: Touches, windowMs: number): Promise<Windows> {
  const deals = touches.created.length;
  const lo = new Int32Array(deals);
  const hi = new Int32Array(deals);
  let pairs = 0;
  const pause = slicer();
  for (let a = 0; a + 1 < touches.dealStart.length; a++) {
    const from = touches.touchStart[a] as number;
    const to = touches.touchStart[a + 1] as number;
    for (let d = touches.dealStart[a] as number; d < (touches.dealStart[a + 1] as number); d++) {
      const created = touches.created[d] as number;
      // Exactly windowDays before createdAt is in; one millisecond earlier is not; after createdAt never.
      const l = firstAtOrAfter(touches.at, from, to, created - windowMs);
      const h = firstAfter(touches.at, l, to, created);
      lo[d] = l;
      hi[d] = h;
      pairs += h - l;
      if ((d & 255) === 0) await pause();
    }
  }
  return { lo, hi, pairs };
}

/** Refuses a walk that would read more than MAX_PIPELINE_PAIRS touches, naming what to narrow. */
export function checkWalk(model: PipelineModel, windows: Windows): void {
  if (!MODELS[model].walks || windows.pairs <= MAX_PIPELINE_PAIRS) return;
  const what = `the deals of this range have ${windows.pairs} sessions in their windows, more than the ${MAX_PIPELINE_PAIRS} model=${model} reads at once`;
  throw new AppError('validation_failed', `${what}: narrow windowDays, startDate and endDate, or ask model=first or last`, [
    { path: '/windowDays', message: what },
    { path: '/startDate', message: what },
    { path: '/endDate', message: what },
  ]);
}

/**
 * Walks every deal that has a touch in its window: `touched(deal)` once for it, `give(deal, key,
 * weight)` for each group the model credits. The loop is given back every few milliseconds.
 */
export async function walk(
  model: PipelineModel,
  touches: Touches,
  windows: Windows,
  touched: (deal: number) => void,
  give: (deal: number, key: number, weight: number) => void,
): Promise<void> {
  const credit = MODELS[model].make(touches);
  const pause = slicer();
  for (let d = 0; d < touches.created.length; d++) {
    const lo = windows.lo[d] as number;
    const hi = windows.hi[d] as number;
    if (hi > lo) {
      touched(d);
      credit(d, lo, hi, (key, weight) => give(d, key, weight));
    }
    await pause();
  }
}
