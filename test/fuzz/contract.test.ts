import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { startApp } from '../helpers.js';
import {
  buildFixture,
  DEFAULT_SEED,
  fuzzEnv,
  fuzzOperation,
  Gen,
  invalidRequest,
  loadDocument,
  MIN_SUCCESS_SHARE,
  operationsOf,
  skipReason,
  startReceiver,
  summary,
  unique,
  validRequest,
  type Ctx,
  type Kind,
  type Operation,
} from './contract.js';

// Contract fuzzing (issue 8): for every operation of the service's own /openapi.json, valid
// requests generated from its schemas must never get a 5xx, and a 2xx must match the declared
// schema (a good share of them must get a 2xx); invalid ones must get a 4xx problem+json, never a
// 5xx, never a hang. Seeded: FUZZ_SEED overrides the seed, FUZZ_RUNS the total number of cases;
// a failure prints the seed, the request and the response. Long runs: `npm run fuzz -- --runs 100000`.

const SEED = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : DEFAULT_SEED;
const TOTAL_RUNS = process.env.FUZZ_RUNS !== undefined ? Number(process.env.FUZZ_RUNS) : 3000;
assert.ok(Number.isSafeInteger(SEED), `FUZZ_SEED must be an integer, got ${process.env.FUZZ_SEED}`);
assert.ok(Number.isSafeInteger(TOTAL_RUNS) && TOTAL_RUNS > 0, `FUZZ_RUNS must be a positive integer, got ${process.env.FUZZ_RUNS}`);

// The operations are read from the running app before the tests are declared, so each one is a test.
const receiver = await startReceiver();
const t = await startApp(fuzzEnv());
after(async () => {
  await t.close();
  await receiver.close();
});
const ops: Operation[] = operationsOf(await loadDocument(t));
const fuzzed = ops.filter((op) => !skipReason(op));
const RUNS = Math.max(10, Math.ceil(TOTAL_RUNS / (fuzzed.length * 2)));

/** Each operation gets a tenant and a fixture of its own, shared by its valid and invalid runs. */
const contexts = new Map<string, Promise<Ctx>>();
function contextFor(op: Operation): Promise<Ctx> {
  let c = contexts.get(op.key);
  if (!c) {
    c = t.newTenant(`Fuzz ${op.key}`).then((tenant) => buildFixture(t, receiver, tenant, unique('fz')));
    contexts.set(op.key, c);
  }
  return c;
}

const reproduce = (op: Operation, kind: Kind) =>
  `seed ${SEED}: rerun with FUZZ_SEED=${SEED} npm test -- test/fuzz/contract.test.ts, or npm run fuzz -- --seed ${SEED} --op "${op.key}" --kind ${kind} --runs ${RUNS}`;

describe('the document', () => {
  test('has operations, and each is fuzzed or skipped for a stated reason', { timeout: 30_000 }, async (tt) => {
    tt.diagnostic(`contract fuzzing: seed ${SEED}, ${RUNS} cases per property, ${fuzzed.length} operations`);
    assert.ok(ops.length >= 50, `only ${ops.length} operations in the document`);
    const skipped = ops.filter((op) => skipReason(op));
    for (const op of skipped) tt.diagnostic(`skipped ${op.key}: ${skipReason(op)}`);
    // Only the signed download and preview links are skipped; anything new is fuzzed (or must be skipped on purpose).
    assert.deepEqual(skipped.map((op) => op.key).sort(), [
      'GET /files/{fileId}',
      'GET /files/{fileId}/preview',
      'GET /files/{fileId}/{rendition}',
      'GET /previews/{page_id}',
    ]);
    // Every operation can be generated: its path parameters have fixtures, its schemas are understood.
    const c = await contextFor(fuzzed[0]!);
    for (const op of fuzzed) {
      const g = new Gen(c, op);
      assert.doesNotThrow(() => validRequest(g), `${op.key}: valid requests`);
      assert.doesNotThrow(() => invalidRequest(g), `${op.key}: invalid requests`);
    }
  });
});

for (const kind of ['valid', 'invalid'] as const) {
  describe(`${kind} requests`, () => {
    for (const op of fuzzed) {
      test(op.key, { timeout: 60_000 }, async (tt) => {
        const c = await contextFor(op);
        const r = await fuzzOperation(c, op, kind, { seed: SEED, runs: RUNS });
        tt.diagnostic(summary(r));
        if (r.failures.length > 0) assert.fail(`${r.failures.join('\n\n')}\n\n${reproduce(op, kind)}`);
        assert.equal(r.runs, RUNS, 'every case ran');
        if (kind === 'valid') {
          const refusals = Object.entries(r.refusals)
            .map(([why, n]) => `  ${n}× ${why}`)
            .join('\n');
          assert.ok(
            r.success / r.runs >= MIN_SUCCESS_SHARE,
            `only ${r.success} of ${r.runs} valid requests got a 2xx (at least ${MIN_SUCCESS_SHARE * 100}% expected); refused:\n${refusals}\n${reproduce(op, kind)}`,
          );
        }
      });
    }
  });
}
