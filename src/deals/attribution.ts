import { AppError } from '../http/errors.js';
import type { PipelineModel } from './pipeline-schemas.js';
import { slicer } from './sliced-sort.js';
import type { Touches } from './touches.js';

/**
 * The walk over each deal's touches: a deal's window is a slice [lo, hi) of its account's touches
 * (sorted by instant, then session id), found by binary search, and a model credits groups from
 * that slice, each with a weight. The walk adds a deal's weights up per group and divides them by
 * their sum, so every deal hands out exactly 1 (docs/decisions.md, issue 49).
 */

/** Credits one deal: `give(key, weight)` once or more per group the deal is credited to. */
export type Credit = (deal: number, lo: number, hi: number, give: (key: number, weight: number) => void) => void;

interface Model {
  /** Whether the model reads every touch of a window (its cost grows with the slice), or only its ends. */
  walks: boolean;
  make(touches: Touches, halfLifeMs: number): Credit;
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

/** The smallest key among the touches of [from, hi) at the instant of `from`: first and last break ties by key. */
function smallestKeyAt(touches: Touches, from: number, hi: number): number {
  const ms = touches.at[from] as number;
  let best = touches.key[from] as number;
  for (let j = from + 1; j < hi && touches.at[j] === ms; j++) best = Math.min(best, touches.key[j] as number);
  return best;
}

/** Each touch's share of a U: the ends 0.4 each and the middle 0.2 together; 1 touch 1, 2 touches 0.5 each. */
function positionShare(j: number, lo: number, hi: number): number {
  const n = hi - lo;
  if (n <= 2) return 1 / n;
  return j === lo || j === hi - 1 ? 0.4 : 0.2 / (n - 2);
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
  // The earliest touch; among touches at that instant, the smallest key.
  first: { walks: false, make: (touches) => (_deal, lo, hi, give) => give(smallestKeyAt(touches, lo, hi), 1) },
  // The latest touch; among touches at that instant, the smallest key.
  last: {
    walks: false,
    make: (touches) => (_deal, lo, hi, give) =>
      give(smallestKeyAt(touches, firstAtOrAfter(touches.at, lo, hi, touches.at[hi - 1] as number), hi), 1),
  },
  linear: {
    walks: true,
    make: (touches) => (_deal, lo, hi, give) => {
      for (let j = lo; j < hi; j++) give(touches.key[j] as number, 1);
    },
  },
  // 2^(−(createdAt − t)/halfLife); the walk normalises. Measured from the latest touch, an equal
  // factor for every touch of the deal, so that no weight is too small for a double.
  time_decay: {
    walks: true,
    make: (touches, halfLifeMs) => (_deal, lo, hi, give) => {
      const latest = touches.at[hi - 1] as number;
      for (let j = lo; j < hi; j++) give(touches.key[j] as number, 2 ** (-(latest - (touches.at[j] as number)) / halfLifeMs));
    },
  },
  // The first and last in the slice's order: by instant, ties by session id.
  position: {
    walks: true,
    make: (touches) => (_deal, lo, hi, give) => {
      for (let j = lo; j < hi; j++) give(touches.key[j] as number, positionShare(j, lo, hi));
    },
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
 * Walks every deal that has a touch in its window: `touched(deal)` once for it, then `credit(deal,
 * key, share)` once per group the model credits, `share` being the group's part of the deal (a
 * deal's shares add up to 1). The loop is given back every few milliseconds.
 */
export async function walk(
  model: PipelineModel,
  halfLifeMs: number,
  touches: Touches,
  windows: Windows,
  touched: (deal: number) => void,
  credit: (deal: number, key: number, share: number) => void,
): Promise<void> {
  const give = MODELS[model].make(touches, halfLifeMs);
  const weight = new Float64Array(touches.keys.length);
  const stamp = new Int32Array(touches.keys.length).fill(-1);
  const given: number[] = [];
  // The deal being walked and its weights' sum, for one `take` made once (not a closure per deal).
  let deal = -1;
  let sum = 0;
  const take = (key: number, w: number) => {
    if (stamp[key] !== deal) {
      stamp[key] = deal;
      weight[key] = 0;
      given.push(key);
    }
    weight[key] = (weight[key] as number) + w;
    sum += w;
  };
  const pause = slicer();
  // The clock is read once about a thousand touches are walked: an await per deal cost more than a
  // deal of a few touches, and a count of deals would let deals of many touches hold the loop.
  let walked = 0;
  for (let d = 0; d < touches.created.length; d++) {
    const lo = windows.lo[d] as number;
    const hi = windows.hi[d] as number;
    if (hi > lo) {
      touched(d);
      deal = d;
      sum = 0;
      given.length = 0;
      give(d, lo, hi, take);
      for (const key of given) credit(d, key, (weight[key] as number) / sum);
    }
    walked += 1 + hi - lo;
    if (walked >= 1024) {
      walked = 0;
      await pause();
    }
  }
}
