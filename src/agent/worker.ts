import { roundLoop } from '../jobs/index.js';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { AgentConfig } from '../config.js';
import type { AudienceVersionsTable, Database } from '../db/types.js';
import { compileJsonCheck } from '../http/validation.js';
import { Content, layoutErrors, MAX_CONTENT_BYTES } from '../pages/index.js';
import { gatherInputs } from './inputs.js';
import { paced } from './pacing.js';
import { claimVersions, startGenerations } from '../audiences/index.js';
import { type Outcome, writeOutcomes } from './repository.js';
import { retryIn } from './retry-policy.js';
import { GenerationError, type Generator, type GeneratorInput } from './types.js';

/**
 * The page agent's worker: claims queued versions, moves them to processing, has the generator
 * write their content, checks it against the content schema and publishes it, through the
 * lifecycle of src/audiences/ (docs/agent.md). Safe in any number of processes on one database:
 * a version is claimed with a lease (db/lease.ts) that outlives the generation, every outcome is
 * written only while the lease is still this worker's, and a crashed worker's versions are
 * claimed again once its leases end.
 *
 * Throughput: versions are claimed, moved and published in batches, each batch one transaction,
 * and the outcomes that finish while a batch is being written are written together in the next.
 */
export interface Agent {
  start(): void;
  /** Something may have been queued: look now rather than at the next poll. */
  wake(): void;
  stop(): Promise<void>;
}

export interface AgentTuning {
  /** How often an idle worker looks for work (1 s). */
  pollMs?: number;
  /** The first retry's base delay (1 s); each later one doubles it. */
  retryBaseMs?: number;
  /** Versions claimed at once for an in-process generator (50). */
  batchSize?: number;
}

const POLL_MS = 1000;
const MIN_ROUND_GAP_MS = 10;
/** Beyond the generation's timeout: the batch's reads and writes around it. */
const LEASE_MARGIN_MS = 10_000;
const WRITE_BATCH = 50;

/** A generation's outcome, and how long the generator took (undefined: it did not run). */
interface Generated {
  outcome: Outcome;
  seconds: number | undefined;
}

const isContent = compileJsonCheck(Content);

/**
 * Why an answer is not content the page may show, or undefined when it is: the schema, then each
 * layout's rules; a cta may only name an action the page's own content names (the agent never
 * sees the actions, so it can only keep the page's).
 */
function answerError(content: unknown, page: GeneratorInput['page']): string | undefined {
  if (!isContent(content)) {
    const first = isContent.errors?.[0];
    return first ? `${first.instancePath || '/'} ${first.message ?? 'is invalid'}` : '/ is invalid';
  }
  // Bounded as every written content is (issue 45), so a generated version lists and serves as any other.
  const bytes = Buffer.byteLength(JSON.stringify(content), 'utf8');
  if (bytes > MAX_CONTENT_BYTES) return `/ is ${bytes} bytes as JSON; a content is at most 512 KB (${MAX_CONTENT_BYTES} bytes)`;
  const actionIds = page.content.sections.flatMap((s) => [
    ...(s.actionId === undefined ? [] : [s.actionId]),
    ...(s.items ?? []).flatMap((item) => (item.actionId === undefined ? [] : [item.actionId])),
  ]);
  const first = layoutErrors(content as Content, actionIds, '').at(0);
  return first && `${first.path} ${first.message}`;
}

/**
 * What became of a generation, once its outcome was written (or not): `dropped` when the write
 * found the version no longer this worker's (cancelled or moved on by a client meanwhile, or taken
 * over after the lease ran out) or the write failed; `given_back` when the worker stopped first.
 */
export type GenerationOutcome = 'published' | 'retried' | 'failed' | 'given_back' | 'dropped';

const OUTCOME_OF: Record<Outcome['kind'], GenerationOutcome> = {
  publish: 'published',
  retry: 'retried',
  fail: 'failed',
  'give-back': 'given_back',
};

/** Told of each generation's outcome, with how long the generator took (undefined: it did not run). */
export type OnGeneration = (outcome: GenerationOutcome, seconds: number | undefined) => void;

export function createAgent(
  db: Kysely<Database>,
  config: AgentConfig,
  generator: Generator,
  log: FastifyBaseLogger,
  tuning: AgentTuning = {},
  onGeneration?: OnGeneration,
): Agent {
  const pollMs = tuning.pollMs ?? POLL_MS;
  const retryBaseMs = tuning.retryBaseMs ?? 1000;
  const batchSize = generator.inProcess ? (tuning.batchSize ?? 50) : config.concurrency;
  // In process: one batch generating while the one before it is written.
  const capacity = generator.inProcess ? batchSize * 2 : config.concurrency;
  const leaseMs = config.timeoutMs + LEASE_MARGIN_MS;
  const stopping = new AbortController();
  const batches = new Set<Promise<void>>();
  let held = 0;

  // Outcomes wait here and are written together, one transaction per turn of the writer.
  let pending: { outcome: Outcome; seconds: number | undefined; done: () => void }[] = [];
  let writing: Promise<void> | undefined;

  function record({ outcome, seconds }: Generated): Promise<void> {
    return new Promise((done) => {
      pending.push({ outcome, seconds, done });
      writing ??= writeAll();
    });
  }

  async function writeAll(): Promise<void> {
    while (pending.length > 0) {
      const batch = pending.slice(0, WRITE_BATCH);
      pending = pending.slice(WRITE_BATCH);
      let written = new Set<Outcome>();
      try {
        written = await paced(() =>
          db.transaction().execute((trx) =>
            writeOutcomes(
              trx,
              batch.map((p) => p.outcome),
            ),
          ),
        );
      } catch (err) {
        // Not written: the leases run out and the versions are claimed again.
        log.error({ err }, 'agent: writing outcomes failed');
      }
      for (const p of batch) {
        onGeneration?.(written.has(p.outcome) ? OUTCOME_OF[p.outcome.kind] : 'dropped', p.seconds);
        p.done();
      }
    }
    writing = undefined;
  }

  async function generateOne(version: AudienceVersionsTable, lease: string, input: GeneratorInput | undefined): Promise<Generated> {
    if (!input)
      return { outcome: { kind: 'fail', version, lease, reason: 'the audience or its page no longer exists' }, seconds: undefined };
    if (stopping.signal.aborted) return { outcome: { kind: 'give-back', version, lease }, seconds: undefined };
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    let reason: string;
    let retryAfterMs: number | undefined;
    try {
      // An in-process generation is over before any timer could fire: it needs none.
      const signal = generator.inProcess ? stopping.signal : AbortSignal.any([stopping.signal, AbortSignal.timeout(config.timeoutMs)]);
      const content = await generator.generate(input, signal);
      const invalid = answerError(content, input.page);
      if (invalid === undefined) return { outcome: { kind: 'publish', version, lease, content: content as Content }, seconds: seconds() };
      reason = `${generator.name}: the answer is not valid content (${invalid})`;
    } catch (err) {
      if (stopping.signal.aborted) return { outcome: { kind: 'give-back', version, lease }, seconds: seconds() };
      reason = err instanceof GenerationError ? err.reason : `${generator.name}: the generation failed`;
      retryAfterMs = err instanceof GenerationError ? err.retryAfterMs : undefined;
      if (!(err instanceof GenerationError)) log.warn({ err, versionId: version.id }, 'agent: generator error');
    }
    const took = seconds();
    const failures = Number(version.agent_attempts) + 1;
    const wait = retryIn({ failures, baseMs: retryBaseMs, retryAfterMs, random: Math.random() });
    log.info({ versionId: version.id, failures, reason, retryInMs: wait }, 'agent: generation failed');
    if (wait === null) return { outcome: { kind: 'fail', version, lease, reason }, seconds: took };
    if (wait < pollMs) setTimeout(rounds.wake, wait).unref();
    return { outcome: { kind: 'retry', version, lease, reason, at: new Date(Date.now() + wait).toISOString() }, seconds: took };
  }

  async function runBatch(claimed: AudienceVersionsTable[]): Promise<void> {
    try {
      const ours = await paced(() => db.transaction().execute((trx) => startGenerations(trx, claimed)));
      const inputs = await paced(() => gatherInputs(db, ours, generator.readsHistory));
      const done = ours.map(async (version) => {
        // The claim set the lease; a row without one was not claimed here.
        const lease = version.agent_lease_until;
        if (lease === null) return;
        await record(await generateOne(version, lease, inputs.get(version.id)));
      });
      await Promise.all(done);
    } catch (err) {
      log.error({ err }, 'agent: a batch failed; its versions are claimed again when their leases end');
    } finally {
      held -= claimed.length;
      rounds.wake();
    }
  }

  async function tick(): Promise<void> {
    const free = Math.min(batchSize, capacity - held);
    if (free <= 0) return;
    const at = new Date();
    const claimed = await paced(() => claimVersions(db, free, at.toISOString(), new Date(at.getTime() + leaseMs).toISOString()));
    if (claimed.length === 0) return;
    held += claimed.length;
    const batch = runBatch(claimed).finally(() => batches.delete(batch));
    batches.add(batch);
    if (claimed.length === free) rounds.wake(); // there may be more: claim again at once
  }

  const rounds = roundLoop({
    round: tick,
    pollMs,
    minGapMs: MIN_ROUND_GAP_MS,
    onError: (err) => log.error({ err }, 'agent: claim round failed'),
  });

  return {
    start: rounds.start,
    wake: rounds.wake,
    async stop() {
      stopping.abort();
      await rounds.stop();
      await Promise.allSettled(batches);
      await writing;
    },
  };
}
