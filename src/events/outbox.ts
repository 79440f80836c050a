import type { Kysely } from 'kysely';
import { prepared } from '../db/prepared.js';
import type { Database } from '../db/types.js';
import { newId } from '../ids.js';
import { now } from '../time.js';
import type { EventType } from './catalogue.js';

const insertEvent = prepared((db, p: { id: string; tenantId: string; type: string; payload: string; at: string }) =>
  db
    .insertInto('events')
    .values({ id: p.id, tenant_id: p.tenantId, type: p.type, payload: p.payload, created_at: p.at, fanned_out: 0, fan_lease_until: null }),
);

/**
 * Records an event in the transaction of the change it describes (a transactional outbox): if the
 * change commits, its event exists; if it rolls back, so does the event. `data` is the resource
 * exactly as the API returns it after the change; `extra` sits beside it (e.g. `previousStatus`).
 * The body is serialized once, here, and sent byte for byte on every attempt.
 */
export async function emit(
  trx: Kysely<Database>,
  tenantId: string,
  type: EventType | 'webhook.test',
  data: unknown,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const id = newId('event');
  const at = now();
  const payload = JSON.stringify({ type, timestamp: at, ...extra, data });
  await insertEvent(trx, { id, tenantId, type, payload, at });
  return id;
}
