import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import type { MetricsRegistry } from './registry.js';

/** How a generation ended (src/agent/worker.ts says what each means). */
export type GenerationOutcome = (typeof OUTCOMES)[number];
const OUTCOMES = ['published', 'retried', 'failed', 'given_back', 'dropped'] as const;

/**
 * A literal, not bound parameters: only then does SQLite see that the query implies the partial
 * index's predicate and reads that index (as small as the queue) instead of every version.
 */
const WAITING = sql<boolean>`status in ('queued', 'processing')`;

/**
 * The page agent's queue, read from the database when scraped (one count and one min over the
 * partial index of waiting versions), so every instance reports the same queue, whichever of them
 * runs the agent.
 */
export function agentQueueMetrics(metrics: MetricsRegistry, db: Kysely<Database>): void {
  metrics.gauge(
    'agent_queue_depth',
    'Versions waiting for the agent: queued, or processing (generating or waiting for a retry)',
    [],
    async (g) => {
      const row = await db
        .selectFrom('audience_versions')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where(WAITING)
        .executeTakeFirst();
      g.set(Number(row?.n ?? 0));
    },
  );
  metrics.gauge(
    'agent_queue_oldest_age_seconds',
    'How long the oldest version waiting for the agent has been queued (0: none waiting)',
    [],
    async (g) => {
      const row = await db
        .selectFrom('audience_versions')
        .select((eb) => eb.fn.min('queued_at').as('at'))
        .where(WAITING)
        .executeTakeFirst();
      g.set(typeof row?.at === 'string' ? Math.max(0, (Date.now() - Date.parse(row.at)) / 1000) : 0);
    },
  );
}

/** The generations of this process's worker, fed by its `onGeneration` callback. */
export function agentGenerationMetrics(metrics: MetricsRegistry) {
  const generations = metrics.counter('agent_generations_total', 'Generations by this process, by outcome', ['outcome']);
  // Every outcome from the start, at 0: a rate over a series that appears only at its first increment misses that one.
  for (const outcome of OUTCOMES) generations.inc({ outcome }, 0);
  const durations = metrics.histogram(
    'agent_generation_duration_seconds',
    'How long the generator took, for every generation that ran',
    [0.001, 0.01, 0.1, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120],
  );
  return (outcome: GenerationOutcome, seconds: number | undefined): void => {
    generations.inc({ outcome });
    if (seconds !== undefined) durations.observe(seconds);
  };
}
