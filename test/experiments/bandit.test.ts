// Runs once (scripts/test.mjs): it reaches no database.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BANDIT_INTERVAL_MS, banditDue, thompsonWeights } from '../../src/experiments/bandit.js';

// The bandit's weights alone: seeded Thompson sampling, no clock, no database.

const arm = (key: string, units: number, conversions: number) => ({ key, units, conversions });
const sum = (weights: Record<string, number>) => Object.values(weights).reduce((a, b) => a + b, 0);

function assertWeights(weights: Record<string, number>, total = 10_000): void {
  assert.equal(sum(weights), total);
  for (const [key, weight] of Object.entries(weights)) {
    assert.ok(Number.isInteger(weight) && weight >= Math.ceil(total / 100) && weight <= 10_000, `${key}: ${weight}`);
  }
}

describe('thompsonWeights', () => {
  test('a clearly worse arm is held at the 1% floor, and the rest follows the chances of being best', () => {
    const weights = thompsonWeights([arm('control', 5000, 500), arm('b', 5000, 300), arm('c', 5000, 510)], { seed: 1 });
    assertWeights(weights);
    assert.equal(weights.b, 100);
    // control and c are close (Beta(501, 4501) against Beta(511, 4491)): c somewhat ahead.
    assert.ok((weights.c ?? 0) > (weights.control ?? 0) && (weights.control ?? 0) > 2000, JSON.stringify(weights));
  });

  test('a single sure winner leaves every other arm exactly at the floor', () => {
    const arms = [arm('a', 10_000, 5000), ...Array.from({ length: 7 }, (_, i) => arm(`x${i}`, 10_000, 100))];
    const weights = thompsonWeights(arms, { seed: 3 });
    assertWeights(weights);
    assert.equal(weights.a, 9300);
    for (let i = 0; i < 7; i++) assert.equal(weights[`x${i}`], 100);
  });

  test('no data: equal weights, the remainder going to the first arms', () => {
    assert.deepEqual(thompsonWeights([arm('a', 0, 0), arm('b', 0, 0)], { seed: 1 }), { a: 5000, b: 5000 });
    assert.deepEqual(thompsonWeights([arm('a', 0, 0), arm('b', 0, 0), arm('c', 0, 0)], { seed: 1 }), { a: 3334, b: 3333, c: 3333 });
  });

  test('100 arms fit at the floor; 101 do not', () => {
    const arms = (n: number) => Array.from({ length: n }, (_, i) => arm(`k${i}`, 100, i === 0 ? 90 : 1));
    const weights = thompsonWeights(arms(100), { seed: 1 });
    assertWeights(weights);
    assert.ok(Object.values(weights).every((weight) => weight === 100));
    assert.throws(() => thompsonWeights(arms(101), { seed: 1 }), RangeError);
  });

  test('another total is shared the same way', () => {
    const weights = thompsonWeights([arm('a', 1000, 100), arm('b', 1000, 40)], { seed: 1, total: 100 });
    assert.deepEqual(weights, { a: 99, b: 1 });
    assert.deepEqual(thompsonWeights([arm('only', 10, 1)], { seed: 1 }), { only: 10_000 });
  });

  test('the same counts and seed give the same weights; another seed may differ', () => {
    const arms = [arm('a', 1000, 100), arm('b', 1000, 104), arm('c', 1000, 97)];
    const first = thompsonWeights(arms, { seed: 11 });
    assert.deepEqual(thompsonWeights(arms, { seed: 11 }), first);
    assert.notDeepEqual(thompsonWeights(arms, { seed: 12 }), first);
    assertWeights(first);
  });

  test('malformed input is refused', () => {
    const ok = [arm('a', 10, 1), arm('b', 10, 1)];
    assert.throws(() => thompsonWeights([], { seed: 1 }), RangeError);
    assert.throws(() => thompsonWeights([arm('a', 10, 1), arm('a', 10, 1)], { seed: 1 }), RangeError);
    assert.throws(() => thompsonWeights([arm('a', 10, 11)], { seed: 1 }), RangeError);
    assert.throws(() => thompsonWeights([arm('a', -1, 0)], { seed: 1 }), RangeError);
    assert.throws(() => thompsonWeights(ok, { seed: 0 }), RangeError);
    assert.throws(() => thompsonWeights(ok, { seed: 1.5 }), RangeError);
    assert.throws(() => thompsonWeights(ok, { seed: 1, total: 10_001 }), RangeError);
    assert.throws(() => thompsonWeights(ok, { seed: 1, total: 1 }), RangeError);
    assert.throws(() => thompsonWeights(ok, { seed: 1, draws: 0 }), RangeError);
  });
});

describe('banditDue', () => {
  const last = new Date('2026-12-01T10:00:00.000Z');
  test('never computed, or 15 minutes on: due; a millisecond sooner: not', () => {
    assert.equal(banditDue(null, last), true);
    assert.equal(banditDue(last, new Date(last.getTime() + BANDIT_INTERVAL_MS)), true);
    assert.equal(banditDue(last, new Date(last.getTime() + BANDIT_INTERVAL_MS - 1)), false);
    assert.equal(BANDIT_INTERVAL_MS, 15 * 60 * 1000);
  });
});
