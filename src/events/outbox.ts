import { type Kysely, sql, type UpdateQueryBuilder } from 'kysely';
import { isPostgres } from '../db/adapter.js';
import { prepared, preparedByShape } from '../db/prepared.js';
import type { Database } from '../db/types.js';
import { newId } from '../ids.js';
import { now } from '../time.js';
import type { EventType } from './catalogue.js';

/**
 * SQLite: one past the highest position kept or pruned (migration 0072); its writers take turns, so
 * no two events get the same. PostgreSQL's is its column's default, the writing transaction's id.
 */
const nextPosition = sql<number>`(select max(s.last, coalesce((select max(e.position) from events e), 0)) + 1 from event_sequence s where s.name = 'events')`;

/** An event as `eventOf` makes it, for one tenant. */
type TenantEvent = ReturnType<typeof eventOf> & { tenantId: string };

/** The row of an event not yet fanned out; SQLite's position is the caller's to add. */
function eventRow<T>(e: { id: T; tenantId: T; type: T; payload: T; at: T }) {
  return { id: e.id, tenant_id: e.tenantId, type: e.type, payload: e.payload, created_at: e.at, fanned_out: 0, fan_lease_until: null };
}

const insertEvent = prepared((db, p: TenantEvent) =>
  db.insertInto('events').values({ ...eventRow(p), ...(isPostgres(db) ? {} : { position: nextPosition }) }),
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

/** One event of `emitMany`: what `emit` takes. */
export interface EventToEmit {
  tenantId: string;
  type: EventType;
  data: unknown;
  extra?: Record<string, unknown>;
}

/** Events a statement: 200 rows of 7 values stay under either database's limit on bound parameters. */
const EMIT_CHUNK = 200;

/**
 * `emit` for many events of one change (a regenerate's batch of hundreds of versions), in order:
 * a statement per 200 events, not one each. A batch of 500 audiences took 1,000 inserts, and on
 * SQLite a transaction holds the event loop from start to end. SQLite's positions are taken once
 * a statement and counted on from there: its writers take turns, so none can interleave.
 */
export async function emitMany(trx: Kysely<Database>, events: readonly EventToEmit[]): Promise<void> {
  for (let i = 0; i < events.length; i += EMIT_CHUNK) {
    const rows = events.slice(i, i + EMIT_CHUNK).map((e) => eventRow({ ...eventOf(e.type, e.data, e.extra), tenantId: e.tenantId }));
    if (isPostgres(trx)) {
      await trx.insertInto('events').values(rows).execute();
      continue;
    }
    const { next } = await trx.selectNoFrom(nextPosition.as('next')).executeTakeFirstOrThrow();
    await trx
      .insertInto('events')
      .values(rows.map((row, k) => ({ ...row, position: Number(next) + k })))
      .execute();
  }
}

function eventOf(type: string, data: unknown, extra: Record<string, unknown> = {}) {
  const id = newId('event');
  const at = now();
  return { id, type, at, payload: JSON.stringify({ type, timestamp: at, ...extra, data }) };
}

/** The event's values in a change's statement, named apart from the columns a change sets. */
interface EventParams {
  eventId: string;
  eventTenant: string;
  eventType: string;
  eventPayload: string;
  eventAt: string;
}

/**
 * A conditional UPDATE returning its rows' ids, whose shape depends on `shape` (e.g. the columns a
 * PATCH sets), with and without its event: each shape is built and compiled once (db/prepared.ts).
 * `build` gets placeholders for `P`'s values. Made once, at a module's top, by the area that owns
 * the table.
 */
export interface ChangeStatement<P extends object> {
  alone: (db: Kysely<Database>, shape: string, params: P) => Promise<{ id: string }[]>;
  withEvent: (db: Kysely<Database>, shape: string, params: P & EventParams) => Promise<{ id: string }[]>;
}

export function changeStatement<P extends object, UT extends keyof Database, TB extends keyof Database>(
  build: (db: Kysely<Database>, params: P, shape: string) => UpdateQueryBuilder<Database, UT, TB, { id: string }>,
): ChangeStatement<P> {
  return {
    alone: preparedByShape(build),
    withEvent: preparedByShape((db, p: P & EventParams, shape) =>
      db
        .with('changed', () => build(db, p, shape))
        .insertInto('events')
        .columns(['id', 'tenant_id', 'type', 'payload', 'created_at', 'fanned_out', 'fan_lease_until'])
        .expression((eb) =>
          eb
            .selectFrom('changed')
            .select([
              sql<string>`cast(${p.eventId} as text)`.as('id'),
              sql<string>`cast(${p.eventTenant} as text)`.as('tenant_id'),
              sql<string>`cast(${p.eventType} as text)`.as('type'),
              sql<string>`cast(${p.eventPayload} as text)`.as('payload'),
              sql<string>`cast(${p.eventAt} as timestamptz)`.as('created_at'),
              sql<number>`0`.as('fanned_out'),
              sql<null>`null`.as('fan_lease_until'),
            ])
            .limit(1),
        )
        .returning('events.id'),
    ),
  };
}

/**
 * A change made by one conditional UPDATE (`statement` of `shape`, filled by `params`) and its
 * event, recorded together, or neither: false when the UPDATE matched no row. Given the database
 * on PostgreSQL, the two are one statement (a data-modifying WITH), atomic with no transaction of
 * its own: one round trip where begin, the update, the event and commit took four. In a
 * transaction, or on SQLite, they are its two statements.
 */
export async function changeAndEmit<P extends object>(
  db: Kysely<Database>,
  statement: ChangeStatement<P>,
  shape: string,
  params: P,
  tenantId: string,
  type: EventType,
  data: unknown,
): Promise<boolean> {
  if (isPostgres(db) && !db.isTransaction) {
    const event = eventOf(type, data);
    const rows = await statement.withEvent(db, shape, {
      ...params,
      eventId: event.id,
      eventTenant: tenantId,
      eventType: event.type,
      eventPayload: event.payload,
      eventAt: event.at,
    });
    return rows.length > 0;
  }
  const run = async (trx: Kysely<Database>) => {
    if ((await statement.alone(trx, shape, params)).length === 0) return false;
    await emit(trx, tenantId, type, data);
    return true;
  };
  return db.isTransaction ? run(db) : db.transaction().execute(run);
}
