import type { Kysely, Transaction } from 'kysely';
import { type Mentions, mentioning } from '../db/mentions.js';
import type { Database } from '../db/types.js';

// The outbox's writes after an event is recorded (outbox.ts): its redaction by a person's erasure,
// its pruning.

/**
 * Events recorded before `cutoff` go, read by their consumers or not (a consumer that has not run
 * for the 30 days events are kept misses them); their deliveries must have gone first (webhooks/deliveries.ts).
 */
export async function pruneEventsBefore(db: Kysely<Database>, cutoff: string): Promise<void> {
  await db.deleteFrom('events').where('created_at', '<', cutoff).execute();
}

/**
 * A person's erasure (persons/erasure.ts): every event of the tenant that mentions them gets `payload`
 * for its body, which is also what a pending delivery then sends.
 */
export async function redactEventsMentioning(
  trx: Transaction<Database>,
  tenantId: string,
  mentions: Mentions,
  payload: string,
): Promise<void> {
  for (const id of await mentioning(trx, 'events', 'payload', tenantId, mentions)) {
    await trx.updateTable('events').set({ payload }).where('id', '=', id).execute();
  }
}
