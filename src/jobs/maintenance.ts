import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { now } from '../time.js';
import { forgetPastSecrets } from '../db/daily-secrets.js';
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
/** How long events (and their deliveries) are kept: docs/webhooks.md says 30 days. */
const KEEP_EVENTS_MS = 30 * 24 * HOUR_MS;

const TASKS: Record<string, (db: Kysely<Database>) => Promise<unknown>> = {
  async 'prune events'(db) {
    const cutoff = new Date(Date.now() - KEEP_EVENTS_MS).toISOString();
    await db
      .deleteFrom('webhook_deliveries')
      .where('event_id', 'in', (eb) => eb.selectFrom('events').select('id').where('created_at', '<', cutoff))
      .execute();
    await db.deleteFrom('events').where('created_at', '<', cutoff).execute();
  },
  // An expired key is already ignored (and taken over) by http/idempotency.ts; this only frees the space.
  'prune idempotency keys': (db) => db.deleteFrom('idempotency_keys').where('expires_at', '<', now()).execute(),
  // A claim matters for REPEAT_WINDOW_MS (src/site/forms/leads.ts); a minute leaves room for clocks that differ.
  'prune form claims': (db) =>
    db
      .deleteFrom('form_claims')
      .where('accepted_at', '<', new Date(Date.now() - 60_000).toISOString())
      .execute(),
  // Yesterday's visitor keys can no longer be recomputed, so never linked to today's (db/daily-secrets.ts).
  'forget past daily secrets': (db) => forgetPastSecrets(db),
};

async function runTasks(db: Kysely<Database>, log: FastifyBaseLogger): Promise<void> {
  // One failing task does not hold back the others; each is tried again next round.
  for (const [task, run] of Object.entries(TASKS)) {
    try {
      await run(db);
    } catch (err) {
      log.error({ err, task }, 'maintenance task failed');
    }
  }
}

export function createMaintenance(db: Kysely<Database>, log: FastifyBaseLogger, everyMs = HOUR_MS): Maintenance {
  return roundLoop({
    round: () => runTasks(db, log),
    pollMs: everyMs,
    // Nothing wakes it, so rounds are apart by `everyMs` alone.
    minGapMs: 0,
    // Housekeeping never keeps the process alive on its own.
    unref: true,
    onError: (err) => log.error({ err }, 'maintenance round failed'),
  });
}
