import type { Kysely, Transaction } from 'kysely';
import { claimLeases } from '../db/lease.js';
import { type Mentions, mentioning } from '../db/mentions.js';
import type { Database } from '../db/types.js';
import { now } from '../time.js';

// The outbox's writes after an event is recorded (outbox.ts): its fan-out by the webhook
// dispatcher (webhooks/deliveries.ts), its redaction by a person's erasure, its pruning.

/** Up to `batch` events not fanned out yet, leased until `until`, so two dispatchers never fan out the same event. */
export function claimEventsToFanOut(db: Kysely<Database>, batch: number, until: string) {
  return claimLeases(db, {
    table: 'events',
    lease: 'fan_lease_until',
    due: (eb) => eb('fanned_out', '=', 0),
    orderBy: 'created_at',
    limit: batch,
    now: now(),
    until,
    returning: ['id', 'tenant_id', 'type'],
  });
}

/** The events now have their deliveries; their lease is given up. */
export async function markFannedOut(trx: Transaction<Database>, eventIds: readonly string[]): Promise<void> {
  await trx.updateTable('events').set({ fanned_out: 1, fan_lease_until: null }).where('id', 'in', eventIds).execute();
}

/** An event whose one delivery its emitter makes itself (a subscription's test): never fanned out. */
export async function keepFromFanOut(trx: Transaction<Database>, eventId: string): Promise<void> {
  await trx.updateTable('events').set({ fanned_out: 1 }).where('id', '=', eventId).execute();
}

/** Events recorded before `cutoff` go; their deliveries must have gone first (webhooks/deliveries.ts). */
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
