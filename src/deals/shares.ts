/**
 * Rounding that keeps a sum (issue 49): the groups' attributed amounts must add up to the touched
 * deals' amount to the cent, which rounding each group alone does not give (three thirds of 1.00
 * round to 0.99). The largest-remainder method (Hamilton's): every part gets its floor, and the
 * units still missing go one each to the parts with the largest remainders, ties to the earlier
 * part. docs/decisions.md, "Issue 49".
 */

/** Below this, a part's distance under an integer is a float's error, not a remainder. */
const SNAP = 1e-6;

/**
 * Integers, one per part, that add up to `total` (an integer), each within 1 of its part. The
 * parts must add up to `total` but for a float's error. Parts are in a stable order (by key) so
 * that a tie always goes the same way.
 */
export function largestRemainder(parts: readonly number[], total: number): number[] {
  const out = parts.map((x) => Math.floor(x + SNAP));
  let missing = total - out.reduce((a, b) => a + b, 0);
  if (missing === 0 || parts.length === 0) return out;
  if (missing > 0 && missing <= parts.length) return topUp(parts, out, missing);
  const order = parts.map((_, i) => i);
  const rest = (i: number) => (parts[i] as number) - (out[i] as number);
  // Most remainder first when units are missing; least first when a float's error gave one too many.
  order.sort((a, b) => (missing > 0 ? rest(b) - rest(a) : rest(a) - rest(b)) || a - b);
  const step = missing > 0 ? 1 : -1;
  for (let j = 0; missing !== 0; j = (j + 1) % order.length) {
    const i = order[j] as number;
    if (step < 0 && (out[i] as number) === 0) continue;
    out[i] = (out[i] as number) + step;
    missing -= step;
  }
  return out;
}

/**
 * The common case of largestRemainder, `missing` units for `missing` distinct parts: the parts
 * with the largest remainders, ties to the earlier part, as the sort by remainder then index
 * would pick them, found from the missing-th largest remainder by a numeric sort (no comparator:
 * a report rounds thousands of groups four times, and the comparator's sort was a fifth of it).
 */
function topUp(parts: readonly number[], out: number[], missing: number): number[] {
  const rests = new Float64Array(parts.length);
  for (let i = 0; i < parts.length; i++) rests[i] = (parts[i] as number) - (out[i] as number);
  const sorted = Float64Array.from(rests).sort();
  const threshold = sorted[sorted.length - missing] as number;
  // Above the threshold, all; at it, the earliest until none is missing.
  let atThreshold = missing;
  for (let i = 0; i < rests.length; i++) if ((rests[i] as number) > threshold) atThreshold--;
  for (let i = 0; i < rests.length; i++) {
    const rest = rests[i] as number;
    if (rest > threshold || (rest === threshold && atThreshold-- > 0)) out[i] = (out[i] as number) + 1;
  }
  return out;
}
