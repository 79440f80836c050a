// Runs once (scripts/test.mjs): it reaches no database.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type AnalysisInput, type ArmCounts, analyse, type PeriodCounts } from '../../src/experiments/statistics.js';
import chisquareCdf from '@stdlib/stats-base-dists-chisquare-cdf';
import { sampleRatioMismatch } from '../../src/experiments/srm.js';
import { binomialFactory } from './random.js';
import { armKey, simulate, simulateSticky } from './simulate.js';

// The statistics of experiments alone: pure functions, no database, no clock. The simulations are
// seeded, so every run gives the same shares.

const counts = (units: number, conversions: number, visits = units): ArmCounts => ({ units, visits, conversions });

/** One period with equal weights over the arms given, control first. */
function input(arms: Record<string, ArmCounts>, over: Partial<AnalysisInput> = {}): AnalysisInput {
  const keys = Object.keys(arms);
  const weights = Object.fromEntries(keys.map((key) => [key, 5000]));
  return {
    arms: keys.map((key) => ({ key, weight: 5000 })),
    periods: [{ weights, arms }],
    minimumUnitsPerArm: 100,
    ...over,
  };
}

/** Every number a JSON number: stringifying and parsing gives the same value back. */
function assertFiniteJson(value: unknown): void {
  assert.deepEqual(JSON.parse(JSON.stringify(value)), value);
  const walk = (v: unknown): void => {
    if (typeof v === 'number') assert.ok(Number.isFinite(v), `${v} is not finite`);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(value);
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

describe('simulations (issue 27)', () => {
  test('1,000 A/A experiments looked at 20 times: at most 5% are ever declared a winner', () => {
    const outcome = simulate({ rates: [0.1, 0.1], experiments: 1000, looks: 20, unitsPerArmPerLook: 500, seed: 2701 });
    assert.ok(outcome.everWinner <= 50, `${outcome.everWinner} of 1,000 declared a winner`);
  });

  test('1,000 A/B experiments, 10% against 12%, 10,000 units per arm in 20 looks: at least 80% find the right winner', () => {
    const outcome = simulate({ rates: [0.1, 0.12], experiments: 1000, looks: 20, unitsPerArmPerLook: 500, seed: 2702 });
    // Whether one stops at the first winner declared, or looks only at the end.
    assert.ok((outcome.firstWinner.arm1 ?? 0) >= 800, `first winner right in ${outcome.firstWinner.arm1} of 1,000`);
    assert.ok((outcome.finalWinner.arm1 ?? 0) >= 800, `final winner right in ${outcome.finalWinner.arm1} of 1,000`);
    assert.ok((outcome.firstWinner.control ?? 0) <= 5, 'the worse arm is almost never declared the winner');
  });

  test('8 arms of one rate, 300 experiments looked at 20 times: at most 5% ever declare a winner (Bonferroni)', () => {
    const outcome = simulate({ rates: Array(8).fill(0.1), experiments: 300, looks: 20, unitsPerArmPerLook: 500, seed: 2703 });
    assert.ok(outcome.everWinner <= 15, `${outcome.everWinner} of 300 declared a winner`);
  });

  test('1,000 A/A experiments, weights 50/50 then 10/90 halfway, each unit in its first arm: at most 5% ever declare a winner', () => {
    const outcome = simulateSticky({ rates: [0.1, 0.1], experiments: 1000, looks: 20, unitsPerLook: 1000, seed: 3601, weights: 'change' });
    assert.ok(outcome.everWinner <= 50, `${outcome.everWinner} of 1,000 declared a winner`);
    assert.ok(outcome.everSrm <= 10, `${outcome.everSrm} of 1,000 flagged a sample ratio mismatch`);
  });

  test('300 A/A experiments with the bandit reweighing at every look: at most 5% ever declare a winner', () => {
    const outcome = simulateSticky({ rates: [0.1, 0.1], experiments: 300, looks: 20, unitsPerLook: 1000, seed: 3602, weights: 'bandit' });
    assert.ok(outcome.everWinner <= 15, `${outcome.everWinner} of 300 declared a winner`);
    assert.ok(outcome.everSrm <= 3, `${outcome.everSrm} of 300 flagged a sample ratio mismatch`);
  });

  test('the simulations are deterministic for a seed', () => {
    const run = () => simulate({ rates: [0.1, 0.12], experiments: 20, looks: 5, unitsPerArmPerLook: 500, seed: 99 });
    assert.deepEqual(run(), run());
  });
});

describe('sample ratio mismatch', () => {
  test('52/48 at 20,000 units on a 50/50 design is flagged; at 10,000, not yet (the price of reading it at any look)', () => {
    const { srm } = analyse(input({ control: counts(10400, 1040), b: counts(9600, 960) }));
    assert.equal(srm.mismatch, true);
    assert.ok(srm.pValue !== null && srm.pValue < 0.001 && srm.pValue > 0, `p = ${srm.pValue}`);
    const early = analyse(input({ control: counts(5200, 520), b: counts(4800, 480) })).srm;
    assert.equal(early.mismatch, false);
    assert.ok(early.pValue !== null && early.pValue < 0.01, `p = ${early.pValue}`);
    // A gross imbalance is flagged within a few hundred units.
    assert.equal(analyse(input({ control: counts(150, 0), b: counts(50, 0) })).srm.mismatch, true);
  });

  test('an arm losing 10% of its units is flagged at 20,000 units', () => {
    const { srm } = analyse(input({ control: counts(10526, 0), b: counts(9474, 0) }));
    assert.equal(srm.mismatch, true);
  });

  test('50.5/49.5 at 10,000 units is not', () => {
    const { srm } = analyse(input({ control: counts(5050, 505), b: counts(4950, 495) }));
    assert.equal(srm.mismatch, false);
    assert.ok(srm.pValue !== null && srm.pValue > 0.3, `p = ${srm.pValue}`);
  });

  test('1,000 A/A experiments looked at 100 times, 50/50 then 10/90 halfway: at most 1% ever flagged', () => {
    const draw = binomialFactory(3603);
    let flagged = 0;
    for (let run = 0; run < 1000; run++) {
      const periods = [
        { weights: [50, 50], observed: [0, 0] },
        { weights: [10, 90], observed: [0, 0] },
      ];
      let ever = false;
      for (let look = 0; look < 100; look++) {
        const period = periods[look < 50 ? 0 : 1] as (typeof periods)[number];
        const share = (period.weights[0] ?? 0) / 100;
        const first = draw(100, share);
        period.observed = [(period.observed[0] ?? 0) + first, (period.observed[1] ?? 0) + 100 - first];
        if (sampleRatioMismatch(periods).mismatch) ever = true;
      }
      if (ever) flagged++;
    }
    assert.ok(flagged <= 10, `${flagged} of 1,000 flagged`);
  });

  test('the same A/A looks read by a one-look chi-square test at p < 0.001 flag more often (what the correction is for)', () => {
    const draw = binomialFactory(3603);
    let flagged = 0;
    for (let run = 0; run < 1000; run++) {
      let a = 0;
      let b = 0;
      let ever = false;
      for (let look = 0; look < 100; look++) {
        const first = draw(100, 0.5);
        a += first;
        b += 100 - first;
        const expected = (a + b) / 2;
        const statistic = ((a - expected) ** 2 + (b - expected) ** 2) / expected;
        if (1 - chisquareCdf(statistic, 1) < 0.001) ever = true;
      }
      if (ever) flagged++;
    }
    assert.ok(flagged > 10, `${flagged} of 1,000 flagged`);
  });

  test('each period is expected at its own weights', () => {
    const periods: PeriodCounts[] = [
      { weights: { control: 50, b: 50 }, arms: { control: counts(2000, 0), b: counts(2000, 0) } },
      { weights: { control: 10, b: 90 }, arms: { control: counts(1000, 0), b: counts(9000, 0) } },
    ];
    const arms = [
      { key: 'control', weight: 10 },
      { key: 'b', weight: 90 },
    ];
    assert.equal(analyse({ arms, periods, minimumUnitsPerArm: 0 }).srm.mismatch, false);
    // The same units read against one split would be a mismatch.
    const pooled = [{ weights: { control: 10, b: 90 }, arms: { control: counts(3000, 0), b: counts(11000, 0) } }];
    assert.equal(analyse({ arms, periods: pooled, minimumUnitsPerArm: 0 }).srm.mismatch, true);
  });

  test('units in an arm weighted 0 are a mismatch; no units, no test', () => {
    const arms = [
      { key: 'control', weight: 100 },
      { key: 'b', weight: 0 },
    ];
    const periods = [{ weights: { control: 100, b: 0 }, arms: { control: counts(100, 0), b: counts(1, 0) } }];
    assert.deepEqual(analyse({ arms, periods, minimumUnitsPerArm: 0 }).srm, { pValue: 0, mismatch: true });
    assert.deepEqual(analyse({ arms, periods: [], minimumUnitsPerArm: 0 }).srm, { pValue: null, mismatch: false });
  });
});

describe('bounds', () => {
  test('no data: zero rates, no lift, equal chances, p-value 1, collecting', () => {
    const result = analyse(input({ control: counts(0, 0), b: counts(0, 0), c: counts(0, 0) }));
    assertFiniteJson(result);
    assert.deepEqual(
      result.arms.map(({ key, conversionRate, lift, probabilityBest, pValue }) => ({ key, conversionRate, lift, probabilityBest, pValue })),
      [
        { key: 'control', conversionRate: 0, lift: null, probabilityBest: 1 / 3, pValue: null },
        { key: 'b', conversionRate: 0, lift: null, probabilityBest: 1 / 3, pValue: 1 },
        { key: 'c', conversionRate: 0, lift: null, probabilityBest: 1 / 3, pValue: 1 },
      ],
    );
    assert.deepEqual(result.srm, { pValue: null, mismatch: false });
    assert.equal(result.decision, 'collecting');
    assert.equal(result.winner, null);
  });

  test('no period at all is the same as no data', () => {
    const result = analyse({
      arms: [
        { key: 'control', weight: 1 },
        { key: 'b', weight: 1 },
      ],
      periods: [],
      minimumUnitsPerArm: 0,
    });
    assertFiniteJson(result);
    assert.equal(result.arms[1]?.pValue, 1);
    assert.equal(result.decision, 'collecting');
  });

  test('an arm where every unit converted wins, with finite numbers', () => {
    const result = analyse(input({ control: counts(500, 0), b: counts(500, 500) }));
    assertFiniteJson(result);
    assert.equal(result.decision, 'winner');
    assert.equal(result.winner, 'b');
    assert.equal(result.arms[1]?.conversionRate, 1);
    assert.ok((result.arms[1]?.probabilityBest ?? 0) > 0.999);
    // A baseline with no conversion cannot bound a relative lift.
    assert.equal(result.arms[1]?.lift, null);
  });

  test('a baseline where every unit converted wins, and the lift stays at or above -100%', () => {
    const result = analyse(input({ control: counts(500, 500), b: counts(500, 0) }));
    assertFiniteJson(result);
    assert.equal(result.winner, 'control');
    const lift = result.arms[1]?.lift;
    assert.ok(lift);
    assert.equal(lift.estimate, -1);
    assert.ok(lift.low >= -1 && lift.high < 0);
  });

  test('no conversion anywhere, however much data: no difference is shown, and none is claimed', () => {
    const result = analyse(input({ control: counts(50_000, 0), b: counts(50_000, 0) }));
    assertFiniteJson(result);
    assert.equal(result.arms[1]?.pValue, 1);
    assert.equal(result.arms[1]?.lift, null);
    assert.equal(result.decision, 'collecting');
  });

  test('8 arms: finite, chances summing to 1, one clear winner', () => {
    const arms = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [armKey(i), counts(20_000, i === 5 ? 2600 : 2000 + i * 10)]));
    const result = analyse(input(arms));
    assertFiniteJson(result);
    assert.equal(result.arms.length, 8);
    assert.ok(Math.abs(sum(result.arms.map((arm) => arm.probabilityBest)) - 1) < 1e-9);
    assert.equal(result.winner, 'arm5');
  });

  test('units: one short of minimumUnitsPerArm keeps collecting, even with a clear difference and visits to spare; exactly it decides', () => {
    const arms = (units: number) => ({ control: counts(1000, 0, 5000), b: counts(units, 600, 5000) });
    assert.equal(analyse(input(arms(999), { minimumUnitsPerArm: 1000 })).decision, 'collecting');
    const decided = analyse(input(arms(1000), { minimumUnitsPerArm: 1000 }));
    assert.equal(decided.decision, 'winner');
    assert.equal(decided.winner, 'b');
  });

  test('no_difference once every lift interval is within ±10%, not before', () => {
    const equal = (units: number) => input({ control: counts(units, units / 10), b: counts(units, units / 10) });
    const early = analyse(equal(10_000));
    assert.equal(early.decision, 'collecting');
    assert.ok((early.arms[1]?.lift?.high ?? 0) > 0.1);
    const late = analyse(equal(100_000));
    assert.equal(late.decision, 'no_difference');
    assert.equal(late.winner, null);
    const lift = late.arms[1]?.lift;
    assert.ok(lift && lift.low > -0.1 && lift.high < 0.1 && lift.estimate === 0);
  });

  test('a single arm is never decided', () => {
    const result = analyse(input({ control: counts(10_000, 1000) }));
    assertFiniteJson(result);
    assert.equal(result.arms[0]?.probabilityBest, 1);
    assert.equal(result.decision, 'collecting');
  });
});

describe('the numbers agree with each other', () => {
  test('the lift interval holds its estimate and leaves out 0 exactly when p < 0.05', () => {
    for (const conversions of [1000, 1050, 1080, 1100, 1120, 1150, 1200, 950, 900, 850]) {
      const arm = analyse(input({ control: counts(10_000, 1000), b: counts(10_000, conversions) })).arms[1];
      assert.ok(arm?.lift && arm.pValue !== null);
      const { estimate, low, high } = arm.lift;
      assert.ok(low <= estimate && estimate <= high, `${low} <= ${estimate} <= ${high}`);
      assert.equal(arm.pValue < 0.05, low > 0 || high < 0, `${conversions}: p ${arm.pValue}, [${low}, ${high}]`);
    }
  });

  test('the lift estimate is relative to the baseline', () => {
    const lift = analyse(input({ control: counts(10_000, 1000), b: counts(10_000, 1200) })).arms[1]?.lift;
    assert.ok(lift && Math.abs(lift.estimate - 0.2) < 1e-12);
  });

  test('with 8 arms, each p-value is 7 times what the same pair alone gives (Bonferroni)', () => {
    const pair = { control: counts(10_000, 1000), arm1: counts(10_000, 1150) };
    const alone = analyse(input(pair)).arms[1]?.pValue ?? Number.NaN;
    const others = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [armKey(i + 2), counts(10_000, 1000)]));
    const together = analyse(input({ ...pair, ...others })).arms[1]?.pValue ?? Number.NaN;
    assert.ok(alone > 0 && alone < 1 / 7);
    assert.ok(Math.abs(together - 7 * alone) < 1e-12 * together, `${together} against 7 × ${alone}`);
  });

  test('the baseline wins only when it beats every other arm', () => {
    const worse = counts(10_000, 800);
    assert.equal(analyse(input({ control: counts(10_000, 1000), b: worse, c: worse })).winner, 'control');
    const result = analyse(input({ control: counts(10_000, 1000), b: worse, c: counts(10_000, 1000) }));
    assert.equal(result.decision, 'collecting');
    assert.equal(result.winner, null);
  });

  test('of several arms better than the baseline, the best wins', () => {
    const result = analyse(input({ control: counts(10_000, 1000), b: counts(10_000, 1300), c: counts(10_000, 1400) }));
    assert.equal(result.winner, 'c');
  });
});

describe('periods', () => {
  // Traffic moved to b when every arm's rate fell: pooled, b looks far worse; period by period, the
  // arms are the same.
  const periods: PeriodCounts[] = [
    { weights: { control: 50, b: 50 }, arms: { control: counts(1000, 200), b: counts(1000, 200) } },
    { weights: { control: 10, b: 90 }, arms: { control: counts(1000, 50), b: counts(9000, 450) } },
  ];
  const arms = [
    { key: 'control', weight: 10 },
    { key: 'b', weight: 90 },
  ];

  test("a change of weights does not fool the comparison (Simpson's paradox)", () => {
    const result = analyse({ arms, periods, minimumUnitsPerArm: 100 });
    const b = result.arms[1];
    assert.ok(b?.lift && b.pValue !== null);
    assert.ok(Math.abs(b.lift.estimate) < 1e-12, `lift ${b.lift.estimate}`);
    assert.equal(b.pValue, 1);
    assert.notEqual(result.decision, 'winner');
    // Totals and the current weight are reported as they are; the rates are stratified like the lift
    // (issue 45), each period weighted by its information: 500 and 900 units.
    const rate = (500 * 0.2 + 900 * 0.05) / 1400;
    assert.deepEqual(
      result.arms.map(({ key, weight, units, conversions }) => ({ key, weight, units, conversions })),
      [
        { key: 'control', weight: 10, units: 2000, conversions: 250 },
        { key: 'b', weight: 90, units: 10_000, conversions: 650 },
      ],
    );
    for (const arm of result.arms) assert.ok(Math.abs(arm.conversionRate - rate) < 1e-12, `${arm.key}: ${arm.conversionRate}`);
  });

  test('the same counts pooled into one period would declare the baseline the winner', () => {
    const pooled = [{ weights: { control: 1, b: 1 }, arms: { control: counts(2000, 250), b: counts(10_000, 650) } }];
    const result = analyse({ arms, periods: pooled, minimumUnitsPerArm: 100 });
    assert.equal(result.winner, 'control');
  });

  test('a period where an arm had no unit is left out of the comparison', () => {
    const withGap: PeriodCounts[] = [
      { weights: { control: 100, b: 0 }, arms: { control: counts(5000, 2500) } },
      { weights: { control: 50, b: 50 }, arms: { control: counts(5000, 500), b: counts(5000, 500) } },
    ];
    const b = analyse({ arms, periods: withGap, minimumUnitsPerArm: 0 }).arms[1];
    assert.equal(b?.lift?.estimate, 0);
  });
});

describe('determinism and input', () => {
  const close = input({ control: counts(1000, 100), b: counts(1000, 105), c: counts(1000, 98) });

  test('the same counts and seed give the same results; another seed other draws', () => {
    assert.deepEqual(analyse({ ...close, seed: 7 }), analyse({ ...close, seed: 7 }));
    assert.deepEqual(analyse(close), analyse({ ...close, seed: 1 }));
    const a = analyse({ ...close, seed: 7 }).arms.map((arm) => arm.probabilityBest);
    const b = analyse({ ...close, seed: 8 }).arms.map((arm) => arm.probabilityBest);
    assert.notDeepEqual(a, b);
    for (const shares of [a, b]) assert.ok(Math.abs(sum(shares) - 1) < 1e-9);
  });

  test('probabilityBest follows the Beta posteriors', () => {
    // Beta(101, 901) against Beta(106, 896): b is best about 64% of the time.
    const shares = analyse(input({ control: counts(1000, 100), b: counts(1000, 105) })).arms.map((arm) => arm.probabilityBest);
    assert.ok(Math.abs((shares[1] ?? 0) - 0.64) < 0.02, `b best ${shares[1]}`);
  });

  test('malformed counts and seeds are refused', () => {
    const bad: [string, AnalysisInput][] = [
      ['conversions above units', input({ control: counts(10, 11), b: counts(10, 0) })],
      ['a fractional count', input({ control: counts(10.5, 1), b: counts(10, 0) })],
      ['a negative count', input({ control: counts(-1, 0), b: counts(10, 0) })],
      ['an unknown arm', { ...input({ control: counts(10, 1) }), arms: [{ key: 'b', weight: 1 }] }],
      [
        'duplicate keys',
        {
          ...input({ control: counts(10, 1) }),
          arms: [
            { key: 'x', weight: 1 },
            { key: 'x', weight: 1 },
          ],
        },
      ],
      ['no arm', { arms: [], periods: [], minimumUnitsPerArm: 0 }],
      ['a seed of 0', { ...close, seed: 0 }],
      ['a seed above 2^32 - 1', { ...close, seed: 2 ** 32 }],
      ['no draws', { ...close, draws: 0 }],
      ['a negative weight', { ...close, arms: [{ key: 'control', weight: -1 }] }],
    ];
    for (const [what, value] of bad) assert.throws(() => analyse(value), RangeError, what);
  });
});
