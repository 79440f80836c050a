import { type Kysely, sql, type UpdateQueryBuilder } from 'kysely';
import { isPostgres } from '../db/adapter.js';
import { prepared } from '../db/prepared.js';
import type { Database } from '../db/types.js';
import { newId } from '../ids.js';
import { now } from '../time.js';
import type { EventType } from './catalogue.js';

/**
 * SQLite: one past the highest position kept or pruned (migration 0072); its writers take turns, so
 * no two events get the same. PostgreSQL's is its column's default, the writing transaction's id.
 */
const nextPosition = sql<number>`(select max(s.last, coalesce((select max(e.position) from events e), 0)) + 1 from event_sequence s where s.name = 'events')`;

const insertEvent = prepared((db, p: { id: string; tenantId: string; type: string; payload: string; at: string }) =>
  db.insertInto('events').values({
    id: p.id,
    tenant_id: p.tenantId,
    type: p.type,
    payload: p.payload,
    created_at: p.at,
    fanned_out: 0,
    fan_lease_until: null,
    ...(isPostgres(db) ? {} : { position: nextPosition }),
  }),
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
  const event = eventOf(type, data, extra);
  await insertEvent(trx, { ...event, tenantId });
  return event.id;
}

function eventOf(type: string, data: unknown, extra: Record<string, unknown> = {}) {
  const id = newId('event');
  const at = now();
  return { id, type, at, payload: JSON.stringify({ type, timestamp: at, ...extra, data }) };
}

/**
 * A change made by one conditional UPDATE (returning its rows' ids) and its event, recorded
 * together, or neither: false when the UPDATE matched no row. Given the database on PostgreSQL, the
 * two are one statement (a data-modifying WITH), atomic with no transaction of its own: one round
 * trip where begin, the update, the event and commit took four. In a transaction, or on SQLite,
 * they are its two statements.
 */
export async function changeAndEmit<UT extends keyof Database, TB extends keyof Database>(
  db: Kysely<Database>,
  change: (db: Kysely<Database>) => UpdateQueryBuilder<Database, UT, TB, { id: string }>,
  tenantId: string,
  type: EventType,
  data: unknown,
): Promise<boolean> {
  if (isPostgres(db) && !db.isTransaction) {
    const event = eventOf(type, data);
    const result = await db
      .with('changed', () => change(db))
      .insertInto('events')
      .columns(['id', 'tenant_id', 'type', 'payload', 'created_at', 'fanned_out', 'fan_lease_until'])
      .expression((eb) =>
        eb
          .selectFrom('changed')
          .select([
            sql<string>`cast(${event.id} as text)`.as('id'),
            sql<string>`cast(${tenantId} as text)`.as('tenant_id'),
            sql<string>`cast(${event.type} as text)`.as('type'),
            sql<string>`cast(${event.payload} as text)`.as('payload'),
            sql<string>`cast(${event.at} as timestamptz)`.as('created_at'),
            sql<number>`0`.as('fanned_out'),
            sql<null>`null`.as('fan_lease_until'),
          ])
          .limit(1),
      )
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
  }
  const run = async (trx: Kysely<Database>) => {
    if ((await change(trx).executeTakeFirst()) === undefined) return false;
    await emit(trx, tenantId, type, data);
    return true;
  };
  return db.isTransaction ? run(db) : db.transaction().execute(run);
}
