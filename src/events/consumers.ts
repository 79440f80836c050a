import { type ExpressionBuilder, type Kysely, sql, type Transaction } from 'kysely';
import { isPostgres } from '../db/adapter.js';
import type { Database } from '../db/types.js';
import { now } from '../time.js';

/**
 * One outbox, many consumers (issue 47 §3): every consumer reads every event once, in the order the
 * events became visible (their `position`, migration 0069), from a cursor of its own. Adding one (an
 * events sink) is a name here and a handler given to `consume` by the loop that runs it; a consumer
 * added after events were kept starts at the oldest of them. A consumer that sends a visitor's or a
 * lead's data to a third party (alerts to Slack) asks `mayLeave` (may-leave.ts) first; the tenant's
 * own webhooks are no such exit.
 */
export const CONSUMERS = ['webhooks', 'alerts', 'crm'] as const;
export type Consumer = (typeof CONSUMERS)[number];

/** An event as its consumers get it; those that need its body read it (`eventPayloads`). */
export interface OutboxEvent {
  id: string;
  tenant_id: string;
  type: string;
}

/** What a consumer does with a batch, in the transaction that moves its cursor: both happen, or neither. */
export type EventHandler = (trx: Transaction<Database>, events: readonly OutboxEvent[]) => Promise<void>;

/** At start-up: each consumer has its cursor row (migration 0069 made the first two). */
export async function ensureConsumers(db: Kysely<Database>): Promise<void> {
  for (const name of CONSUMERS) {
    await db
      .insertInto('outbox_consumers')
      .values({ name, position: -1, event_id: '', updated_at: now() })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
  }
}

type Cursor = { position: number; event_id: string };
/** Ids compare as both databases compare them: byte order (they are ASCII). */
const after = (a: Cursor, b: Cursor) => a.position > b.position || (a.position === b.position && a.event_id > b.event_id);

/** The events after `cursor`: a row comparison, which both databases answer from the (position, id) index. */
const pastCursor = (cursor: Cursor) => (eb: ExpressionBuilder<Database, 'events'>) =>
  eb(eb.refTuple('events.position', 'events.id'), '>', eb.tuple(cursor.position, cursor.event_id));

/** The events the consumer has not read ahead of its cursor (PostgreSQL: see `consume`). */
const notReadAhead = (name: Consumer) => (eb: ExpressionBuilder<Database, 'events'>) =>
  eb.not(
    eb.exists(
      eb
        .selectFrom('outbox_consumed_ahead as a')
        .select('a.event_id')
        .where('a.consumer', '=', name)
        .whereRef('a.position', '=', 'events.position')
        .whereRef('a.event_id', '=', 'events.id'),
    ),
  );

/** After the cursor, oldest first, less those the consumer has read ahead of it. */
function eventsAfter(trx: Kysely<Database>, name: Consumer, cursor: Cursor, limit: number) {
  return trx
    .selectFrom('events')
    .select(['events.id', 'events.tenant_id', 'events.type', 'events.position'])
    .where(pastCursor(cursor))
    .where(notReadAhead(name))
    .orderBy('events.position')
    .orderBy('events.id')
    .limit(limit)
    .execute();
}

/** Whether an event lies after the consumer's cursor (read ahead of it or not): one index probe. */
async function anyAfterCursor(db: Kysely<Database>, name: Consumer): Promise<boolean> {
  const row = await db
    .selectFrom('outbox_consumers as c')
    .select('c.name')
    .where('c.name', '=', name)
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('events as e')
          .select('e.id')
          .where((eb) => eb(eb.refTuple('e.position', 'e.id'), '>', eb.refTuple('c.position', 'c.event_id'))),
      ),
    )
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Below this position no event can commit any more: PostgreSQL's oldest transaction still running
 * (read before the events, so every event below it is among them). SQLite's writers take turns, so
 * what is visible is final.
 */
async function settledBelow(trx: Kysely<Database>): Promise<number> {
  if (!isPostgres(trx)) return Number.POSITIVE_INFINITY;
  const { rows } = await sql<{ xmin: string | number }>`select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`.execute(trx);
  return Number(rows[0]?.xmin);
}

/**
 * Up to `batch` events after the consumer's cursor go to `handle`, in one transaction with the
 * cursor's move, so each is consumed once. The cursor moves to the last of them below
 * `settledBelow`; those above it (a transaction elsewhere, started earlier, still runs) are noted as
 * read ahead until the cursor passes them, so a long transaction delays no event.
 * Its lease is its cursor's row, held by that transaction: on PostgreSQL locked
 * `for update skip locked`, so a second instance passes by (0) rather than waits; SQLite has one
 * writer. Ended by commit, rollback or the connection's death (kill -9), it needs no expiry.
 * Returns how many events were consumed.
 */
export async function consume(db: Kysely<Database>, name: Consumer, handle: EventHandler, batch: number): Promise<number> {
  // An idle loop asks every second: without an event after the cursor it takes no lock and, on
  // PostgreSQL, spends no transaction id.
  if (!(await anyAfterCursor(db, name))) return 0;
  return db.transaction().execute(async (trx) => {
    const cursor = await trx
      .selectFrom('outbox_consumers')
      .select(['position', 'event_id'])
      .where('name', '=', name)
      .$if(isPostgres(trx), (qb) => qb.forUpdate().skipLocked())
      .executeTakeFirst();
    if (!cursor) return 0;
    const settled = await settledBelow(trx);
    const events = await eventsAfter(trx, name, cursor, batch);
    if (events.length > 0) await handle(trx, events);
    const ahead = events.filter((e) => e.position >= settled);
    if (ahead.length > 0) {
      await trx
        .insertInto('outbox_consumed_ahead')
        .values(ahead.map((e) => ({ consumer: name, position: e.position, event_id: e.id })))
        .execute();
    }
    let last: Cursor | undefined = events
      .filter((e) => e.position < settled)
      .map((e) => ({ position: e.position, event_id: e.id }))
      .at(-1);
    // Every visible event after the cursor was read (fewer than a batch): the cursor may also pass
    // what was read ahead and has settled since, as nothing unread lies before it.
    if (events.length < batch && isPostgres(trx)) {
      const readAhead = await trx
        .selectFrom('outbox_consumed_ahead')
        .select(['position', 'event_id'])
        .where('consumer', '=', name)
        .where('position', '<', settled)
        .orderBy('position', 'desc')
        .orderBy('event_id', 'desc')
        .executeTakeFirst();
      if (readAhead && (!last || after(readAhead, last))) last = readAhead;
    }
    if (last) {
      await trx
        .updateTable('outbox_consumers')
        .set({ position: last.position, event_id: last.event_id, updated_at: now() })
        .where('name', '=', name)
        .execute();
      await trx
        .deleteFrom('outbox_consumed_ahead')
        .where('consumer', '=', name)
        .where((eb) => eb(eb.refTuple('position', 'event_id'), '<=', eb.tuple(last.position, last.event_id)))
        .execute();
    }
    return events.length;
  });
}

/** The consumer's backlog for the metrics: how many events it has yet to read, and since when the oldest waits. */
export async function consumerBacklog(db: Kysely<Database>, name: Consumer): Promise<{ pending: number; oldestAt: string | null }> {
  const cursor = await db.selectFrom('outbox_consumers').select(['position', 'event_id']).where('name', '=', name).executeTakeFirst();
  if (!cursor) return { pending: 0, oldestAt: null };
  const row = await db
    .selectFrom('events')
    .where(pastCursor(cursor))
    // An event read ahead was read: it waits only for the cursor to pass it.
    .where(notReadAhead(name))
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('at')])
    .executeTakeFirst();
  return { pending: Number(row?.n ?? 0), oldestAt: typeof row?.at === 'string' ? row.at : null };
}
