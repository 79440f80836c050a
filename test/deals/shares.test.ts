// Runs once (scripts/test.mjs): it reaches no database.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { largestRemainder } from '../../src/deals/shares.js';

// The pipeline's rounding keeps its sums (issue 49); its common case no longer sorts with a
// comparator (issue 50). It must pick the same parts as the method's definition: floors, then one
// unit each to the largest remainders, ties to the earlier part.

const SNAP = 1e-6;
/** Hamilton's method as written: sort by remainder, then by index, and top up the first ones. */
function byDefinition(parts: number[], total: number): number[] {
  const out = parts.map((x) => Math.floor(x + SNAP));
  const missing = total - out.reduce((a, b) => a + b, 0);
  const order = parts.map((_, i) => i).sort((a, b) => parts[b]! - out[b]! - (parts[a]! - out[a]!) || a - b);
  for (let j = 0; j < missing; j++) out[order[j]!]! += 1;
  return out;
}

/** A deterministic stream of numbers in [0, 1). */
function random(seed: number) {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    return s / 2_147_483_648;
  };
}

test('parts with many equal remainders (thirds, sevenths) and distinct ones: the same integers as the definition, adding up', () => {
  const next = random(49);
  for (let round = 0; round < 500; round++) {
    const n = 1 + Math.floor(next() * 60);
    const denominator = [3, 7, 1000][round % 3]!;
    // Whole units split into parts that are multiples of 1/denominator: ties everywhere but the last kind.
    const parts = Array.from({ length: n }, () => Math.floor(next() * 5 * denominator) / denominator);
    const total = Math.round(parts.reduce((a, b) => a + b, 0));
    const got = largestRemainder(parts, total);
    const missing = total - parts.reduce((a, b) => a + Math.floor(b + SNAP), 0);
    if (missing < 0) continue;
    assert.deepEqual(got, byDefinition(parts, total), `round ${round}: ${JSON.stringify(parts)} to ${total}`);
    assert.equal(
      got.reduce((a, b) => a + b, 0),
      total,
    );
  }
});

test('three thirds of 100 cents: 34, 33, 33, the first of the ties first; nothing missing changes nothing', () => {
  assert.deepEqual(largestRemainder([100 / 3, 100 / 3, 100 / 3], 100), [34, 33, 33]);
  assert.deepEqual(largestRemainder([10, 20, 30], 60), [10, 20, 30]);
  assert.deepEqual(largestRemainder([], 0), []);
  // Every part missing its unit: each gets one.
  assert.deepEqual(largestRemainder([0.5, 0.5], 1), [1, 0]);
  assert.deepEqual(largestRemainder([0.6, 0.6, 0.8], 2), [1, 0, 1]);
});
