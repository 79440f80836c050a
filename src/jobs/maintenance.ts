import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { roundLoop } from './loop.js';

/**
 * Housekeeping, in every process whatever else it runs (the webhook dispatcher may be off): at
 * start, then every `everyMs`. Every instance does it; the deletes are idempotent, so instances
 * doing it at once, or twice in an interval, is harmless.
 */
export interface Maintenance {
  start(): void;
  /** Waits for a round under way. */
  stop(): Promise<void>;
}

const HOUR_MS = 60 * 60 * 1000;

/**
 * The tasks by name, each an owner's function (its table's pruning): src/housekeeping.ts lists
 * them, above the areas, since the areas import jobs/ and not the other way.
 */
export type MaintenanceTasks = Record<string, (db: Kysely<Database>) => Promise<unknown>>;

async function runTasks(db: Kysely<Database>, log: FastifyBaseLogger, tasks: MaintenanceTasks): Promise<void> {
  // One failing task does not hold back the others; each is tried again next round.
  for (const [task, run] of Object.entries(tasks)) {
    try {
      await run(db);
    } catch (err) {
      log.error({ err, task }, 'maintenance task failed');
    }
  }
}

export function createMaintenance(db: Kysely<Database>, log: FastifyBaseLogger, tasks: MaintenanceTasks, everyMs = HOUR_MS): Maintenance {
  return roundLoop({
    round: () => runTasks(db, log, tasks),
    pollMs: everyMs,
    // Nothing wakes it, so rounds are apart by `everyMs` alone.
    minGapMs: 0,
    // Housekeeping never keeps the process alive on its own.
    unref: true,
    onError: (err) => log.error({ err }, 'maintenance round failed'),
  });
}
