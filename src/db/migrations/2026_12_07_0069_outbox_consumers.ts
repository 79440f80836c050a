import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../adapter.js';
import { columnTypes } from './dialect.js';

/**
 * One outbox, many consumers (issue 47 §3). Each consumer of the events (the webhook fan-out, the
 * alerts' fan-out, a future events sink) reads every event once, in order, from a cursor of its
 * own in `outbox_consumers`, instead of one `fanned_out` flag that only the webhook fan-out owned.
 *
 * An event's `position` orders the outbox so that a cursor never passes an event that commits later:
 * - PostgreSQL: the id of the transaction that wrote it (`pg_current_xact_id()`, 64 bits, never
 *   wrapping); events of one transaction share it and are ordered by id. A transaction still
 *   running may yet commit an event below one already visible, so a consumer's cursor moves only
 *   below the oldest transaction still running (`pg_snapshot_xmin`); what it has consumed above
 *   that is kept in `outbox_consumed_ahead` until the cursor passes it, so a long transaction
 *   elsewhere delays no event and none is consumed twice.
 * - SQLite: one writer at a time, so the order of insertion is the order of commit; a trigger
 *   numbers each event from `event_sequence`'s one row (not `max(position) + 1`, which would
 *   start again once housekeeping has pruned every event).
 *
 * Events there already: those fanned out get position 0, the others 1 (all below any new one);
 * both consumers start after the last event of position 0, so the events not fanned out yet are
 * taken by both, as they were by the webhook fan-out and its alerts. `fanned_out`,
 * `fan_lease_until` and their partial index are left unused (PostgreSQL's collector function still
 * names them in its insert; they go in a later migration).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const { timestamp: ts, id } = columnTypes(db);
  await db.schema
    .alterTable('events')
    .addColumn('position', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update events set position = case when fanned_out = 1 then 0 else 1 end`.execute(db);
  await db.schema.dropIndex('events_pending_idx').execute();
  await db.schema.createIndex('events_position_idx').on('events').columns(['position', 'id']).execute();
  if (isPostgres(db)) {
    await sql`alter table events alter column position set default (pg_current_xact_id()::text::bigint)`.execute(db);
  } else {
    await db.schema
      .createTable('event_sequence')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('last', 'bigint', (c) => c.notNull())
      .execute();
    await sql`insert into event_sequence (name, last) values ('events', 1)`.execute(db);
    await sql`create trigger events_position after insert on events begin
      update event_sequence set last = last + 1 where name = 'events';
      update events set position = (select last from event_sequence where name = 'events') where rowid = new.rowid;
    end`.execute(db);
  }
  await db.schema
    .createTable('outbox_consumers')
    .addColumn('name', 'text', (c) => c.primaryKey())
    // The last event consumed: its position, then its id (ids are compared in byte order on both).
    .addColumn('position', 'bigint', (c) => c.notNull())
    .addColumn('event_id', id, (c) => c.notNull())
    .addColumn('updated_at', ts, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('outbox_consumed_ahead')
    .addColumn('consumer', 'text', (c) => c.notNull())
    .addColumn('position', 'bigint', (c) => c.notNull())
    .addColumn('event_id', id, (c) => c.notNull())
    .addPrimaryKeyConstraint('outbox_consumed_ahead_pk', ['consumer', 'position', 'event_id'])
    .execute();
  for (const name of ['webhooks', 'alerts']) {
    await sql`insert into outbox_consumers (name, position, event_id, updated_at)
      select ${name}, 0, coalesce(max(id), ''), ${new Date().toISOString()} from events where position = 0`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('outbox_consumed_ahead').execute();
  await db.schema.dropTable('outbox_consumers').execute();
  if (isPostgres(db)) {
    await sql`alter table events alter column position drop default`.execute(db);
  } else {
    await sql`drop trigger events_position`.execute(db);
    await db.schema.dropTable('event_sequence').execute();
  }
  await db.schema.dropIndex('events_position_idx').execute();
  await db.schema.alterTable('events').dropColumn('position').execute();
  await db.schema.createIndex('events_pending_idx').on('events').columns(['created_at']).where(sql<boolean>`fanned_out = 0`).execute();
}
