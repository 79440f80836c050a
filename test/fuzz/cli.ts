/**
 * Long contract-fuzzing runs: the properties of test/fuzz/contract.test.ts, as many cases as asked.
 *
 *   npm run fuzz -- --runs 100000 [--seed N] [--op "POST /v0/pages"]... [--kind valid|invalid]
 *                   [--keep-going] [--shrink] [--timeout MS]
 *
 * The backend is the one `npm test` uses: SQLite, or PostgreSQL when TEST_DATABASE_URL names one
 * (each run gets a fresh database or schema of its own, dropped at the end).
 */
import { parseArgs } from 'node:util';
import { startApp } from '../helpers.js';
import {
  DEFAULT_SEED,
  fuzzAll,
  fuzzEnv,
  loadDocument,
  MIN_SUCCESS_SHARE,
  operationsOf,
  REQUEST_TIMEOUT_MS,
  skipReason,
  startReceiver,
  summary,
  type Kind,
  type Operation,
  type OpResult,
} from './contract.js';

const USAGE = `usage: npm run fuzz -- [--runs N] [--seed N] [--op "METHOD /path"]... [--kind valid|invalid] [--keep-going] [--shrink] [--timeout MS]

  --runs N        total cases over all operations and both kinds (default 100000)
  --seed N        the seed (default ${DEFAULT_SEED}); a failure prints the one to reproduce it
  --op KEY        only this operation, "METHOD /path" (repeatable; a substring matches every operation containing it)
  --kind K        only valid or only invalid requests
  --keep-going    record every distinct failure and go on, rather than stop an operation at its first
  --shrink        shrink a failing request to a smaller one before reporting it (slower)
  --verbose, -v   per operation: why valid requests were refused, and what the invalid ones broke
  --timeout MS    how long one request may take before it counts as a hang (default ${REQUEST_TIMEOUT_MS})`;

function fail(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

function integer(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^-?\d+$/.test(raw)) fail(`--${name} must be an integer, got "${raw}"`);
  return Number(raw);
}

function readArgs() {
  try {
    return parseArgs({
      options: {
        runs: { type: 'string' },
        seed: { type: 'string' },
        op: { type: 'string', multiple: true },
        kind: { type: 'string' },
        'keep-going': { type: 'boolean', default: false },
        shrink: { type: 'boolean', default: false },
        verbose: { type: 'boolean', short: 'v', default: false },
        timeout: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
    });
  } catch (err) {
    return fail((err as Error).message);
  }
}
const args = readArgs().values;
if (args.help) {
  console.log(USAGE);
  process.exit(0);
}
const totalRuns = integer('runs', args.runs, 100_000);
const seed = integer('seed', args.seed ?? process.env.FUZZ_SEED, DEFAULT_SEED);
const timeoutMs = integer('timeout', args.timeout, REQUEST_TIMEOUT_MS);
if (args.kind !== undefined && args.kind !== 'valid' && args.kind !== 'invalid')
  fail(`--kind must be valid or invalid, got "${args.kind}"`);
const kinds: Kind[] = args.kind ? [args.kind as Kind] : ['valid', 'invalid'];

const receiver = await startReceiver();
const t = await startApp(fuzzEnv());
let failed = false;
try {
  const all = operationsOf(await loadDocument(t));
  const filters = args.op ?? [];
  // A filter naming an operation exactly selects it alone; otherwise it matches as a substring.
  const matches = (op: Operation, f: string) => (all.some((o) => o.key === f) ? op.key === f : op.key.includes(f));
  const ops = all.filter((op) => !skipReason(op) && (filters.length === 0 || filters.some((f) => matches(op, f))));
  if (ops.length === 0) fail(`no operation matches ${filters.map((f) => `"${f}"`).join(', ')}`);
  const perProperty = Math.max(1, Math.ceil(totalRuns / (ops.length * kinds.length)));
  const backend = process.env.TEST_DATABASE_URL ? 'PostgreSQL' : 'SQLite';
  console.log(`# contract fuzzing on ${backend}: ${ops.length} operations × ${kinds.join(' + ')}, ${perProperty} cases each, seed ${seed}`);
  for (const op of all) {
    const reason = skipReason(op);
    if (reason) console.log(`# skipped ${op.key}: ${reason}`);
  }
  const started = Date.now();
  const results: OpResult[] = await fuzzAll(t, receiver, ops, {
    seed,
    validRuns: perProperty,
    invalidRuns: perProperty,
    kinds,
    keepGoing: args['keep-going'],
    shrink: args.shrink,
    timeoutMs,
    onResult: (r) => {
      console.log(`${r.failures.length > 0 ? 'FAIL' : 'ok  '} ${summary(r)}`);
      if (args.verbose) {
        for (const [refusal, n] of Object.entries(r.refusals)) console.log(`       refused ×${n}: ${refusal}`);
        if (r.kind === 'invalid')
          console.log(
            `       broken: ${Object.entries(r.labels)
              .map(([l, n]) => `${l} ×${n}`)
              .join(', ')}`,
          );
      }
    },
  });
  const low = results.filter((r) => r.kind === 'valid' && r.runs > 0 && r.success / r.runs < MIN_SUCCESS_SHARE);
  const failures = results.flatMap((r) => r.failures);
  const cases = results.reduce((n, r) => n + r.runs, 0);
  console.log(`\n# ${cases} cases in ${Math.round((Date.now() - started) / 1000)} s, seed ${seed}`);
  for (const r of low)
    console.log(`# LOW 2xx SHARE ${r.op}: ${r.success}/${r.runs} valid requests got a 2xx (at least ${MIN_SUCCESS_SHARE * 100}% expected)`);
  if (failures.length > 0) {
    console.log(`\n# ${failures.length} failure(s):\n`);
    for (const f of failures) console.log(`${f}\n`);
  }
  failed = failures.length > 0 || low.length > 0;
  if (!failed) console.log('# all properties held');
} finally {
  await t.close();
  await receiver.close();
}
process.exit(failed ? 1 : 0);
