// Measures the power table of docs/experiments.md ("How much data"): 1,000 seeded A/B experiments
// at 10% against 12%, looked at 20 times, for several sizes. `npx tsx scripts/experiment-power.ts`
// (several seconds per size; sizes in units per arm may be given as arguments).
import { simulate } from '../test/experiments/simulate.js';

const sizes = process.argv.slice(2).map(Number);
const experiments = 1000;
for (const units of sizes.length > 0 ? sizes : [2000, 4000, 6000, 7000, 8000, 10_000, 12_000]) {
  const outcome = simulate({ rates: [0.1, 0.12], experiments, looks: 20, unitsPerArmPerLook: units / 20, seed: 2710 });
  const share = (count = 0) => `${((100 * count) / experiments).toFixed(1)}%`;
  console.log(
    `${units} units per arm: stopped at a right winner ${share(outcome.firstWinner.arm1)}, right winner at the end ${share(outcome.finalWinner.arm1)}`,
  );
}
